"""Purges outside DuckDB: the LLM response cache and LanceDB's old table versions.

The LLM cache is keyed by a hash of the prompt, so a summary entry is found by the `cache_key` it
records (`<episode id>:<tier>`) and an English-tier entry by the hash of its source text (`src`).
LanceDB keeps every version a write made; a forget cleans them all up except the newest, which
the re-run has just published without the forgotten rows.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from datetime import timedelta
from pathlib import Path


def text_key(text: str) -> str:
    """What the English tier records as `src` for the text it translated."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def purge_llm_cache(cache_dir: str | Path, episode_ids: set[str], texts: list[str], dry_run: bool = False) -> int:
    """Delete cache entries made from the forgotten episodes or texts; returns how many."""
    root = Path(cache_dir)
    if not root.is_dir() or not (episode_ids or texts):
        return 0
    srcs = {text_key(t) for t in texts if t}
    n = 0
    for path in root.glob("*/*.json"):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(entry, dict):
            continue
        key = str(entry.get("cache_key") or "")
        if key.split(":", 1)[0] in episode_ids or entry.get("src") in srcs:
            n += 1
            if not dry_run:
                path.unlink(missing_ok=True)
    return n


def purge_index_versions(index_root: str | Path, dry_run: bool = False) -> int:
    """Remove every LanceDB table version but the newest; returns how many versions went."""
    import lancedb

    from truffle_assets.index.lance import table_names

    root = Path(index_root)
    if not root.exists():
        return 0
    db = lancedb.connect(str(root))
    removed = 0
    for name in table_names(db):
        tbl = db.open_table(name)
        before = len(tbl.list_versions())
        if dry_run:
            removed += before - 1
            continue
        # optimize = compaction + index update + cleanup, all native (cleanup_old_versions needs pylance).
        # LanceDB warns that readers of an old version would fail: the forget wants exactly that, and
        # runs under the store's writer lock
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)", category=UserWarning)
            tbl.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
            tbl.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)  # the compaction's own old version
        removed += max(before - len(tbl.list_versions()), 0)
    return removed
