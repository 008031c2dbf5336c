"""Query-side handling: BM25 words, named speakers, calendar dates."""

from datetime import date

from truffle_assets.retrieval.query import bm25_query, dates_in, names_in, query_terms, without_names

PEOPLE = ["Caroline", "Melanie Smith"]


def test_bm25_keeps_content_words_only():
    assert bm25_query("What kind of pottery did Melanie's kids make recently?") == "pottery melanie kids make"
    assert bm25_query("What did you do?") == ""


def test_names_by_first_name_and_possessive():
    assert names_in("What is Melanie's favourite book?", PEOPLE) == ["Melanie Smith"]
    assert names_in("what did caroline and melanie do", PEOPLE) == PEOPLE


def test_dates_day_forms_and_month_only_without_a_day():
    d = date(2023, 6, 3)
    for q in ("on 3 June, 2023", "on June 3rd, 2023", "on 2023-06-03"):
        assert dates_in(q) == [(d, d)]
    assert dates_in("in December 2023") == [(date(2023, 12, 1), date(2023, 12, 31))]
    assert dates_in("last week") == []
    assert dates_in("on 31 June, 2023") == [(date(2023, 6, 1), date(2023, 6, 30))]  # no such day: its month


def test_query_terms_drop_named_speakers_from_bm25():
    t = query_terms("What did Melanie paint in August 2023?", PEOPLE)
    assert t.named == ["Melanie Smith"] and t.people == PEOPLE
    assert t.bm25 == "paint august 2023"
    assert t.dates == [(date(2023, 8, 1), date(2023, 8, 31))]


def test_query_terms_keep_names_when_nothing_else_is_left():
    t = query_terms("Melanie?", PEOPLE)
    assert t.named == ["Melanie Smith"] and t.bm25 == "melanie"


def test_the_dense_side_hears_named_participants_as_they():
    assert without_names("What is Melanie's favourite book?", ["Melanie Smith"]) == "What is they favourite book?"
    assert without_names("did caroline meet MELANIE", PEOPLE) == "did they meet they"
    # only whole names of the participants the query names; other people stay
    assert without_names("Did Carolinea meet Rohan?", PEOPLE) == "Did Carolinea meet Rohan?"
    assert without_names("When did Caroline go?", []) == "When did Caroline go?"


def test_a_question_in_the_first_person_is_about_the_owner():
    assert query_terms("Where do I work now?", PEOPLE).about_self
    assert query_terms("what's my blood group", PEOPLE).about_self
    # "me" is mostly someone else's doing ("who told me"), and a named participant wins
    assert not query_terms("Who told me about the wedding?", PEOPLE).about_self
    assert not query_terms("What did Caroline tell my sister?", PEOPLE).about_self
    assert not query_terms("Where does Melanie work?", PEOPLE).about_self
