"""`truffle forget` and `POST /api/forget`: take something back from the memory, everywhere.

In order, so that a crash at any point leaves a state the same command finishes:
1. reach: what the request covers in DuckDB (messages, or one fact) and what derives from it;
   a dry run stops here and reports it (`selection`: the chats, days, messages and facts, as a
   person reads them; `removed`: the count per store), plus what the purges below would remove;
2. the purges that need the forgotten text (runtime turns and traces that quoted it, training
   dataset rows, LLM cache entries), while DuckDB still holds it; the ids (never the text) are
   kept beside the tombstone for step 5;
3. the tombstone: from now on every load of the export leaves the items out;
4. the chat × month chain over the chats concerned (`ingest_all`): the days that held them
   changed, so exactly those are rebuilt, and the index is republished without them; a forgotten
   fact re-consolidates facts and rebuilds the profile;
5. `forget_memory`, a Dagster run of its own: LanceDB's old versions go, every store is checked
   for the ids, the audit chain gets a line (kinds and counts), the tombstone is marked done.
"""

from __future__ import annotations

import json
from datetime import date, datetime, UTC
from pathlib import Path

import dagster as dg

from truffle_assets.defs.forget.jobs import FORGET_TAG, forget_memory
from truffle_assets.defs.recovery import owner_tags
from truffle_assets.defs.run_log import execute
from truffle_assets.defs.ingest.runner import ingest_all
from truffle_assets.defs.resources import (
    DuckDBStore, ExportsResource, IndexResource, ModelsResource, PublishedResource, env_var_if_set,
)
from truffle_assets.files import write_json_atomic
from truffle_assets.forget.caches import purge_index_versions, purge_llm_cache
from truffle_assets.forget.inventory import Reach, reach
from truffle_assets.forget.selection import selection
from truffle_assets.ingest.chat_names import mapped_names
from truffle_assets.ingest.tombstones import Tombstone, Tombstones, tombstone_id, validate
from truffle_assets.registry import KEY_ENV


class NothingToForget(LookupError):
    """A message, fact or chat id the memory does not hold."""


def _layout(db_path: Path) -> dict[str, Path]:
    data = Path(db_path).parent
    return {"forget": data / "forget", "cache": data / "cache", "index": data / "index",
            "published": data / "published", "runtime": data / "runtime", "training": data / "training",
            "registry": data / "models" / "registry"}


def forget(kind: str, value: str, chat: str | None = None, *, exports_dir: Path, db_path: Path,
           instance: dg.DagsterInstance | None = None, dry_run: bool = False, llm=None, progress=None) -> dict:
    """`progress`: `ingest_all`'s callback, told of the rebuild of the chats concerned."""
    where = _layout(db_path)
    tombs = Tombstones.in_dir(where["forget"])
    kind, value, chat = validate(kind, value, chat)
    tid = tombstone_id(kind, value, chat)
    pending = next((t for t in tombs.load() if t.id == tid), None)
    t = pending or Tombstone(tid, kind, value, chat, datetime.now(UTC).isoformat(timespec="seconds"))
    r = reach(db_path, t)
    ids_path = where["forget"] / f"{tid}.ids.json"  # what step 5 checks, also after a crash
    if ids_path.exists():
        saved = json.loads(ids_path.read_text())
        r.message_ids |= set(saved["message_ids"])
        r.fact_ids |= set(saved["fact_ids"])
        r.chats |= set(saved["chats"])
    if pending is None and kind in ("chat", "message", "fact") and not (r.message_ids or r.fact_ids):
        raise NothingToForget(f"no {kind} {value!r} in the memory at {db_path}")
    out = {"dry_run": dry_run, "kind": kind, "id": t.describe() if kind == "contains" else value,
           "what": t.describe(), "tombstone": tid, "chats": sorted(r.chats),
           "selection": selection(r, mapped_names(where["cache"]))}
    removed = {k: v for k, v in r.counts.items()}
    removed.update(_content_purges(where, r, dry_run))
    if dry_run:
        removed["lance_old_versions"] = purge_index_versions(where["index"], dry_run=True)
        return {**out, "removed": removed}
    write_json_atomic(ids_path, {"message_ids": sorted(r.message_ids), "fact_ids": sorted(r.fact_ids),
                                 "chats": sorted(r.chats)})
    t = tombs.add(kind, value, chat)
    instance = instance or dg.DagsterInstance.ephemeral()
    tags = {FORGET_TAG: tid}
    refacts = _fact_partition(r) if kind == "fact" else None
    wanted = sorted(r.chats | ({chat} if chat else set()) | ({value} if kind == "chat" else set()))
    report = ingest_all(exports_dir, db_path, chats_wanted=wanted or None, instance=instance, llm=llm,
                        refacts=refacts, tags=tags, progress=progress)
    if report["failed"]:
        raise RuntimeError(f"forget {t.describe()}: a rebuild run failed ({report}); re-run the same forget")
    result = execute(  # Dagster's events where the caller's run_console sends them
        forget_memory, run_config={"ops": {"finish_forget": {"config": {
            "tombstone_id": tid, "message_ids": sorted(r.message_ids), "fact_ids": sorted(r.fact_ids),
            "removed": removed}}}},
        instance=instance, tags={**tags, **owner_tags()}, raise_on_error=False,
        resources={
            "duckdb": DuckDBStore(path=str(db_path)), "index": IndexResource(root=str(where["index"])),
            "published": PublishedResource(dir=str(where["published"])),
            "exports": ExportsResource(exports_dir=str(exports_dir), cache_dir=str(where["cache"]),
                                       forget_dir=str(where["forget"])),
            "models": ModelsResource(registry_dir=str(where["registry"]), runtime_dir=str(where["runtime"]),
                                     datasets_dir=str(where["training"]), audit_key=env_var_if_set(KEY_ENV)),
        })
    if not result.success:
        err = next((e.step_failure_data.error for e in result.all_events if e.is_step_failure), None)
        while err is not None and err.cause is not None:  # the op's own error, not Dagster's wrapper
            err = err.cause
        raise RuntimeError(f"forget {t.describe()}: {err.message.strip() if err else 'run failed'} "
                           f"(run {result.run_id})")
    done = result.output_for_node("finish_forget")
    ids_path.unlink(missing_ok=True)
    return {**out, "removed": done["removed"], "audit": done["audit"], "run_id": result.run_id,
            "rebuild_runs": [run["run_id"] for c in report["chats"].values() for run in c["runs"]]
            + [report[k]["run_id"] for k in ("facts", "profile") if k in report]}


def _content_purges(where: dict[str, Path], r: Reach, dry_run: bool) -> dict[str, int]:
    """The stores that can only be searched by the text itself: purged before DuckDB loses it."""
    out = {"llm_cache": purge_llm_cache(where["cache"] / "llm", r.episode_ids, r.texts, dry_run)}
    from truffle_assets.forget.runtime_purge import Forgotten, purge_datasets, purge_runtime

    gone = Forgotten(message_ids=r.message_ids, texts=r.texts, fact_ids=r.fact_ids, fact_texts=r.fact_texts)
    out.update(purge_runtime(where["runtime"], gone, dry_run=dry_run))
    # the ledger purge_runtime keeps names the turns; a dry run has none recorded, so it matches `gone`
    out.update(purge_datasets(where["training"], where["runtime"], dry_run=dry_run, forgotten=gone))
    return out


def _fact_partition(r: Reach) -> tuple[str, date] | None:
    """A partition to re-run `facts` in: facts are consolidated over every claim on any partition's run."""
    if not r.months:
        return None
    chat, month = sorted(r.months)[0]
    return chat, date.fromisoformat(month + "-01")


def tombstones(db_path: Path) -> Tombstones:
    """The tombstones of the memory stored at `db_path`."""
    return Tombstones.in_dir(_layout(db_path)["forget"])


def unforget(tombstone: str, db_path: Path) -> Tombstone | None:
    """Remove a tombstone; the next ingest of an export that still holds the items brings them back."""
    return tombstones(db_path).remove(tombstone)
