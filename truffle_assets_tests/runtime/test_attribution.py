"""Citation attribution: a claim cites the shown message that states it, and nothing else is touched."""

from __future__ import annotations

from truffle_assets.runtime.attribution import attribute, claim_words, without_self

SHOWN = {
    "a1": "Ananya is my younger sister, she's in 10th now",
    "b2": "lol ok see you tmrw",
    "c3": "We finally shifted to Bengaluru on 22nd August!!",
    "d4": "my birthday is 17 May btw, don't forget",
}


def test_a_claim_cited_to_the_wrong_line_is_repointed_to_the_line_that_states_it():
    body, changes = attribute("Your younger sister is Ananya [msg:b2].", "Who is my younger sister?", SHOWN)
    assert body == "Your younger sister is Ananya [msg:a1]."
    assert changes == [{"change": "repointed", "from": ["b2"], "to": "a1", "support": 1.0}]


def test_an_uncited_claim_gets_the_citation_of_the_line_that_states_it():
    body, changes = attribute("You shifted to Bengaluru on 22 August.", "When did I shift to Bengaluru?", SHOWN)
    assert body == "You shifted to Bengaluru on 22 August [msg:c3]."  # "22nd" states "22"
    assert [c["change"] for c in changes] == ["added"]


def test_a_supported_citation_and_an_unsupported_claim_are_left_as_written():
    ok = "Your birthday is on 17 May [msg:d4]."
    assert attribute(ok, "When is my birthday?", SHOWN) == (ok, [])
    made_up = "You work at Zoho Labs [msg:b2]."  # no shown line says so: no source is invented for it
    assert attribute(made_up, "Where do I work?", SHOWN) == (made_up, [])
    absent = "That is not in your memory: I couldn't find any message about your sister's school."
    assert attribute(absent, "Which school did my sister go to?", SHOWN) == (absent, [])


def test_each_sentence_is_attributed_on_its_own():
    body, changes = attribute("Your sister is Ananya [msg:a1]. You moved to Bengaluru on 22 August [msg:a1].",
                              "Tell me about my sister and my move", SHOWN)
    assert body == "Your sister is Ananya [msg:a1]. You moved to Bengaluru on 22 August [msg:c3]."
    assert [(c["change"], c["to"]) for c in changes] == [("repointed", "c3")]


def test_the_claim_is_what_the_sentence_adds_to_the_question():
    assert claim_words("Your younger sister is Ananya [msg:b2].", "Who is my younger sister?") == {"ananya"}


def test_a_sentence_naming_the_user_as_someone_else_is_dropped():
    body = "Your daughter: Meera Iyer [msg:a1].\n\nUncertain: [msg:a1] — weak matches in memory, treat with care."
    kept, dropped = without_self(body, "Meera Iyer")
    assert dropped == ["Your daughter: Meera Iyer [msg:a1]."] and kept.startswith("Uncertain:")
    # by first name too, and only that sentence of a longer answer
    kept, dropped = without_self("You got engaged to Meera in May [msg:c3]. You moved to Pune [msg:d4].", "Meera Iyer")
    assert kept == "You moved to Pune [msg:d4]." and len(dropped) == 1
    # the owner's lines as the runtime marks them, a sentence not addressed to the user, no user known
    same = "Meera Iyer (you) said you work at Zeta [msg:a1]."
    assert without_self(same, "Meera Iyer") == (same, [])
    assert without_self("Meera Iyer wrote this on 3 May [msg:a1].", "Meera Iyer")[1] == []
    assert without_self("Your daughter: Meera Iyer [msg:a1].", None)[1] == []
