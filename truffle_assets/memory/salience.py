"""Salience of episodes: how much an episode is worth remembering, from five cheap signals.

Every component lies in [0, 1]; `salience` is their weighted sum (weights sum to 1):

- recency (0.20): 0.5 ** (age / half_life), age = chat's reference time (its latest message)
  minus the episode's end; half-life 180 days by default.
- user_centricity (0.25): half the user's share of the authored messages, half the share of
  messages that are about or aimed at the user: the user's own first person (I/me/my, main/mera/
  mujhe, मैं/मेरा/मुझे) or others' second person (you/your, tum/aap/tera, तुम/आप) or user name.
- repetition (0.15): 0.7 × share of the episode's content terms that recur elsewhere in the chat
  (per-chat message document frequencies from `term_document_counts` minus the episode's own
  messages; full weight up to 0.2% of messages, log-fading to none at 10%) + 0.3 × share of terms
  repeated across the episode's messages; half the terms recurring saturates either part.
- density (0.25): entities (mid-sentence capitalized words, numbers and dates, month and weekday
  names, PII placeholders) plus twice the life-event words (moved, engaged, birthday, exam,
  hospital, shaadi, नौकरी...), saturating per √messages.
- urgency (0.15): urgency and strong-affect words (urgent, asap, sorry, congrats, love, hate...),
  emoji shortcodes like :loudly_crying_face:, "!!"/"??" and shouted ALL-CAPS words, same saturation.

Scores depend only on the episode, its messages, and the chat-wide inputs passed in, so scoring
one day's partition gives the same numbers as scoring the whole chat.

An episode is scored as of when it was built: the `episodes` asset takes the chat-wide inputs from
what the store holds during its run, and a run redoes only changed days (a chat whose active months
have gaps is ingested as one run per stretch, oldest first), so older episodes keep the recency and
repetition of the run that built them; the other components depend on the episode alone. By
design: the tier an episode was summarized at is decided then, and rescoring it would re-summarize
and re-index the whole chat with every new export. `truffle ingest --full` rescores every episode
against the whole chat. benchmarks/salience_drift.py (2 synthetic chats, 831 episodes): one
incremental run at 2/3 of the timeline moves 241 episodes by 0.025 on average (max 0.19) and lifts
73 to a higher tier; monthly re-exports would sit 0.16 above whole-chat scores on average (358 tiers
up), as recency stays near 1; recall@10 is unchanged and the salience signal alone keeps 96-97 % of
each top 10.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Iterable
from datetime import datetime

import polars as pl

from truffle_assets.memory.episodes import EPISODE_COLUMNS
from truffle_assets.memory.rosetta import STOPWORDS, word_tokens

__all__ = [
    "SALIENCE_WEIGHTS", "content_terms", "score_episodes", "term_document_counts", "salience_histogram_png",
]

SALIENCE_WEIGHTS: dict[str, float] = {
    "recency": 0.20, "user_centricity": 0.25, "repetition": 0.15, "density": 0.25, "urgency": 0.15,
}
DOCS_KEY = ""  # term_counts[chat][""] = number of documents (messages) counted; never a real term
TEXT_KINDS = ("message", "poll")

_HI_DEVA_STOP = frozenset(
    "है हैं का की के को में से और तो भी ना नहीं क्या ये यह वो हूँ हूं था थी कर हो रहा रही रहे आज कल बहुत ठीक मैं "
    "मेरा तुम आप हाँ हां जी पे पर एक सब कुछ अब फिर बस ने लिए गया गई".split()
)
_CHAT_FILLER = frozenset(
    "haha hahaha hahahaha lol lmao rofl hmm hmmm okay yeah yep nope yes wow omg arre acha accha theek".split()
)
_STOP = frozenset().union(*STOPWORDS.values(), _HI_DEVA_STOP, _CHAT_FILLER)

_FIRST_PERSON = frozenset(
    "i me my mine myself main mai mera meri mere mujhe mujhko maine मैं मैंने मेरा मेरी मेरे मुझे मुझको".split()
)
_SECOND_PERSON = frozenset(
    "you your yours yourself u ur tu tum tumhara tumhari tumhare tumhe tumko tera teri tere tujhe aap aapka "
    "aapki aapke aapko तुम तुम्हारा तुम्हारी तुम्हें तू तेरा तेरी तुझे आप आपका आपकी आपको".split()
)
_EVENTS = frozenset(
    "moved moving shifted shifting relocated relocating joined joining engaged engagement married marriage "
    "wedding shaadi shadi birthday bday anniversary trip vacation holiday flight visa passport exam exams "
    "result results interview offer promotion promoted hired fired layoff resigned resignation graduated "
    "graduation convocation admission hospital hospitalised hospitalized surgery operation doctor admitted "
    "accident injured fracture died death funeral pregnant pregnancy baby born delivery diagnosed fever "
    "covid dengue loan bought sold house flat apartment rent breakup proposed proposal divorce job naukri "
    "salary bonus appointment festival diwali holi eid christmas party launch deadline "
    "शादी जन्मदिन परीक्षा अस्पताल नौकरी डॉक्टर यात्रा सगाई".split()
)
_TIME_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april june july "
    "august september october november december jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_URGENT = frozenset(
    "urgent urgently asap emergency immediately help quick quickly jaldi turant important serious worried "
    "worry scared please pls plz sorry congrats congratulations badhai mubarak love hate miss sad cry "
    "crying upset angry happy proud excited terrible horrible sick hurt pain rip omg wtf pyaar pyar khush "
    "naraz gussa maaf जल्दी ज़रूरी जरूरी प्यार माफ़ बधाई दुख चिंता".split()
)
_URGENT_EMOJI = frozenset(
    "loudly_crying_face crying_face pouting_face broken_heart red_heart face_with_pleading_eyes party_popper "
    "face_screaming_in_fear fearful_face anguished_face disappointed_face confetti_ball worried_face "
    "weary_face pensive_face persevering_face face_with_symbols_on_mouth".split()
)
_SHORTCODE = re.compile(r":([a-z0-9_]+):")
_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*\]|<[A-Z][A-Z0-9_]*>")
_NUMBER = re.compile(r"\d+(?:[:/.,-]\d+)*")
_CAP_WORD = re.compile(r"(?<![\w'])([A-Z][a-z]+|[A-Z]{2,})(?![\w'])")
_SENTENCE_END = frozenset(".!?:")
_SPEC_SPAN = math.log(0.1 / 0.002)
_BANG = re.compile(r"[!?]{2,}")
_SHOUT = re.compile(r"\b[A-Z]{3,}\b")


def content_terms(text: str) -> set[str]:
    """Distinct lower-cased content words (3+ letters, not stopwords or chat filler)."""
    return {t for t in word_tokens(text) if len(t) >= 3 and t not in _STOP}


def term_document_counts(msgs: pl.DataFrame) -> dict[str, dict[str, int]]:
    """Per chat: content term -> number of messages containing it, plus [""] = messages counted.

    Compute it over the whole chat and pass it to `score_episodes`, so a partition's repetition
    score does not depend on which other partitions happen to be in the batch.
    """
    text_col = "normalized_text" if "normalized_text" in msgs.columns else "redacted_text"
    m = msgs.filter(pl.col("kind").is_in(TEXT_KINDS)) if "kind" in msgs.columns else msgs
    cache: dict[str, set[str]] = {}
    out: dict[str, Counter[str]] = {}
    for chat, text in zip(m["chat_id"].to_list(), m[text_col].to_list()):
        c = out.setdefault(chat, Counter())
        c[DOCS_KEY] += 1
        if text:
            terms = cache.get(text)
            if terms is None:
                terms = cache[text] = content_terms(text)
            c.update(terms)
    return {chat: dict(c) for chat, c in out.items()}


def _saturate(x: float, scale: float) -> float:
    return 1.0 - math.exp(-x / scale) if scale > 0 else 0.0


def _features(text: str) -> tuple[frozenset[str], int, int, int, frozenset[str]]:
    """(tokens, entities, events, urgency hits, content terms) of one message text."""
    toks = word_tokens(text)
    tokset = frozenset(toks)
    ents, events = _entities_events(text, toks)
    terms = frozenset(t for t in tokset if len(t) >= 3 and t not in _STOP)
    return tokset, ents, events, _urgency_hits(text, toks), terms


def _entities_events(text: str, toks: list[str]) -> tuple[int, int]:
    ents = len(_PLACEHOLDER.findall(text)) + len(_NUMBER.findall(text))
    if not text.islower():
        for m in _CAP_WORD.finditer(text):
            i = m.start()
            while i > 0 and text[i - 1].isspace():
                i -= 1
            word = m.group()
            # sentence-initial capitals are grammar, not names
            if i > 0 and text[i - 1] not in _SENTENCE_END and word.lower() not in _STOP:
                ents += 1
    ents += sum(1 for t in toks if t in _TIME_WORDS)
    events = sum(1 for t in toks if t in _EVENTS)
    return ents, events


def _urgency_hits(text: str, toks: list[str]) -> int:
    hits = sum(1 for t in toks if t in _URGENT) + len(_BANG.findall(text))
    if ":" in text:
        hits += sum(1 for e in _SHORTCODE.findall(text) if e in _URGENT_EMOJI)
    stripped = _PLACEHOLDER.sub(" ", text) if "[" in text or "<" in text else text
    hits += sum(1 for w in _SHOUT.findall(stripped) if w.lower() not in _TIME_WORDS)
    return hits


def score_episodes(
    episodes: pl.DataFrame,
    msgs: pl.DataFrame,
    reference_ts: dict[str, datetime],
    term_counts: dict[str, dict[str, int]] | None = None,
    half_life_days: float = 180.0,
    weights: dict[str, float] | None = None,
    user_names: Iterable[str] | None = None,
) -> pl.DataFrame:
    """Fill the salience columns of `episodes` (other columns untouched, contract order).

    `msgs` needs id, chat_id, is_user, kind, author and normalized_text (or redacted_text) for
    the episodes' messages. `reference_ts[chat]` should be the chat's latest message time; a
    chat missing from it falls back to its latest episode end here. `term_counts` defaults to
    counts over `msgs` (batch-dependent; pass whole-chat counts). `user_names` defaults to the
    authors of the user's messages in `msgs`; their first names count as addressing the user.
    """
    w = weights or SALIENCE_WEIGHTS
    if episodes.height == 0:
        return episodes.select(EPISODE_COLUMNS)
    text_col = "normalized_text" if "normalized_text" in msgs.columns else "redacted_text"
    rows = {
        mid: (bool(u), kind, text or "", author)
        for mid, u, kind, text, author in zip(
            msgs["id"].to_list(), msgs["is_user"].to_list(), msgs["kind"].to_list(),
            msgs[text_col].to_list(), msgs["author"].to_list(),
        )
    }
    if user_names is None:
        user_names = {a for _, (u, _, _, a) in rows.items() if u and a}
    names = {p.lower() for n in user_names for p in n.split()[:1] if len(p) >= 3}
    counts = dict(term_counts or {})
    missing = set(episodes["chat_id"].unique().to_list()) - set(counts)
    if missing:
        counts.update(term_document_counts(msgs.filter(pl.col("chat_id").is_in(sorted(missing)))))
    ref = dict(reference_ts)
    for chat, end in episodes.group_by("chat_id").agg(pl.col("end_ts").max()).iter_rows():
        ref.setdefault(chat, end)

    feats: dict[str, tuple[frozenset[str], int, int, int, frozenset[str]]] = {}  # per distinct text
    cols: dict[str, list[float]] = {k: [] for k in ("recency", "user_centricity", "repetition", "density", "urgency")}
    for chat, end_ts, mids in zip(episodes["chat_id"].to_list(), episodes["end_ts"].to_list(),
                                  episodes["message_ids"].to_list()):
        age_days = max(0.0, (ref[chat] - end_ts).total_seconds() / 86400.0)
        cols["recency"].append(0.5 ** (age_days / half_life_days))

        ms = [rows[m] for m in mids if m in rows]
        authored = [r for r in ms if r[1] != "system"] or ms
        n = max(1, len(authored))
        user_n = personal = ents = events = urgent = 0
        local: Counter[str] = Counter()
        for is_user, kind, text, _ in authored:
            user_n += is_user
            if kind not in TEXT_KINDS or not text:
                continue
            f = feats.get(text)
            if f is None:
                f = feats[text] = _features(text)
            tokset, e, v, u, terms = f
            if (is_user and not tokset.isdisjoint(_FIRST_PERSON)) or (
                not is_user and (not tokset.isdisjoint(_SECOND_PERSON) or not tokset.isdisjoint(names))
            ):
                personal += 1
            ents, events, urgent = ents + e, events + v, urgent + u
            local.update(terms)
        cols["user_centricity"].append(0.5 * user_n / n + 0.5 * min(1.0, personal / n))

        df = counts.get(chat, {})
        n_docs = max(df.get(DOCS_KEY, 0), max(df.values(), default=0), 1000)  # floor: tiny chats say little
        cross = 0.0
        for t, k in local.items():
            total = df.get(t, k)
            elsewhere = max(0, total - k)
            if elsewhere:
                # recurring but specific: full weight up to 0.2% of messages, none from 10%
                spec = min(1.0, max(0.0, math.log(0.1 * n_docs / total) / _SPEC_SPAN))
                cross += spec * min(1.0, math.log1p(elsewhere) / math.log1p(8))
        distinct = max(len(local), 4)
        within = sum(1 for k in local.values() if k >= 2)
        cols["repetition"].append(0.7 * min(1.0, 2 * cross / distinct) + 0.3 * min(1.0, 2 * within / distinct))

        scale = math.sqrt(max(n, 3))  # a lone message cannot look as dense as a busy exchange
        cols["density"].append(_saturate(ents + 2 * events, 1.5 * scale))
        cols["urgency"].append(_saturate(urgent, 1.0 * scale))

    sal = [sum(w[k] * cols[k][i] for k in cols) for i in range(episodes.height)]
    new = {k: pl.Series(k, [round(x, 6) for x in v], dtype=pl.Float64) for k, v in cols.items()}
    new["salience"] = pl.Series("salience", [round(min(1.0, max(0.0, x)), 6) for x in sal], dtype=pl.Float64)
    return episodes.with_columns(**new).select(EPISODE_COLUMNS)


def salience_histogram_png(values: list[float], bins: int = 20) -> bytes:
    """A small PNG histogram of salience values in [0, 1], for asset metadata."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure  # no pyplot: no global state, safe in threads

    fig = Figure(figsize=(4, 2.4), dpi=80)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.hist([v for v in values if v is not None], bins=bins, range=(0.0, 1.0), color="#4C72B0")
    ax.set_xlabel("salience")
    ax.set_ylabel("episodes")
    ax.set_xlim(0, 1)
    fig.subplots_adjust(left=0.17, bottom=0.22, right=0.96, top=0.95)  # fixed: tight_layout doubles the cost
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
