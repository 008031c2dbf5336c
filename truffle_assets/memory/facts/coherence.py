"""Claims a reader contradicts itself with: one message naming one person in roles nobody holds at once.

A person is the user's partner or mother or brother or pet, not several of these. When one reader's
claims from one message file the same name under two such roles ("Kabir" as partner, mother and
pet), the reading of that name is unreliable, so none of its relationship claims from that message
makes a fact. The claims stay in `fact_claims` for the audit trail; the facts asset's
`one_role_per_person` check lists them. Claims from different readers or different messages are not
compared here: a later message that changes a role is consolidation's business.
"""

from __future__ import annotations

import polars as pl

from truffle_assets.memory.facts import families
from truffle_assets.memory.facts.lexicon import predicate_info
from truffle_assets.memory.facts.schema import ENDING_PREFIX
from truffle_assets.memory.facts.values import normalize_value

# Roles one person cannot hold together, as predicates a claim may use (after `families.canonical`).
# Friendship and the generic "family" combine with any of them ("my sister is my best friend").
_EXCLUSIVE_ROLES = {
    "partner": "partner", "mother": "mother", "mom": "mother", "mum": "mother", "father": "father",
    "dad": "father", "sister": "sister", "brother": "brother", "son": "child", "daughter": "child",
    "child": "child", "pet": "pet", "dog": "pet", "cat": "pet",
}


def _role(predicate: str) -> str | None:
    if predicate.startswith(ENDING_PREFIX):
        return None
    return _EXCLUSIVE_ROLES.get(families.canonical(predicate))


def _is_relation(predicate: str, category: str | None) -> bool:
    if predicate.startswith(ENDING_PREFIX):
        return False
    p = families.canonical(predicate)
    return p in _EXCLUSIVE_ROLES or predicate_info(p).category == "relationship" or category == "relationship"


def contradictions(claims: pl.DataFrame) -> list[dict]:
    """One entry per (source, message, subject, named person) given exclusive roles: the roles and the
    ids of the relationship claims that make no fact."""
    if claims.height == 0:
        return []
    groups: dict[tuple[str, str, str, str], list[dict]] = {}
    for c in claims.select("id", "source", "message_id", "subject", "predicate", "value", "category").iter_rows(named=True):
        if _is_relation(c["predicate"], c["category"]):
            key = (c["source"], c["message_id"], c["subject"], normalize_value(c["value"]))
            groups.setdefault(key, []).append(c)
    out = []
    for (source, message_id, subject, _), cs in sorted(groups.items()):
        roles = sorted({r for r in (_role(c["predicate"]) for c in cs) if r is not None})
        if len(roles) > 1:
            out.append({"source": source, "message_id": message_id, "subject": subject, "value": cs[0]["value"],
                        "roles": roles, "claim_ids": sorted(c["id"] for c in cs)})
    return out


def contradicted_ids(claims: pl.DataFrame) -> set[str]:
    return {i for c in contradictions(claims) for i in c["claim_ids"]}
