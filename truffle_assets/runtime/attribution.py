"""Citations that point at the message which says it: check each answer sentence against the
evidence the model was shown, re-point a citation whose message does not state the sentence's claim,
and cite an uncited claim that one shown message clearly states. And one sanity check a small model
needs: a sentence that tells the user about someone else and names the user as that person ("Your
daughter: <the user>", "You got engaged to <the user>") is dropped (`without_self`).

A small model often states the right value and cites the line next to it, or states it uncited.
Reading the sentence's own words is enough to repair that: the words a sentence adds beyond the
question ("Ananya" in "Your younger sister is Ananya", asked "Who is my younger sister?") are its
claim, and the shown message holding most of them is its source. A sentence whose claim no shown
message holds keeps whatever the model wrote (the citation check and the uncertainty label still
apply), so a hallucinated value is never given a source it does not have.
"""

from __future__ import annotations

import re
import unicodedata

from truffle_assets.runtime.streaming import CITE

_WORD = re.compile(r"[a-z0-9]+")
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
# words that carry no claim: function words, the question's pronouns, answer boilerplate
_STOP = set("""a an the and or but if of to in on at by for from with about as into over after before since
until is are was were be been being am do does did have has had will would can could should might
i me my mine you your yours we our us he she his her they their them it its this that these those there
here what which who whom whose when where why how not no yes so very just also too now then than
said say says told mentioned message messages chat chats memory according found find think know
remember recall seems looks like""".split())
_ABSENT = re.compile(r"not in your memory|(?:couldn't|could not|can't|cannot) find|no messages? (?:about|on|says)", re.I)
MIN_SUPPORT = 0.6  # share of a claim's words a message must hold to be its source


def words(s: str) -> list[str]:
    s = unicodedata.normalize("NFKD", s or "").encode("ascii", "ignore").decode().lower()
    return [re.sub(r"^(\d+)(?:st|nd|rd|th)$", r"\1", w) for w in _WORD.findall(s)]  # "17th" states "17"


def _stem(w: str) -> str:
    # "lived"/"living"/"lives" -> "liv": enough to match a restatement's inflection
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def stems(text: str) -> set[str]:
    return {_stem(w) for w in words(text)}


def claim_words(sentence: str, question: str) -> set[str]:
    """The sentence's content words that the question does not already hold."""
    return {_stem(w) for w in words(CITE.sub(" ", sentence)) if w not in _STOP} - stems(question)


def support(claim: set[str], have: set[str]) -> float:
    """Share of the claim's words among a message's (`stems` of its text)."""
    return len(claim & have) / len(claim) if claim else 0.0


def _cite(sentence: str, mid: str) -> str:
    """The sentence without its citations, citing `mid` before its closing punctuation."""
    bare = re.sub(r"[ \t]{2,}", " ", CITE.sub("", sentence)).rstrip()
    bare = re.sub(r"\s+([.!?,;:])", r"\1", bare)
    end = bare[-1] if bare and bare[-1] in ".!?" else ""
    return f"{bare[:-1] if end else bare} [msg:{mid}]{end}"


def attribute(body: str, question: str, shown: dict[str, str]) -> tuple[str, list[dict]]:
    """(body with repaired citations, what changed). `shown`: message id -> the text the model saw."""
    out, changes = [], []
    shown = {mid: stems(text) for mid, text in shown.items()}  # once, not per sentence
    for sentence in SENTENCE.split(body):
        claim = set() if _ABSENT.search(sentence) else claim_words(sentence, question)
        cited = list(dict.fromkeys(CITE.findall(sentence)))
        best_id, best = None, 0.0
        for mid, have in shown.items():
            s = support(claim, have)
            if s > best:
                best_id, best = mid, s
        if not claim or best_id is None or best < MIN_SUPPORT:
            out.append(sentence)
            continue
        held = [c for c in cited if c in shown and support(claim, shown[c]) >= MIN_SUPPORT]
        if held:
            out.append(sentence)
            continue
        changes.append({"change": "repointed" if cited else "added", "from": cited, "to": best_id,
                        "support": round(best, 2)})
        out.append(_cite(sentence, best_id))
    return " ".join(out), changes


_YOU = re.compile(r"(?i)\b(?:you|your|you're|yours)\b")


def without_self(body: str, user: str | None) -> tuple[str, list[str]]:
    """(body, dropped sentences): sentences addressed to the user ("you") that also name the user in the
    third person, by full name or a first name of three letters or more, unless marked "(you)" as the
    runtime marks the owner's lines. The user is never their own relative, partner or pet: a small
    model names them so when the evidence it was shown is the user's own message."""
    if not user or not user.strip():
        return body, []
    first = user.split()[0]
    alt = "|".join(re.escape(n) for n in [user.strip()] + ([first] if len(first) >= 3 else []))
    named, marked = re.compile(rf"(?i)\b(?:{alt})\b"), re.compile(rf"(?i)\b(?:{alt})\s*\(you\)")
    kept, dropped = [], []
    for sentence in SENTENCE.split(body):
        bare = marked.sub(" ", CITE.sub(" ", sentence))
        (dropped if _YOU.search(bare) and named.search(bare) else kept).append(sentence)
    return (" ".join(kept), dropped) if dropped else (body, [])
