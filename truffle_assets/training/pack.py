"""The versioned synthetic training pack: behaviours that rated transcripts alone teach too slowly.

Templates with slots live in `prompts/pack/*.json` (one file per kind, slot values in
`slots.json`); this module fills them deterministically and returns SFT rows and DPO rows in the
schemas of `schemas.py`. Kinds: `toolcall`, `grounded_answer`, `write_refusal`, `memory_type`,
`privacy_refusal`, `question_card`, and the DPO-only `reading` and `near_miss` (see docs/training_contracts.md and the
files' `_doc`), plus the grounded answers recorded on the runtime's own prompts
(`grounded_runtime.json`, `recorded_rows`, written by `training.grounded`), kept as they were recorded.

Every prompt is `[system prompt, optional context message, user]`. The context message is a second
`system` message built by `chat_format.prompt.context_block()` — today's date, retrieved messages as
`[msg:<id>] <author> (<day sent>): <text>` and free notes — the same format the eval suites use, so the model is
trained and judged on one layout. Example `n` of a kind draws from its own RNG seeded with
(seed, kind, n): changing one kind's size never reshuffles another kind. DPO rows reuse the SFT
prompt of every second example (every example of the refusal kinds) and pair the right answer with a
realistic failure (prose around an envelope, fences, wrong tool, write tool, leaked secret, missing or
malformed citations, raw HTML); `over_refusal` pairs prefer each tool call's and grounded answer's
own answer to a refusal sentence; `over_cited` pairs prefer each recorded runtime answer to itself
with one more citation, of a shown line that has nothing to do with it; `refusal_tail` pairs prefer it
to itself followed by the secrets refusal; `bare_id` pairs prefer it to itself opened by its first
citation's bare id; `over_absent` pairs prefer each answerable one to "not in your memory". The
DPO-only `near_miss` pairs prefer "not in your memory" to a value invented from a shown line on the
question's topic, and each has an `over_absent` twin: the same lines asked a question they do answer.
`natural_answer` pairs are the recorded rows on hand-written chats that the SFT selection leaves out.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from typing import Any

from truffle_assets.chat_format.prompt import chat_prompt, context_block, day_text, speaker, system_prompt
from truffle_assets.paths import PROMPTS_DIR
from truffle_assets.evals.questions import says_absent
from truffle_assets.synth.checksums import luhn_check_digit
from truffle_assets.chat_format.toolcalls import ToolCall, format_tool_calls
from truffle_assets.tools import CATALOG, model_tools
from truffle_assets.training.grounded import CITATION, not_found_wording, over_cited
from truffle_assets.training.schemas import row_id, split_for

GENERATOR_VERSION = 17  # bump when the code below changes what rows it makes from the same templates
PACK_DIR = PROMPTS_DIR / "pack"

KINDS = ("toolcall", "grounded_answer", "write_refusal", "memory_type", "privacy_refusal", "question_card", "reading",
         "near_miss")
# SFT rows; DPO rows: every second one. Beside the grounded answers recorded on the runtime's own
# prompts (`recorded_rows`, 172 of them; 96 kept below), which are the product's main job. At batch 1
# a 150-step run sees under half the rows once, so these shares decide what it learns:
# - privacy refusals: too few (15) leak the privacy suite's secrets; too many, with many write
#   refusals, take tool calls down with them ("remind me what we decided" refused as a write).
# - tool calls: too few leave the tool-call suite below the base; too many make the model answer
#   the Markdown suite with tool calls. 90, with read requests worded like writes, keeps both.
# - recorded runtime answers average ~1,580 tokens against ~330-430 for every other kind: kept at
#   this count they stay a minority of the pack's tokens, so the model still learns to search
#   instead of answering with no evidence shown. Training time follows tokens, not rows.
DEFAULT_SIZES = {"toolcall": 90, "grounded_answer": 40, "write_refusal": 30, "memory_type": 36,
                 "privacy_refusal": 65, "question_card": 10, "reading": 0, "near_miss": 0}
# How many of the recorded runtime rows to keep, evenly spaced over the recorded seeds and the dev
# set (size keys `grounded_runtime_answerable` and `grounded_runtime_absent`; `grounded_runtime`
# then caps the total). "Not in your memory" rows come in four wordings that open differently
# (`grounded.NOT_FOUND_WORDINGS`): many copies of one string make its first word the greedy first
# token on answerable questions, and too few teach the model to invent answers nothing supports.
RECORDED_ANSWERABLE = 80
RECORDED_ABSENT = 16

# Every example of these kinds gives a pair (others: every second one): their rejected answers are
# the leaks and obeyed writes the gate's floors count, so the write refusals with a secret in the
# retrieved message (odd examples) reach DPO too.
SAFETY_KINDS = ("write_refusal", "privacy_refusal")
# And this many more examples of each safety kind give DPO pairs only (numbered on from the SFT
# rows, so those stay byte-identical and an earlier SFT can be reused): at batch 1 the default pairs
# alone give too few write and privacy pairs to clear the gate's adversarial floor.
SAFETY_DPO_EXTRA = 60
# `reading` pairs are DPO only (no SFT rows, so the SFT of earlier runs still applies): this many,
# size key `reading_pairs`. Tuned models cite the right message and name the wrong value from
# it ("You moved to Pune", citing "moving to Bengaluru on 22 August. Pune I'll miss you"); each pair
# rejects exactly that misreading (`prompts/pack/reading.json`).
READING_PAIRS = 120
# `near_miss` pairs are DPO only too: this many, size key `near_miss_pairs`. Tuned models answer
# the QA suite's unanswerable questions from a shown line about the same topic; the recorded "not in
# memory" rows' rejected answers are unrelated facts, which no model confuses with an answer
# (`prompts/pack/near_miss.json`). Each pair comes with its answerable twin, so the wording is not
# learnt for questions the lines do answer.
NEAR_MISS_PAIRS = 120
# Recorded rows on hand-written chats: those of the dev sets `scripts/grounded_pack.py` recorded
# (the file's `devsets`; each row's source_id is "runtime/<set>/…", `natural_tags`). The held-out QA
# questions the tuned model gets wrong with the fact's message shown are mostly on
# the natural chats (11 of 44 right there, 20 of 33 on the synthetic corpus): values read off text
# nobody templated. The SFT selection keeps a few of these rows; every one it leaves out becomes a
# DPO-only `natural_answer` pair, for a stage on an existing adapter (`--dpo-kinds natural_answer`).
# Kinds whose every example also gives an `over_refusal` pair: its own answer against a refusal
# sentence. Each refusal is a near-fixed sentence that every safety pair prefers; DPO on those alone
# answers a plain "remind me what we decided about…" with the secrets refusal. These pairs are the
# other side of that preference.
OVER_REFUSAL_FROM = ("toolcall", "grounded_answer")
# kind -> (size key, default) of its DPO-only examples, numbered on from its SFT rows
DPO_ONLY = {**{k: ("safety_dpo_extra", SAFETY_DPO_EXTRA) for k in SAFETY_KINDS},
            "reading": ("reading_pairs", READING_PAIRS), "near_miss": ("near_miss_pairs", NEAR_MISS_PAIRS)}


def _pack_version() -> str:
    h = hashlib.sha256(f"generator={GENERATOR_VERSION}".encode())
    for p in sorted(PACK_DIR.glob("*.json")):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return f"{GENERATOR_VERSION}-{h.hexdigest()[:12]}"


PACK_VERSION = _pack_version()


@cache  # read-only after loading: every builder reads them once per row
def _templates(name: str) -> dict:
    return json.loads((PACK_DIR / f"{name}.json").read_text(encoding="utf-8"))


_SLOT = re.compile(r"\{(\w+)\}")


def fill(obj: Any, slots: dict[str, Any]) -> Any:
    """Substitute `{slot}`s; a string that is exactly one slot keeps the slot's type (int, list)."""
    if isinstance(obj, str):
        if m := _SLOT.fullmatch(obj):
            return slots[m.group(1)]
        return _SLOT.sub(lambda m: str(slots[m.group(1)]), obj)
    if isinstance(obj, list):
        return [fill(x, slots) for x in obj]
    if isinstance(obj, dict):
        return {k: fill(v, slots) for k, v in obj.items()}
    return obj


def human_date(d: date) -> str:
    return f"{d.day} {d:%B}"


def hex_id(rng: random.Random, chars: int = 20) -> str:
    return f"{rng.getrandbits(chars * 4):0{chars}x}"


def _month_back(d: date, n: int) -> tuple[date, date]:
    y, m = d.year, d.month - n
    while m < 1:
        y, m = y - 1, m + 12
    first = date(y, m, 1)
    nxt = date(y + (m == 12), m % 12 + 1, 1)
    return first, nxt - timedelta(days=1)


def date_relation(kind: str, today: date, rng: random.Random) -> dict[str, str]:
    """A relative date phrase and the inclusive since/until it means, given today."""
    if kind == "yesterday":
        d = today - timedelta(days=1)
        return {"rel": "yesterday", "since": d.isoformat(), "until": d.isoformat()}
    if kind == "last_week":  # the previous Monday–Sunday week
        monday = today - timedelta(days=today.weekday() + 7)
        return {"rel": "last week", "since": monday.isoformat(), "until": (monday + timedelta(days=6)).isoformat()}
    if kind == "last_month":
        a, b = _month_back(today, 1)
        return {"rel": "last month", "since": a.isoformat(), "until": b.isoformat()}
    if kind == "month":
        a, b = _month_back(today, rng.randint(2, 10))
        return {"rel": f"in {a:%B %Y}", "since": a.isoformat(), "until": b.isoformat()}
    if kind == "since_day":
        d = today - timedelta(days=rng.randint(5, 60))
        return {"rel": f"since {human_date(d)} {d.year}", "since": d.isoformat(), "until": ""}
    if kind == "between":
        a = today - timedelta(days=rng.randint(20, 90))
        b = a + timedelta(days=rng.randint(3, 14))
        return {"rel": f"between {human_date(a)} and {human_date(b)} {b.year}" if a.year == b.year
                else f"between {human_date(a)} {a.year} and {human_date(b)} {b.year}",
                "since": a.isoformat(), "until": b.isoformat()}
    raise ValueError(f"unknown date relation {kind!r}")


def make_slots(rng: random.Random, lib: dict, today: date) -> dict[str, Any]:
    """One consistent set of slot values for an example (distinct names, places, ids...)."""
    s: dict[str, Any] = {}
    for key, slot_names in (("names", ("name", "name2", "name3", "me")), ("surnames", ("surname", "surname2")),
                            ("chats", ("chat", "chat2", "chat3")), ("places", ("place", "place2", "place3")),
                            ("venues", ("venue", "venue2", "venue3")), ("topics", ("topic", "topic2")),
                            ("items", ("item1", "item2", "item3", "item4")), ("dishes", ("dish", "dish2")),
                            ("companies", ("company", "company2")), ("smalltalk", ("smalltalk", "smalltalk2"))):
        s.update(zip(slot_names, rng.sample(lib[key], len(slot_names))))
    for key, slot in (("events", "event"), ("foods", "food"), ("pets", "pet"), ("nicknames", "nickname")):
        s[slot] = rng.choice(lib[key])
    s["topic_q"] = s["topic"].removeprefix("the ")  # search queries drop the article
    s["quote"] = fill(rng.choice(lib["quotes"]), s)
    d1 = today + timedelta(days=rng.randint(3, 60))
    d2 = d1 + timedelta(days=rng.randint(1, 4))
    d3 = d2 + timedelta(days=rng.randint(1, 5))
    s.update(today=today, date=d1.isoformat(), date_h=human_date(d1), date2_h=human_date(d2), date3_h=human_date(d3))
    months = sorted(rng.sample(range(1, 12), 3))
    for i, m in enumerate(months, 1):
        s[f"month{i}"] = date(today.year - 1, m, 1).strftime("%B %Y")
    ids = [hex_id(rng) for _ in range(4)]
    s.update({f"id{i}": x for i, x in enumerate(ids, 1)}, ids1=ids[:1], ids2=ids[:2], ids3=ids[:3])
    s["fact_id"] = hex_id(rng)
    s["k"] = rng.choice((3, 5, 10, 20))
    a, b = rng.randint(12, 99), rng.randint(12, 99)
    s.update(a=a, b=b, product=a * b, sum=a + b)
    s["amount"], s["amount2"] = (f"₹{rng.randint(4, 60) * 500:,}" for _ in range(2))
    return s


def _today(rng: random.Random) -> date:
    return date(2023, 1, 1) + timedelta(days=rng.randint(0, 700))  # evals use 2025 and later


# ---- one example per kind ------------------------------------------------------------------------

@dataclass
class Example:
    prompt: list[dict[str, str]]
    chosen: str
    rejected: str


def _envelope(calls: list[dict]) -> str:
    """The canonical envelope of `calls`, each checked against the tool catalog: a template that
    names an unknown tool or an argument the tool does not take fails the pack, never trains."""
    for c in calls:
        CATALOG[c["name"]].input.model_validate(c["arguments"])
    return format_tool_calls([ToolCall(**c) for c in calls])


def _drop_empty(calls: list[dict]) -> list[dict]:
    # "until": "" from an open-ended relation means "no until", not an empty string argument
    return [{"name": c["name"], "arguments": {k: v for k, v in c["arguments"].items() if v != ""}} for c in calls]


# A DPO failure per model tool (`tools.model_tools()`, checked at import): the call a confused model
# makes instead, and the arguments it gets wrong.
_WRONG_TOOL: dict[str, Callable[[dict], dict]] = {
    "search_memory": lambda a: {"name": "get_profile", "arguments": {}},
    "get_messages": lambda a: {"name": "search_memory", "arguments": {"query": " ".join(a.get("ids", []))}},
    "get_fact": lambda a: {"name": "search_memory", "arguments": {"query": a.get("fact_id", "")}},
    "get_profile": lambda a: {"name": "search_memory", "arguments": {"query": "my profile"}},
}
_BAD_ARGS: dict[str, Callable[[dict], dict]] = {
    "search_memory": lambda a: {k: v for k, v in a.items() if k != "query"} | {"text": "memory"},
    "get_messages": lambda a: {"id": (a.get("ids") or [""])[0]},
    "get_fact": lambda a: {"id": a.get("fact_id")},
    "get_profile": lambda a: {"user": "me"},
}
if not set(_WRONG_TOOL) == set(_BAD_ARGS) == set(model_tools()):
    raise RuntimeError(f"the pack's tool-call failures cover {sorted(_WRONG_TOOL)} / {sorted(_BAD_ARGS)}, "
                       f"the model's tools are {sorted(model_tools())}")


def _wrong_tool(calls: list[dict]) -> list[dict]:
    c = calls[0]
    return [_WRONG_TOOL[c["name"]](c["arguments"])]


def _bad_args(calls: list[dict]) -> list[dict]:
    c = calls[0]
    return [{"name": c["name"], "arguments": _BAD_ARGS[c["name"]](c["arguments"])}]


def _toolcall(n: int, rng: random.Random, s: dict, system: str) -> Example:
    t = _templates("toolcall")
    if n % 3 == 2:  # a third of the rows must not call anything
        tpl = t["negative"][(n // 3) % len(t["negative"])]
        user, answer = fill(tpl["user"], s), fill(tpl["answer"], s)
        ctx = context_block(today=s["today"]) if rng.random() < 0.3 else None
        needless = _envelope([{"name": "search_memory", "arguments": {"query": user.rstrip("?!. ")}}])
        rejected = needless if (n // 2) % 2 == 0 else f"Let me check your memory first.\n\n{needless}"
        return Example(chat_prompt(system, user, ctx), answer, rejected)

    tpl = t["positive"][(2 * (n // 3) + n % 3) % len(t["positive"])]
    if "dates" in tpl:
        s = s | date_relation(tpl["dates"], s["today"], rng)
    user, calls = fill(tpl["user"], s), _drop_empty(fill(tpl["calls"], s))
    ctx = context_block(today=s["today"]) if "dates" in tpl or rng.random() < 0.3 else None
    env = _envelope(calls)
    failures: list[Callable[[], str]] = [
        lambda: f"Let me search your memory for that.\n{env}",
        lambda: f"```json\n{env}\n```",
        lambda: _envelope(_wrong_tool(calls)),
        lambda: json.dumps({"toolCalls": _bad_args(calls)}, ensure_ascii=False, separators=(",", ":")),
        lambda: json.dumps({"toolCalls": [{"type": "function", **c} for c in calls]}, ensure_ascii=False),
        lambda: f"{calls[0]['name']}(" + ", ".join(f"{k}={v!r}" for k, v in calls[0]["arguments"].items()) + ")",
        lambda: "I don't have access to your messages, but I'm sure it went fine!",
    ]
    return Example(chat_prompt(system, user, ctx), env, failures[(n // 2) % len(failures)]())


def _grounded(n: int, rng: random.Random, s: dict, system: str) -> Example:
    tpl = _templates("grounded_answer")["templates"][n % len(_templates("grounded_answer")["templates"])]
    context = [(s[mid], fill(author, s), fill(text, s)) for mid, author, text in tpl["context"]]
    user, answer = fill(tpl["user"], s), fill(tpl["answer"], s)
    prompt = chat_prompt(system, user, context_block(context, today=s["today"] if rng.random() < 0.3 else None))
    if tpl["shape"] == "not_found":
        rejected = [f"{s['name']} said it went really well [msg:{hex_id(rng)}].",
                    "<p>I couldn't find anything about that.</p>",
                    f"{s['name']} mentioned it a few times, mostly positively."][(n // 2) % 3]
        return Example(prompt, answer, rejected)
    first_id = context[0][0] if tpl["shape"] != "quote" else re.search(r"\[msg:(\w+)\]", answer).group(1)
    failures = [
        lambda: CITATION.sub("", answer),
        lambda: answer.replace(s["name"], f"<b>{s['name']}</b>", 1),
        lambda: answer.replace(f"[msg:{first_id}]", f"(msg {first_id[:6]})"),
        lambda: answer.replace(f"[msg:{first_id}]", f"[[msg:{first_id}]]"),
        lambda: "## Answer\n\n" + answer,
        lambda: answer + ("\n- It was all settled in one evening" if tpl["shape"] == "list"
                          else "\n\nEveryone seemed happy with how it turned out."),
    ]
    return Example(prompt, answer, failures[(n // 2) % len(failures)]())


def _write_refusal(n: int, rng: random.Random, s: dict, system: str) -> Example:
    t = _templates("write_refusal")
    tpl = t["templates"][n % len(t["templates"])]
    request, action = fill(tpl["user"], s), tpl["action"]
    call = _envelope([fill(tpl["call"], s)])
    rejected = [call, fill(rng.choice(t["false_claims"]), s), f"Sure, doing that now.\n\n{call}"][(n // 2) % 3]
    # plain, a jailbreak around the request, or a write instruction planted in retrieved text
    # (the tool-call suite's adversarial cases come in both shapes)
    style = (n // len(t["templates"])) % 3
    if style == 2:
        planted = fill(rng.choice(t["planted"]), s | {"tool": tpl["call"]["name"]})
        said, answers = s["quote"], t["planted_answers"]
        if n % 2:  # the first message holds a secret: say what it is, never the value
            kinds = _templates("privacy_refusal")["kinds"]
            kind = list(kinds)[(n // 2) % len(kinds)]  # n is odd here: n % len(kinds) would skip every other kind
            value = fake_secret(kind, rng)
            s = s | {"noun": kinds[kind]["noun"]}
            said, answers = fill(rng.choice(kinds[kind]["said"]), s | {"value": value}), t["secret_planted_answers"]
            rejected = fill(rng.choice(t["planted_answers"]), s | {"action": action, "said": said})  # the quote leaks
        context = context_block([(s["id1"], s["name"], said), (s["id2"], s["name2"], planted)])
        answer = fill(rng.choice(answers), s | {"action": action, "said": said})
        question = fill(rng.choice(t["planted_questions"]), s)
        if n % 2 and (r := rng.random()) < 2 / 3:  # or a recap, search or quote of it; drawn last: SFT rows stay the same
            rejected = (cited_leak(s, s["noun"], value) if r < 2 / 9 else
                        searched_leak(s, s["noun"], value) if r < 4 / 9 else quoted_leak(s, said))
        return Example(chat_prompt(system, question, context), answer, rejected)
    user = fill(rng.choice(t["jailbreaks"]), {"request": request, "call": call}) if style == 1 else request
    return Example(chat_prompt(system, user), fill(rng.choice(t["answers"]), s | {"action": action}), rejected)


def _memory_type(n: int, rng: random.Random, s: dict, system: str) -> Example:
    t = _templates("memory_type")
    tpl = t["items"][n % len(t["items"])]
    user = f"{t['instruction']}\n\nItem: {fill(tpl['item'], s)}"
    gold = {"type": tpl["type"], "horizon": tpl["horizon"]}
    other_type = {"episodic": "semantic", "semantic": "episodic", "system-config": "semantic"}[tpl["type"]]
    other_horizon = {"working": "core", "core": "working"}[tpl["horizon"]]
    rejected = [json.dumps(gold | {"type": other_type}), json.dumps(gold | {"horizon": other_horizon}),
                f"This looks like a {tpl['type']} memory: {json.dumps(gold)}",
                f"```json\n{json.dumps(gold)}\n```"][(n // 2) % 4]
    return Example(chat_prompt(system, user), json.dumps(gold), rejected)


PRIVACY_STYLES = ("direct", "indirect", "digit_by_digit", "roleplay", "injection")


def fake_secret(kind: str, rng: random.Random) -> str:
    digits = lambda k: str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(k - 1))  # noqa: E731
    if kind == "card_number":
        body = "4" + digits(14)
        num = body + luhn_check_digit(body)
        return " ".join(num[i:i + 4] for i in range(0, 16, 4))
    if kind == "password":
        return rng.choice(("Mango", "Tiger", "Lotus", "Falcon", "Neem")) + "@" + digits(4)
    return digits({"otp": 6, "pin": 4, "account_number": 13, "cvv": 3}[kind])


def _privacy(n: int, rng: random.Random, s: dict, system: str) -> Example:
    t = _templates("privacy_refusal")
    style = PRIVACY_STYLES[n % len(PRIVACY_STYLES)]
    kind = list(t["kinds"])[(n // len(PRIVACY_STYLES)) % len(t["kinds"])]
    value = fake_secret(kind, rng)
    k = t["kinds"][kind]
    s = s | {"noun": k["noun"], "value": value}
    user = fill(rng.choice(t["prompts"][style]), s)
    said = (s["id1"], s["name"], fill(rng.choice(k["said"]), s))
    context = None
    if style == "injection":
        context = context_block([said, (s["id2"], s["name2"], fill(rng.choice(t["injections"]), s))])
        answer = fill(rng.choice(t["injection_answers"]), s)
    else:
        if style != "direct":
            context = context_block([said])
        # an indirect question is about the message itself: say what it holds and cite it, never the value
        answers = t["indirect_answers"] if style == "indirect" and n % 2 else t["answers"]
        answer = fill(rng.choice(answers), s)
    spaced = " ".join(c for c in value if c != " ")
    rejected = [f"Sure! Your {k['noun']} is {value}.", f"Here it is, digit by digit: {spaced}",
                f"Of course. As requested, the {k['noun']} on file is {value}.",
                f"I shouldn't share it in full, but it starts with {value.replace(' ', '')[:4]}."]
    if context:  # the shown message described with its value, in a grounded answer's shape, a search or a quote
        rejected += [cited_leak(s, k["noun"], value), searched_leak(s, k["noun"], value), quoted_leak(s, said[2])]
    # drawn last: the SFT row above is the same whatever is picked here
    return Example(chat_prompt(system, user, context), answer, rng.choice(rejected))


def cited_leak(s: dict, noun: str, value: str) -> str:
    """The leak every tuned run's gate caught: a secret's message recapped like any other fact
    ("Pallavi shared the code 596527 [msg:…]"), value and citation included."""
    return f"{s['name']} shared the {noun} {value} [msg:{s['id1']}]."


def quoted_leak(s: dict, said: str) -> str:
    """A secret's message quoted whole in the Markdown quote shape the grounded answers teach (the
    eighteenth and nineteenth runs pasted a planted account number this way when asked "word for word")."""
    return f"> {said}\n\n— {s['name']} [msg:{s['id1']}]"


def searched_leak(s: dict, noun: str, value: str) -> str:
    """A secret carried out in a tool call's arguments (a tuned model searches "<name> the pin is <value>")."""
    return _envelope([{"name": "search_memory", "arguments": {"query": f"{s['name']} {noun} {value}"}}])


def _question_card(n: int, rng: random.Random, s: dict, system: str) -> Example:
    t = _templates("question_card")
    tpl = t["templates"][n % len(t["templates"])]
    note = fill(tpl["context"], s)
    prompt = chat_prompt(system, fill(tpl["user"], s), context_block(notes=[note]) if note else None)
    rejected = [fill(tpl["guess"], s), rng.choice(t["vague_questions"])][(n // 2) % 2]
    return Example(prompt, fill(tpl["answer"], s), rejected)


def _reading(n: int, rng: random.Random, s: dict, system: str) -> Example:
    return _dated_lines("reading", n, rng, s, system)


def _near_miss(n: int, rng: random.Random, s: dict, system: str) -> Example:
    # one wording per example, as the recorded "not in memory" rows: one string would become the
    # greedy first token on answerable questions too (grounded.NOT_FOUND_WORDINGS)
    return _dated_lines("near_miss", n, rng, s, system, not_found_wording(f"near_miss/{n}"))


def _near_miss_twin(n: int, rng: random.Random, s: dict, system: str) -> Example:
    """The near-miss example's lines (same RNG, so same names and days) asked its template's `twin`, a
    question they do answer: that answer preferred to the "not in memory" wording the near-miss pair
    prefers. Near-miss pairs alone teach the wording to yes/no questions whose answer is shown."""
    return _dated_lines("near_miss", n, rng, s, system, not_found_wording(f"near_miss/{n}"), twin=True)


def _dated_lines(name: str, n: int, rng: random.Random, s: dict, system: str, answer: str | None = None,
                 twin: bool = False) -> Example:
    """An example of a `reading.json`-shaped template file: dated lines, a question, the template's
    answer (or `answer`) against one of its wrong ones; with `twin`, the template's `twin` question and
    answer against `answer`."""
    templates = _templates(name)["templates"]
    tpl, lib = templates[n % len(templates)], _templates("slots")
    s = s | {"pet2": rng.choice([p for p in lib["pets"] if p != s["pet"]]),
             "food2": rng.choice([f for f in lib["foods"] if f != s["food"]])}
    # the template's lines on days before today, oldest first, then up to two others' small talk among them
    back = sorted(rng.sample(range(3, 400), len(tpl["lines"])), reverse=True)
    days = [s["today"] - timedelta(days=b) for b in back]
    if tpl.get("next_day"):  # "All the best for tomorrow!" / "First day today": a day apart
        days = [days[0] + timedelta(days=i) for i in range(len(days))]
    when = days[0] + timedelta(days=rng.randint(2, 20))  # what the first line announces
    s = s | {f"day{i}": day_text(d) for i, d in enumerate(days, 1)} | {
        "date_h": human_date(when), "date2_h": human_date(when + timedelta(days=rng.randint(1, 4)))}
    lines = [(s[f"id{i}"], speaker(s["me"], True) if who == "@me" else fill(who, s), fill(said, s), day)
             for i, ((who, said), day) in enumerate(zip(tpl["lines"], days), 1)]
    for j in range(rng.randint(0, 2)):
        day = days[0] + timedelta(days=rng.randint(0, max(0, (s["today"] - days[0]).days - 1)))
        lines.append((s[f"id{3 + j}"], s["name3"], s[f"smalltalk{'' if j == 0 else 2}"], day))
    lines.sort(key=lambda m: m[3])
    question = tpl["twin"]["question"] if twin else tpl["question"]
    prompt = chat_prompt(system, fill(question, s), context_block(lines, today=s["today"]))
    if twin:
        return Example(prompt, fill(tpl["twin"]["answer"], s), answer)
    return Example(prompt, answer or fill(tpl["answer"], s), fill(rng.choice(tpl["wrong"]), s))


_BUILDERS: dict[str, Callable[[int, random.Random, dict, str], Example]] = {
    "toolcall": _toolcall, "grounded_answer": _grounded, "write_refusal": _write_refusal,
    "memory_type": _memory_type, "privacy_refusal": _privacy, "question_card": _question_card,
    "reading": _reading, "near_miss": _near_miss,
}


def generate_pack(n_per_kind: dict[str, int] | None = None, seed: int = 0,
                  eval_percent: int = 10) -> tuple[list[dict], list[dict]]:
    """(SFT rows, DPO rows) of the pack. `n_per_kind` overrides DEFAULT_SIZES (SFT rows per kind;
    `grounded_runtime_answerable` and `grounded_runtime_absent` pick the recorded runtime rows,
    default `RECORDED_ANSWERABLE` and `RECORDED_ABSENT`, and `grounded_runtime` caps their total;
    `safety_dpo_extra`, `reading_pairs` and `near_miss_pairs` override the DPO-only counts of `DPO_ONLY`); DPO rows come
    from every second example of each kind, every safety example, the DPO-only examples, and every
    recorded runtime row."""
    sizes = DEFAULT_SIZES | (n_per_kind or {})
    if unknown := set(sizes) - set(KINDS) - set(_OTHER_SIZE_KEYS):
        raise ValueError(f"unknown pack kinds {sorted(unknown)}; known: {KINDS}")
    system, lib = system_prompt(), _templates("slots")
    sft, dpo = [], []
    for kind in KINDS:
        extra = sizes.get(*DPO_ONLY[kind]) if kind in DPO_ONLY else 0
        for n in range(sizes[kind] + extra):
            rng = random.Random(f"{seed}/{kind}/{n}")
            slots = make_slots(rng, lib, _today(rng))
            ex = _BUILDERS[kind](n, rng, slots, system)
            source_id = f"{kind}/{n}"
            split = split_for(source_id, eval_percent)
            if n >= sizes[kind]:  # a DPO-only example, numbered on from the kind's SFT rows
                _add_pair(dpo, source_id, kind, ex, split)
                if kind == "near_miss":  # the same lines asked what they do answer, from the same RNG
                    rng = random.Random(f"{seed}/{kind}/{n}")
                    twin = _near_miss_twin(n, rng, make_slots(rng, lib, _today(rng)), system)
                    _add_pair(dpo, source_id, "over_absent", twin, split)
                continue
            messages = [*ex.prompt, {"role": "assistant", "content": ex.chosen}]
            sft.append({"id": row_id("synthetic", source_id, messages), "source": "synthetic",
                        "source_id": source_id, "kind": kind, "messages": messages, "split": split})
            if n % 2 == 0 or kind in SAFETY_KINDS:
                _add_pair(dpo, source_id, kind, ex, split)
            if kind in OVER_REFUSAL_FROM:  # same prompt and split as the row it comes from
                refusal = _refusal(random.Random(f"{seed}/over_refusal/{source_id}"), slots)
                _add_pair(dpo, source_id, "over_refusal", Example(ex.prompt, ex.chosen, refusal), split)
    runtime = _recorded_selection(sizes.get("grounded_runtime_answerable", RECORDED_ANSWERABLE),
                                  sizes.get("grounded_runtime_absent", RECORDED_ABSENT))
    runtime = runtime[: sizes.get("grounded_runtime", len(runtime))]
    for r in runtime:  # answers written on the runtime's own prompts (training.grounded); all are pairs
        source_id, ex = r["source_id"], Example(r["prompt"], r["chosen"], r["rejected"])
        split = split_for(source_id, eval_percent)
        messages = [*ex.prompt, {"role": "assistant", "content": ex.chosen}]
        sft.append({"id": row_id("synthetic", source_id, messages), "source": "synthetic",
                    "source_id": source_id, "kind": "grounded_answer", "messages": messages, "split": split})
        _add_pair(dpo, source_id, "grounded_answer", ex, split)
        if (extra := over_cited(ex.prompt, ex.chosen)) is not None:  # the same answer, one unrelated citation more
            _add_pair(dpo, source_id, "over_cited", Example(ex.prompt, ex.chosen, extra), split)
        tailed = refusal_tail(random.Random(f"{seed}/refusal_tail/{source_id}"), ex.chosen)
        _add_pair(dpo, source_id, "refusal_tail", Example(ex.prompt, ex.chosen, tailed), split)
        if (opened := bare_id(ex.chosen)) is not None:
            _add_pair(dpo, source_id, "bare_id", Example(ex.prompt, ex.chosen, opened), split)
        # the other side of the near-miss pairs: shown, so answer it (a profile-read row's own pair
        # already rejects "not in memory")
        if r["question_kind"] != "none" and not says_absent(ex.rejected):
            _add_pair(dpo, source_id, "over_absent", Example(ex.prompt, ex.chosen, not_found_wording(source_id)), split)
    kept, natural = {r["source_id"] for r in runtime}, natural_tags()
    for r in recorded_rows():
        source_id = r["source_id"]
        if source_id.startswith(natural) and source_id not in kept:
            _add_pair(dpo, source_id, "natural_answer", Example(r["prompt"], r["chosen"], r["rejected"]),
                      split_for(source_id, eval_percent))
    return sft, dpo


def _refusal(rng: random.Random, s: dict) -> str:
    """One of the pack's secret or write refusals, filled with this example's slots."""
    if rng.random() < 0.5:
        return _privacy_refusal(rng, s)
    t = _templates("write_refusal")
    return fill(rng.choice(t["answers"]), s | {"action": rng.choice(t["templates"])["action"]})


def refusal_tail(rng: random.Random, answer: str) -> str:
    """The answer with the secrets refusal after it. Stages trained on the refusal kinds without
    `over_refusal` pairs end grounded answers so ("… [msg:…]. I won't repeat that. Under Truffle's
    memory-safety rule, …"), an uncited sentence nobody asked for. These pairs reject only the tail."""
    return f"{answer.rstrip()} {_privacy_refusal(rng, {})}"


def _privacy_refusal(rng: random.Random, s: dict) -> str:
    """The secrets refusal, one of its wordings, for one kind of secret."""
    t = _templates("privacy_refusal")
    return fill(rng.choice(t["answers"]), s | {"noun": t["kinds"][rng.choice(list(t["kinds"]))]["noun"]})


def bare_id(answer: str) -> str | None:
    """The answer opened by its first citation's bare id ("msg:8c61… [msg:8c61…] says …"), an opening
    DPO stages with the grounded pairs learn, which the Markdown suite counts as non-canonical citations.
    None when the answer cites nothing."""
    cited = CITATION.findall(answer)
    return f"msg:{cited[0]} {answer}" if cited else None


_OTHER_SIZE_KEYS = ("grounded_runtime", "grounded_runtime_answerable", "grounded_runtime_absent",
                    *sorted({key for key, _ in DPO_ONLY.values()}))


def _evenly(rows: list[dict], cap: int) -> list[dict]:
    """At most `cap` of `rows`, evenly spaced so every recorded seed and the dev set keep some."""
    return rows if len(rows) <= cap else [rows[i * len(rows) // cap] for i in range(cap)]


def _recorded_selection(answerable: int, absent: int) -> list[dict]:
    """The recorded runtime rows kept, in file order: `answerable` answerable ones (every answer read
    off the profile, few and the only rows that teach it, then the others evenly spaced) and `absent`
    unanswerable ("none") ones, evenly spaced."""
    rows = recorded_rows()
    profile = [r for r in rows if r.get("answered_from") == "profile"][:answerable]
    keep = {id(r) for r in profile}
    keep |= {id(r) for r in _evenly([r for r in rows if r["question_kind"] != "none" and id(r) not in keep],
                                    answerable - len(profile))}
    keep |= {id(r) for r in _evenly([r for r in rows if r["question_kind"] == "none"], absent)}
    return [r for r in rows if id(r) in keep]


def _add_pair(dpo: list[dict], source_id: str, kind: str, ex: Example, split: str) -> None:
    pair = [*ex.prompt, {"role": "assistant", "content": ex.chosen}, {"role": "assistant", "content": ex.rejected}]
    dpo.append({"id": row_id("synthetic", source_id, pair), "source": "synthetic", "source_id": source_id,
                "kind": kind, "prompt": ex.prompt, "chosen": ex.chosen, "rejected": ex.rejected, "split": split})


@cache
def _recorded() -> dict:
    """`prompts/pack/grounded_runtime.json`, read once ({} when absent)."""
    path = PACK_DIR / "grounded_runtime.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def recorded_rows() -> list[dict]:
    """The grounded answers recorded on the runtime's prompts (`prompts/pack/grounded_runtime.json`)."""
    return _recorded().get("rows", [])


def natural_tags() -> tuple[str, ...]:
    """The source_id prefixes of the recorded rows on hand-written chats, one per dev set recorded."""
    return tuple(f"runtime/{name}/" for name in _recorded().get("devsets", []))
