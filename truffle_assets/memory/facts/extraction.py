"""Claims from the user's own messages, read two ways and merged per message.

- `reader`: the dependency parse of every sentence (spaCy): first-person clauses mapped through
  the lexicon, with negation, tense, hedges, hypotheticals and reported speech. It reads English,
  and Hinglish through `gloss` (romanized Hindi clauses rendered as plain English first).
- `rules`: the older pattern table (English and Hinglish phrasings the parse reads poorly, such as
  "X mein rehta hoon"), kept where it is precise.

`extract_claims(msgs)` reads normalized, redacted text (never raw text) and emits `fact_claims`
rows; every claim keeps its message id as evidence. An ending ("handed in my notice", "moved out
of Chennai") is a claim on `end:<predicate>`, which consolidation turns into a valid_to.
"""

from __future__ import annotations

import re
from datetime import date

import polars as pl

from truffle_assets.nlp import english

from truffle_assets.memory.facts.rules import (
    FAVOURITE_KINDS,
    GATES,
    HYPOTHETICAL,
    NEGATION,
    QUESTION_START,
    RULES,
    SIBLING_AGE,
    SIBLINGS,
    Rule,
)
from truffle_assets.memory.facts import guards, reader, recovery, replies, wishes
from truffle_assets.memory.facts.address import CONFIDENCE as ADDRESS_CONFIDENCE, address_claims
from truffle_assets.memory.gloss import gloss, someone_else
from truffle_assets.memory.facts.lexicon import PREDICATES, predicate_info
from truffle_assets.memory.facts.render import fact_text as render_fact_text, restated
from truffle_assets.memory.facts.schema import CLAIM_COLUMNS, CLAIM_SCHEMA, stable_id
from truffle_assets.memory.facts.values import (
    compatible,
    NOT_NAMES,
    ascii_fold,
    birthday_value,
    leading_name,
    normalize_value,
    phrase_value,
    trailing_name,
    value_tokens,
)

_SENT = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.findall(text) if s.strip()]


def _build_value(rule: Rule, m: re.Match, said: date) -> tuple[str, str] | None:
    """(value, qualifier for the fact text) or None when the captured text is not a usable value."""
    gd = m.groupdict()
    if rule.value == "const":
        return rule.const, ""
    if rule.value == "birthday":
        v = birthday_value(m, said)
        return (v, "") if v else None
    if rule.value == "role":
        role = re.sub(r"\s+", " ", gd["role"]).strip().lower()
        if len(role.split()) > 4:
            return None
        org = leading_name(gd["org"]) if gd.get("org") else None
        if gd.get("org") and not org:
            return None
        return (f"{role} at {org}" if org else role), ""
    if rule.value == "org":
        org = leading_name(gd.get("org") or "")
        return (org, "") if org else None
    raw = gd.get("v") or ""
    if rule.value in ("name", "place"):
        if rule.name == "found_home":
            city = leading_name(raw)
            area = leading_name(gd.get("area") or "") if gd.get("area") else None
            if not city:
                return None
            return (f"{area}, {city}" if area and area != city else city), ""
        before = m.start("v") == m.start() and m.end("v") < m.end()  # "<Name> is my brother", "<City> mein rehta"
        v = trailing_name(raw) if before else leading_name(raw)
        if not v:
            return None
        if rule.value == "place" and not before:
            # "HSR Layout, Bengaluru": an area and its city
            rest = m.string[m.start("v") + len(v):]
            more = re.match(r",\s*([A-Z][\w\-]+(?:\s+[A-Z][\w\-]+)?)(?=\s*(?:now|[.!,]|$|\s+(?:now|these|since|for|and)\b))", rest)
            if more and ascii_fold(more.group(1).split()[0]).lower() not in NOT_NAMES:
                v = f"{v}, {more.group(1)}"
        qual = ""
        if gd.get("rel"):
            rel = SIBLINGS[gd["rel"].lower()]
            adj = (gd.get("adj") or "").lower()
            adj = SIBLING_AGE.get(adj, adj)
            qual = (adj + " " if adj else "") + rel
        elif gd.get("animal"):
            qual = " ".join(x for x in ((gd.get("kind") or "").strip(), gd["animal"].lower()) if x)
        return v, qual
    v = phrase_value(raw)
    if v is None:
        return None
    if rule.predicate == "favourite" and re.search(r"(?i)\b(you|u|him|her|them|it|this|that|ye|woh|yeh)\b", v):
        return None
    if rule.predicate == "goal":
        v = _race(v)
    if rule.name == "seekhna":
        v = "learn " + v
    elif rule.name == "saving_for":
        v = "save for " + v
    return v, (gd.get("type") or "").lower()


def _fact_predicate(rule: Rule, m: re.Match) -> str:
    gd = m.groupdict()
    if rule.predicate == "sibling":
        return SIBLINGS[gd["rel"].lower()]
    if rule.predicate == "favourite" and gd.get("type"):
        t = gd["type"].lower().replace("colour", "color")
        return f"favourite_{FAVOURITE_KINDS.get(t, t)}"
    return rule.predicate


def _qualifier(rule: Rule, qual: str) -> str:
    """What the fact text adds in brackets: a sibling's age word, a pet's kind."""
    if rule.predicate == "sibling":
        parts = qual.split()
        return parts[0] if len(parts) == 2 else ""
    return qual if rule.predicate == "pet" else ""


def _blocked(sentence: str, end: int, rule: Rule) -> bool:
    """Questions, hypotheticals and negations around a match make it no claim."""
    s = sentence.rstrip()
    if s.endswith("?") or QUESTION_START.match(s):
        return True
    if HYPOTHETICAL.search(s[:end]):
        return True
    if not rule.allow_negation:
        window = s[:end]
        if NEGATION.search(window) or re.search(r"(?i)\b(anymore|any\s+more|ab\s+nahi)\b", s):
            return True
        if _HINDI_NOT_AFTER.match(s, end):  # Hindi says "not" after the word: "main vegetarian nahi hu"
            return True
    # Hindi puts the question, the plan and the report after the claim: "main vegetarian hu kya", "main
    # vegetarian ban jaungi", "mummy bolti hai main vegetarian ban jau"
    if _HINDI_QUESTION.search(s) or _HINDI_REPORTED.search(s[:end]) or _HINDI_NOT_YET.search(s, end, end + 25):
        return True
    return False


_HINDI_QUESTION = re.compile(r"(?i)\bkya\s*(?:tu|tum|aap|yaar)?\s*[?!.]*\s*$|\bkya\s+(?:tu|tum|aap)\b")
_HINDI_REPORTED = re.compile(r"(?i)\b(?:bolti|bolta|bolte|kehti|kehta|kehte)\s+(?:hai|hain|h|thi|tha|the)\b")
_HINDI_NOT_YET = re.compile(r"(?i)\b\w+(?:ungi|unga|enge|engi)\b|\b(?:jau|jaun|jaaun|karu|karun|banu|banun|rahu|rahun)\b")
# a Hindi past copula right after the claim: "main vegetarian thi pehle" was, and is no more
_HINDI_WAS = re.compile(r"(?i)\s+(?:hi\s+)?(?:thi|tha|the)\b")


_POSSESSOR = re.compile(r"['’]s\b")
_LOCATIVE = re.compile(r"(?i)\s+(?:mein|me|pe|par)\b")
_HINDI_NOT_AFTER = re.compile(r"(?i)\s+(?:hi\s+)?(?:nahi|nahin|nhi|nai)\b")
_HINDI_VERB = re.compile(r"(?i)\b(?:gay[aie]|gaye|hua|hue|ki|kiya|kiye|liya|li|diya|di)\b")


def _blocked_in_message(message: str, sentences: list[str], start: int, end: int, rule: Rule) -> bool:
    """`_blocked` for a rule that spans sentences: a question only if the match's own sentence asks
    too, a negation only up to 60 characters past the match's start."""
    sent = next((s for s in sentences if s in message[start:start + len(s)]), None) or message
    if message.rstrip().endswith("?") and sent.rstrip().endswith("?"):
        return True
    return bool(HYPOTHETICAL.search(message[:end]) or (
        not rule.allow_negation and NEGATION.search(message[:min(end, start + 60)])))


def _user_first(author: str) -> str:
    return ascii_fold(author.split()[0]).lower() if author and author.split() else ""


def claims_from_text(text: str, subject: str, said: date, doc=None, gloss_doc=None) -> list[dict]:
    """All claims in one message: dicts with predicate, value, category, fact_text, confidence, rule.

    `doc` is the message's spaCy parse when the caller parsed a batch (`extract_claims` does)."""
    if not text or not text.strip():
        return []
    glossed = gloss(text)  # Hinglish clauses, rendered as English for the same reader
    if not worth_parsing(text, glossed):
        return _claims(text, subject, said, None, None)
    return _claims(text, subject, said, doc if doc is not None else english()(_for_parse(text)),
                   gloss_doc if gloss_doc is not None or not glossed else english()(glossed))


_CANNOT = frozenset({"cannot", "cant", "can't", "not"})


def _claims(text: str, subject: str, said: date, doc, gloss_doc) -> list[dict]:
    """`claims_from_text` once the message and its gloss (None when it has none) are parsed; with no
    `doc` (a message not worth parsing) only its idioms are read."""
    if guards.forwarded(text):  # passed on, not written: its "I" is someone else's
        return []
    out: list[dict] = []
    read = (reader.read(doc, said) if doc is not None else []) + reader.read_idioms(_for_parse(text))
    if gloss_doc is not None:
        read += reader.read(gloss_doc, said) + reader.read_idioms(gloss_doc.text)
    declined = {_family(c["predicate"].removeprefix(reader.DECLINED)) for c in read
                if c["predicate"].startswith(reader.DECLINED)}
    parsed = _claim_dicts([c for c in read if not c["predicate"].startswith(reader.DECLINED)])
    out.extend(parsed)
    if doc is None:  # every pattern rule's gate is a reason to parse: none of them can match
        return _dedupe(out)
    # the pattern table fills only what the parse did not read from this message (or read and found no
    # claim in), and never reads quotations, questions or someone else's reported words
    families = {_family(c["predicate"]) for c in parsed} | declined
    out.extend(c for c in _rule_claims(guards.unclaimed_text(doc), subject, said) if _family(c["predicate"]) not in families)
    # starting somewhere is working there: the employer timeline gets the new value
    for c in [c for c in out if c["predicate"] == "started_job"]:
        if not any(o["predicate"] in ("employer", "job") and compatible(o["value"], c["value"]) for o in out):
            out.append(restated(c, "employer", c["value"]))
    if guards.resumed(text):  # "quit smoking in 2020 but started again": the habit is back, not quit
        out = [c for c in out if not (c["predicate"].removeprefix("end:") == "habit"
                                      and (c["predicate"].startswith("end:") or re.match(r"(?:quit|stopped)\b", c["value"])))]
    if guards.temporary(text):  # "WFH tomorrow", "can't drive today": for a while, not how the user is
        out = [c for c in out if c["predicate"].removeprefix("end:") not in guards.ARRANGEMENTS
               and not (c["predicate"] == "skill" and value_tokens(c["value"]) & _CANNOT)]
    return _dedupe(out)


# Bumped when what the extractor reads changes: the facts stage salts its day digests with it, so a
# store built by an older reader re-reads every day once.
EXTRACTOR_VERSION = "parse-18"

# predicates the two readers may fill from one statement ("I work as an engineer at Zentrix")
_FAMILY = {"job": "job", "employer": "job", "started_job": "job", "left_job": "job", "lives_in": "home",
           "moved": "home", "partner": "partner", "relationship_status": "partner", "pet": "pet",
           "sister": "sibling", "brother": "sibling", "favourite": "favourite", "likes": "favourite",
           "hobby": "favourite", "goal": "goal", "learning": "goal"}


def _family(predicate: str) -> str:
    p = predicate.removeprefix("end:")
    return "favourite" if p.startswith("favourite_") else _FAMILY.get(p, p)


# A message can only state something about its writer if it speaks in the first person, or opens with
# a verb the way chat drops the "I" ("Moved to Pune", "Got engaged!"). Other messages skip the parser,
# which is most of the cost of reading a history (about 8 ms a message on this CPU).
_SPEAKER = re.compile(
    r"(?i)\b(?:i|i'm|im|i've|ive|i'd|i'll|my|me|mine|myself|we|we're|we've|our|us|main|mai|maine|mujhe|mera|"
    r"meri|mere|hum|humne|hamara|humara|hu|hoon|hun)\b|^\W*(?:\w+ed|got|bought|sold|quit|left|ran|began|took|"
    r"went|made|found|met|became|did|won|lost|finished|started|joined|moved|adopted|turned|passed|"
    r"training|learning|working|living|staying|finally|just)\b")


def worth_parsing(text: str, glossed: str | None) -> bool:
    """First person, a dropped "I", a Hinglish verb group (`glossed`: the text's gloss), or a word some
    rule keys on."""
    if not text:
        return False
    return bool(_SPEAKER.search(text)) or glossed is not None or any(g.search(text) for g in GATES.values()) \
        or bool(reader.GATE.search(text))


def _for_parse(text: str) -> str:
    """Curly apostrophes as straight ones (same length): the parser's tokenizer splits "I’m" badly."""
    return text.replace("’", "'").replace("‘", "'")


def _race(goal: str) -> str:
    """Runners name the race by its distance alone: "goal for next year is a half"."""
    return re.sub(r"(?i)^((?:a|the|my\s+first)\s+)?(half|full)$", lambda g: f"{g[1] or 'a '}{g[2]} marathon", goal)


def _claim_dicts(claims: list[dict]) -> list[dict]:
    """The readers' claims (`reader.read`, `reader.read_idioms`) as claim rows."""
    out = []
    for c in claims:
        if c["predicate"] == "goal":
            c = {**c, "value": _race(c["value"])}
        predicate = ("end:" if c["ending"] else "") + c["predicate"]
        out.append({"predicate": predicate, "value": c["value"],
                    "category": predicate_info(c["predicate"]).category,
                    # an ending's row is the fact that held until then: it reads like that fact
                    "fact_text": render_fact_text(c["predicate"], c["value"], c["qualifier"]),
                    "confidence": c["confidence"], "rule": c["rule"]})
    return out


def _rule_claims(text: str, subject: str, said: date) -> list[dict]:
    out: list[dict] = []
    sentences = _sentences(text)
    for rule in RULES:
        if not GATES[rule.name].search(text):
            continue
        units = [text.strip()] if rule.scope == "message" else sentences
        for unit in units:
            for m in rule.pattern.finditer(unit):
                built = _build_value(rule, m, said)
                if built is None:
                    continue
                value, qual = built
                end = m.end()
                if rule.value == "phrase" and m.groupdict().get("v"):
                    pos = unit.find(value, m.start("v"))
                    end = pos + len(value) if pos >= 0 else m.start("v") + len(value)
                if rule.scope == "message":
                    if _blocked_in_message(unit, sentences, m.start(), end, rule):
                        continue
                elif _blocked(unit, end, rule):
                    continue
                if _HINDI_VERB.search(m.group()) and someone_else(unit, m.group()):
                    continue  # "bhaiya Pune shift ho gaye": the brother moved
                slot = next((g for g in ("v", "role") if m.groupdict().get(g)), None)
                if slot is not None and _POSSESSOR.match(unit, m.end(slot)):
                    continue  # "I'm a teacher's pet": the word is someone's, not what the speaker is
                if rule.category == "relationship" and "v" in m.groupdict() and m.group("v") \
                        and _LOCATIVE.match(unit, unit.find(value, m.start("v")) + len(value)):
                    continue  # "meri behen Pune mein rehti hai": a place, not her name
                # a self-introduction must agree with how the exporter is saved, or say "my name is"
                if rule.name == "intro" and _user_first(value) != _user_first(subject):
                    continue
                predicate = _fact_predicate(rule, m)
                # an ending's row reads like the fact that held until then
                ended = predicate in reader.STATES and _HINDI_WAS.match(unit, end) is not None
                out.append({"predicate": ("end:" if ended else "") + predicate, "value": value,
                            "category": predicate_info(predicate).category if predicate in PREDICATES else rule.category,
                            "fact_text": render_fact_text(predicate, value, _qualifier(rule, qual)),
                            "confidence": rule.confidence, "rule": rule.name})
    return out


def _dedupe(out: list[dict]) -> list[dict]:
    # one claim per (predicate, value) per message: the strongest rule wins
    best: dict[tuple[str, str], dict] = {}
    for c in out:
        k = (c["predicate"], normalize_value(c["value"]))
        if k not in best or c["confidence"] > best[k]["confidence"]:
            best[k] = c
    # within a message, a value contained in a longer one of the same predicate is the same claim
    kept = list(best.values())
    return [c for c in kept if not any(
        o is not c and o["predicate"] == c["predicate"] and value_tokens(c["value"]) < value_tokens(o["value"])
        for o in kept)]


def _claim_row(r: dict, predicate: str, value: str, category: str, fact_text: str, confidence: float,
               source: str) -> dict:
    """A `fact_claims` row for message `r`; the id hashes message, predicate and value (and the source
    when it is not the text readers, so an address claim never collides with a stated one)."""
    key = (r["id"], predicate, normalize_value(value)) + (() if source == "rules" else (source,))
    return {"id": stable_id(*key), "chat_id": r["chat_id"], "day": r["day"], "subject": r["author"],
            "predicate": predicate, "value": value, "category": category, "fact_text": fact_text,
            "confidence": float(confidence), "message_id": r["id"], "ts": r["ts"], "source": source}


def _said(r: dict) -> date:
    return r["day"] if isinstance(r["day"], date) else r["ts"].date()


def extract_claims(msgs: pl.DataFrame) -> pl.DataFrame:
    """`fact_claims` rows (source 'rules') from the user's messages.

    Input: id, chat_id, day, ts, author, is_user, normalized_text. Only messages written by the user
    (is_user) are read; the subject is the author's name. Ids hash message id, predicate and value.
    """
    rows: list[dict] = []
    need = {"id", "chat_id", "day", "ts", "author", "is_user", "normalized_text"}
    missing = need - set(msgs.columns)
    if missing:
        raise ValueError(f"extract_claims: missing columns {sorted(missing)}")
    mine = msgs.filter(pl.col("is_user").fill_null(False) & pl.col("normalized_text").is_not_null()
                       & pl.col("author").is_not_null())
    records, glosses = [], []
    for r in mine.select("id", "chat_id", "day", "ts", "author", "normalized_text").iter_rows(named=True):
        if not r["normalized_text"].strip():
            continue
        g = gloss(r["normalized_text"])  # once per message: it also decides whether to parse
        if worth_parsing(r["normalized_text"], g):
            records.append(r)
            glosses.append(g)
            continue
        for c in _claims(r["normalized_text"], r["author"], _said(r), None, None):  # idioms only
            rows.append(_claim_row(r, c["predicate"], c["value"], c["category"], c["fact_text"], c["confidence"],
                                   "rules"))
    nlp = english()
    docs = nlp.pipe((_for_parse(r["normalized_text"]) for r in records), batch_size=256)
    gloss_docs = iter(nlp.pipe((g for g in glosses if g), batch_size=256))
    for r, doc, g in zip(records, docs, glosses):
        for c in _claims(r["normalized_text"], r["author"], _said(r), doc, next(gloss_docs) if g else None):
            rows.append(_claim_row(r, c["predicate"], c["value"], c["category"], c["fact_text"], c["confidence"],
                                   "rules"))
    # a reply that completes the other person's message ("kitna weight hai?" -> "92."): the statement
    # they make together is read like the user's own, its evidence the reply
    seen = {row["id"] for row in rows}
    for r, said, _ in replies.reply_statements(msgs):
        for c in claims_from_text(said, r["author"], _said(r)):
            row = _claim_row(r, c["predicate"], c["value"], c["category"], c["fact_text"],
                             c["confidence"] * replies.DISCOUNT, "rules")
            if row["id"] not in seen:
                seen.add(row["id"])
                rows.append(row)
    for a in address_claims(msgs):
        rows.append(_claim_row(a["row"], a["predicate"], a["value"], predicate_info(a["predicate"]).category,
                               render_fact_text(a["predicate"], a["value"]), a.get("confidence", ADDRESS_CONFIDENCE),
                               "address"))
    # "LDL 112, normal hai ab": the end of a condition, which consolidation closes
    for c in recovery.recovery_claims(msgs):
        rows.append(_claim_row(c["row"], recovery.PREDICATE, c["value"], "health", f"Recovered: {c['value']}",
                               recovery.CONFIDENCE, "rules"))
    # the birthday wishes the user thanks people for date the birthday (and may say the age); the
    # anniversary the user wishes someone names their partner
    for w in wishes.birthday_claims(msgs) + wishes.anniversary_claims(msgs):
        rows.append(_claim_row(w["row"], w["predicate"], w["value"], predicate_info(w["predicate"]).category,
                               render_fact_text(w["predicate"], w["value"]), w["confidence"], "wishes"))
    df = pl.DataFrame(rows, schema=CLAIM_SCHEMA) if rows else pl.DataFrame(schema=CLAIM_SCHEMA)
    return df.sort("ts", "id").select(CLAIM_COLUMNS)
