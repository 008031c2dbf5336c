"""Retention: delete what the runtime kept once it is older than the person's window, and count it.

- `prune_store`: whole day files of turns, content and feedback dated before the cutoff (today
  minus `retention_days`); their records are counted by line, never parsed or shown.
- `prune_retrieval_log`: retrieval traces logged before the cutoff (`RetrievalLog.delete_before`),
  in the chat runtime's `<store>/retrieval.duckdb` and `truffle recall`'s `<store>/../runtime.duckdb`.
- `prune_datasets`: the SFT/DPO datasets are copies of stored turns, so their transcript rows whose
  turns are no longer in the store (pruned, or forgotten) are dropped and the dataset rewritten
  with a fresh manifest; synthetic-pack rows stay.

`ChatService.prune` and the daily Dagster job (`defs/feedback/jobs.py`) call these; no Dagster here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

from truffle_assets.feedback.turns import STREAMS, read_store

LOG_LOCK_WAIT_S = 30.0  # the job may wait for a chat turn's trace write; a turn never waits for it


def retrieval_log_path(store_dir: str | Path) -> Path:
    """The chat runtime's trace log (`RuntimeConfig.retrieval_log`)."""
    return Path(store_dir) / "retrieval.duckdb"


def retrieval_log_paths(store_dir: str | Path) -> list[Path]:
    """Every trace log of this store: the runtime's, and `truffle recall`'s beside the store (the data root)."""
    return [retrieval_log_path(store_dir), Path(store_dir).parent / "runtime.duckdb"]


def cutoff_for(retention_days: int, today: date | datetime | None = None) -> date:
    """The first day still kept: files of earlier days go."""
    today = today or datetime.now(timezone.utc)
    day = today.date() if isinstance(today, datetime) else today
    return day - timedelta(days=retention_days)


@dataclass
class StorePrune:
    cutoff: date
    days: dict[str, list[str]] = field(default_factory=dict)   # stream -> days whose file was deleted
    records: dict[str, int] = field(default_factory=dict)      # stream -> records (lines) those files held
    deleted: list[Path] = field(default_factory=list)

    @property
    def days_removed(self) -> list[str]:
        return sorted({d for ds in self.days.values() for d in ds})


def _records(path: Path) -> int:
    data = path.read_bytes()
    return sum(1 for line in data.split(b"\n") if line.strip())


def prune_store(store_dir: str | Path, retention_days: int, today: date | datetime | None = None) -> StorePrune:
    """Delete the store's day files dated before `cutoff_for(retention_days, today)`."""
    report = StorePrune(cutoff=cutoff_for(retention_days, today))
    for stream in STREAMS:
        folder = Path(store_dir) / stream
        report.days[stream], report.records[stream] = [], 0
        for p in sorted(folder.glob("*.jsonl")) if folder.is_dir() else ():
            try:
                day = date.fromisoformat(p.stem)
            except ValueError:
                continue  # not a day file: not ours to delete
            if day >= report.cutoff:
                continue
            report.records[stream] += _records(p)
            p.unlink(missing_ok=True)
            report.days[stream].append(day.isoformat())
            report.deleted.append(p)
    return report


def prune_retrieval_log(store_dir: str | Path, cutoff: date, lock_wait_s: float = LOG_LOCK_WAIT_S) -> int:
    """Retrieval traces logged before `cutoff` (UTC) deleted from the store's trace logs; how many."""
    from truffle_assets.retrieval.log import RetrievalLog

    before = datetime.combine(cutoff, time.min)
    return sum(RetrievalLog(p, lock_wait_s=lock_wait_s).delete_before(before)
               for p in retrieval_log_paths(store_dir) if p.exists())


@dataclass
class DatasetPrune:
    kind: str
    rows_removed: int
    rows_kept: int
    manifest: Any = None  # the new training.datasets.Manifest when the dataset was rewritten


def _turn_ids(row: Mapping[str, Any]) -> list[str]:
    # SFT rows come from one turn; a DPO pair's source id is "<chosen turn>><rejected turn>"
    return str(row.get("source_id", "")).split(">")


def prune_datasets(dataset_dirs: Mapping[str, str | Path], store_dir: str | Path) -> dict[str, DatasetPrune]:
    """Drop transcript rows whose turns (with their content) are gone from the store; kind -> result.
    A dataset that fails its manifest check raises (`ManifestError` names the folder)."""
    from truffle_assets.training import datasets as ds  # only the Dagster job prunes datasets

    kept = {t.turn_id: t.day for t in read_store(store_dir).turns if t.has_content}
    out: dict[str, DatasetPrune] = {}
    for kind, folder in dataset_dirs.items():
        folder = Path(folder)
        if not (folder / "manifest.json").exists():
            continue
        manifest = ds.check_manifest(folder)
        rows = [r for split in ds.SPLITS for r in ds.read_jsonl(folder / f"{split}.jsonl")]
        keep = [r for r in rows if r["source"] != "transcript" or all(t in kept for t in _turn_ids(r))]
        result = DatasetPrune(kind=manifest.kind, rows_removed=len(rows) - len(keep), rows_kept=len(keep))
        if result.rows_removed:
            days = sorted(kept[t] for r in keep if r["source"] == "transcript" for t in _turn_ids(r))
            dropped = dict(getattr(manifest, "dropped", None) or manifest.extra.get("dropped") or {})
            dropped["retention"] = int(dropped.get("retention", 0)) + result.rows_removed
            meta = {**manifest.extra, "pack_version": manifest.pack_version, "dropped": dropped,
                    "source_date_range": [days[0], days[-1]] if days else None}
            result.manifest = ds.write_dataset(keep, folder, manifest.kind, meta)
        out[kind] = result
    return out
