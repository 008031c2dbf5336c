"""A birthday, and the age reached, from the wishes the user thanks people for; a partner from the
anniversary the user wishes them.

Few people ever write "my birthday is 19 August"; everyone they know writes "happy birthday" on the
day, and they answer "thank you mummy ❤️". So a wish another person sends, that the user answers
with thanks (their next message in that chat, the same day or night), dates the birthday: the wish's
own day. The thread can also say the age: a wish for "your 30th", or the user's reply opening with
the number ("31 and married, who am I 😂", "thank you mummy. 31 ho gaya").

Stays quiet on a belated or advance wish, a wish passed on to someone else ("wish your mom happy
birthday", "Rahul's birthday"), a question ("birthday kab hai?"), and a wish nobody thanks for (in a
group it was for someone else). In a group the one thanking could be answering something else, so a
group thread counts for less than a one-to-one chat's; a birthday thanked for in two chats, or two
years, is then as sure as one stated.

The evidence is the user's messages in the thread (their thanks and what they add), the messages
that show it was their day.

"happy one year to us ❤️" or "happy anniversary jaan", written by the user to the only other person
in a chat, says who their partner is (`anniversary_claims`); an anniversary wished to parents or
friends ("happy anniversary mummy papa", "to you both") says nothing about the user.
"""

from __future__ import annotations

import re
from datetime import timedelta

import polars as pl

from truffle_assets.memory.facts.address import contact_name, only_other

MAX_REPLY_GAP = timedelta(hours=18)  # a wish at 7 am thanked that evening
GROUP_REPLY_GAP = timedelta(hours=1)  # in a group, thanks that neither name the wisher nor thank everyone
THREAD_GAP = timedelta(minutes=30)  # the user's further messages still answering the wishes
THREAD_MAX = 4
ONE_TO_ONE = 0.65
GROUP = 0.5

_WISH = re.compile(
    r"(?i)\b(?:happy\s+(?:b'?days?|birthday|bday+|b\s+day|budday)|hbd|hppy\s+b'?day|many\s+happy\s+returns|"
    r"happy\s+(?P<nth>\d{2})(?:st|nd|rd|th)\b(?!\W+(?:wedding|anniversary|anni)\b)|"  # "happy 30th", not an anniversary
    r"janam\s*din|janmdin|janmadin|janmdivas|birthday\s+mubarak|saalgirah\s+mubarak)")
# not today's, or not the listener's
_NOT_THEIRS = re.compile(
    r"(?i)\b(?:belated|advance|late|tomorrow|kal|yesterday|parso|next\s+week|wish\s+(?!you\b|u\b|ya\b)\w+|"
    r"(?:your|ur|tumhare|tere|aapke|uske|unke|his|her)\s+(?:\w+\s+)?(?:ko|ka|ki|ke|'s)?\s*(?:b'?day|birthday)|"
    r"\w+'s\s+(?:b'?day|birthday)|ko\s+(?:bhi\s+)?(?:wish|happy|bol|bolna)|(?:birthday|bday|b'day)\s+to\s+(?!you\b|u\b)\w+)")
# thanks to everyone at once, as one answers a group's wishes
_EVERYONE = re.compile(r"(?i)\b(?:all|everyone|everybody|guys|sab|sabko|sab\s+ko|sabhi|sabka|you\s+all|y'?all|friends|team|"
                       r"family)\b")
_QUESTION = re.compile(r"(?i)\?\s*$|\b(?:kab|when|kitne|which\s+date)\b")
_THANK_WORDS = r"thank|thanks|thanku|thankyou|thnx|thnks|thx|tysm|ty|shukriya|dhanyavaad|dhanyavad|dhanyawad"
_THANKS = re.compile(rf"(?i)\b(?:{_THANK_WORDS})\b|:(?:\w*hearts?|folded_hands|face_throwing_a_kiss|hugging_face):")  # the stream's emoji
# an age opening a sentence of the reply, once thanks, yes-words and address are set aside:
# "31 and married", "thanks. 30 ka hone pe", "haan 29", "thank you guys 🙏 32 and still…"
_OPENER = re.compile(rf"(?i)^(?::\w+:|[^\w:]+|:|(?:thank\s+you|{_THANK_WORDS}|"
                     r"haan|han|ha|yes|yeah|ji|mummy|mumma|mom|papa|dad|didi|di|bhaiya|bhai|sab\s+ko|all|"
                     r"guys|everyone|yaar|beta|so\s+much|a\s+lot|sir|ma'?am)\b)+")
# the number as an age: on its own or as ages are said ("30 ka hone pe", "34 and still"), never a count
_AGE = re.compile(r"^(\d{2})(?=\s*(?:$|[.!,:]|and\b|&|ka\b|ki\b|ke\b|saal|years?\b|yrs?\b|ho\b|hone\b|not\b|now\b|"
                  r"today\b|aaj\b))")
_SENTENCE = re.compile(r"(?<=[.!?\n])\s+")


def _age_in(reply: str) -> int | None:
    """The age a reply to a birthday wish opens a sentence with, if any."""
    for part in _SENTENCE.split(reply.strip()):
        m = _AGE.match(_OPENER.sub("", part).lstrip())
        if m and 13 <= int(m.group(1)) <= 90:
            return int(m.group(1))
    return None


def _is_wish(text: str) -> re.Match | None:
    m = _WISH.search(text)
    if m is None or _NOT_THEIRS.search(text) or _QUESTION.search(text):
        return None
    return m


def birthday_claims(msgs: pl.DataFrame) -> list[dict]:
    """Claim dicts (row: a user message of the thread; predicate birthday or age; value; confidence)
    for every wish the user thanks for. `msgs`: id, chat_id, day, ts, author, is_user, normalized_text."""
    out: list[dict] = []
    if msgs.height == 0:
        return out
    rows = msgs.select("id", "chat_id", "day", "ts", "author", "is_user", "normalized_text") \
        .filter(pl.col("normalized_text").is_not_null() & pl.col("author").is_not_null()).sort("chat_id", "ts", "id")
    for _chat, part in rows.group_by("chat_id", maintain_order=True):
        recs = list(part.iter_rows(named=True))
        others = {r["author"] for r in recs if not r["is_user"]}
        conf = ONE_TO_ONE if len(others) == 1 else GROUP
        used: set[str] = set()
        for i, w in enumerate(recs):
            if w["is_user"] or (m := _is_wish(w["normalized_text"])) is None:
                continue
            thread = _thread(recs, i, w, group=len(others) > 1)
            if not thread or thread[0]["id"] in used:
                continue  # several wishes thanked at once: one thread
            used.add(thread[0]["id"])
            day = w["day"] if hasattr(w["day"], "month") else w["ts"].date()
            age = int(m.group("nth")) if m.group("nth") else None
            for r in thread:
                age = age or _age_in(r["normalized_text"])
            for r in thread:
                out.append({"row": r, "predicate": "birthday", "value": f"--{day.month:02d}-{day.day:02d}",
                            "confidence": conf})
                if age:
                    out.append({"row": r, "predicate": "age", "value": str(age), "confidence": conf})
    return out


def _thread(recs: list[dict], i: int, wish: dict, group: bool) -> list[dict]:
    """The user's messages answering the wish at `recs[i]`: their next message if it thanks (and is
    no wish itself), then what they add within `THREAD_GAP`. In a group the thanks must also thank
    everyone, name the wisher, or come within `GROUP_REPLY_GAP`: a "thanks ❤️" hours later in a busy
    group is more likely for something else."""
    mine = [r for r in recs[i + 1:] if r["is_user"]]
    if not mine or mine[0]["ts"] - wish["ts"] > MAX_REPLY_GAP:
        return []
    first = mine[0]
    text = first["normalized_text"]
    if not _THANKS.search(text) or _WISH.search(text):
        return []
    wisher = wish["author"].split()[0].lower() if wish["author"].split() else ""
    if group and first["ts"] - wish["ts"] > GROUP_REPLY_GAP and not _EVERYONE.search(text) \
            and not (wisher and re.search(rf"(?i)\b{re.escape(wisher)}\b", text)):
        return []
    thread = [first]
    for r in mine[1:THREAD_MAX]:
        if r["ts"] - thread[-1]["ts"] > THREAD_GAP or _WISH.search(r["normalized_text"]):
            break
        thread.append(r)
    return thread


# an anniversary of "us": "happy one year to us", "happy 2nd anniversary baby", "happy anniversary jaan"
_OUR_ANNIVERSARY = re.compile(
    r"(?i)\bhappy\s+(?:(?:\w+|\d+(?:st|nd|rd|th)?)\s+){0,2}(?:anniversary|anniversaries|years?|months?|monthsary|"
    r"monthiversary)\b(?:\s+(?:to|of)\s+us\b|\W+(?:jaan|jaanu|baby|babe|love|my\s+love|sweetheart|darling)\b)")
_THEIR_ANNIVERSARY = re.compile(r"(?i)\b(?:you\s+(?:both|two)|dono|mummy|mumma|papa|mom|dad|uncle|aunty|didi|bhaiya|"
                                r"jiju|bhabhi|guys)\b")
PARTNER = 0.7


def anniversary_claims(msgs: pl.DataFrame) -> list[dict]:
    """Claim dicts (row, partner, the other person's name as the chat names them) for the user wishing
    the only other person in a chat their shared anniversary."""
    out: list[dict] = []
    for _chat, part in msgs.filter(pl.col("author").is_not_null() & pl.col("normalized_text").is_not_null()) \
            .group_by("chat_id", maintain_order=True):
        other = only_other(part)
        if other is None:
            continue
        for r in part.filter(pl.col("is_user").fill_null(False)).iter_rows(named=True):
            text = r["normalized_text"]
            if _OUR_ANNIVERSARY.search(text) and not _THEIR_ANNIVERSARY.search(text):
                out.append({"row": r, "predicate": "partner", "value": contact_name(other), "confidence": PARTNER})
    return out
