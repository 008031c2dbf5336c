"""Facts the user states by answering someone else ("kitna weight hai ab?" → "92.", "tumhe toh kaju se
allergy hai na" → "haan bachpan se", "30 saal ki ho gayi meri guddi" → "haan yaar 30").

Chat answers drop everything the question already said, so the user's reply alone states nothing a
reader can map. Here the other person's message is turned into the user's own first-person sentence
and completed by the reply, and that sentence goes through the same readers as the user's own words
(`extraction.claims_from_text`): no new vocabulary, the same negation, hedge and question guards.

Two shapes, both only when the reply follows the other person's message directly (same chat, within
`MAX_GAP`):
* **confirmed**: the reply opens with a yes ("haan", "yes", "ji"). The message it confirms is read as
  the user's statement: second person turned into first ("tumhe" → "mujhe", "are you" → "I am"), tag
  questions dropped ("hai na" → "hai"). A message that names the user in the third person ("29 ka ho
  gaya mera Golu") counts only when the reply repeats its number ("haan 29").
* **answered**: the message asks for one attribute ("kitna weight hai", "blood group kya hai", "how
  old are you") and the reply opens with a value ("92.", "O negative."): "my weight is 92".

The evidence is the user's reply, the message that states it; the claim's confidence is the reader's
times `DISCOUNT`, since the reading rests on two messages lining up.
"""

from __future__ import annotations

import re
from datetime import timedelta

from collections.abc import Iterator

import polars as pl

MAX_GAP = timedelta(hours=6)
DISCOUNT = 0.9

YES = re.compile(r"(?i)^\W*(?:haan|haa+n?|han|ha|haanji|hanji|ji|ji\s+haan|yes|yess+|yeah|yea|yep|yup|ya|yaa|"
                 r"correct|right|exactly|bilkul|obviously|of\s+course|sahi)\b")
_NO = re.compile(r"(?i)^\W*(?:no|nope|nah|nahi|nahin|nai|na)\b")
# what an "answered" question asks for -> the sentence the reply's value completes
_ASKS = [
    (re.compile(r"(?i)\b(?:weight|wajan|vajan|wazan)\b"), "my weight is {v}"),
    (re.compile(r"(?i)\bblood\s*group\b"), "my blood group is {v}"),
    (re.compile(r"(?i)\b(?:salary|package|ctc)\b"), "my salary is {v}"),
    (re.compile(r"(?i)\b(?:rent|kiraya|kiraaya)\b"), "my rent is {v}"),
    (re.compile(r"(?i)\b(?:height|hight|lambai)\b"), "my height is {v}"),
    (re.compile(r"(?i)\bhow\s+old\b|\bkitne\s+saal\b|\bumar\b|\bumr\b|\bage\b"), "I am {v}"),
]
_ASKING = re.compile(r"\?\s*$|(?i:\b(?:kitna|kitni|kitne|kya|kaunsa|konsa|kaun\s*sa|what|which|how\s+much|"
                     r"how\s+many|how\s+old)\b)")
# a value the reply opens with: a number (with its unit or scale) or a blood group
_VALUE = re.compile(r"(?i)^\W*(?:(?:around|about|approx|bas|sirf|only|abhi|now)\s+)?"
                    r"(?P<v>\d[\d.,:']*(?:\s*(?:kg|kgs|kilo|lakh|lac|lpa|k|hazaar|hazar|thousand|cm|ft|feet|"
                    r"inch|inches|years?|saal))?|(?:a|b|ab|o)\s*(?:\+|-|\+ve|-ve|positive|negative)"
                    r"(?=\W|$))")

# second person -> first, longest phrases first (Hindi verb agreement is fixed after, `_AGREE`)
_SWAPS = [
    (r"\bare\s+you\b", "I am"), (r"\byou\s+are\b", "I am"), (r"\byou'?re\b", "I'm"), (r"\bwere\s+you\b", "I was"),
    (r"\byou\s+were\b", "I was"), (r"\bhave\s+you\b", "I have"), (r"\byou'?ve\b", "I've"),
    (r"\bdo\s+you\b", "I"), (r"\bdid\s+you\b", "I"), (r"\bcan\s+you\b", "I can"), (r"\bwill\s+you\b", "I will"),
    (r"\byourself\b", "myself"), (r"\byours\b", "mine"), (r"\byour\b", "my"), (r"\bur\b", "my"),
    (r"(?:^|(?<=\band )|(?<=, ))(?:you|u)\b", "I"), (r"\b(?:you|u)\b", "me"),  # the subject, else the object
    (r"\b(?:tumhe|tumhein|tumko|tujhe|tujhko|aapko|apko)\b", "mujhe"),
    (r"\b(?:tumhara|tumhaara|tera|aapka|apka)\b", "mera"), (r"\b(?:tumhari|tumhaari|teri|aapki|apki)\b", "meri"),
    (r"\b(?:tumhare|tumhaare|tere|aapke|apke)\b", "mere"), (r"\b(?:tumne|tune|aapne|apne)\b", "maine"),
    (r"\b(?:tum|tu|aap|ap)\b", "main"),
]
_SWAP_RES = [(re.compile("(?i)" + p), r) for p, r in _SWAPS]
_HINDI_SUBJECT = re.compile(r"(?i)\b(?:tum|tu|aap|ap)\b")
_AGREE = [(re.compile(r"(?i)\b(\w+)te\s+ho\b"), r"\1ta hu"), (re.compile(r"(?i)\b(\w+)ti\s+ho\b"), r"\1ti hu"),
          (re.compile(r"(?i)\bho\b(?=\W*$)"), "hu")]
# tag questions and openers that are no part of the statement
_TAGS = re.compile(r"(?i)(?:,?\s*\b(?:na|naa|right|no|hai\s+na|isn'?t\s+it|aren'?t\s+you|don'?t\s+you|innit|kya)\b)?\s*[?]+\s*$")
_OPENERS = re.compile(r"(?i)^\W*(?:(?:oh|ohh|acha|accha|achha|arre|arey|so|and|aur|toh|to|wow|nice|oh\s+nice|"
                      r"bhaiya|bhai|beta|didi|di|bro|yaar)\b\W*)+")
_SECOND_PERSON = re.compile(r"(?i)\b(?:you|your|you're|youre|yours|u|ur|tum|tu|aap|ap|tumhe|tumhein|tumko|tujhe|"
                            r"aapko|tumhara|tumhari|tumhare|tera|teri|tere|aapka|aapki|aapke|tumne|tune|aapne)\b")
_NUMBER = re.compile(r"\b\d+\b")
_SENTENCE_END = re.compile(r"(?<=[.!?\n])\s+")


def first_person(text: str) -> str:
    """The other person's sentence as the user would say it: second person -> first, tag questions dropped."""
    s = _OPENERS.sub("", text.strip())
    s = _TAGS.sub("", s).strip()
    hindi_subject = bool(_HINDI_SUBJECT.search(s))
    for rx, rep in _SWAP_RES:
        s = rx.sub(rep, s)
    if hindi_subject:
        for rx, rep in _AGREE:
            s = rx.sub(rep, s)
    s = s.rstrip(" ,")
    return s + "." if s and s[-1] not in ".!" else s


def _last_sentence(text: str) -> str:
    """The sentence a reply answers: the message's last question, else its last sentence."""
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip()) if p.strip()]
    asks = [p for p in parts if p.endswith("?")]
    return (asks or parts or [""])[-1]


def _confirmed(question: str, rest: str) -> str | None:
    """The statement a yes-reply makes of `question` (`rest`: the reply after its yes), or None."""
    said = _last_sentence(question)
    if not said:
        return None
    if _SECOND_PERSON.search(said):
        return first_person(said)
    # "29 ka ho gaya mera Golu" -> "haan 29": about the user only if the reply repeats its number
    if not set(_NUMBER.findall(rest)) & set(_NUMBER.findall(said)):
        return None
    return first_person("main " + said if re.search(r"(?i)\b(?:ka|ki|ke|hai|ho|gaya|gayi|hua|hui)\b", said)
                        else "I am " + said)


def _answered(question: str, reply: str) -> str | None:
    """"my weight is 92" from "kitna weight hai ab?" + "92. doctor ne bola…", or None."""
    said = _last_sentence(question)
    if not _ASKING.search(said):
        return None
    asks = [tmpl for rx, tmpl in _ASKS if rx.search(said)]
    m = _VALUE.match(reply)
    if len(asks) != 1 or not m or len(re.findall(r"\d+(?:[.,]\d+)?", _first_sentence(reply))) > 1:
        return None  # "27 hazaar total, ... mera 9 aata hai": which number answers is not for a rule
    v = m.group("v").strip().rstrip(".,")
    if asks[0].startswith("my weight") and re.fullmatch(r"\d{2,3}(?:\.\d)?", v):
        v += " kg"  # a bare weight in these chats is in kilograms
    return asks[0].format(v=v)


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def rows_with_previous(msgs: pl.DataFrame) -> Iterator[tuple[dict | None, dict]]:
    """(the message before, the message) over the messages with an author and text, in chat and time order."""
    if msgs.height == 0:
        return
    rows = msgs.select("id", "chat_id", "day", "ts", "author", "is_user", "normalized_text") \
        .filter(pl.col("normalized_text").is_not_null() & pl.col("author").is_not_null()).sort("chat_id", "ts", "id")
    prev: dict | None = None
    for r in rows.iter_rows(named=True):
        yield prev, r
        prev = r


def reply_statements(msgs: pl.DataFrame) -> list[tuple[dict, str, str]]:
    """(the user's reply row, the sentence it states, "confirmed" | "answered") for every reply that
    completes the other person's message just before it. `msgs`: id, chat_id, day, ts, author, is_user,
    normalized_text (the redacted search stream)."""
    out: list[tuple[dict, str, str]] = []
    for p, r in rows_with_previous(msgs):
        if not r["is_user"] or p is None or p["is_user"] or p["chat_id"] != r["chat_id"]:
            continue
        if r["ts"] - p["ts"] > MAX_GAP:
            continue
        reply, question = r["normalized_text"].strip(), p["normalized_text"].strip()
        if not reply or not question or _NO.match(reply):
            continue
        rest = YES.sub("", reply, count=1)  # the reply after its yes
        if YES.match(reply) and not _NO.match(rest):  # "bilkul nahi" is a no
            said = _confirmed(question, rest)
            if said:
                out.append((r, said, "confirmed"))
            continue
        said = _answered(question, reply)
        if said:
            out.append((r, said, "answered"))
    return out
