"""Retention: delete what the runtime kept once it is older than the person's window, and count it.

- `prune_store`: whole day files of turns, content and feedback dated before the cutoff (today
  minus `retention_days`); their records are counted by line, never parsed or shown.
- `prune_retrieval_log`: retrieval traces logged before the cutoff (`RetrievalLog.delete_before`),
  in the chat runtime's `<store>/retrieval.duckdb` and `truffle recall`'s `<store>/../runtime.duckdb`.

`ChatService.prune` and the daily Dagster job (`defs/feedback/jobs.py`) call these; the job also
prunes the training datasets made from these turns (`training.datasets.prune_datasets`). No Dagster
and no training code here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, UTC
from pathlib import Path

from truffle_assets.feedback.turns import STREAMS

LOG_LOCK_WAIT_S = 30.0  # the job may wait for a chat turn's trace write; a turn never waits for it


def retrieval_log_path(store_dir: str | Path) -> Path:
    """The chat runtime's trace log (`RuntimeConfig.retrieval_log`)."""
    return Path(store_dir) / "retrieval.duckdb"


def retrieval_log_paths(store_dir: str | Path) -> list[Path]:
    """Every trace log of this store: the runtime's, and `truffle recall`'s beside the store (the data root)."""
    return [retrieval_log_path(store_dir), Path(store_dir).parent / "runtime.duckdb"]


def cutoff_for(retention_days: int, today: date | datetime | None = None) -> date:
    """The first day still kept: files of earlier days go."""
    today = today or datetime.now(UTC)
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
