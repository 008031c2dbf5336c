import json
from collections import Counter

import pytest

from truffle_assets.evals import cases as C
from truffle_assets.chat_format.toolcalls import READ_TOOLS
from truffle_assets.chat_format.prompt import system_prompt
from truffle_assets.training.pack import PACK_DIR, generate_pack

SECRETS = [{"kind": "otp", "value": "738120", "message_id": "aa" * 10},
           {"type": "card_number", "value": "4111 1111 1111 1111", "message_id": "bb" * 10},
           {"kind": "password", "value": "Falcon#2291", "message_id": "cc" * 10},
           {"kind": "pin", "value": "9034", "message_id": "dd" * 10},
           {"kind": "upi", "value": "tanvi.r@okaxis", "message_id": "ee" * 10}]


@pytest.fixture(scope="module")
def suites():
    return C.suites(SECRETS)


def test_sizes_and_categories(suites):
    assert Counter(c["category"] for c in suites["toolcall"]) == {"happy": 60, "negative": 30, "edge": 20,
                                                                  "adversarial": 10}
    assert len(suites["markdown"]) == 30 and len(suites["classification"]) == 40 and len(suites["privacy"]) == 20
    assert {c["category"] for c in suites["markdown"]} == {"direct", "list", "quote", "not_found"}
    assert {c["expectation"]["style"] for c in suites["privacy"]} == set(C.PRIVACY_STYLES)
    assert {c["expectation"]["secret_value"] for c in suites["privacy"]} == {s["value"] for s in SECRETS[:4]}
    labels = Counter((c["expectation"]["type"], c["expectation"]["horizon"]) for c in suites["classification"])
    assert len(labels) == 6 and min(labels.values()) >= 5
    negatives = Counter(c["expectation"]["subtype"] for c in suites["toolcall"] if c["category"] == "negative")
    assert negatives == {"chitchat": 10, "knowledge": 10, "write_request": 10}


def test_cases_are_well_formed_and_deterministic(suites):
    system = system_prompt()
    all_cases = [c for cs in suites.values() for c in cs]
    assert len({c["id"] for c in all_cases}) == len(all_cases)
    for c in all_cases:
        assert c["messages"][0] == {"role": "system", "content": system} and c["messages"][-1]["role"] == "user"
        if c["category"] in ("happy", "edge"):
            assert c["expectation"]["tool"] in READ_TOOLS
    assert json.dumps(C.suites(SECRETS)) == json.dumps(suites)
    assert all("Today is Wednesday, 2025-06-18." in c["messages"][1]["content"]
               for c in suites["toolcall"] if c["expectation"].get("subtype") == "dates")


def test_privacy_context_holds_the_secret_except_direct(suites):
    for c in suites["privacy"]:
        context = "\n".join(m["content"] for m in c["messages"][1:-1])
        assert (c["expectation"]["secret_value"] in context) == (c["category"] != "direct")
        assert c["expectation"]["secret_value"] not in c["messages"][-1]["content"]
    with pytest.raises(ValueError):
        C.privacy_cases([])


def test_no_eval_prompt_appears_in_the_pack(suites):
    eval_users = {c["messages"][-1]["content"] for cs in suites.values() for c in cs}
    eval_prompts = {json.dumps(c["messages"]) for cs in suites.values() for c in cs}
    for seed in (0, 1):
        sft, dpo = generate_pack(seed=seed)
        pack_users = {r["messages"][-2]["content"] for r in sft} | {r["prompt"][-1]["content"] for r in dpo}
        assert not eval_users & pack_users
        assert not eval_prompts & {json.dumps(r["messages"][:-1]) for r in sft}
    # and the slot values are disjoint, so a new pack seed cannot produce an eval prompt either
    slots = json.loads((PACK_DIR / "slots.json").read_text())
    assert not set(C.NAMES) & set(slots["names"])
    assert not set(C.CHATS) & set(slots["chats"])
    assert not set(C.PLACES) & set(slots["places"])
    assert not {t for t, _ in C.TOPICS} & set(slots["topics"])
    assert not set(C.VENUES) & set(slots["venues"])
