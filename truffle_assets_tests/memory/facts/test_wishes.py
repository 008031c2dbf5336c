"""A birthday from the wishes the user thanks people for, dated by the wish's day; the age when the
wish or the user's reply says it; nothing for wishes to someone else, late or early ones, questions,
or wishes nobody thanks for."""

from datetime import timedelta

import polars as pl

from truffle_assets.memory.facts.extraction import extract_claims
from truffle_assets.memory.facts.wishes import GROUP, ONE_TO_ONE, anniversary_claims, birthday_claims
from truffle_assets_tests.memory.facts.frames import USER, chat

MIN = timedelta(minutes=10)


def found(df: pl.DataFrame) -> set[tuple[str, str, str]]:
    return {(c["predicate"], c["value"], c["row"]["id"]) for c in birthday_claims(df)}


def test_a_thanked_wish_dates_the_birthday_and_its_thread_is_the_evidence():
    df = chat([("Sunita", "happy bday jaan 🎂 khush raho"), (USER, "thank you maa ❤️"),
               (USER, "itni subah uth gayi aap")], gap=MIN)
    got = found(df)
    # the day the wish was sent: 2024-01-01 in the test frame
    assert got == {("birthday", "--01-01", "c1-1"), ("birthday", "--01-01", "c1-2")}
    assert {c["confidence"] for c in birthday_claims(df)} == {ONE_TO_ONE}
    # through the extractor: source "wishes", the subject the user
    c = extract_claims(df).filter(pl.col("source") == "wishes")
    assert set(c["predicate"]) == {"birthday"} and set(c["subject"]) == {USER}
    assert set(c["fact_text"]) == {"Birthday: 1 January"}


def test_the_age_from_the_wish_or_from_the_reply_opening_with_it():
    assert ("age", "27", "c1-1") in found(chat([("Kiran", "Happy 27th you old thing!!"), (USER, "thanks yaar 😂")], gap=MIN))
    assert ("age", "34", "c1-1") in found(chat([("Kiran", "happy birthday!! 🎉"), (USER, "ty! 34 and still no car")], gap=MIN))
    assert ("age", "26", "c1-1") in found(chat([("Kiran", "hbd behen"), (USER, "thank youuu. 26 ki ho gayi 🥲")], gap=MIN))
    # a number that is no age: a time, a count
    for reply in ("thanks! 15 min me call karti hu", "thank you!! 20 people came to the party"):
        assert not {p for p, _, _ in found(chat([("Kiran", "happy birthday!!"), (USER, reply)], gap=MIN))} & {"age"}


def test_a_group_wish_counts_when_the_user_thanks_and_for_less():
    df = chat([("Chacha", "janamdin ki shubhkamnayein beta"), ("Bua", "many happy returns Nikhil 🎂"),
               (USER, "thank you sab ko 🙏")], gap=MIN)
    claims = birthday_claims(df)
    assert {(c["predicate"], c["value"], c["row"]["id"]) for c in claims} == {("birthday", "--01-01", "c1-2")}
    assert claims[0]["confidence"] == GROUP
    # someone else's birthday in the group: the user wishes them too, and thanks nobody
    other = chat([("Chacha", "happy birthday Bua ji 🎂"), (USER, "happy birthday bua! 🎉"), ("Bua", "thank you bachhon")],
                 gap=MIN)
    assert found(other) == set()
    # a "thanks ❤️" hours later in a group, to nobody in particular, is for something else
    later = chat([("Chacha", "happy birthday!! 🎂"), ("Bua", "photos bhejo"), (USER, "thanks ❤️")], gap=timedelta(hours=2))
    assert found(later) == set()
    # ... unless it thanks everyone or names the wisher
    assert found(chat([("Chacha", "happy birthday!! 🎂"), ("Bua", "photos bhejo"), (USER, "thanks everyone ❤️")],
                      gap=timedelta(hours=2)))
    assert found(chat([("Chacha", "happy birthday!! 🎂"), ("Bua", "photos bhejo"), (USER, "thank you chacha 🙏")],
                      gap=timedelta(hours=2)))


def test_no_birthday_from_wishes_not_for_the_user_today():
    for wish in ("belated happy birthday!! sorry", "advance happy birthday 🎂", "wish your dad a happy birthday from me",
                 "Ravi's birthday party kab hai?", "happy 30th anniversary to your parents", "happy birthday kal hai na?",
                 "happy birthday to him from us", "happy birthday to Riya!! 🎂"):
        assert found(chat([("Kiran", wish), (USER, "thanks ❤️")], gap=MIN)) == set(), wish
    # nobody thanked: the next message from the user is about something else, or comes a day later
    assert found(chat([("Kiran", "happy birthday!!"), (USER, "kal milte hai")], gap=MIN)) == set()
    assert found(chat([("Kiran", "happy birthday!!"), (USER, "thanks!")], gap=timedelta(hours=20))) == set()


def test_the_user_wishing_our_anniversary_names_the_partner_as_the_chat_does():
    for text in ("happy two years to us 🥂 still can't believe you said yes", "happy anniversary jaan ❤️"):
        got = anniversary_claims(chat([("Arjun 🌙", "good morning"), (USER, text)], gap=MIN))
        assert [(c["predicate"], c["value"], c["row"]["id"]) for c in got] == [("partner", "Arjun", "c1-1")], text
    # parents' or friends' anniversaries, and a group's, say nothing about the user
    for text in ("happy anniversary mummy papa 🎉", "happy 25th anniversary to you both!!", "happy anniversary guys"):
        assert anniversary_claims(chat([("Mom", "thank you beta"), (USER, text)], gap=MIN)) == [], text
    group = chat([("Arjun", "hi"), ("Neel", "hey"), (USER, "happy one year to us, team!")], gap=MIN)
    assert anniversary_claims(group) == []
