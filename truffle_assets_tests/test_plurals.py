"""Counts in words: the one helper every human line uses."""

from truffle_assets.plurals import plural, plural_of


def test_one_is_singular_everything_else_plural():
    assert [plural(n, "entry") for n in (0, 1, 2)] == ["0 entries", "1 entry", "2 entries"]
    assert plural(1, "line") == "1 line" and plural(1, "header") == "1 header"
    assert plural(1_204, "message") == "1,204 messages"


def test_the_common_rules_and_an_explicit_plural():
    assert [plural_of(w) for w in ("day", "summary", "match", "box", "chat", "person")] == [
        "days", "summaries", "matches", "boxes", "chats", "people"]
    assert plural(2, "logged search that found them", "logged searches that found them") == (
        "2 logged searches that found them")
