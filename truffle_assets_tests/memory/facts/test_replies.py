"""Facts the user states by answering the other person: the question completed by the reply is read
like the user's own sentence, with the reply as evidence; no and stale replies, and confirmations of
things said about someone else, state nothing."""

from datetime import timedelta

from truffle_assets.memory.facts.extraction import extract_claims
from truffle_assets.memory.facts.replies import first_person, reply_statements
from truffle_assets_tests.memory.facts.frames import USER, chat


def said(df):
    c = extract_claims(df)
    return {(p, v, m) for p, v, m in zip(c["predicate"], c["value"], c["message_id"])}


def test_a_value_answering_a_question_about_one_attribute():
    got = said(chat([("Meera", "bhai wajan kitna hai ab tumhara?"), (USER, "81. diet chal rahi hai")]))
    assert ("weight", "81 kg", "c1-1") in got  # the reply is the evidence
    got = said(chat([("Meera", "what's your blood group? hospital form asks"), (USER, "B positive. why")]))
    assert ("blood_group", "B+", "c1-1") in got
    got = said(chat([("Meera", "how old are you turning?"), (USER, "34 on friday")]))
    assert ("age", "34", "c1-1") in got


def test_a_yes_to_what_the_other_person_says_about_the_user():
    got = said(chat([("Meera", "tum abhi bhi Indore me rehte ho na?"), (USER, "haan, teen saal ho gaye")]))
    assert ("lives_in", "Indore", "c1-1") in got
    got = said(chat([("Meera", "wait, you quit Wipro??"), (USER, "yep. last friday")]))
    assert ("left_job", "Wipro", "c1-1") in got
    got = said(chat([("Meera", "tujhe toh mungfali se allergy hai na"), (USER, "haan bachpan se")]))
    assert ("allergy", "peanuts", "c1-1") in got  # stored by its English name
    # the user named in the third person, confirmed by repeating the number
    got = said(chat([("Mom", "31 ki ho gayi meri beti ❤️"), (USER, "haan mummy 31 😭")]))
    assert ("age", "31", "c1-1") in got


def test_no_claim_without_a_yes_a_single_value_or_the_user_as_subject():
    assert not said(chat([("Meera", "tum abhi bhi Indore me rehte ho?"), (USER, "bilkul nahi, Bhopal aa gaya")])) \
        & {("lives_in", "Indore", "c1-1")}
    assert not said(chat([("Meera", "you moved to Surat right?"), (USER, "no")]))
    # which of two numbers answers the rent question is not for a rule to guess
    assert not {p for p, _, _ in said(chat([("Mom", "kiraya kitna hai?"), (USER, "30 total, mera 10")]))} & {"rent"}
    # a yes to news about someone else says nothing about the user
    assert said(chat([("Meera", "Riya moved to Goa?"), (USER, "haan!")])) == set()
    # the reply must follow the message it completes: not hours later, not after someone else
    assert said(chat([("Meera", "tum abhi bhi Indore me rehte ho na?"), (USER, "haan")], gap=timedelta(hours=7))) == set()
    late = chat([("Meera", "tum abhi bhi Indore me rehte ho na?"), ("Kabir", "lol"), (USER, "haan")])
    assert reply_statements(late) == []
    # a question the user asked is not one the user answers
    assert said(chat([(USER, "are you vegetarian now?"), ("Meera", "yes!")])) == set()


def test_first_person_turns_subject_object_and_agreement():
    assert first_person("are you the new team lead?") == "I am the new team lead."
    assert first_person("Thinking of joining you?") == "Thinking of joining me."
    assert first_person("tum abhi bhi Pune me rehte ho na?") == "main abhi bhi Pune me rehta hu."
    assert first_person("tumhara dost aaya?") == "mera dost aaya."
