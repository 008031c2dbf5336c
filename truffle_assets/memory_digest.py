"""Content digests of a built memory: what "a re-run converged to a clean run" is checked against.

Per DuckDB table an order-independent hash of every row; per LanceDB table the same over the
rows at the versions the published pointer names (vectors rounded to 1e-4: a batch padded to a
different length moves the last float bits); and the pointer without what differs by design
between two correct builds (table version numbers, publish time). `ingestion_jobs` is left
out: it records every run that wrote, crashed ones included.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb

from truffle_assets.files import json_default

RUN_LOG_TABLES = {"ingestion_jobs"}  # one row per run that wrote: differs whenever the runs did
POINTER_VOLATILE = {"tables", "published_at", "root"}  # root: where, not what


def store_digests(db_path: str | Path) -> dict[str, str]:
    """Table -> "rows:hash" for every table of the DuckDB store but the run log. Text columns are
    hashed with the store's own folder cut out of them (`source_file` names the export by its
    path), so two data roots holding the same exports compare equal."""
    root = str(Path(db_path).resolve().parent)
    out = {}
    with duckdb.connect(str(db_path), read_only=True) as con:
        tables = [t for (t,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        for t in tables:
            if t in RUN_LOG_TABLES:
                continue
            cols = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                               "ORDER BY ordinal_position", [t]).fetchall()
            exprs = [f'replace("{c}", $root, \'\')' if kind == "VARCHAR" else f'"{c}"' for c, kind in cols]
            n, h = con.execute(f'SELECT count(*), coalesce(sum(hash({", ".join(exprs)})), 0) FROM "{t}"',
                               {"root": root}).fetchone()
            out[t] = f"{n}:{h}"
    return out


def index_digests(pointer_path: str | Path) -> dict[str, str]:
    """LanceDB table -> "rows:hash" at the versions the pointer publishes."""
    import lancedb
    import numpy as np

    pointer = json.loads(Path(pointer_path).read_text())
    db = lancedb.connect(pointer["root"])
    out = {}
    for name, version in sorted(pointer["tables"].items()):
        table = db.open_table(name)
        table.checkout(version)
        rows = table.to_arrow().to_pylist()
        hashes = []
        for row in rows:
            for key, value in row.items():
                if key == "vector" and value is not None:
                    row[key] = np.round(np.asarray(value, dtype=np.float64), 4).tolist()
            hashes.append(hashlib.blake2b(json.dumps(row, sort_keys=True, default=json_default).encode(), digest_size=16).digest())
        out[name] = f"{len(rows)}:{hashlib.blake2b(b''.join(sorted(hashes)), digest_size=16).hexdigest()}"
    return out


def pointer_digest(pointer_path: str | Path) -> dict:
    """The published pointer without its version numbers and publish time."""
    pointer = json.loads(Path(pointer_path).read_text())
    return {k: v for k, v in pointer.items() if k not in POINTER_VOLATILE}


def memory_digest(db_path: str | Path, published_dir: str | Path) -> dict:
    """Everything a reader of the memory sees, as digests: the store, the index, the pointer, the profile."""
    published = Path(published_dir)
    profile = json.loads((published / "profile.json").read_text()) if (published / "profile.json").exists() else None
    facts = json.loads((published / "facts.json").read_text()) if (published / "facts.json").exists() else None
    for blob in (profile, facts):  # written at build time, not content
        if blob:
            for key in ("version", "generated_at", "built_at"):
                blob.pop(key, None)
    return {
        "store": store_digests(db_path),
        "index": index_digests(published / "latest.json"),
        "pointer": pointer_digest(published / "latest.json"),
        "profile": hashlib.sha256(json.dumps(profile, sort_keys=True, default=json_default).encode()).hexdigest()[:16],
        "facts_json": hashlib.sha256(json.dumps(facts, sort_keys=True, default=json_default).encode()).hexdigest()[:16],
    }
