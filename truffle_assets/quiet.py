"""Third-party noise kept off the console: model-loading progress bars, Hugging Face advisories,
library warnings and llama.cpp's own log lines. Dagster-free, so the chat runtime may call it too.

`quiet_console()` once, early in a command, before the libraries load: what they would have printed
goes to `log_file` when one is given (else nowhere). `verbose=True` leaves everything as it was.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
from pathlib import Path

# the loggers libraries write their notices to; their records go to the log file, not the console
NOISY_LOGGERS = ("transformers", "sentence_transformers", "huggingface_hub", "torch", "lancedb", "httpx",
                 "urllib3", "filelock", "datasets", "peft", "trl", "py.warnings", "llama.cpp")

_llama_callback = None  # the ctypes callback must outlive the call that installs it
_llama_quiet = False  # quiet_console() asked for it; installed when llama.cpp is first used in this process
_handler: logging.Handler | None = None  # the one the noisy loggers share; closed when replaced


def quiet_console(verbose: bool = False, log_file: Path | None = None) -> None:
    """Silence third-party progress bars, warnings and log lines unless `verbose`; with `log_file`,
    their text is appended there instead."""
    if verbose:
        return
    # tqdm reads TQDM_* when it is first imported (and a child process inherits it): the bars some
    # libraries draw with plain tqdm, e.g. transformers' "Converting and de-quantizing GGUF tensors"
    os.environ.setdefault("TQDM_DISABLE", "1")
    # read by huggingface_hub and transformers when they load (and re-read below if they already have)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")  # "Tokenizing train dataset" and the like
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if "transformers" in sys.modules:
        from transformers.utils import logging as tf_logging

        tf_logging.set_verbosity_error()
        tf_logging.disable_progress_bar()
    if "datasets" in sys.modules:
        import datasets

        datasets.disable_progress_bars()
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    global _handler
    if _handler is not None:
        _handler.close()
    handler = _handler = log_file_handler(log_file) if log_file is not None else logging.NullHandler()
    logging.captureWarnings(True)  # warnings.warn(...) becomes a record of the "py.warnings" logger
    for name in NOISY_LOGGERS:
        lg = logging.getLogger(name)
        lg.handlers[:] = [handler]
        lg.propagate = False
    global _llama_quiet
    _llama_quiet = True
    if "llama_cpp" in sys.modules:  # else quiet_llama_cpp() installs it when llama.cpp is first used
        _quiet_llama_cpp()


def log_file_handler(log_file: Path) -> logging.Handler:
    """A handler appending plain timestamped lines to `log_file` (its folder made if missing)."""
    log_file = Path(log_file)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_file, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
    return handler


def quiet_llama_cpp() -> None:
    """Call before using llama.cpp in this process: its log lines go where quiet_console() sends the
    rest (nothing happens without that call, under --verbose, or once done). Loading llama_cpp only
    here keeps it out of the start-up of every command."""
    if _llama_quiet and _llama_callback is None:
        _quiet_llama_cpp()


def _quiet_llama_cpp() -> None:
    """llama.cpp's log lines (e.g. `n_ctx_seq (512) > n_ctx_train (0)` when a tokenizer-only model is
    opened) go to the "llama.cpp" logger. llama-cpp-python's own callback maps the C library's log
    levels by an older numbering, so its warnings print as errors even with `verbose=False`."""
    global _llama_callback
    try:
        import llama_cpp
    except Exception:  # not installed, or its library does not load: nothing of it will print
        return
    log = logging.getLogger("llama.cpp")

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if level in (3, 4):  # GGML_LOG_LEVEL_WARN, _ERROR; debug, info and continuations are dropped
            log.log(logging.WARNING if level == 3 else logging.ERROR, text.decode("utf-8", "replace").rstrip())

    _llama_callback = callback
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
