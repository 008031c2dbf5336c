"""Profile facts ranked by closeness to the question, with the real MiniLM embedder the index uses."""

import pytest

from truffle_assets.index.embedder import Embedder
from truffle_assets.runtime.profile_rank import asks_about_past, fact_lines, relevance

PROFILE = {
    "content_hash": "test-profile-1",
    "facts": {
        "identity": [{"id": "name", "text": "Name: Arjun Mehta"}, {"id": "bday", "text": "Birthday: 17 May 1994"}],
        "home": [{"id": "home", "text": "Lives in: HSR Layout, Bengaluru"}],
        "work": [{"id": "job", "text": "Works at: Northwind"}],
        "relationship": [{"id": "partner", "text": "Partner: Priya"}],
        "pet": [{"id": "pet", "text": "Pet (indie puppy): Coco"}],
        "preference": [{"id": "sport", "text": "Favourite sport: Cricket"}, {"id": "food", "text": "Favourite: Pani puri"}],
    },
    "previously": [{"id": "pune", "text": "Lives in: Pune", "until": "2022-08-22"},
                   {"id": "zentrix", "text": "Works at: Zentrix", "until": "2022-07-11"}],
}


class Counting(Embedder):
    """The real embedder, counting the texts it embeds."""

    def __init__(self):
        super().__init__()
        self.texts = 0

    def encode(self, texts):
        self.texts += len(texts)
        return super().encode(texts)


@pytest.fixture(scope="module")
def embedder():
    return Counting()


def top(scores: dict[str, float], n: int) -> list[str]:
    return sorted(scores, key=scores.get, reverse=True)[:n]


PAST = {"pune", "zentrix"}


@pytest.mark.parametrize("question, wanted", [
    ("Where do I work now?", {"job"}),
    ("Which city did I live in before Bengaluru?", {"home", "pune"}),
    ("Where did I work earlier?", {"job", "zentrix"}),
    ("What's my dog called?", {"pet"}),
    ("Who is my partner?", {"partner"}),
    ("When is my birthday?", {"bday"}),
])
def test_the_questions_facts_rank_first(embedder, question, wanted):
    scores = relevance(PROFILE, question, embedder)
    past = asks_about_past(question)
    assert set(scores) == {i for i, _ in fact_lines(PROFILE)} - (set() if past else PAST)
    assert wanted <= set(top(scores, 3)), (question, sorted(scores.items(), key=lambda kv: -kv[1]))


@pytest.mark.parametrize("question, past", [
    ("Which city do I live in?", False), ("Who am I dating?", False), ("What is my diet?", False),
    ("Where did I live before Hyderabad?", True), ("What was my rent in Gachibowli?", True),
    ("Have I ever lived in Bangalore?", True), ("Where did I use to work?", True),
    ("Pehle kahan rehta tha main?", True), ("What car do I drive these days?", False),
])
def test_past_facts_are_offered_only_to_questions_about_the_past(question, past):
    # a past home shown beside the current one was read as the answer to "Which city do I live in?"
    assert asks_about_past(question) is past


def test_fact_vectors_are_embedded_once_per_profile_version(embedder):
    relevance(PROFILE, "Where do I work now?", embedder)
    before = embedder.texts
    relevance(PROFILE, "What do I like to eat?", embedder)
    assert embedder.texts == before + 1  # the question alone
    relevance(PROFILE | {"content_hash": "test-profile-2"}, "What do I like to eat?", embedder)
    assert embedder.texts == before + 1 + len(fact_lines(PROFILE)) + 1


def test_no_profile_or_no_question_ranks_nothing(embedder):
    assert relevance(None, "Where do I work?", embedder) == {}
    assert relevance(PROFILE, "  ", embedder) == {}
