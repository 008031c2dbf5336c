"""Recoveries: the user saying a condition is over ("LDL 112. normal hai ab", "back feels fine", "Pair
kaisa hai ab?" -> "bilkul theek").

A recovery asserts no fact of its own; it ends a health condition held before it (an injury, a low
reading, a high one), which consolidation closes (`close_recovered`). What recovered is named by the
user's message or, when the user answers, by the other person's message just before it (same chat,
within `replies.MAX_GAP`): "Vitamin D ki report aayi?" -> "haan, 38 aaya hai ab, normal range mein hu".
A condition ends only when the recovery names one of its own words, or the part of the body it is in
("back" for a slipped disc, "pair" for a sprained ankle); "I'm fine" naming nothing ends nothing.
Questions, wishes and futures ("hope it heals", "theek ho jayega") are no recovery.
"""

from __future__ import annotations

import re

import polars as pl

from truffle_assets.memory.facts import replies
from truffle_assets.memory.facts.values import value_tokens

PREDICATE = "recovered"
CONFIDENCE = 0.6

# a changed state, said as done: healed, recovered, back to normal, "normal hai ab", "theek ho gaya"
_RECOVERED = re.compile(
    r"(?i)\b(?:healed|recovered|cured|back\s+to\s+normal|normal\s+(?:range|now|again|ho\s+(?:gaya|gayi|gya|gyi))\b"
    r"|normal\s+(?:hai|h|hu|hoon|he)\s+(?:ab|abhi|finally)|(?:feels?|feeling|is|are|all)\s+(?:fine|good|ok|okay|normal)"
    r"\s+(?:now|again)|feels?\s+fine|(?:bilkul|ekdum|pura|poora)\s+theek|theek\s+ho\s+(?:gaya|gayi|gya|gyi|gai)\b)")
# not yet: a question, a wish, a future, a denial
_NOT_YET = re.compile(r"(?i)\?|\b(?:hope|hopefully|will|should|shall|soon|until|till|jayega|jayegi|jaega|jaegi|"
                      r"jaaye|jaye|not|never|nahi|nahin|nhi|kab|abhi\s+bhi\s+nahi)\b")
# where in the body a condition is: a recovery that names the part ends what is in it
_BODY = {
    "back": {"disc", "spine", "spinal", "lumbar", "sciatica", "slipped", "l4", "l5", "kamar"},
    "leg": {"ankle", "knee", "foot", "feet", "leg", "toe", "ligament", "hamstring", "calf", "shin", "pair", "paon", "ghutna",
            "pao"},
    "arm": {"wrist", "elbow", "shoulder", "arm", "hand", "finger", "haath"},
    "neck": {"neck", "cervical", "gardan"},
}
_REGION = {w: region for region, words in _BODY.items() for w in words | {region}}
# words that say how a condition is, or frame the talk about it, never which one it is
_GENERIC = frozenset("""high low borderline mild severe chronic level levels report reports test tests result results
deficiency problem issue issues pain injury condition doctor aaya aayi aaye aa gaya gayi kaisa kaisi kaise hai hain ab
abhi ki ka ke ko ne se now again fine good ok okay normal range finally haan yes bilkul ekdum theek feels feel
feeling how hows what whats is are was my your tera tumhara aapka mera meri bhi toh wala wali hu hoon hun main mein
mai hum ja jaa rahi raha rahe wapas kal aaj se tak leti leta lete ho gya gyi gai par lekin aur and but so did do
does come came has have had got get been healed recovered cured""".split())


_SHORTCODE = re.compile(r":[a-z0-9_]+:")  # an emoji as the normalized stream spells it (":party_popper:")


def named(text: str) -> frozenset[str]:
    """The words of `text` that can name a condition or where it is (plurals folded, body parts kept)."""
    out = set()
    for w in value_tokens(_SHORTCODE.sub(" ", text)):
        w = w.lower()
        if w in _GENERIC or len(w) < 2 or w.isdigit():
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return frozenset(out)


def ends(recovery: str, condition: str) -> bool:
    """A recovery naming `recovery` (the words `recovery_claims` recorded) ends `condition`: they share a
    word, or a part of the body."""
    said, held = named(recovery), named(condition)
    if said & held:
        return True
    return bool({_REGION[w] for w in said if w in _REGION} & {_REGION[w] for w in held if w in _REGION})


def recovery_claims(msgs: pl.DataFrame) -> list[dict]:
    """Claim dicts (row, value) for the user's messages saying something got better: the value is the
    words that name what did, from the message or the one it answers."""
    out: list[dict] = []
    for p, r in replies.rows_with_previous(msgs):
        text = r["normalized_text"]
        if not r["is_user"] or not (m := _RECOVERED.search(text)):
            continue
        before = re.split(r"(?<=[.!?])\s+", text[:m.start()])
        after = re.split(r"(?<=[.!?])\s+", text[m.end():], maxsplit=1)[0]
        if _NOT_YET.search(before[-1] + m.group() + after):
            continue
        # what got better is named in its sentence (the recovery's own words aside), the one before it,
        # or the message it answers
        words = named(" ".join(before[-2:]) + " " + after)
        if p is not None and not p["is_user"] and p["chat_id"] == r["chat_id"] and r["ts"] - p["ts"] <= replies.MAX_GAP:
            words |= named(p["normalized_text"])
        if words:
            out.append({"row": r, "value": " ".join(sorted(words))})
    return out
