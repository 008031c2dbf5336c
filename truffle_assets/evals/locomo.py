"""LoCoMo conversations -> WhatsApp Android-style .txt exports, with dia_id -> line -> message id maps,
and the evidence-recall measures `benchmarks/locomo_recall.py` reports.

LoCoMo (Maharana et al., ACL 2024, arXiv:2402.17753; `locomo10.json`, CC BY-NC 4.0) is read from
shared/benchmarks/locomo/ for evaluation only; nothing of it is copied into the repo. Each sample
becomes `WhatsApp Chat with LoCoMo conv-26.txt` (chat id `locomo-conv-26`, stable across runs):

    8/5/23, 13:56 - Caroline: Hey Mel! Good to see you! How have you been?
    8/5/23, 13:57 - Melanie: Hey Caroline! ...

* Each session starts at its `session_N_date_time` ("1:56 pm on 8 May, 2023"). Turn i of the
  session is at start + i minutes. If that would run past 23:59, the session is shifted earlier
  so that it ends at 23:59 and stays on its day. The day is d/m/yy and the time 24h; the parser
  settles the day/month order from days > 12.
* A turn that shared an image gets its BLIP caption appended the way LoCoMo's own retrieval
  baselines do (`task_eval/dpr_qa.py`: `[shares <blip_caption>]`). WhatsApp text exports lose
  images, and the caption is the only trace of them: "[shares a photo of a dog on a beach]".
* Multi-line text is written as continuation lines, as WhatsApp does. A continuation line that
  the parser would read as a header is never produced silently: `convert()` re-parses the export
  with the real parser (`truffle_assets.parsing.parse_file`, `ids.message_ids`, `ids.chat_id_for`)
  and asserts that every turn is exactly one authored entry on its expected line, with its speaker.
* `questions_for` keeps the QAs of categories 1-4 whose evidence names turns of the conversation;
  `recall`, `session_recall` and `session_unit_recall` read a ranking at turn and session level.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from truffle_assets.ids import chat_id_for, message_ids
from truffle_assets.parsing import parse_file
from truffle_assets.parsing.headers import HEADER
from truffle_assets.paths import PROJECT_ROOT

_CANDIDATES = (
    PROJECT_ROOT.parent / "shared" / "benchmarks" / "locomo" / "locomo10.json",
    Path("/work/shared/benchmarks/locomo/locomo10.json"),
)
_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")  # also reads the malformed "D:11:26", "D30:05", "D8:6; D9:17"
LAST_MINUTE = timedelta(hours=23, minutes=59)


def locomo_path() -> Path | None:
    """$TRUFFLE_LOCOMO, else shared/benchmarks/locomo/locomo10.json beside the repo; None if absent."""
    env = os.environ.get("TRUFFLE_LOCOMO")
    for p in ([Path(env)] if env else []) + list(_CANDIDATES):
        if p.is_file():
            return p
    return None


def load_locomo(path: str | Path | None = None) -> list[dict]:
    p = Path(path) if path else locomo_path()
    if p is None or not p.is_file():
        raise FileNotFoundError("locomo10.json not found: set TRUFFLE_LOCOMO or put it in shared/benchmarks/locomo/")
    return json.loads(p.read_text(encoding="utf-8"))


def export_name(sample_id: str) -> str:
    return f"WhatsApp Chat with LoCoMo {sample_id}.txt"


def parse_session_time(s: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> datetime(2023, 5, 8, 13, 56)."""
    return datetime.strptime(" ".join(s.split()).upper(), "%I:%M %p ON %d %B, %Y")


def turn_text(turn: dict) -> str:
    text = turn.get("text", "")
    caption = (turn.get("blip_caption") or "").strip()
    if caption:
        text = f"{text} [shares {caption}]" if text.strip() else f"[shares {caption}]"
    return text


def normalize_evidence(evidence: list[str]) -> list[str]:
    """Evidence dia ids, cleaned of the data set's typos ('D:11:26' -> 'D11:26', 'D30:05' -> 'D30:5')."""
    out: list[str] = []
    for ev in evidence or []:
        for s, t in _EVIDENCE.findall(str(ev)):
            d = f"D{int(s)}:{int(t)}"
            if d not in out:
                out.append(d)
    return out


@dataclass
class Conversion:
    sample_id: str
    path: Path
    chat_id: str
    speakers: tuple[str, str]
    dia_line: dict[str, int] = field(default_factory=dict)  # dia_id -> 1-based header line in the export
    dia_message: dict[str, str] = field(default_factory=dict)  # dia_id -> message id after parsing
    texts: dict[str, str] = field(default_factory=dict)  # dia_id -> "Speaker: text" as written
    times: dict[str, datetime] = field(default_factory=dict)  # dia_id -> timestamp written
    n_sessions: int = 0

    @property
    def message_dia(self) -> dict[str, str]:
        return {m: d for d, m in self.dia_message.items()}


def sessions(conv: dict) -> list[tuple[int, datetime, list[dict]]]:
    """(N, start, turns) for every session that has turns, in session order."""
    out = []
    for key, turns in conv.items():
        m = _SESSION.fullmatch(key)
        if m and turns:
            out.append((int(m.group(1)), parse_session_time(conv[f"{key}_date_time"]), turns))
    return sorted(out)


def render(sample: dict) -> tuple[list[str], dict[str, int], dict[str, str], dict[str, datetime]]:
    """The export's lines, and per dia_id: header line (1-based), 'Speaker: text', timestamp."""
    lines: list[str] = []
    dia_line: dict[str, int] = {}
    texts: dict[str, str] = {}
    times: dict[str, datetime] = {}
    for _, start, turns in sessions(sample["conversation"]):
        day0 = start.replace(hour=0, minute=0)
        last = start + timedelta(minutes=len(turns) - 1)
        if last - day0 > LAST_MINUTE:  # would spill past midnight: end the session at 23:59 instead
            start = max(day0, day0 + LAST_MINUTE - timedelta(minutes=len(turns) - 1))
        for i, turn in enumerate(turns):
            ts = start + timedelta(minutes=i)
            dia = turn["dia_id"]
            if dia in dia_line:
                raise ValueError(f"{sample['sample_id']}: duplicate dia_id {dia}")
            text = turn_text(turn)
            body = text.split("\n")
            for cont in body[1:]:
                if HEADER.match(cont):  # would read as a new message: WhatsApp itself cannot produce this
                    raise ValueError(f"{sample['sample_id']} {dia}: continuation line looks like a header: {cont!r}")
            dia_line[dia] = len(lines) + 1
            lines.append(f"{ts.day}/{ts.month}/{ts.year % 100:02d}, {ts:%H:%M} - {turn['speaker']}: {body[0]}")
            lines.extend(body[1:])
            texts[dia] = f"{turn['speaker']}: {text}"
            times[dia] = ts
    return lines, dia_line, texts, times


def convert(sample: dict, out_dir: str | Path) -> Conversion:
    """Write one sample's export into out_dir, parse it back, and map every dia_id to its message id."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / export_name(sample["sample_id"])
    lines, dia_line, texts, times = render(sample)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    conv = sample["conversation"]
    res = Conversion(sample["sample_id"], path, chat_id_for(path), (conv["speaker_a"], conv["speaker_b"]),
                     dia_line, texts=texts, times=times, n_sessions=len(sessions(conv)))

    result = parse_file(path)
    ids = message_ids(res.chat_id, result.entries)
    by_line = {e.line_start: (e, mid) for e, mid in zip(result.entries, ids)}
    speaker = {t["dia_id"]: t["speaker"] for _, _, turns in sessions(conv) for t in turns}
    assert not result.quarantined, f"{path.name}: quarantined lines {result.quarantined[:3]}"
    assert len(result.entries) == len(dia_line), f"{path.name}: {len(result.entries)} entries for {len(dia_line)} turns"
    for dia, line in dia_line.items():
        assert line in by_line, f"{path.name}: {dia} (line {line}) is not a message header"
        e, mid = by_line[line]
        assert e.authored and e.author == speaker[dia], f"{path.name}: {dia} parsed as {e.kind} by {e.author!r}"
        assert e.ts == times[dia], f"{path.name}: {dia} parsed at {e.ts}, written at {times[dia]}"
        res.dia_message[dia] = mid
    assert len(set(res.dia_message.values())) == len(res.dia_message), f"{path.name}: message ids collide"
    return res


def convert_all(out_dir: str | Path, limit: int | None = None, path: str | Path | None = None) -> list[Conversion]:
    data = load_locomo(path)
    return [convert(s, out_dir) for s in data[:limit]]


# ---- questions and recall --------------------------------------------------------------------------

CATEGORIES = (1, 2, 3, 4)  # multi-hop, temporal, open-domain, single-hop; 5 (adversarial) has no evidence
DEV_CONVS = frozenset({"conv-26", "conv-30", "conv-41"})  # the fusion weights' tuning conversations


@dataclass
class Question:
    conv: str
    index: int  # position in the sample's qa list
    question: str
    category: int
    evidence: list[str]  # dia ids
    gold: list[str]  # message ids, same order
    sessions: frozenset[int] = frozenset()  # sessions of the evidence turns


def session_of(dia: str) -> int:
    """'D12:3' -> 12."""
    return int(dia[1:].split(":")[0])


def questions_for(sample: dict, conversion: Conversion) -> tuple[list[Question], dict]:
    out, skipped = [], defaultdict(int)
    for i, qa in enumerate(sample["qa"]):
        cat = qa.get("category")
        if cat not in CATEGORIES:
            skipped[f"category_{cat}"] += 1
            continue
        ev = [d for d in normalize_evidence(qa.get("evidence", [])) if d in conversion.dia_message]
        dangling = len(normalize_evidence(qa.get("evidence", []))) - len(ev)
        skipped["dangling_evidence_ids"] += dangling
        if not ev:
            skipped["no_evidence"] += 1
            continue
        out.append(Question(sample["sample_id"], i, qa["question"], cat, ev, [conversion.dia_message[d] for d in ev],
                            frozenset(session_of(d) for d in ev)))
    return out, dict(skipped)


def recall(ranked: list[str], gold: list[str], k: int) -> float:
    top = set(ranked[:k])
    return sum(g in top for g in gold) / len(gold)


def session_recall(ranked: list[str], sessions: frozenset[int], message_session: dict[str, int], k: int) -> float:
    """Share of the evidence sessions that hold at least one of the top-k retrieved turns."""
    hit = {message_session.get(m) for m in ranked[:k]}
    return sum(s in hit for s in sessions) / len(sessions)


def session_unit_recall(ranked: list[str], sessions: frozenset[int], message_session: dict[str, int], k: int) -> float:
    """Sessions ranked as units (each at its best turn's rank): share of the evidence sessions in the first k."""
    order = list(dict.fromkeys(s for s in (message_session.get(m) for m in ranked) if s is not None))
    top = set(order[:k])
    return sum(s in top for s in sessions) / len(sessions)
