"""SFT and DPO datasets from rated chat turns plus the synthetic pack, and their manifest.

Feedback decides what a transcript teaches: thumbs-down answers leave SFT, and a re-roll where
the user rated one answer above another is exactly the preference DPO wants. Every row is
validated against `schemas.py`; rows that fail are returned with their reason instead of being
dropped, so the blocking check upstream of training sees them. The manifest pins the files'
hash, and `check_manifest` is the trainer's first step: a dataset edited or half-written after
the build is refused before it costs a training run. Turns the person forgot (`truffle forget`,
listed in the runtime store's forget ledger) never become rows; the manifest's `dropped` says how
many turns were left out, and why. `prune_datasets` keeps the datasets inside the retention window:
transcript rows whose turns left the store are dropped and the dataset rewritten (the daily Dagster
job `runtime_retention` calls it after `feedback.retention` prunes the store).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from truffle_assets.training.schemas import SCHEMA_VERSION, DPORow, SFTRow, row_id, split_for
from truffle_assets.feedback.turns import Turn, read_store

# "mcp": calls from other apps' agents (`runtime.mcp.calllog`) are not the person's chat
DROPPED_PRINCIPALS = frozenset({"redacted", "denied", "mcp"})
SPLITS = ("train", "eval")
ROW_MODELS: dict[str, type[BaseModel]] = {"sft": SFTRow, "dpo": DPORow}


class ManifestError(RuntimeError):
    """The dataset on disk is not the one its manifest describes."""


@dataclass
class BuildStats:
    turns: int = 0
    dropped_forgotten: int = 0  # turns the person forgot in this window: never a row, even if restored
    missing_content: int = 0  # content logging was off: counted, never trainable
    dropped_principal: int = 0
    dropped_thumbs_down: int = 0
    sft_transcript: int = 0
    dpo_transcript: int = 0
    reroll_ties: int = 0  # rated re-roll answers with equal ratings or identical text: no pair
    pack_sft: int = 0
    pack_dpo: int = 0
    invalid: int = 0


@dataclass(frozen=True)
class InvalidRow:
    row: dict[str, Any]
    reason: str
    kind: str = ""  # "sft" | "dpo": which dataset's blocking check it fails


@dataclass
class DatasetBuild:
    sft_rows: list[dict[str, Any]]
    dpo_rows: list[dict[str, Any]]
    stats: BuildStats
    invalid: list[InvalidRow] = field(default_factory=list)

    def dropped(self, kind: str) -> dict[str, int]:
        """Turns read from the store that gave this dataset no row, by reason (the manifest's `dropped`)."""
        s = self.stats
        if kind == "sft":
            return {"forgotten": s.dropped_forgotten, "missing_content": s.missing_content,
                    "principal": s.dropped_principal, "thumbs_down": s.dropped_thumbs_down}
        return {"forgotten": s.dropped_forgotten, "reroll_ties": s.reroll_ties}


def _is_dropped(turn: Turn) -> bool:
    return any(p in DROPPED_PRINCIPALS for p in turn.principals)


def _sft_row(turn: Turn, eval_percent: int) -> dict[str, Any]:
    messages = [*turn.messages, {"role": "assistant", "content": turn.answer}]
    return {"id": row_id("transcript", turn.turn_id, messages), "source": "transcript",
            "source_id": turn.turn_id, "kind": "transcript", "messages": messages,
            "split": split_for(turn.turn_id, eval_percent)}


def _dpo_row(chosen: Turn, rejected: Turn, eval_percent: int) -> dict[str, Any]:
    # both answers regenerate the same question; the chosen turn's prompt is the one it answered
    source_id = f"{chosen.turn_id}>{rejected.turn_id}"
    row = {"source": "transcript", "source_id": source_id, "kind": "transcript", "prompt": list(chosen.messages),
           "chosen": chosen.answer, "rejected": rejected.answer, "split": split_for(source_id, eval_percent)}
    return {"id": _expected_id(row), **row}


def reroll_groups(turns: Iterable[Turn]) -> list[list[Turn]]:
    """Turns linked by `reroll_of` chains (B re-rolls A, C re-rolls B: one group), oldest first."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_id = {t.turn_id: t for t in turns}
    for t in by_id.values():
        if t.reroll_of:
            parent[find(t.turn_id)] = find(t.reroll_of)
    groups: dict[str, list[Turn]] = {}
    for t in by_id.values():
        groups.setdefault(find(t.turn_id), []).append(t)
    return [sorted(g, key=lambda t: (t.ts or "", t.turn_id)) for g in groups.values() if len(g) > 1]


def preference_pairs(group: list[Turn], stats: BuildStats) -> list[tuple[Turn, Turn]]:
    """(chosen, rejected) for every two rated answers in a group whose ratings differ."""
    rated = [t for t in group if t.rating is not None and t.has_content and not _is_dropped(t)]
    pairs = []
    for i, a in enumerate(rated):
        for b in rated[i + 1:]:
            if a.rating == b.rating or a.answer.strip() == b.answer.strip():
                stats.reroll_ties += 1
                continue
            pairs.append((a, b) if a.rating > b.rating else (b, a))
    return pairs


def _as_dict(row: Any) -> dict[str, Any]:
    return row.model_dump(mode="json") if isinstance(row, BaseModel) else dict(row)


def _expected_id(row: Mapping[str, Any]) -> str:
    if "messages" in row:
        return row_id(row["source"], row["source_id"], row["messages"])
    return row_id(row["source"], row["source_id"], [*row["prompt"], {"role": "assistant", "content": row["chosen"]},
                                                    {"role": "assistant", "content": row["rejected"]}])


def validate_rows(rows: Iterable[Any], kind: str, eval_percent: int,
                  seen: set[str]) -> tuple[list[dict[str, Any]], list[InvalidRow]]:
    """Rows that pass the schema (normalised through it) and the rest with their reason."""
    model = ROW_MODELS[kind]
    valid, invalid = [], []
    for raw in rows:
        row = _as_dict(raw)
        try:
            parsed = model.model_validate(row).model_dump(mode="json")
        except ValidationError as exc:
            errs = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'row'}: {e['msg']}" for e in exc.errors())
            invalid.append(InvalidRow(row, f"{kind} schema: {errs}"))
            continue
        expected = split_for(parsed["source_id"], eval_percent)
        if parsed["id"] != (want := _expected_id(parsed)):
            invalid.append(InvalidRow(row, f"id {parsed['id']} does not match its content (expected {want})"))
        elif parsed["split"] != expected:
            invalid.append(InvalidRow(row, f"split is {parsed['split']!r} but source_id "
                                           f"{parsed['source_id']!r} belongs in {expected!r}"))
        elif parsed["id"] in seen:
            invalid.append(InvalidRow(row, f"duplicate id {parsed['id']}"))
        else:
            seen.add(parsed["id"])
            valid.append(parsed)
    return valid, [InvalidRow(i.row, i.reason, kind) for i in invalid]


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def build_datasets(turns: Iterable[Turn], pack_sft: Iterable[Any] = (), pack_dpo: Iterable[Any] = (),
                   eval_percent: int = 10, forgotten: Collection[str] = ()) -> DatasetBuild:
    """`forgotten`: ids of the turns the person forgot in this build's window (the forget ledger,
    `forget.runtime_purge.forgotten_turns`); left out of every row, and counted whether or not the
    store still held them (after a purge it does not)."""
    turns = list(turns)
    gone = set(forgotten)
    stats = BuildStats(turns=len(turns), dropped_forgotten=len(gone))
    turns = [t for t in turns if t.turn_id not in gone]
    sft: list[dict[str, Any]] = []
    for t in turns:
        if not t.has_content:
            stats.missing_content += 1
        elif _is_dropped(t):
            stats.dropped_principal += 1
        elif t.rating == -1:
            stats.dropped_thumbs_down += 1
        else:
            sft.append(_sft_row(t, eval_percent))
    dpo = [_dpo_row(c, r, eval_percent) for g in reroll_groups(turns) for c, r in preference_pairs(g, stats)]

    pack_sft, pack_dpo = list(pack_sft), list(pack_dpo)
    seen: set[str] = set()
    sft_rows, bad_sft = validate_rows([*sft, *pack_sft], "sft", eval_percent, seen)
    dpo_rows, bad_dpo = validate_rows([*dpo, *pack_dpo], "dpo", eval_percent, seen)
    stats.sft_transcript = sum(r["source"] == "transcript" for r in sft_rows)
    stats.dpo_transcript = sum(r["source"] == "transcript" for r in dpo_rows)
    stats.pack_sft, stats.pack_dpo = len(pack_sft), len(pack_dpo)
    stats.invalid = len(bad_sft) + len(bad_dpo)
    return DatasetBuild(sft_rows, dpo_rows, stats, bad_sft + bad_dpo)


# --- files and manifest ------------------------------------------------------------------------

class RowCounts(BaseModel):
    train: int
    eval: int
    by_kind: dict[str, int]
    by_source: dict[str, int]


class Manifest(BaseModel):
    kind: str  # sft | dpo
    row_counts: RowCounts
    source_date_range: tuple[str | None, str | None] | None = None
    schema_version: int | str
    pack_version: int | str | None = None
    content_hash: str
    created_at: str
    dropped: dict[str, int] = {}  # reason -> turns left out at the build (or rows a forget removed since)
    extra: dict[str, Any] = {}


def canonical_line(row: Mapping[str, Any]) -> bytes:
    return (json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def content_hash(files: Mapping[str, bytes]) -> str:
    """sha256 over train.jsonl then eval.jsonl, each prefixed by name and length so that moving a
    line from one file to the other changes the hash too."""
    h = hashlib.sha256()
    for name in (f"{s}.jsonl" for s in SPLITS):
        data = files[name]
        h.update(f"{name} {len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


def _counts(rows: list[Mapping[str, Any]]) -> RowCounts:
    split = Counter(r["split"] for r in rows)
    return RowCounts(train=split["train"], eval=split["eval"],
                     by_kind=dict(sorted(Counter(r["kind"] for r in rows).items())),
                     by_source=dict(sorted(Counter(r["source"] for r in rows).items())))


def write_dataset(rows: Iterable[Mapping[str, Any]], out_dir: str | Path, kind: str,
                  meta: Mapping[str, Any] | None = None) -> Manifest:
    """Write train.jsonl, eval.jsonl and manifest.json as one unit: all in a temp dir, then
    renamed into place, so a crash never leaves files that pass `check_manifest` half-done."""
    if kind not in ROW_MODELS:
        raise ValueError(f"kind must be one of {sorted(ROW_MODELS)}, got {kind!r}")
    rows = [_as_dict(r) for r in rows]
    bad = [(i, r.get("id")) for i, r in enumerate(rows) if r.get("split") not in SPLITS]
    if bad:
        raise ValueError(f"rows without a train/eval split: {bad[:5]}")
    model = ROW_MODELS[kind]
    for r in rows:  # the build already reported invalid rows; refuse to persist any
        model.model_validate(r)
    meta = dict(meta or {})
    if "pack_version" not in meta:
        from truffle_assets.training.pack import PACK_VERSION
        meta["pack_version"] = PACK_VERSION
    files = {f"{s}.jsonl": b"".join(canonical_line(r) for r in rows if r["split"] == s) for s in SPLITS}
    dr = meta.pop("source_date_range", None)
    dropped = {str(k): int(v) for k, v in (meta.pop("dropped", None) or {}).items()}
    manifest = Manifest(kind=kind, row_counts=_counts(rows), dropped=dropped,
                        source_date_range=tuple(str(d) if d is not None else None for d in dr) if dr else None,
                        schema_version=SCHEMA_VERSION, pack_version=meta.pop("pack_version"),
                        content_hash=content_hash(files),
                        created_at=datetime.now(UTC).isoformat(timespec="seconds"), extra=meta)
    files["manifest.json"] = manifest.model_dump_json(indent=2).encode() + b"\n"
    _replace_dir(Path(out_dir), files)
    return manifest


def _replace_dir(out: Path, files: Mapping[str, bytes]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        for name, data in files.items():
            with (tmp / name).open("wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        old = None
        if out.exists():  # rename() will not replace a non-empty directory: move the old one aside
            old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
            os.rename(out, old / out.name)
        os.rename(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def check_manifest(out_dir: str | Path) -> Manifest:
    """The manifest, after proving the files match it; ManifestError says what differs."""
    out = Path(out_dir)
    try:
        manifest = Manifest.model_validate_json((out / "manifest.json").read_bytes())
    except OSError as exc:
        raise ManifestError(f"{out}: no readable manifest.json ({exc})") from exc
    except ValidationError as exc:
        raise ManifestError(f"{out}/manifest.json is not a valid manifest: {exc}") from exc
    if str(manifest.schema_version) != str(SCHEMA_VERSION):
        raise ManifestError(f"{out}: written with schema {manifest.schema_version}, "
                            f"this code reads schema {SCHEMA_VERSION}; rebuild the dataset")
    try:
        files = {f"{s}.jsonl": (out / f"{s}.jsonl").read_bytes() for s in SPLITS}
    except OSError as exc:
        raise ManifestError(f"{out}: dataset file missing ({exc})") from exc
    actual = content_hash(files)
    if actual != manifest.content_hash:
        raise ManifestError(f"{out}: content_hash mismatch, the files changed after the manifest was "
                            f"written (manifest {manifest.content_hash[:12]}, files {actual[:12]})")
    model = ROW_MODELS.get(manifest.kind)
    if model is None:
        raise ManifestError(f"{out}: unknown dataset kind {manifest.kind!r}")
    rows = []
    for name, data in files.items():
        for i, line in enumerate(data.splitlines(), start=1):
            try:
                row = model.model_validate_json(line).model_dump(mode="json")
            except ValidationError as exc:
                raise ManifestError(f"{out / name}:{i}: row does not match the {manifest.kind} schema: {exc}") from exc
            if f"{row['split']}.jsonl" != name:
                raise ManifestError(f"{out / name}:{i}: row has split {row['split']!r}")
            rows.append(row)
    counts = _counts(rows)
    if counts != manifest.row_counts:
        raise ManifestError(f"{out}: row counts {counts.model_dump()} differ from the manifest's "
                            f"{manifest.row_counts.model_dump()}")
    return manifest


# ---- retention ------------------------------------------------------------------------------------

@dataclass
class DatasetPrune:
    kind: str
    rows_removed: int
    rows_kept: int
    manifest: Manifest | None = None  # the new manifest when the dataset was rewritten


def _turn_ids(row: Mapping[str, Any]) -> list[str]:
    # SFT rows come from one turn; a DPO pair's source id is "<chosen turn>><rejected turn>"
    return str(row.get("source_id", "")).split(">")


def prune_datasets(dataset_dirs: Mapping[str, str | Path], store_dir: str | Path) -> dict[str, DatasetPrune]:
    """Drop transcript rows whose turns (with their content) are gone from the store; kind -> result.
    Synthetic-pack rows stay. A dataset that fails its manifest check raises (`ManifestError` names
    the folder)."""
    kept = {t.turn_id: t.day for t in read_store(store_dir).turns if t.has_content}
    out: dict[str, DatasetPrune] = {}
    for kind, folder in dataset_dirs.items():
        folder = Path(folder)
        if not (folder / "manifest.json").exists():
            continue
        manifest = check_manifest(folder)
        rows = [r for split in SPLITS for r in read_jsonl(folder / f"{split}.jsonl")]
        keep = [r for r in rows if r["source"] != "transcript" or all(t in kept for t in _turn_ids(r))]
        result = DatasetPrune(kind=manifest.kind, rows_removed=len(rows) - len(keep), rows_kept=len(keep))
        if result.rows_removed:
            days = sorted(kept[t] for r in keep if r["source"] == "transcript" for t in _turn_ids(r))
            dropped = dict(getattr(manifest, "dropped", None) or manifest.extra.get("dropped") or {})
            dropped["retention"] = int(dropped.get("retention", 0)) + result.rows_removed
            meta = {**manifest.extra, "pack_version": manifest.pack_version, "dropped": dropped,
                    "source_date_range": [days[0], days[-1]] if days else None}
            result.manifest = write_dataset(keep, folder, manifest.kind, meta)
        out[kind] = result
    return out
