"""Synthetic WhatsApp exports of one person's top chats, with planted facts and secrets.

Plain Python (no Dagster). `write_corpus(out, chats, tokens, seed)` writes the exports,
`ground_truth.json` and `README.txt` into `out`; `truffle synth` is the command-line wrapper.
"""

from truffle_assets.synth.checksums import luhn_valid, verhoeff_valid
from truffle_assets.synth.corpus import CorpusError, export_name, write_corpus
from truffle_assets.synth.persona import USER

__all__ = ["USER", "CorpusError", "export_name", "luhn_valid", "verhoeff_valid", "write_corpus"]
