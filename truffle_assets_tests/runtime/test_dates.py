"""A yearless date in an answer takes its year from the message cited beside it (runtime.dates)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest
from langgraph.runtime import Runtime

from truffle_assets.runtime.repairs import finalize
from truffle_assets.runtime.dates import with_years, year_from
from truffle_assets.runtime.state import Context, State
from truffle_assets.runtime.config import Repairs

SOURCES = {
    "run": (datetime(2024, 1, 21, 9, 5), "Finished my first half marathon today! Legs are gone"),
    "plan": ("2019-11-20", "Goa trip final: 27 to 30 Dec, tickets booked"),
    "after": ("2020-01-04", "the goa trip in december was the best"),
    "new_year": ("2023-01-01", "New year, no more cigarettes"),
    "verb": ("2021-06-01", "I may come in the evening"),
}


@pytest.mark.parametrize("answer, dated", [
    # the message was sent that day / that month
    ("You finished your first half marathon on 21 January [msg:run].",
     "You finished your first half marathon on 21 January 2024 [msg:run]."),
    ("You quit smoking in January [msg:new_year].", "You quit smoking in January 2023 [msg:new_year]."),
    ("On January 21st [msg:run] you ran.", "On January 21st, 2024 [msg:run] you ran."),
    # the text names it: the year that puts it nearest the message (a plan before, a memory after)
    ("Your Goa trip was 27–30 December [msg:plan].", "Your Goa trip was 27–30 December 2019 [msg:plan]."),
    ("Your Goa trip was in December [msg:after].", "Your Goa trip was in December 2019 [msg:after]."),
    # each date is read against its own sentence's sources
    ("You ran on 21 January [msg:run]. Goa was 27-30 Dec [msg:plan].",
     "You ran on 21 January 2024 [msg:run]. Goa was 27-30 Dec 2019 [msg:plan]."),
])
def test_a_cited_source_gives_the_year(answer, dated):
    body, added = with_years(answer, SOURCES)
    assert body == dated and added


@pytest.mark.parametrize("answer", [
    "You quit smoking on 1 January 2023 [msg:new_year].",        # it has its year
    "You finished on 21 January.",                              # nothing cited
    "You finished on 22 January [msg:run].",                     # sent the 21st, and its text names no day
    "You came in May [msg:verb].",                               # "may" the verb is no month
    "You finished on 21 January [msg:run] [msg:after].",         # one source says 2024, the other nothing: 2024
])
def test_no_year_without_a_source_that_gives_it(answer):
    body, added = with_years(answer, SOURCES)
    if "[msg:after]" in answer:  # the one source that gives a year is enough
        assert body.startswith("You finished on 21 January 2024 ") and len(added) == 1
    else:
        assert body == answer and added == []


def test_disagreeing_sources_and_yearly_dates_are_left_alone():
    two = {"a": ("2022-03-05", "see you on 5 March"), "b": ("2023-03-05", "happy 5 march!")}
    assert with_years("On 5 March [msg:a] [msg:b].", two) == ("On 5 March [msg:a] [msg:b].", [])
    # a birthday recurs: no year, whether the question or the answer says so
    assert with_years("It is on 5 March [msg:a].", two, "When is my birthday?")[1] == []
    assert with_years("Your birthday is on 5 March [msg:a].", two)[1] == []


def test_a_quoted_line_keeps_the_users_words():
    quote = "[msg:plan] Arjun (you) (20 November 2019): Goa trip final: 27 to 30 Dec, tickets booked"
    assert with_years(quote, SOURCES) == (quote, [])
    # a quote the model cut at the date and cited there is still the user's words
    moved = {"ms": ("2023-12-20", "got into OMSCS!! online MS in CS, starting in January. part time")}
    cut = "Got into OMSCS! [msg:ms]! online MS in CS, starting in January [msg:ms]. part time [msg:ms]"
    assert with_years(cut, moved) == (cut, [])
    # a sentence of the model's own that shares a few words with the line is not a quote
    shifted = {"mv": ("2022-08-20", "Packing everything, moving to Bengaluru on 22 August, wish me luck")}
    assert with_years("You shifted to Bengaluru on 22 August [msg:mv].", shifted)[0] == (
        "You shifted to Bengaluru on 22 August 2022 [msg:mv].")


def test_nearest_year_across_the_new_year():
    assert year_from(2, 1, datetime(2019, 12, 28).date(), "party on 2 Jan") == 2020
    assert year_from(28, 12, datetime(2020, 1, 3).date(), "that 28 dec night") == 2019
    assert year_from(29, 2, datetime(2023, 3, 1).date(), "on 29 feb") == 2024  # 2023 has no 29 February


def test_finalize_adds_the_year_and_records_it():
    item = {"message_id": "m1", "chat_id": "c", "author": "Arjun", "ts": "2024-01-21T09:05:00",
            "text": "Finished my first half marathon today!", "score": 1.0}
    state = State(question="When did I run my first half marathon?", items=[item], context_ids=["m1"],
                  raw_output="You finished your first half marathon on 21 January [msg:m1].")
    out = finalize(state, Runtime(context=Context(published_dir="/nonexistent")))
    assert out["body"] == "You finished your first half marathon on 21 January 2024 [msg:m1]."
    assert out["trace"][0]["dated"] == [{"date": "21 January", "year": 2024}]
    off = finalize(state, Runtime(context=replace(Context(published_dir="/nonexistent"),
                                                  repairs=Repairs(date_years=False))))
    assert off["body"] == state.raw_output and off["trace"][0]["dated"] == []
