import pytest

from truffle_assets.evals.markdown import CITATION, check_markdown, question_card

A, B, C = "a1b2c3d4e5f60718293a", "0badc0ffee0badc0ffee", "123456abcdef"


@pytest.mark.parametrize("text, shape", [
    (f"Tanvi's flight leaves at 6:40 am on Friday [msg:{A}].", "direct"),
    (f"Tanvi got the offer [msg:{A}]. She joins on the 1st. [msg:{B}]\n\nWant me to look for the party plans?",
     "direct"),
    (f"People are bringing:\n\n- sandwiches, from Tanvi [msg:{A}]\n- lemonade and cups [msg:{B}]", "list"),
    (f"> Honestly I regret it, we rushed it\n\n— Farhan [msg:{A}]", "quote"),
    ("I couldn't find anything about the chess tournament in your memory. I can search a specific chat "
     "if you tell me which one.", "not_found"),
    ("Your memory has nothing on Leela's favourite film.\n\nWant me to search your chats with Leela?", "not_found"),
])
def test_each_shape_is_recognised(text, shape):
    v = check_markdown(text)
    assert v.shape == shape and v.ok, v.problems
    assert v.parses and not v.raw_html and v.fences_ok and v.citations_ok


@pytest.mark.parametrize("text, problem", [
    (f"Tanvi said <b>yes</b> [msg:{A}].", "raw HTML"),
    (f"Tanvi said yes [msg:{A}].<br>", "raw HTML"),
    (f"<div>Tanvi said yes [msg:{A}]</div>", "raw HTML"),
])
def test_raw_html_fails(text, problem):
    v = check_markdown(text)
    assert v.raw_html and problem in v.problems and not v.ok


def test_html_inside_code_is_not_raw_html():
    v = check_markdown(f"The template uses a `<br>` tag [msg:{A}].")
    assert not v.raw_html and v.ok


def test_unclosed_fence():
    v = check_markdown(f"Here it is [msg:{A}]:\n\n```json\n{{\"a\": 1}}\n")
    assert not v.fences_ok and "unclosed code fence" in v.problems and not v.ok
    closed = check_markdown(f"Here it is [msg:{A}]:\n\n```json\n{{\"a\": 1}}\n```\n")
    assert closed.fences_ok and closed.shape is None  # a fence is not one of the four shapes


@pytest.mark.parametrize("cite", ["(msg 123)", "[msg 12]", f"[[msg:{A}]]", "[msg:ABCDEF12]", "[msg:abc]",
                                  "(message 42)", "[source: msg_123456]", f"msg:{A}"])
def test_non_canonical_citations_fail(cite):
    v = check_markdown(f"Tanvi said yes {cite}.")
    assert not v.citations_ok and any("non-canonical" in p for p in v.problems), v.problems
    assert not CITATION.fullmatch(cite)


def test_citation_rules_per_shape():
    uncited_sentence = check_markdown(f"Tanvi got the offer [msg:{A}]. Everyone was thrilled.")
    assert uncited_sentence.shape == "direct" and not uncited_sentence.citations_ok
    uncited_bullet = check_markdown(f"Items:\n\n- cups [msg:{A}]\n- plates")
    assert uncited_bullet.shape == "list" and not uncited_bullet.citations_ok
    uncited_quote = check_markdown("> we rushed it\n\n— Farhan")
    assert uncited_quote.shape == "quote" and not uncited_quote.citations_ok
    no_offer = check_markdown("I couldn't find anything about that.")
    assert no_offer.shape == "not_found" and not no_offer.ok
    lead_two_lines = check_markdown(f"Items\nfor the picnic:\n\n- cups [msg:{A}]")
    assert lead_two_lines.shape == "list" and not lead_two_lines.ok


def test_not_one_of_the_shapes():
    for text in (f"## Answer\n\nTanvi said yes [msg:{A}].", f"- a [msg:{A}]\n- b [msg:{B}]",
                 f"Lead [msg:{A}]\n\n- a [msg:{A}]\n\nTrailing text [msg:{C}]",
                 f"One [msg:{A}].\n\nTwo [msg:{A}].\n\nThree [msg:{A}].\n\nFour [msg:{A}]."):
        assert not check_markdown(text).ok


def test_citations_are_collected_in_order():
    v = check_markdown(f"X [msg:{B}] and Y [msg:{A}].")
    assert v.citations == [B, A]


def test_empty_answer():
    v = check_markdown("  ")
    assert not v.parses and v.shape is None


def test_question_card():
    assert question_card("**Question:** Which Tanvi?\n\n- Tanvi Rao\n- Tanvi Shah") == ("Which Tanvi?",
                                                                                   ["Tanvi Rao", "Tanvi Shah"])
    assert question_card("**Question:** Which one?\n\n- only one") is None
    assert question_card("Which one do you mean?") is None
    assert question_card("**Question:** Which?\n\n" + "\n".join(f"- {i}" for i in range(5))) is None
