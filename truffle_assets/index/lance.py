"""The LanceDB memory index: one row per message and one row per episode summary.

Two tables live under `root`:

* `raw_episodes_index` — one row per message. Message-level passages give message-level recall:
  the benchmark evidence is 1–3 lines among hundreds, and an episode-sized passage would dilute
  exactly the line that matters. `text` is the message's redacted, normalised text (the search
  stream); `shown_text` the same message redacted but as the person wrote it (`message_pii`: their
  spelling and emoji, secrets as [CARD], ...), which is what the runtime shows and nothing searches
  (null in rows written before it: readers fall back to `text`); `passage` is what is embedded and
  BM25-indexed: "Author: text", optionally prefixed by the previous message of the same episode
  as light context (`context_prev`, off by default: on LoCoMo's dev conversations it lifts BM25
  alone by 8.8 points but the fused ranking loses 1.4;
  retrieval already scores each candidate with its episode neighbours at query time, which keeps
  passages precise and lets the context weight be tuned without a reindex). A romanized-Hindi line
  also carries its offline English gloss (`memory.gloss`, `gloss_passages`): "Tata Projects join kar
  liya" is found by "Where do I work?" through "I joined Tata Projects." (natural chat sets, recall@10:
  dev 0.420 -> 0.517, second dev 0.388 -> 0.433, held-out 0.589 -> 0.620; benchmarks/natural_recall.py).
  `keys` holds the entities of the text and the kinds of answer it gives (`index.keys`), BM25-indexed
  on their own; they live in the message's row, so whatever deletes the message deletes its keys.
* `episodic_summaries` — one row per summary, with the episode's message ids for expansion.

Writes are per (chat, day), delete-then-add, so re-running a day is idempotent.
A vector is keyed by the hash of the text it embeds (`text_sha`): a text already stored, in the
rows being replaced or anywhere else in the table, is not embedded again, and a text repeated in
one write is embedded once, so re-materialising an unchanged day costs no embedding. Readers open the tables at
the versions written to `latest.json` by `publish()`, never at a half-written head.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date, datetime, UTC
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from truffle_assets.files import write_json_atomic
from truffle_assets.index.embedder import Embedder, text_sha
from truffle_assets.index.keys import message_keys
from truffle_assets.memory.gloss import gloss

RAW_TABLE = "raw_episodes_index"
SUMMARY_TABLE = "episodic_summaries"
TABLES = (RAW_TABLE, SUMMARY_TABLE)
SCALAR_KEYS = {RAW_TABLE: ("message_id", "episode_id"), SUMMARY_TABLE: ("episode_id",)}
FTS_COLUMNS = {RAW_TABLE: ("passage", "keys"), SUMMARY_TABLE: ("text",)}
_SHA_LOOKUP_CHUNK = 2_000  # text hashes per `IN (...)` lookup: keeps each query's SQL small
VECTOR_INDEX_MIN_ROWS = 10_000  # flat search costs ~1.7 ms per 1K rows here (53 ms at 30K); IVF-SQ ~25 ms at 300K
POINTER_NAME = "latest.json"

# Message kinds that carry words worth retrieving; media/deleted/system/call rows carry none.
TEXT_KINDS = ("message", "location", "contact", "poll")
_MEDIA_ONLY = {"<media omitted>", "<attached>", "image omitted", "video omitted", "audio omitted",
               "sticker omitted", "gif omitted", "document omitted", "this message was deleted",
               "you deleted this message", "null"}

RAW_COLUMNS = ["message_id", "episode_id", "chat_id", "day", "ts", "author", "is_user", "text", "salience",
               "shown_text"]
SUMMARY_COLUMNS = ["episode_id", "chat_id", "day", "start_ts", "end_ts", "tier", "source", "text",
                   "message_ids", "evidence_message_ids", "salience"]


def raw_schema(dim: int) -> pa.Schema:
    return pa.schema([
        ("message_id", pa.string()), ("episode_id", pa.string()), ("chat_id", pa.string()),
        ("day", pa.date32()), ("ts", pa.timestamp("us")), ("author", pa.string()),
        ("is_user", pa.bool_()), ("text", pa.string()), ("passage", pa.string()),
        ("text_sha", pa.string()), ("salience", pa.float64()),
        ("vector", pa.list_(pa.float32(), dim)), ("keys", pa.string()),
        ("shown_text", pa.string()),  # last: tables written before it get it appended (`_ensure_tables`)
    ])


def summary_schema(dim: int) -> pa.Schema:
    return pa.schema([
        ("episode_id", pa.string()), ("chat_id", pa.string()), ("day", pa.date32()),
        ("start_ts", pa.timestamp("us")), ("end_ts", pa.timestamp("us")), ("tier", pa.string()),
        ("source", pa.string()), ("text", pa.string()), ("message_ids", pa.list_(pa.string())),
        ("evidence_message_ids", pa.list_(pa.string())), ("salience", pa.float64()),
        ("text_sha", pa.string()), ("vector", pa.list_(pa.float32(), dim)),
    ])


def sql_str(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[Any]) -> str:
    vals = list(values)
    if not vals:
        return "false"
    return f"{column} IN ({', '.join(sql_lit(v) for v in vals)})"


def sql_lit(v: Any) -> str:
    if isinstance(v, datetime):
        if v.tzinfo is not None:  # stored timestamps are naive wall-clock; compare like with like
            v = v.replace(tzinfo=None)
        return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
    if isinstance(v, date):
        return f"CAST('{v.isoformat()}' AS DATE)"
    return sql_str(v)


def is_uri(root: str | Path) -> bool:
    """An object-store location (s3://, gs://, az://...) rather than a local folder."""
    return "://" in str(root) and not str(root).startswith("file://")


def table_names(db) -> list[str]:
    """Every table of a LanceDB connection (`list_tables()` pages; `table_names()` is deprecated)."""
    names, token = [], None
    while True:
        page = db.list_tables(page_token=token)
        names += page.tables or []
        if not (token := page.page_token):
            return names


def present(tbl, *cols: str) -> list[str]:
    """Those of `cols` the table has (at the version it was opened at): older indexes lack the
    columns added since (`keys`, `shown_text`), and selecting a missing column is an error."""
    names = tbl.schema.names
    return [c for c in cols if c in names]


def partition_filter(chat_id: str, days: Iterable[date]) -> str:
    return f"chat_id = {sql_str(chat_id)} AND {sql_in('day', sorted(set(days)))}"


def _is_indexable(text: str | None) -> bool:
    t = (text or "").strip()
    return bool(t) and t.lower() not in _MEDIA_ONLY


def raw_rows_from(messages: pl.DataFrame, streams: pl.DataFrame, episodes: pl.DataFrame,
                  pii: pl.DataFrame | None = None) -> pl.DataFrame:
    """Contract frames -> rows for `raw_episodes_index` (without passage/vector).

    Skipped, on purpose: system/media/deleted/call rows (kind not in TEXT_KINDS) and rows whose
    normalised text is empty or only a media placeholder — they match every query about "photo"
    and carry no memory. Messages outside any episode keep a null episode_id and salience 0.
    `pii` (`message_pii`: id, redacted_text) gives `shown_text`; without it the column is null.
    """
    ep = (episodes.select(pl.col("id").alias("episode_id"), "message_ids", "salience")
          .explode("message_ids").rename({"message_ids": "message_id"})
          .unique("message_id", keep="first"))
    st = streams.select(pl.col("id").alias("message_id"), pl.col("normalized_text").alias("text"))
    msgs = messages
    if "kind" in msgs.columns:
        msgs = msgs.filter(pl.col("kind").is_in(TEXT_KINDS))
    rows = (msgs.select(pl.col("id").alias("message_id"), "chat_id", "day", "ts", "author", "is_user")
            .join(st, on="message_id", how="inner")
            .join(ep, on="message_id", how="left")
            .with_columns(pl.col("salience").fill_null(0.0).cast(pl.Float64))
            .filter(pl.col("text").map_elements(_is_indexable, return_dtype=pl.Boolean)))
    if pii is not None:
        shown = pii.select(pl.col("id").alias("message_id"), pl.col("redacted_text").alias("shown_text"))
        rows = rows.join(shown, on="message_id", how="left")
    return _with_shown(rows).select(RAW_COLUMNS).sort("chat_id", "ts", "message_id")


def _with_shown(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` with a (null) `shown_text` when they lack one: readers then show `text`."""
    if "shown_text" in rows.columns:
        return rows
    return rows.with_columns(pl.lit(None, dtype=pl.String).alias("shown_text"))


def summary_rows_from(summaries: pl.DataFrame, episodes: pl.DataFrame) -> pl.DataFrame:
    """Contract `summaries` + `episodes` -> rows for `episodic_summaries` (without vector)."""
    ep = episodes.select(pl.col("id").alias("episode_id"), "start_ts", "end_ts", "message_ids", "salience")
    rows = (summaries.join(ep, on="episode_id", how="left")
            .with_columns(pl.col("salience").fill_null(0.0).cast(pl.Float64),
                          pl.col("message_ids").fill_null(pl.col("evidence_message_ids")))
            .filter(pl.col("text").map_elements(_is_indexable, return_dtype=pl.Boolean)))
    return rows.select(SUMMARY_COLUMNS)


# what `passage` writes; bumped when that changes, so cached eval memories (defs.eval.qa_memory) and QA
# readings (evals.qa.runtime_fingerprint) built on older passages are not reused. 2: the English gloss
PASSAGE_FORMAT = 2


def passage(author: str | None, text: str, gloss_passages: bool = True) -> str:
    """"Author: text", and " | <English gloss>" after a Hinglish line that has one."""
    own = f"{author}: {text}" if author else text
    english = gloss(text) if gloss_passages else None
    return f"{own} | {english}" if english else own


def build_passages(rows: pl.DataFrame, context_prev: bool = False, gloss_passages: bool = True) -> list[str]:
    """What gets embedded and BM25-indexed for each message row (same order as `rows`)."""
    pairs = list(zip(rows["author"].to_list(), rows["text"].to_list()))
    made = {pair: passage(*pair, gloss_passages) for pair in dict.fromkeys(pairs)}  # a repeated line glossed once
    own = [made[pair] for pair in pairs]
    if not context_prev or rows.is_empty():
        return own
    # previous message of the same episode, by time; none for the first message of an episode
    prev = (rows.with_row_index("_i").with_columns(pl.Series("_own", own))
            .sort("ts", "message_id")
            .with_columns(pl.col("_own").shift(1).over("episode_id").alias("_prev"))
            .sort("_i"))
    return [own_ if p is None else f"{p[:200]} | {own_}" for own_, p in zip(own, prev["_prev"].to_list())]


class MemoryIndex:
    """Writer and (pinned) reader of the two memory tables under `root`."""

    def __init__(self, root: str | Path, embedder: Embedder | None = None, *,
                 versions: dict[str, int] | None = None, context_prev: bool = False,
                 entity_keys: bool = False, gloss_passages: bool = True) -> None:
        # a local folder, or an object-store URI (s3://bucket/prefix, gs://, az://) that LanceDB
        # opens itself, with credentials and endpoint from the standard AWS_* / GOOGLE_* / AZURE_* variables
        self.root: str | Path = str(root) if is_uri(root) else Path(root)
        if isinstance(self.root, Path):
            self.root.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder or Embedder()
        self.context_prev = context_prev
        # spaCy NER per message costs ~0.4x the embedding at ingest, and the default retrieval weights
        # do not read keys (they helped no held-out figure): off unless asked for; the column stays, empty
        self.entity_keys = entity_keys
        self.gloss_passages = gloss_passages
        self.versions = dict(versions or {})  # pinned versions; empty = latest (writer view)
        self.pointer: dict[str, Any] = {}
        import lancedb  # ~1.5 s to import: only a process that opens the index pays it

        self._db = lancedb.connect(str(self.root))
        self._tables: dict[str, Any] = {}
        self._cache: dict[str, Any] = {}  # per-reader memo (participants, watermarks)

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    def open_published(cls, pointer_path: str | Path, embedder: Embedder | None = None) -> MemoryIndex:
        """A read-only view at the versions `publish()` recorded: later writes stay invisible."""
        pointer_path = Path(pointer_path)
        pointer = json.loads(pointer_path.read_text())
        root = pointer.get("root") or pointer_path.parent
        if not is_uri(root) and not Path(root).is_absolute():
            root = pointer_path.parent / root
        idx = cls(root, embedder, versions={k: int(v) for k, v in pointer["tables"].items()})
        idx.pointer = pointer
        return idx

    @classmethod
    def open(cls, location: str | Path | MemoryIndex, embedder: Embedder | None = None) -> MemoryIndex:
        """A MemoryIndex, a latest.json path, or a root (its latest.json if published, else head)."""
        if isinstance(location, MemoryIndex):
            return location
        if is_uri(location):
            return cls(location, embedder)
        p = Path(location)
        if p.is_file():
            return cls.open_published(p, embedder)
        if (p / POINTER_NAME).is_file():
            return cls.open_published(p / POINTER_NAME, embedder)
        return cls(p, embedder)

    def table(self, name: str):
        """The table at its pinned version (reader) or head (writer); None if it doesn't exist."""
        if name not in self._tables:
            if not self._exists(name):
                return None
            version = self.versions.get(name)
            self._tables[name] = (self._db.open_table(name, version=version) if version
                                  else self._db.open_table(name))
        return self._tables[name]

    def _ensure_tables(self) -> None:
        for name, schema in ((RAW_TABLE, raw_schema), (SUMMARY_TABLE, summary_schema)):
            if not self._exists(name):  # the model's dimension loads the model: only a new table asks it
                self._db.create_table(name, schema=schema(self.embedder.dim), exist_ok=True)
        raw = self.table(RAW_TABLE)
        # columns added since a table was written: null until its days are rewritten (which the
        # index asset does for every day when its inputs change, as adding `message_pii` did)
        for col in ("keys", "shown_text"):
            if col not in raw.schema.names:
                raw.add_columns({col: "CAST(NULL AS STRING)"})

    def _exists(self, name: str) -> bool:
        return name in table_names(self._db)

    # ---- writing -------------------------------------------------------------------------
    def upsert_partitions(self, chat_id: str, days: list[date], raw_rows: pl.DataFrame,
                          summary_rows: pl.DataFrame | None = None) -> dict[str, Any]:
        """Replace the (chat_id, day) partitions for `days` in both tables with the given rows.

        Rows outside those partitions are rejected (a partitioned writer must not touch others).
        Returns counts: rows deleted/added per table and how many texts were actually embedded.
        """
        if self.versions:
            raise RuntimeError("this MemoryIndex is a pinned reader; open the root to write")
        self._ensure_tables()
        days = sorted(set(days))
        summary_rows = summary_rows if summary_rows is not None else pl.DataFrame()
        where = partition_filter(chat_id, days)
        stats: dict[str, Any] = {"chat_id": chat_id, "days": [d.isoformat() for d in days]}
        for name, rows in ((RAW_TABLE, raw_rows), (SUMMARY_TABLE, summary_rows)):
            tbl = self.table(name)
            rows = self._check_rows(name, rows, chat_id, days)
            data, n_embedded = self._with_vectors(name, tbl, rows)
            before = tbl.count_rows(where)
            dropped = 0
            if before and name == RAW_TABLE:  # messages gone from these days: old versions still hold them
                old_ids = set(tbl.search().where(where).select(["message_id"]).limit(None).to_arrow()["message_id"].to_pylist())
                dropped = len(old_ids - set(data["message_id"].to_pylist() if len(data) else []))
            if before:
                tbl.delete(where)
            if len(data):
                tbl.add(data)
            stats[name] = {"deleted": before, "added": len(data), "embedded": n_embedded, "dropped_messages": dropped}
        self._cache.clear()
        return stats

    def _check_rows(self, name: str, rows: pl.DataFrame, chat_id: str, days: list[date]) -> pl.DataFrame:
        cols = RAW_COLUMNS if name == RAW_TABLE else SUMMARY_COLUMNS
        if rows is None or rows.is_empty():
            return pl.DataFrame()
        if name == SUMMARY_TABLE and "evidence_message_ids" not in rows.columns:
            rows = rows.with_columns(pl.col("message_ids").alias("evidence_message_ids"))
        if name == RAW_TABLE:
            rows = _with_shown(rows)
        missing = [c for c in cols if c not in rows.columns]
        if missing:
            raise ValueError(f"{name}: rows lack columns {missing}")
        rows = rows.select(cols)
        outside = rows.filter((pl.col("chat_id") != chat_id) | ~pl.col("day").is_in(days))
        if not outside.is_empty():
            raise ValueError(f"{name}: {outside.height} rows fall outside partitions {chat_id} × {days}")
        return rows

    def _with_vectors(self, name: str, tbl, rows: pl.DataFrame) -> tuple[pa.Table, int]:
        if rows.is_empty():
            return pa.table({}), 0
        model = self.embedder.model_name
        if name == RAW_TABLE:
            rows = rows.sort("ts", "message_id")
            texts = build_passages(rows, self.context_prev, self.gloss_passages)
            rows = rows.with_columns(pl.Series("passage", texts, dtype=pl.String))
        else:
            texts = rows["text"].to_list()
        shas = [text_sha(t, model) for t in texts]
        # Reuse the vectors (and keys) of identical texts already stored: the rows being replaced
        # (unchanged episodes) and the same text anywhere else ("ok", a greeting, a line sent to
        # every chat); each other distinct text is embedded once, however many messages carry it.
        cached: dict[str, np.ndarray] = {}
        cached_keys: dict[str, str] = {}
        distinct = list(dict.fromkeys(shas))
        for i in range(0, len(distinct), _SHA_LOOKUP_CHUNK):
            self._stored(name, tbl, distinct[i:i + _SHA_LOOKUP_CHUNK], cached, cached_keys)
        todo = {s: t for s, t in zip(shas, texts) if s not in cached}
        dim = self.embedder.dim if todo or not cached else len(next(iter(cached.values())))
        if todo:
            cached.update(zip(todo, self.embedder.encode(list(todo.values()))))
        vecs = np.stack([cached[s] for s in shas]).astype(np.float32, copy=False)
        rows = rows.with_columns(pl.Series("text_sha", shas, dtype=pl.String))
        if name == RAW_TABLE:
            keys = (self._keys(rows["text"].to_list(), shas, cached_keys) if self.entity_keys
                    else [""] * rows.height)
            rows = rows.with_columns(pl.Series("keys", keys, dtype=pl.String))
        schema = raw_schema(dim) if name == RAW_TABLE else summary_schema(dim)
        arrow = rows.to_arrow()
        cols = {}
        for f in schema:
            if f.name == "vector":
                cols["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), dim)
            else:
                cols[f.name] = arrow[f.name].cast(f.type)
        return pa.table(cols, schema=schema), len(todo)

    @staticmethod
    def _stored(name: str, tbl, shas: list[str], vectors: dict[str, np.ndarray], keys: dict[str, str]) -> None:
        """Add the stored vectors (and non-empty keys) of the texts hashed `shas`, by hash."""
        cols = ["text_sha", "vector"] + (["keys"] if name == RAW_TABLE else [])
        old = tbl.search().where(sql_in("text_sha", shas)).select(cols).limit(None).to_arrow()
        if not old.num_rows:
            return
        found = old["text_sha"].to_pylist()
        vecs = old["vector"].combine_chunks()
        vectors.update(zip(found, vecs.flatten().to_numpy().reshape(len(vecs), -1)))
        if name == RAW_TABLE:
            keys.update((s, k) for s, k in zip(found, old["keys"].to_pylist()) if k)

    @staticmethod
    def _keys(texts: list[str], shas: list[str], cached: dict[str, str]) -> list[str]:
        todo = {s: t for s, t in zip(shas, texts) if s not in cached}
        fresh = dict(zip(todo, message_keys(list(todo.values()))))
        return [fresh[s] if s in fresh else cached[s] for s in shas]

    def refresh_indexes(self) -> dict[str, Any]:
        """Build the BM25, id and (when it pays) vector indexes a table lacks, then fold new rows in.

        Rows added since an index was built are not found by full-text search until `optimize()`
        adds them, so every write ends here. Indexes are built once and then updated
        incrementally: rebuilding them on every run made a first ingest of many small runs
        quadratic. `optimize()` also compacts the small fragments per-partition writes leave.
        The IVF partition count is fixed when the vector index is first built.
        """
        from lancedb.index import FTS, BTree, IvfSq

        out: dict[str, Any] = {}
        for name in TABLES:
            tbl = self.table(name)
            if tbl is None:
                continue
            n = tbl.count_rows()
            have = {tuple(i.columns) for i in tbl.list_indices()}
            col = FTS_COLUMNS[name][0]
            for fts in FTS_COLUMNS[name]:
                if (fts,) not in have and fts in tbl.schema.names:  # native (non-tantivy) BM25; English stemming + stopwords
                    tbl.create_index(fts, config=FTS(with_position=False), replace=True)
            # retrieval looks rows up by id (summary expansion, episode neighbours, evidence): without
            # these an `IN (...)` filter scans the table (~35 ms at 300K messages, ~8 ms with them)
            for key in SCALAR_KEYS[name]:
                if (key,) not in have:
                    tbl.create_index(key, config=BTree(), replace=True)
            vector_index = ("vector",) in have
            if not vector_index and n >= VECTOR_INDEX_MIN_ROWS:
                tbl.create_index("vector", config=IvfSq(distance_type="cosine",
                                                        num_partitions=max(16, int(np.sqrt(n)))),
                                 replace=True)
                vector_index = True
            tbl.optimize()
            out[name] = {"rows": n, "fts_column": col, "vector_index": vector_index, "version": tbl.version}
        return out

    # ---- publishing ----------------------------------------------------------------------
    def watermarks(self) -> dict[str, str]:
        if "watermarks" not in self._cache:
            tbl = self.table(RAW_TABLE)
            wm: dict[str, str] = {}
            if tbl is not None and tbl.count_rows():
                df = pl.from_arrow(tbl.search().select(["chat_id", "ts"]).limit(None).to_arrow())
                for chat, ts in df.group_by("chat_id").agg(pl.col("ts").max()).iter_rows():
                    wm[chat] = ts.isoformat()
            self._cache["watermarks"] = dict(sorted(wm.items()))
        return self._cache["watermarks"]

    def month_counts(self, chat_ids: list[str]) -> dict[tuple[str, date], int]:
        """Rows of the raw table per (chat, first day of month): what each chat-month partition holds."""
        tbl = self.table(RAW_TABLE)
        if tbl is None or not chat_ids or not tbl.count_rows():
            return {}
        df = pl.from_arrow(tbl.search().where(sql_in("chat_id", chat_ids)).select(["chat_id", "day"]).limit(None).to_arrow())
        grouped = df.group_by("chat_id", pl.col("day").dt.truncate("1mo")).len()
        return {(c, m): n for c, m, n in grouped.iter_rows()}

    def publish(self, pointer_path: str | Path | None = None) -> dict[str, Any]:
        """Write latest.json atomically (temp file + rename) naming the table versions to read."""
        if pointer_path is None and not isinstance(self.root, Path):
            raise ValueError(f"{self.root}: an object-store index publishes to a local latest.json; pass its path")
        pointer_path = Path(pointer_path) if pointer_path else self.root / POINTER_NAME
        self._tables.clear()  # see the head as it is now
        self._cache.clear()
        tables, rows = {}, {}
        for name in TABLES:
            tbl = self.table(name)
            if tbl is not None:
                tables[name] = int(tbl.version)
                rows[name] = int(tbl.count_rows())
        pointer = {
            "root": str(self.root.resolve()) if isinstance(self.root, Path) else self.root,
            "tables": tables,
            "watermarks": self.watermarks(),
            "rows": rows,
            "embedding_model": self.embedder.model_name,
            "published_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        write_json_atomic(pointer_path, pointer)
        return pointer

    # ---- reading helpers used by retrieval ------------------------------------------------
    def participants(self) -> dict[str, list[str]]:
        """Distinct authors per chat (for speaker-name handling in queries)."""
        if "participants" not in self._cache:
            tbl = self.table(RAW_TABLE)
            out: dict[str, list[str]] = {}
            if tbl is not None and tbl.count_rows():
                df = pl.from_arrow(tbl.search().select(["chat_id", "author"]).limit(None).to_arrow())
                for chat, authors in df.group_by("chat_id").agg(pl.col("author").unique()).iter_rows():
                    out[chat] = sorted(a for a in authors if a)
            self._cache["participants"] = out
        return self._cache["participants"]

    def table_versions(self) -> dict[str, int]:
        return {n: int(t.version) for n in TABLES if (t := self.table(n)) is not None}

