"""Which messages may state a fact about the user: the cheap detector that routes LLM fact extraction.

Summary salience says which episodes are worth a summary; it does not say where facts are ("I joined
Brightwave last month" is not salient). This detector marks the messages that can hold a statement
about the user, so the configured model reads those and little else:

- `first_person`: the user writes about themself or their household (I/my/me/we/our, main/mera/
  mujhe/humne, मैं/मेरा/मुझे ...).
- `answer`: the user answers a question put to them (the line before is someone else's question in
  the second person: "where are you working now?" -> "Razorpay").
- `address`: a kin or spouse word used as address, by the user or to the user ("haan didi",
  "happy birthday bhaiya").
- `announcement`: news in the user's words without a pronoun ("promotion ho gaya!!", "finally
  moved", "got the offer") or others' reactions to it ("congrats on the new job").

A message with fewer than `MIN_WORDS` words, or only greetings, thanks and media, is never a
candidate. The question a candidate answers (or follows) and the news a reaction follows are sent
with it as context. No dagster import: the summaries stage and facts_eval both use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from truffle_assets.memory.facts.address import KIN_ADDRESS, SPOUSE_ADDRESS, _addressed
from truffle_assets.memory.rosetta import word_tokens

__all__ = ["KINDS", "MIN_WORDS", "Candidates", "detect", "episode_candidates"]

KINDS = ("first_person", "answer", "address", "announcement")
MIN_WORDS = 2

_FIRST_PERSON = frozenset(
    "i me my mine myself we us our ours ourselves "
    "main mai mei mera meri mere mujhe mujhko maine hu hoon hun hum humne hamara hamari hamare humara humari humare apna apni apne "
    "मैं मैंने हूँ हूं मेरा मेरी मेरे मुझे मुझको हम हमने हमारा हमारी हमारे अपना अपनी अपने".split()
)
_SECOND_PERSON = frozenset(
    "you your yours yourself u ur tu tum tumhara tumhari tumhare tumhe tumko tera teri tere tujhe aap aapka "
    "aapki aapke aapko तुम तुम्हारा तुम्हारी तुम्हें तू तेरा तेरी तुझे आप आपका आपकी आपको".split()
)
_QUESTION_WORDS = frozenset(
    "what where when which who whom whose why how kya kahan kahaan kab kaun kaunsa kaunsi kyun kyu kaise kitna "
    "kitni kitne क्या कहाँ कहां कब कौन क्यों कैसे कितना".split()
)
# news words: changes of job, home, status, health, possessions; and the reactions they get
_NEWS = frozenset(
    "joined joining join quit quitting resigned resign left leaving moved moving shifted shift shifting relocated "
    "relocating promoted promotion hired offer offered fired laid layoff engaged engagement married marriage wedding "
    "shaadi shadi proposed breakup broke pregnant baby born graduated graduation admission passed cleared selected "
    "bought buying sold selling adopted adopt got started starting stopped quit finished completed ran diagnosed "
    "surgery allergic allergy vegetarian vegan diet gym marathon learning learnt learned new first finally officially "
    "naukri job salary raise bonus house flat car bike phone visa "
    "gaya gayi gaye liya liye kiya kiye chhod chhoda chhodi shuru hogaya hogayi "
    "नौकरी शादी सगाई".split()
)
_REACTIONS = frozenset(
    "congrats congratulations congo badhai badhaai mubarak mubarakan wow proud finally "
    "बधाई मुबारक".split()
)
_TRIVIAL = frozenset(
    "ok okay okk k kk haan han ha hmm hmmm yes yeah yep yup no nope nahi na thanks thank thx ty sure cool nice "
    "good great lol haha hahaha lmao acha accha achha theek thik hi hey hello bye gm gn morning night done "
    "media omitted deleted sticker image video audio gif document".split()
)
_ADDRESS_WORDS = {**KIN_ADDRESS, **SPOUSE_ADDRESS}
# a number or a name inside the sentence: "2bhk in Khar West for 52k", "24 books this year"
_SPECIFIC = re.compile(r"\d|(?<=[a-z,] )[A-Z][a-z]+")
_BANG = re.compile(r"!!|🎉|🥳|😍|🙏")


@dataclass(frozen=True)
class Candidates:
    """Per episode: the line indices to send (candidates and their context, in order), the
    candidate lines among them, and how many candidates each kind found."""

    lines: tuple[int, ...]
    candidates: tuple[int, ...]
    kinds: dict[str, int]

    @property
    def any(self) -> bool:
        return bool(self.candidates)


def _is_question(tokens: list[str], text: str) -> bool:
    return "?" in text or (bool(tokens) and tokens[0] in _QUESTION_WORDS)


def detect(rows: list[tuple[bool, str]]) -> list[tuple[str | None, bool]]:
    """For messages in order (is_user, text): (the candidate kind or None, whether the line is a
    question to the user, which makes the next user line an answer)."""
    out: list[tuple[str | None, bool]] = []
    prev_question = False
    for is_user, text in rows:
        text = text or ""
        tokens = word_tokens(text)
        words = set(tokens)
        question = (not is_user) and _is_question(tokens, text) and not words.isdisjoint(_SECOND_PERSON)
        kind: str | None = None
        substantive = len(tokens) >= MIN_WORDS and not words <= _TRIVIAL
        if is_user and substantive:
            if not words.isdisjoint(_FIRST_PERSON):
                kind = "first_person"
            elif prev_question:
                kind = "answer"
            elif not words.isdisjoint(_NEWS) or _SPECIFIC.search(text):
                kind = "announcement"
        if kind is None and substantive and words & _ADDRESS_WORDS.keys() and _addressed(text, _ADDRESS_WORDS):
            kind = "address"
        if kind is None and not is_user and substantive and not words.isdisjoint(_REACTIONS) and (
                _BANG.search(text) or not words.isdisjoint(_NEWS) or not words.isdisjoint(_SECOND_PERSON)):
            kind = "announcement"  # others react to the user's news: the news is on a line nearby
        out.append((kind, question))
        prev_question = question if not is_user or question else (prev_question and not substantive)
    return out


def episode_candidates(message_ids: list[str], by_id: dict[str, tuple[bool, str]]) -> Candidates:
    """Candidates of one episode (`message_ids` in line order; `by_id` id -> (is_user, text))."""
    rows = [by_id.get(m, (False, "")) for m in message_ids]
    found = detect(rows)
    send: set[int] = set()
    cands: list[int] = []
    kinds: dict[str, int] = {}
    for i, (kind, _) in enumerate(found):
        if kind is None:
            continue
        cands.append(i)
        kinds[kind] = kinds.get(kind, 0) + 1
        send.add(i)
        if kind == "answer":  # the question it answers
            j = i - 1
            while j >= 0 and not found[j][1]:
                j -= 1
            if j >= 0:
                send.add(j)
        elif rows[i][0] and i > 0 and found[i - 1][1]:  # the question it follows
            send.add(i - 1)
        elif kind == "announcement" and not rows[i][0] and i > 0:  # a reaction: the news before it
            send.add(i - 1)
    return Candidates(tuple(sorted(send)), tuple(cands), kinds)


def messages_by_id(messages: pl.DataFrame) -> dict[str, tuple[bool, str]]:
    """id -> (is_user, text) from message rows (`normalized_text`, else `redacted_text`)."""
    col = "normalized_text" if "normalized_text" in messages.columns else "redacted_text"
    return {mid: (bool(u), t or "") for mid, u, t in zip(messages["id"].to_list(), messages["is_user"].to_list(),
                                                        messages[col].to_list())}
