"""The pipeline's forget behind the chat server's `/api/forget` (`runtime.forget_api.Forgetter`).

`truffle serve` builds one for the data root it serves and hands it to the app, so the runtime
never imports Dagster or this package. The forget itself is `runner.forget`, the same as `truffle
forget`: on a local instance (`truffle up` sets DAGSTER_HOME) the UI shows its runs, else it runs on
an ephemeral one. The runner, and Dagster with it, loads on the first request: a server nobody asks
to forget does not pay for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class PipelineForgetter:
    def __init__(self, data_dir: str | Path):
        self.data_dir = Path(data_dir)  # holds exports/, memory.duckdb, forget/

    @property
    def db_path(self) -> Path:
        return self.data_dir / "memory.duckdb"

    def forget(self, kind: str, value: str, chat: str | None = None, *, dry_run: bool = False) -> dict[str, Any]:
        import dagster as dg

        from truffle_assets.defs.forget.runner import forget

        instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") and not dry_run else None
        return forget(kind, value, chat, exports_dir=self.data_dir / "exports", db_path=self.db_path,
                      instance=instance, dry_run=dry_run)

    def tombstones(self) -> list[dict[str, Any]]:
        from truffle_assets.defs.forget.runner import tombstones

        return [t.listing() for t in tombstones(self.db_path).load()]
