"""Episodes: contiguous stretches of one chat-day, the unit that is summarized and indexed.

A new episode starts at a new chat or day (episodes never span two partitions), after a silence
longer than `gap_minutes`, or when the next line would push the episode past `max_tokens`.
A single line longer than `max_tokens` becomes an episode of its own, its text truncated.

`text` holds exactly one line per message, in `message_ids` order: "HH:MM Author: text", with
line breaks inside a message shown as " / " and non-text kinds as tags ("[media]", "[deleted]",
"[poll] question / options"...), so line i of an episode is always message_ids[i].

`build_episodes` leaves the salience columns null; `salience.score_episodes` fills them, because
scoring needs chat-wide inputs (reference time, term counts) that one partition does not have.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from datetime import timedelta

import polars as pl

__all__ = ["EPISODE_COLUMNS", "EPISODE_SCHEMA", "approx_tokens", "build_episodes", "render_line"]

EPISODE_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(), "chat_id": pl.String(), "day": pl.Date(), "start_ts": pl.Datetime("us"),
    "end_ts": pl.Datetime("us"), "message_ids": pl.List(pl.String()), "n_messages": pl.Int64(),
    "n_tokens": pl.Int64(), "text": pl.String(), "salience": pl.Float64(), "recency": pl.Float64(),
    "user_centricity": pl.Float64(), "repetition": pl.Float64(), "density": pl.Float64(),
    "urgency": pl.Float64(),
}
EPISODE_COLUMNS = tuple(EPISODE_SCHEMA)
SALIENCE_COLUMNS = ("salience", "recency", "user_centricity", "repetition", "density", "urgency")

_PIECE = re.compile(r"\w+|[^\w\s]")
_LINEBREAK = re.compile(r"\s*[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+\s*")
_TAG_ONLY = {"media": "[media]", "deleted": "[deleted]", "location": "[location]", "contact": "[contact]"}
TRUNCATED = " …[truncated]"


def approx_tokens(text: str) -> int:
    """Fast token estimate: 1.3 per word-or-symbol piece, never below one per 4 characters.

    Subword tokenizers split rare words, so 1.3 × words tracks English; Indic vowel signs count as
    separate pieces and long emoji shortcodes fall back to chars/4, which keeps the estimate on the
    high side for scripts that BPE vocabularies cover poorly. Good enough for a budget, not billing.
    """
    return max(math.ceil(1.3 * len(_PIECE.findall(text))), (len(text) + 3) // 4)


def _one_line(text: str) -> str:
    if text.isprintable():  # no line or paragraph separators (nor other controls) inside
        return text.strip()
    return _LINEBREAK.sub(" / ", text.strip())


def render_line(hhmm: str, author: str | None, kind: str, text: str | None) -> str:
    """One transcript line; never contains a line break."""
    body = _one_line(text or "")
    if kind in _TAG_ONLY:
        tag = _TAG_ONLY[kind]
        # media may carry a caption after the file line; keep it, drop the file placeholder
        if kind == "media" and text and "\n" in text.strip():
            tag = f"{tag} {_one_line(text.strip().split(chr(10), 1)[1])}"
        body = tag
    elif kind != "message":
        body = f"[{kind}] {body}".rstrip()
    elif not body:
        body = "[empty]"
    who = _one_line(author) if author else "System"
    return f"{hhmm} {who}: {body}"


class _CachedApprox:
    """approx_tokens(line) computed from cached piece counts of the line's prefix and body.

    "HH:MM Author: body" splits into pieces at its spaces, so pieces add up; identical bodies
    ("ok", "[media]") recur a lot, so each is scanned once. Same result as approx_tokens.
    """

    def __init__(self) -> None:
        self.pieces: dict[str, int] = {}

    def __call__(self, line: str) -> int:
        head, sep, body = line.partition(": ")
        if not sep:
            return approx_tokens(line)
        n = 0
        for part in (head, body):
            k = self.pieces.get(part)
            if k is None:
                k = self.pieces[part] = len(_PIECE.findall(part))
            n += k
        return max(math.ceil(1.3 * (n + 1)), (len(line) + 3) // 4)  # +1: the ":" between


def _truncate(line: str, max_tokens: int, count: Callable[[str], int]) -> tuple[str, int]:
    """Shorten an over-long line until it fits, keeping its "HH:MM Author:" prefix."""
    n = count(line)
    while n > max_tokens and len(line) > len(TRUNCATED) + 8:
        keep = max(8, int(len(line) * max_tokens / n * 0.95) - len(TRUNCATED))
        line = line[:keep].rstrip() + TRUNCATED if keep < len(line) else line[: len(line) // 2]
        n = count(line)
    return line, n


def _episode_id(chat_id: str, ids: list[str], texts: list[str]) -> str:
    h = hashlib.sha256(chat_id.encode())
    for mid, t in zip(ids, texts):
        h.update(b"\x1f" + mid.encode() + b"\x1e" + t.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


def build_episodes(
    msgs: pl.DataFrame,
    gap_minutes: int = 30,
    max_tokens: int = 1000,
    count_tokens: Callable[[str], int] | None = None,
) -> pl.DataFrame:
    """Messages (`id, chat_id, day, ts, author, is_user, kind, normalized_text`) -> `episodes` rows
    with null salience columns. Order: chat, ts, then `line_start` when present (keeps the export's
    order within a minute), then id.
    """
    count = count_tokens or _CachedApprox()
    keys = ["chat_id", "ts"] + (["line_start"] if "line_start" in msgs.columns else []) + ["id"]
    m = msgs.sort(keys)
    ids = m["id"].to_list()
    chats = m["chat_id"].to_list()
    days = m["day"].to_list()
    tss = m["ts"].to_list()
    authors = m["author"].to_list()
    kinds = m["kind"].to_list()
    texts = [t or "" for t in m["normalized_text"].to_list()]
    gap = timedelta(minutes=gap_minutes)

    out: dict[str, list] = {c: [] for c in ("id", "chat_id", "day", "start_ts", "end_ts", "message_ids",
                                             "n_messages", "n_tokens", "text")}
    cur: list[int] = []
    cur_lines: list[str] = []
    cur_tokens = 0

    def flush() -> None:
        nonlocal cur, cur_lines, cur_tokens
        if not cur:
            return
        first, last = cur[0], cur[-1]
        mids = [ids[i] for i in cur]
        out["id"].append(_episode_id(chats[first], mids, [texts[i] for i in cur]))
        out["chat_id"].append(chats[first])
        out["day"].append(days[first])
        out["start_ts"].append(tss[first])
        out["end_ts"].append(tss[last])
        out["message_ids"].append(mids)
        out["n_messages"].append(len(cur))
        out["n_tokens"].append(cur_tokens)
        out["text"].append("\n".join(cur_lines))
        cur, cur_lines, cur_tokens = [], [], 0

    for i in range(len(ids)):
        ts = tss[i]
        line = render_line(f"{ts.hour:02d}:{ts.minute:02d}", authors[i], kinds[i], texts[i])
        t = count(line)
        if cur:
            j = cur[-1]
            if chats[j] != chats[i] or days[j] != days[i] or ts - tss[j] > gap or cur_tokens + t > max_tokens:
                flush()
        if t > max_tokens:  # alone and still too long: its own episode, text cut, id kept
            line, t = _truncate(line, max_tokens, count)
        cur.append(i)
        cur_lines.append(line)
        cur_tokens += t
        if cur_tokens >= max_tokens:
            flush()
    flush()

    frame = pl.DataFrame(out, schema={c: EPISODE_SCHEMA[c] for c in out})
    return frame.with_columns(
        [pl.lit(None, dtype=pl.Float64).alias(c) for c in SALIENCE_COLUMNS]
    ).select(EPISODE_COLUMNS)
