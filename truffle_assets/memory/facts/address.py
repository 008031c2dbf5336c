"""Relationships from how the user addresses the other person in a one-to-one chat.

Writing "didi", "bhaiya", "mummy" or "papa" to the only other person in a chat says who they are,
even if no message states it. Each such message is a weak claim (confidence 0.35) naming that person;
consolidation combines them (1 - Π(1 - p)), so one passing "didi" stays below the profile's cut and
a habit of it does not. "bro", "bhai", "dude" are left out: people call friends that too. The person's
name is how the export names them (their contact name, less a kin title: "Ankit Bhaiya" is Ankit), and
the evidence is the addressing messages; a parent saved under the address word alone ("Mummy",
"Papa") says nothing about the user (everyone has parents), and gives no claim.
A spouse word ("good morning wife") says married, at 0.6, only when the other person answers in kind
or the user keeps it up.
"""

from __future__ import annotations

import re

import polars as pl

# address word -> relation predicate; words friends also use for each other are not here
KIN_ADDRESS = {
    "didi": "sister", "di": "sister", "dii": "sister", "behna": "sister",
    "bhaiya": "brother", "bhaiyya": "brother", "bhaiyaa": "brother", "bhaiyaaa": "brother", "dada": "brother",
    "mummy": "mother", "mumma": "mother", "mom": "mother", "mum": "mother", "maa": "mother", "ammi": "mother",
    "amma": "mother",
    "papa": "father", "dad": "father", "daddy": "father", "pappa": "father", "abbu": "father", "pa": "father",
}
_WORD = re.compile(r"[a-z]+")
# a kin word in a sentence about someone else ("my mom said", "didi ki shaadi") is no address
_ABOUT = re.compile(r"\b(?:my|meri|mera|mere|your|teri|tera|his|her|uski|uska|ki|ka|ke|ko|ne|se|and|aur)\s+$"
                    r"|^\s*(?:ki|ka|ke|ko|ne|se|is|was|has|said|says|told|and|aur|की|का|के|को|ने|से)(?:\s|$)")
# an address sits at the edge of a clause: "papa, ..." / "... mummy!" / "haan didi"
_EDGE = re.compile(r"(?:^|[.!?,:;\n]|\b(?:haan|han|ha|nahi|ok|okay|arre|hi|hello|hey|thanks|thank you|sorry|yes|no|acha|accha|"
                   r"morning|night|gm|gn|love\s+you|miss\s+you))\s*$")
# "di" also ends Hindi verb groups ("bhej di", "kar di", "bata di"): after a verb stem it is no address
_VERB_STEMS = {"kar", "bhej", "de", "bol", "rakh", "daal", "dal", "le", "chhod", "chod", "likh", "bata", "sun", "dikha",
               "kha", "pila", "bana", "laga", "hata", "utha", "jala", "bujha", "mila", "bula", "samjha", "sula", "maar",
               "mar", "pi", "mata", "dhoondh", "dho", "saja", "ghuma", "chala", "band", "khol", "nikal", "paka"}
MIN_MESSAGES = 2  # one passing word in a partition is not a habit of address
CONFIDENCE = 0.35
# spouses: "good morning wife" answered by "good morning husband". Friends joke with these words too,
# so a spouse word counts only when the other person answers in kind (or the user keeps it up)
SPOUSE_ADDRESS = {"wife": "wife", "wifey": "wife", "biwi": "wife", "husband": "husband", "hubby": "husband",
                  "hubs": "husband", "patidev": "husband"}
SPOUSE_CONFIDENCE = 0.6


def only_other(rows: pl.DataFrame) -> str | None:
    """The one person besides the user who writes in a chat's `rows`, or None (a group, or nobody yet)."""
    others = rows.filter(~pl.col("is_user").fill_null(False) & pl.col("author").is_not_null())["author"].unique()
    return others[0] if len(others) == 1 else None


def contact_name(author: str) -> str:
    """The person as a fact names them: the contact name without the emoji people save it with
    ("Dhruv 💛" -> "Dhruv", "Ishita 🌻" -> "Ishita")."""
    return re.sub(r"[^\w\s.'&-]+", "", author).strip() or author


def kin_free(name: str) -> str:
    """A contact name as the person's name: without the kin title people save it with ("Ankit Bhaiya" ->
    "Ankit"), or the name as it is when nothing else is left ("Didi")."""
    kept = [w for w in name.split() if w.lower().strip(".'") not in KIN_ADDRESS and w.lower() not in _TITLES]
    return " ".join(kept) or name


_TITLES = {"ji", "jii"}
# Everyone has parents: a parent saved under the address word alone ("Mummy", "Papa") says nothing
# about the user; a sister saved as "Didi" still says the user has an elder sister.
_UNIVERSAL = {"mother", "father"}


def _addressed(text: str, words: dict[str, str] = KIN_ADDRESS) -> set[str]:
    """Kin words (`words`) used as address in `text`: at a clause edge, not owned ("my mom") or declined
    ("didi ki")."""
    low = text.lower()
    found = set()
    for m in _WORD.finditer(low):
        rel = words.get(m.group())
        if rel is None:
            continue
        before, after = low[max(0, m.start() - 12):m.start()], low[m.end():m.end() + 8]
        if m.group() == "di" and (prev := re.findall(r"[a-z]+", before)) and prev[-1] in _VERB_STEMS:
            continue
        named = re.search(r"([A-Za-z]+)\s+$", text[:m.start()])
        if named and named.group(1)[0].isupper() and named.group(1).lower() not in KIN_ADDRESS \
                and re.search(r"\w", text[:named.start()]):  # "Lakshmi didi": a title for someone else
            continue
        if _ABOUT.search(before) or _ABOUT.search(after):
            continue
        at_edge = _EDGE.search(low[:m.start()]) or re.match(r"\s*(?:[.!?,:;]|$|:[a-z_]+:)", low[m.end():])
        if at_edge:
            found.add(rel)
    return found


def address_claims(msgs: pl.DataFrame) -> list[dict]:
    """Claim dicts (predicate, value, message row) for kin address in chats with exactly one other person."""
    out: list[dict] = []
    if msgs.height == 0:
        return out
    for chat in msgs["chat_id"].unique().to_list():
        rows = msgs.filter(pl.col("chat_id") == chat)
        other = only_other(rows)
        if other is None:
            continue  # a group, or nobody answered yet: no one person is addressed
        other = contact_name(other)
        named = kin_free(other)
        bare = named == other and not (set(other.lower().split()) - set(KIN_ADDRESS) - _TITLES)
        found: dict[str, list[dict]] = {}
        for r in rows.filter(pl.col("is_user").fill_null(False) & pl.col("normalized_text").is_not_null()).iter_rows(named=True):
            for rel in _addressed(r["normalized_text"]):
                found.setdefault(rel, []).append(r)
        for rel, rs in found.items():
            if len(rs) >= MIN_MESSAGES and not (bare and rel in _UNIVERSAL):
                out.extend({"row": r, "predicate": rel, "value": named} for r in rs)
        out.extend(_spouse_claims(rows, other))
    return out


def _spouse_claims(rows: pl.DataFrame, other: str) -> list[dict]:
    """The user's messages calling the other person "wife"/"husband", when that person answers in kind
    or the user does it more than once: married to them."""
    def calls(user: bool) -> list[dict]:
        sel = rows.filter((pl.col("is_user").fill_null(False) == user) & pl.col("normalized_text").is_not_null())
        return [r for r in sel.iter_rows(named=True) if _addressed(r["normalized_text"], SPOUSE_ADDRESS)]

    mine = calls(True)
    if not mine or (len(mine) < MIN_MESSAGES and not calls(False)):
        return []
    return [{"row": r, "predicate": p, "value": v, "confidence": SPOUSE_CONFIDENCE}
            for r in mine for p, v in (("partner", other), ("relationship_status", "married"))]
