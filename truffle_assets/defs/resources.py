"""Resources bound once: where exports live, who the user is, and the DuckDB file."""


from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb

from truffle_assets import store
from truffle_assets.ingest import IngestedDays, author_profile, detect_user, scan_exports

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = PROJECT_ROOT / "data"


class ExportsResource(dg.ConfigurableResource):
    """The folder users drop WhatsApp exports into, and the identity of the exporting user."""

    exports_dir: str = str(DATA_DIR / "exports")
    cache_dir: str = str(DATA_DIR / "cache")
    user_name: str | None = None  # leave unset to auto-detect: the author present in every chat

    def chats(self) -> dict[str, list[Path]]:
        return scan_exports(self.exports_dir)

    def ingested(self) -> IngestedDays:
        return IngestedDays(Path(self.cache_dir) / "ingested")

    def user(self) -> str | None:
        if self.user_name:
            return self.user_name
        cache = Path(self.cache_dir) / "authors"
        profiles = {chat: [author_profile(p, cache) for p in files] for chat, files in self.chats().items()}
        return detect_user(profiles)


class DuckDBStore(dg.ConfigurableResource):
    """The canonical store. Writers run in the `duckdb` pool; everyone else opens it read-only."""

    path: str = str(DATA_DIR / "memory.duckdb")

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        with store.connect(self.path, read_only=read_only) as con:
            yield con
