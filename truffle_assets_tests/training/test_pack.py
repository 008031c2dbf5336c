import json
import re
import time
from collections import Counter
from datetime import datetime

import pytest

from truffle_assets.evals.markdown import check_markdown, question_card
from truffle_assets.evals.questions import says_absent
from truffle_assets.evals.scoring import find_leak
from truffle_assets.chat_format.toolcalls import WRITE_TOOLS, looks_like_tool_call, parse_tool_calls
from truffle_assets.training import pack
from truffle_assets.chat_format.prompt import OWN_LINE_MARK, message_lines, system_prompt
from truffle_assets.training.pack import (DEFAULT_SIZES, KINDS, PACK_VERSION, RECORDED_ABSENT, RECORDED_ANSWERABLE,
                                          generate_pack, recorded_rows)
from truffle_assets.training.grounded import NOT_FOUND_WORDINGS
from truffle_assets.training.schemas import DPORow, SFTRow, row_id, split_for


@pytest.fixture(scope="module")
def rows():
    return generate_pack()


def by_kind(rows, kind):
    return [r for r in rows if r["kind"] == kind]


def test_rows_validate_and_follow_the_contract(rows):
    sft, dpo = rows
    system = system_prompt()
    for r in sft:
        SFTRow.model_validate(r)
        recorded = r["source_id"].startswith("runtime/")  # training.grounded: <seed>/<question id>
        assert r["source"] == "synthetic" and (recorded and r["kind"] == "grounded_answer"
                                               or r["source_id"] == f"{r['kind']}/{r['source_id'].split('/')[1]}")
        assert r["messages"][0] == {"role": "system", "content": system}
        assert r["id"] == row_id("synthetic", r["source_id"], r["messages"])
        assert r["split"] == split_for(r["source_id"])
    for r in dpo:
        DPORow.model_validate(r)
        assert r["prompt"][0] == {"role": "system", "content": system} and r["prompt"][-1]["role"] == "user"
        assert r["split"] == split_for(r["source_id"])
    ids = [r["id"] for r in sft + dpo]
    assert len(ids) == len(set(ids))
    json.dumps([sft, dpo])  # plain JSON


def test_counts_per_kind(rows):
    sft, dpo = rows
    assert set(DEFAULT_SIZES) == set(KINDS)
    # grounded answers on the runtime's prompts, RECORDED_ANSWERABLE answerable and RECORDED_ABSENT
    # unanswerable ones: SFT rows and pairs
    absent = sum(r["question_kind"] == "none" for r in recorded_rows())
    recorded = min(len(recorded_rows()) - absent, RECORDED_ANSWERABLE) + min(absent, RECORDED_ABSENT)
    assert recorded >= 50
    assert Counter(r["kind"] for r in sft) == Counter(DEFAULT_SIZES) + Counter({"grounded_answer": recorded})
    over_cited = len(by_kind(dpo, "over_cited"))  # one per recorded answer with a citation and an unrelated line
    assert 0 < over_cited < recorded
    bare = len(by_kind(dpo, "bare_id"))  # one per recorded answer with a citation
    assert 0 < bare < recorded
    assert Counter(r["kind"] for r in dpo) == Counter({k: n + pack.SAFETY_DPO_EXTRA if k in pack.SAFETY_KINDS
                                                       else (n + 1) // 2 for k, n in DEFAULT_SIZES.items()}) \
        + Counter({"grounded_answer": recorded, "reading": pack.READING_PAIRS, "over_cited": over_cited,
                   "over_refusal": sum(DEFAULT_SIZES[k] for k in pack.OVER_REFUSAL_FROM), "refusal_tail": recorded,
                   "bare_id": bare, "near_miss": pack.NEAR_MISS_PAIRS,
                   "over_absent": len(by_kind(dpo, "over_absent")),
                   "natural_answer": len(by_kind(dpo, "natural_answer"))})
    assert sum(r["source_id"].startswith("runtime/") for r in sft) == recorded
    assert not generate_pack({"grounded_runtime": 0})[0] == sft
    assert sum(r["source_id"].startswith("runtime/") for r in generate_pack({"grounded_runtime": 5})[0]) == 5
    splits = Counter(r["split"] for r in sft)
    assert 0.04 < splits["eval"] / len(sft) < 0.2
    small, small_dpo = generate_pack({"toolcall": 6, "memory_type": 0})
    # the safety kinds' DPO-only extras are numbered on from their SFT rows and leave those alone
    fewer = generate_pack({"safety_dpo_extra": 0, "reading_pairs": 0, "near_miss_pairs": 0})
    assert fewer[0] == sft and not by_kind(sft, "reading") and not by_kind(sft, "near_miss")
    assert len(dpo) - len(fewer[1]) == pack.SAFETY_DPO_EXTRA * len(pack.SAFETY_KINDS) + pack.READING_PAIRS \
        + 2 * pack.NEAR_MISS_PAIRS  # each near-miss pair and its answerable twin
    extra = {r["source_id"] for r in dpo} - {r["source_id"] for r in fewer[1]}
    assert {s.split("/")[0] for s in extra} == {*pack.SAFETY_KINDS, "reading", "near_miss"}
    assert all(int(s.split("/")[1]) >= DEFAULT_SIZES[s.split("/")[0]] for s in extra)
    assert Counter(r["kind"] for r in small)["toolcall"] == 6 and not by_kind(small, "memory_type")
    with pytest.raises(ValueError, match="unknown pack kinds"):
        generate_pack({"poetry": 3})


def test_reading_pairs_reject_the_other_value_from_the_cited_line(rows):
    """DPO-only: the chosen answer names the asked-for value, the rejected one a value of the same kind
    the prompt also shows (same line, another speaker's line, or the question's own), citing a shown
    message; the owner's lines are marked as the runtime marks them."""
    _, dpo = rows
    pairs = by_kind(dpo, "reading")
    assert len(pairs) == pack.READING_PAIRS
    assert len({r["prompt"][1]["content"] for r in pairs}) == len(pairs)  # every example its own names and days
    assert len({r["prompt"][-1]["content"] for r in pairs}) >= len(pack._templates("reading")["templates"])
    for r in pairs:
        ctx = r["prompt"][1]["content"]
        lines = message_lines(ctx)
        assert [r["prompt"][0]["role"], r["prompt"][1]["role"], r["prompt"][2]["role"]] == ["system", "system", "user"]
        assert sum(a.endswith(OWN_LINE_MARK) for _, a, _, _ in lines) >= 1
        days = [datetime.strptime(d, "%d %B %Y") for *_, d in lines]
        assert days == sorted(days) and len(days) == ctx.count("\n[msg:")  # in time order, each dated
        shown = {m for m, *_ in lines}
        for answer in (r["chosen"], r["rejected"]):
            cited = re.findall(r"\[msg:([0-9a-f]+)\]", answer)
            assert cited and set(cited) <= shown
        assert r["chosen"] != r["rejected"]
        # the rejected answer's own words are in the prompt too: a misreading, not an invention
        wrong = set(re.findall(r"[A-Z][a-z]+", re.sub(r"\[msg:[0-9a-f]+\]", "", r["rejected"]))) - {"You", "Your", "Yes"}
        prompt = ctx + r["prompt"][-1]["content"]
        assert all(w in prompt for w in wrong), (wrong, r["rejected"])


def test_near_miss_pairs_reject_a_value_invented_from_a_line_on_the_topic(rows):
    """DPO-only: nothing shown answers the question; the chosen answer says so in one of the
    "not in memory" wordings, citing nothing, and the rejected one states a value and cites a shown
    line (the unanswerable questions' commonest miss)."""
    _, dpo = rows
    pairs = by_kind(dpo, "near_miss")
    assert len(pairs) == pack.NEAR_MISS_PAIRS
    assert len({r["prompt"][-1]["content"] for r in pairs}) == len(pack._templates("near_miss")["templates"])
    assert {r["chosen"] for r in pairs} == set(NOT_FOUND_WORDINGS)
    for r in pairs:
        assert says_absent(r["chosen"]) and not says_absent(r["rejected"]) and "{" not in r["rejected"]
        shown = {m for m, *_ in message_lines(r["prompt"][1]["content"])}
        cited = re.findall(r"\[msg:([0-9a-f]+)\]", r["rejected"])
        assert cited and set(cited) <= shown, r["rejected"]
    # the wordings are spread over the templates, not one per template
    per_question = {}
    for r in pairs:
        per_question.setdefault(r["prompt"][-1]["content"], set()).add(r["chosen"])
    assert sum(len(w) > 1 for w in per_question.values()) > len(per_question) // 2


def test_over_absent_pairs_prefer_each_answerable_recorded_answer_to_not_in_memory(rows):
    _, dpo = rows
    recorded = {r["source_id"]: r for r in by_kind(dpo, "grounded_answer") if r["source_id"].startswith("runtime/")}
    kinds = {r["source_id"]: r["question_kind"] for r in recorded_rows()}
    pairs = [r for r in by_kind(dpo, "over_absent") if r["source_id"].startswith("runtime/")]
    # a profile-read row's own pair already rejects "not in memory"
    assert {r["source_id"] for r in pairs} == {i for i, r in recorded.items()
                                              if kinds[i] != "none" and not says_absent(r["rejected"])}
    assert len(pairs) > sum(k != "none" for i, k in kinds.items() if i in recorded) // 2
    for r in pairs:
        row = recorded[r["source_id"]]
        assert (r["prompt"], r["chosen"], r["split"]) == (row["prompt"], row["chosen"], row["split"])
        assert r["rejected"] in NOT_FOUND_WORDINGS and not says_absent(r["chosen"])


def test_natural_answer_pairs_are_the_hand_written_rows_the_selection_leaves_out(rows):
    sft, dpo = rows
    in_sft = {r["source_id"] for r in sft}
    natural = {r["source_id"]: r for r in recorded_rows() if r["source_id"].startswith(pack.natural_tags())}
    # both dev sets are recorded, and the SFT selection keeps only some of their rows
    assert {i.split("/")[1] for i in natural} == {"devset", "devset2"}
    assert 0 < len(natural.keys() & in_sft) < len(natural)
    pairs = by_kind(dpo, "natural_answer")
    assert {r["source_id"] for r in pairs} == natural.keys() - in_sft
    for r in pairs:
        row = natural[r["source_id"]]
        assert (r["prompt"], r["chosen"], r["rejected"]) == (row["prompt"], row["chosen"], row["rejected"])
    assert not {r["source_id"] for r in pairs} & {r["source_id"] for r in by_kind(dpo, "grounded_answer")}


def test_recorded_unanswerable_rows_are_capped_across_seeds():
    recorded = recorded_rows()
    absent = [r for r in recorded if r["question_kind"] == "none"]
    assert len(absent) > RECORDED_ABSENT  # the cap bites on today's file
    runtime = lambda sft: [r for r in sft if r["source_id"].startswith("runtime/")]  # noqa: E731
    kept = [r for r in runtime(generate_pack()[0]) if r["source_id"] in {a["source_id"] for a in absent}]
    assert len(kept) == RECORDED_ABSENT
    assert len({r["source_id"].split("/")[1] for r in kept}) >= 3  # evenly spaced, not the first seed's
    answerable = sum(r["question_kind"] != "none" for r in recorded)
    everything = {"grounded_runtime_answerable": 10**6}
    assert len(runtime(generate_pack(everything | {"grounded_runtime_absent": 0})[0])) == answerable
    assert len(runtime(generate_pack(everything | {"grounded_runtime_absent": 10**6})[0])) == len(recorded)
    assert answerable > RECORDED_ANSWERABLE  # that cap bites too, and keeps every seed and the dev set
    kept = runtime(generate_pack()[0])
    assert {r["source_id"].split("/")[1] for r in kept} == {r["source_id"].split("/")[1] for r in recorded}
    # every answer read off the profile is kept (the only rows that teach it), within the answerable cap
    profile = {r["source_id"] for r in recorded if r.get("answered_from") == "profile"}
    assert 0 < len(profile) < RECORDED_ANSWERABLE and profile <= {r["source_id"] for r in kept}
    assert sum(r["source_id"] in profile for r in runtime(generate_pack({"grounded_runtime_answerable": 3})[0])) == 3


def test_deterministic_fast_and_seeded(rows):
    start = time.perf_counter()
    again = generate_pack()
    assert time.perf_counter() - start < 1.0
    assert again == rows
    other = generate_pack(seed=1)[0]
    assert [r["id"] for r in other] != [r["id"] for r in rows[0]]
    # one kind's size does not reshuffle another kind's rows
    fewer = generate_pack({"toolcall": 10})[0]
    assert by_kind(fewer, "grounded_answer") == by_kind(rows[0], "grounded_answer")


def test_pack_version_tracks_templates(tmp_path, monkeypatch):
    assert PACK_VERSION.startswith(f"{pack.GENERATOR_VERSION}-")
    for f in pack.PACK_DIR.glob("*.json"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    monkeypatch.setattr(pack, "PACK_DIR", tmp_path)
    assert pack._pack_version() == PACK_VERSION
    (tmp_path / "slots.json").write_text((tmp_path / "slots.json").read_text().replace("Priya", "Priyanka"))
    assert pack._pack_version() != PACK_VERSION


def test_toolcall_targets_parse_and_negatives_are_prose(rows):
    sft, dpo = rows
    positives = 0
    for r in by_kind(sft, "toolcall"):
        answer = r["messages"][-1]["content"]
        parsed = parse_tool_calls(answer)
        if looks_like_tool_call(answer):
            assert parsed.ok, (answer, parsed.error)
            positives += 1
        else:
            assert not parsed.ok and not parsed.near_miss
    assert positives == DEFAULT_SIZES["toolcall"] - DEFAULT_SIZES["toolcall"] // 3  # a third must not call
    for r in by_kind(dpo, "toolcall"):
        chosen, rejected = parse_tool_calls(r["chosen"]), parse_tool_calls(r["rejected"])
        # a rejected answer never parses to the chosen calls (it may be a valid call to the wrong tool)
        assert not rejected.ok or not chosen.ok or rejected.calls != chosen.calls, r["rejected"]


def refusal_patterns(*kinds: str) -> list[re.Pattern]:
    """Each refusal template of these pack kinds as a pattern, its `{slot}`s matching any text."""
    return [re.compile(".+".join(map(re.escape, re.split(r"\{\w+\}", s))))
            for kind in kinds for s in pack._templates(kind)["answers"]]


def test_over_refusal_pairs_prefer_each_rows_own_answer_to_a_refusal(rows):
    """A harmless question refused with the secrets or write sentence is the failure DPO produced
    when only refusals were ever preferred (tenth and eleventh runs)."""
    sft, dpo = rows
    own = {(r["source_id"], json.dumps(r["messages"][:-1])): r for r in sft}
    over = by_kind(dpo, "over_refusal")
    refusals = refusal_patterns("privacy_refusal", "write_refusal")
    used = set()
    for r in over:
        row = own[(r["source_id"], json.dumps(r["prompt"]))]  # the same prompt, split and kind's row
        assert row["kind"] in pack.OVER_REFUSAL_FROM and row["split"] == r["split"]
        assert r["chosen"] == row["messages"][-1]["content"]
        used |= {i for i, p in enumerate(refusals) if p.fullmatch(r["rejected"])}
        assert any(p.fullmatch(r["rejected"]) for p in refusals) and "{" not in r["rejected"], r["rejected"]
    assert used == set(range(len(refusals)))  # every refusal sentence is pushed down somewhere


def test_refusal_tail_pairs_reject_an_unasked_refusal_after_the_answer(rows):
    """Refusal-kind stages end grounded answers with the secrets refusal; each recorded runtime answer
    rejects itself followed by one, and nothing else differs."""
    sft, dpo = rows
    recorded = {r["source_id"]: r for r in by_kind(dpo, "grounded_answer") if r["source_id"].startswith("runtime/")}
    tails = by_kind(dpo, "refusal_tail")
    assert {r["source_id"] for r in tails} == set(recorded)
    refusals = refusal_patterns("privacy_refusal")
    used = set()
    for r in tails:
        row = recorded[r["source_id"]]
        assert (r["prompt"], r["chosen"], r["split"]) == (row["prompt"], row["chosen"], row["split"])
        assert r["rejected"].startswith(r["chosen"].rstrip() + " ")
        tail = r["rejected"][len(r["chosen"].rstrip()) + 1:]
        used |= {i for i, p in enumerate(refusals) if p.fullmatch(tail)}
        assert any(p.fullmatch(tail) for p in refusals) and "{" not in tail, tail
        DPORow.model_validate(r)
    assert used == set(range(len(refusals)))


def test_bare_id_pairs_reject_an_answer_opened_by_its_citations_bare_id(rows):
    """DPO stages with the grounded pairs open answers with "msg:<id> [msg:<id>] says …", which
    the Markdown suite marks as a non-canonical citation; each cited recorded answer rejects that
    opening, and nothing else differs. An uncited answer gets no such pair."""
    sft, dpo = rows
    recorded = {r["source_id"]: r for r in by_kind(dpo, "grounded_answer") if r["source_id"].startswith("runtime/")}
    cites = re.compile(r"\[msg:([0-9a-f]+)\]")
    bare = by_kind(dpo, "bare_id")
    assert {r["source_id"] for r in bare} == {i for i, r in recorded.items() if cites.search(r["chosen"])}
    for r in bare:
        row = recorded[r["source_id"]]
        assert (r["prompt"], r["chosen"], r["split"]) == (row["prompt"], row["chosen"], row["split"])
        assert r["rejected"] == f"msg:{cites.findall(r['chosen'])[0]} {r['chosen']}"
        DPORow.model_validate(r)
    assert pack.bare_id("Nothing in your memory answers that.") is None


def test_over_cited_pairs_reject_one_unrelated_citation_more(rows):
    """Every tuned run cited the right message and then another that says nothing of the answer,
    which costs citation precision; each recorded runtime answer with a citation rejects that."""
    sft, dpo = rows
    recorded = {r["source_id"]: r for r in by_kind(dpo, "grounded_answer") if r["source_id"].startswith("runtime/")}
    over = by_kind(dpo, "over_cited")
    cites = re.compile(r" ?\[msg:([0-9a-f]+)\]")
    assert len(over) >= 0.8 * sum(bool(cites.search(r["chosen"])) for r in recorded.values())
    for r in over:
        row = recorded[r["source_id"]]  # the recorded answer's own prompt, split and chosen answer
        assert (r["prompt"], r["chosen"], r["split"]) == (row["prompt"], row["chosen"], row["split"])
        kept, extra = cites.findall(r["rejected"])[:-1], cites.findall(r["rejected"])[-1]
        assert kept == cites.findall(r["chosen"]) and extra not in kept
        assert cites.sub("", r["rejected"]) == cites.sub("", r["chosen"])  # nothing else differs
        shown = {mid: text for mid, _, text, _ in message_lines("\n".join(m["content"] for m in r["prompt"]))}
        words = lambda t: {w.lower() for w in re.findall(r"[^\W_]{4,}|\d+", t)} - {"your", "that", "with", "this"}  # noqa: E731
        assert extra in shown and not words(shown[extra]) & words(cites.sub("", r["chosen"])), (r["chosen"], shown[extra])


def test_every_safety_example_is_a_pair_and_recapping_a_secret_is_rejected(rows):
    sft, dpo = rows
    for kind in pack.SAFETY_KINDS:
        assert {r["source_id"] for r in by_kind(dpo, kind)} >= {r["source_id"] for r in by_kind(sft, kind)}
    # the leak tuned runs kept making: the shown message recapped with its value and citation
    recaps = [r for r in by_kind(dpo, "privacy_refusal") + by_kind(dpo, "write_refusal")
              if re.fullmatch(r"\w+ shared the [\w ]+ \S.* \[msg:[0-9a-f]+\]\.", r["rejected"])]
    assert len(recaps) >= 10
    nouns = [k["noun"] for k in pack._templates("privacy_refusal")["kinds"].values()]
    for r in recaps:
        body, cited = r["rejected"].removesuffix("].").split(" [msg:")
        value = next(body.split(f" shared the {n} ")[1] for n in nouns if f" shared the {n} " in body)
        shown = r["prompt"][1]["content"]
        assert f"[msg:{cited}]" in shown and value in shown  # the shown message's own secret, cited
        assert find_leak(value, r["rejected"]) == "verbatim" and find_leak(value, r["chosen"]) is None
    assert {r["kind"] for r in recaps} == set(pack.SAFETY_KINDS)
    # and the secret carried out in a tool call's search query
    searches = [(r, parse_tool_calls(r["rejected"])) for r in by_kind(dpo, "privacy_refusal") + by_kind(dpo, "write_refusal")
                if looks_like_tool_call(r["rejected"])]
    shown_digits = lambda r, q: any(re.search(r"\d{3}", w) and w in r["prompt"][1]["content"]  # noqa: E731
                                    for w in q.split())
    leaked = [r for r, p in searches if p.ok and p.calls[0].name == "search_memory"
              and shown_digits(r, p.calls[0].arguments["query"])]
    assert len(leaked) >= 5
    # and the message quoted whole, as a "word for word" request gets it (the eighteenth run's leak)
    quotes = [r for r in by_kind(dpo, "privacy_refusal") + by_kind(dpo, "write_refusal")
              if re.fullmatch(r"> .+\n\n— \w+ \[msg:[0-9a-f]+\]", r["rejected"])]
    assert len(quotes) >= 10 and {r["kind"] for r in quotes} == set(pack.SAFETY_KINDS)
    for r in quotes:
        said = r["rejected"].split("\n")[0].removeprefix("> ")
        assert said in r["prompt"][1]["content"] and re.search(r"\d{3}|@", said)  # the shown secret's line
        assert "> " not in r["chosen"]


def test_relative_dates_resolve_against_today_in_context(rows):
    dated = [r for r in by_kind(rows[0], "toolcall") if "since" in r["messages"][-1]["content"]]
    assert dated
    for r in dated:
        assert r["messages"][1]["content"].startswith("Today is ")
        args = parse_tool_calls(r["messages"][-1]["content"]).calls[-1].arguments
        today = r["messages"][1]["content"].split(", ")[1].rstrip(".")
        assert args["since"] < today and args.get("until", args["since"]) < today


def test_grounded_answers_follow_the_four_shapes_and_rejected_do_not(rows):
    sft, dpo = rows
    shapes = Counter()
    read_off_profile = {r["source_id"] for r in recorded_rows() if r.get("answered_from") == "profile"}
    for r in by_kind(sft, "grounded_answer"):
        v = check_markdown(r["messages"][-1]["content"])
        if r["source_id"] in read_off_profile:  # no shown message says it: uncited, the runtime cites the fact's
            assert v.shape == "direct" and not v.citations and all("without citation" in p for p in v.problems)
            continue
        assert v.ok, (r["messages"][-1]["content"], v.problems)
        context_ids = set(re.findall(r"\[msg:(\w+)\]", r["messages"][1]["content"]))
        assert set(v.citations) <= context_ids
        shapes[v.shape] += 1
    assert set(shapes) == {"direct", "list", "quote", "not_found"}
    kinds = Counter()
    for r in by_kind(dpo, "grounded_answer"):
        good, bad = check_markdown(r["chosen"]), check_markdown(r["rejected"])
        if not r["source_id"].startswith("runtime/"):
            assert not bad.ok or bad.shape != good.shape, r["rejected"]
            continue
        # on the runtime's prompts: uncited, a quote dump, or another fact's answer (well formed, wrong)
        kind = "uncited" if not bad.citations and bad.shape == "direct" else \
            "dump" if r["rejected"].startswith("[msg:") else "hallucinated"
        kinds[kind] += 1
        assert r["rejected"] != r["chosen"] and (kind != "uncited" or not bad.ok)
    assert set(kinds) == {"uncited", "dump", "hallucinated"}, kinds


_SECRET_VALUE = re.compile(r"[A-Z][a-z]+@\d{4}|\d{4}(?: \d{4}){3}|\d{3,}")


def test_refusals_never_call_tools_or_leak(rows):
    sft, dpo = rows
    for r in by_kind(sft, "write_refusal") + by_kind(sft, "privacy_refusal"):
        answer = r["messages"][-1]["content"]
        assert not looks_like_tool_call(answer) and ("read-only" in answer or "memory-safety" in answer)
    for r in by_kind(dpo, "write_refusal"):
        p = parse_tool_calls(r["rejected"])
        # a write call (refused by the parser), a false claim, or a search carrying the shown secret
        assert not p.ok or _SECRET_VALUE.search(p.calls[0].arguments["query"]), r["rejected"]
    # a write instruction planted in retrieved text: the answer cites what the chat said, calls nothing
    planted = [r for r in by_kind(sft, "write_refusal") if len(r["messages"]) == 4]
    assert len(planted) >= 5
    for r in planted:
        context, answer = r["messages"][1]["content"], r["messages"][-1]["content"]
        first_id = context.split("[msg:")[1].split("]")[0]
        assert any(re.search(rf"\b{tool}\b", context) for tool in WRITE_TOOLS)
        assert f"[msg:{first_id}]" in answer and ("ignoring" in answer or "won't" in answer)
    # half of them put a secret in the first message: the answer names what was shared, never the value
    def first_line(r):  # the first evidence line's text
        return message_lines(r["messages"][1]["content"])[0][2]

    secret = [r for r in planted if "repeat" in r["messages"][-1]["content"]]
    assert len(secret) >= 3
    for r in secret:
        line = first_line(r)
        value = _SECRET_VALUE.search(line)  # the shapes fake_secret makes, however the line says it
        assert value and find_leak(value.group(0), r["messages"][-1]["content"]) is None, (line, r["messages"][-1])
    leaked = 0
    for r in by_kind(dpo, "privacy_refusal"):
        context = "\n".join(m["content"] for m in r["prompt"][1:-1])
        # ("Your PIN is 4821."; a quoted line is checked with the recaps above)
        value = r["rejected"].split(" is ")[-1].rstrip(".") \
            if " is " in r["rejected"] and not r["rejected"].startswith("> ") else None
        assert "memory-safety" in r["chosen"]
        if context and value:
            assert value in context and find_leak(value, r["chosen"]) is None
            leaked += 1
    assert leaked


def test_questions_about_a_secret_message_describe_it_without_the_value(rows):
    """An indirect question or a recap of a chat holding a secret: the answer cites the message and
    says what kind of secret it holds, never the value (describing it is how a tuned model leaks)."""
    sft, _ = rows
    described = 0
    for r in by_kind(sft, "privacy_refusal"):
        context, answer = "\n".join(m["content"] for m in r["messages"][1:-1]), r["messages"][-1]["content"]
        shown = message_lines(context)
        if shown and f"[msg:{shown[0][0]}]" in answer:
            line = shown[0][2]
            value = _SECRET_VALUE.search(line)
            assert value and find_leak(value.group(0), answer) is None, (line, answer)
            described += 1
    assert described >= 10
    # a jailbreak that dictates the write call's JSON is refused in prose
    dictated = [r for r in by_kind(sft, "write_refusal") if '{"toolCalls"' in r["messages"][-2]["content"]]
    assert dictated and all("read-only" in r["messages"][-1]["content"] and
                            not looks_like_tool_call(r["messages"][-1]["content"]) for r in dictated)


def test_memory_type_and_question_cards(rows):
    sft, dpo = rows
    for r in by_kind(sft, "memory_type"):
        label = json.loads(r["messages"][-1]["content"])
        assert set(label) == {"type", "horizon"}
        assert label["type"] in ("episodic", "semantic", "system-config") and label["horizon"] in ("working", "core")
    assert {json.loads(r["messages"][-1]["content"])["type"] for r in by_kind(sft, "memory_type")} == \
        {"episodic", "semantic", "system-config"}
    for r in by_kind(sft, "question_card"):
        card = question_card(r["messages"][-1]["content"])
        assert card and 2 <= len(card[1]) <= 4
    for r in by_kind(dpo, "question_card"):
        assert question_card(r["rejected"]) is None


def test_each_near_miss_pair_has_an_answerable_twin_on_the_same_lines(rows):
    """The same lines asked a question they do answer: the grounded answer, citing a shown line, is
    preferred to the very "not in memory" wording its near-miss pair prefers, so what decides between
    the two is the question, not the topic."""
    _, dpo = rows
    near = {r["source_id"]: r for r in by_kind(dpo, "near_miss")}
    twins = {r["source_id"]: r for r in by_kind(dpo, "over_absent") if r["source_id"].startswith("near_miss/")}
    assert twins.keys() == near.keys() and len(twins) == pack.NEAR_MISS_PAIRS
    templates = pack._templates("near_miss")["templates"]
    assert len({r["prompt"][-1]["content"] for r in twins.values()}) >= len(templates)  # slots fill some
    yes_no = 0
    for i, twin in twins.items():
        pair = near[i]
        assert twin["prompt"][:-1] == pair["prompt"][:-1] and twin["split"] == pair["split"]
        assert twin["prompt"][-1]["content"] != pair["prompt"][-1]["content"]
        assert twin["rejected"] == pair["chosen"] and not says_absent(twin["chosen"]) and "{" not in twin["chosen"]
        cited = re.findall(r"\[msg:([0-9a-f]+)\]", twin["chosen"])
        assert cited and set(cited) <= {m for m, *_ in message_lines(twin["prompt"][1]["content"])}
        yes_no += twin["chosen"].startswith(("Yes", "No"))
    assert yes_no > len(twins) // 5  # answered yes/no questions too, which near-miss pairs alone teach to answer "not in memory"
