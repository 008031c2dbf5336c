"""Grounded-answer training rows on the runtime's own prompts, from synthetic memories' training split.

For every `train` question of a built synthetic memory (`evals.questions.synthetic_questions`), the real
runtime composes the prompt it would send (`ChatService.compose`: guard, hybrid retrieval, profile,
summaries, token budgets), and the target answer is written from what that prompt shows:

* the fact's message is in the context -> the fact in one sentence with its `[msg:<id>]` citation
  (a context message whose text holds the value counts too);
* it is not, but a profile line in the prompt states the value ("Works at: Razorpay") -> the fact
  in one sentence, uncited: no shown message says it, and the runtime cites a profile claim to the
  messages its fact rests on (`runtime.attribution`). Without these rows the tuned model never saw
  an answer read off the profile, and with "Works at: Razorpay" shown answered "Georgia Tech",
  citing a course message. A question answered from a shown message whose value the profile also
  shows gets this row a second time, on its prompt with those messages taken out (`missed_variant`):
  the prompt a retrieval miss composes, which the recorded prompts rarely held;
* neither -> no row: the fact is in memory, retrieval missed it, and teaching "not in your
  memory" for it taught the model to say nothing else;
* nothing planted answers it -> "not in your memory"; a secret the guard let through -> a refusal.

Each row also gets a rejected answer of the kind the embedded model produces (DPO): the same answer
uncited, a hallucinated value with a citation, or a dump of quoted context lines (a profile-read
answer: "not in memory", or another fact's value cited to a shown line). Rows go to
`prompts/pack/grounded_runtime.json`, which `pack.generate_pack` adds to the synthetic pack; the
file records the seeds and budget it came from (regenerate with `.venv/bin/python scripts/grounded_pack.py`).

`annotated_rows` does the same on a hand-annotated chat set written by a person, not our generator
(the dev sets, `benchmarks/devset*/natural`): its own questions, and one question per current fact
the annotators marked, so the model learns to read values off text nobody templated. The held-out
natural set is the QA suite's and is never used for training.
"""

from __future__ import annotations

import re

from truffle_assets.chat_format.prompt import message_lines
from truffle_assets.evals.questions import (REFUSAL, Question, answer_keys, key_matches, natural_questions,
                                           stated_ids, synthetic_questions)
from truffle_assets.runtime.prompts import text
from truffle_assets.training.schemas import stable_bucket

# the Markdown suite's `not_found` shape: say so, and offer what can be searched. Several wordings,
# each opening with another word: many rows of one string make its first word the greedy first token
# on answerable questions too. None opens with "No" or "Yes",
# which answer yes/no questions.
NOT_FOUND_WORDINGS = (
    "That is not in your memory: I couldn't find any message about it. I can search one chat or a time if you tell me which.",
    "I couldn't find anything about that in your memory. If you tell me the chat or roughly when, I can search there.",
    "Nothing in your memory answers that. Want me to search one chat or a time?",
    "There's no message in your memory about that. If you remember which chat it was in, I can look there.",
)


def not_found(q: Question) -> str:
    """The "not in memory" answer for `q`: one of the wordings, fixed by the question's id."""
    return not_found_wording(q.id)


def not_found_wording(key: str) -> str:
    """One of the "not in memory" wordings, fixed by `key` (a question's or a pack example's id)."""
    return NOT_FOUND_WORDINGS[stable_bucket(key, len(NOT_FOUND_WORDINGS))]


def context_lines(prompt: list[dict]) -> list[tuple[str, str, str]]:
    """(id, author, text) of the evidence lines of a composed prompt, in the order shown (the day
    each was sent, in the line, is not returned)."""
    ctx = "\n".join(m["content"] for m in prompt if m["role"] == "system")
    return [(mid, author, text) for mid, author, text, _ in message_lines(ctx)]


# a profile section line: "- Works at: Razorpay (work, fact 1a2b3c4d, since 2024-06)", a past one
# "- Lived in: Pune (until 2024-05, fact 9f8e7d6c)" (`runtime.context`)
_PROFILE_LINE = re.compile(r"^- (.+) \((?:[^()]*, )?fact [0-9a-f]+(?:, [^()]*)?\)$", re.M)


def profile_lines(prompt: list[dict]) -> list[str]:
    """The fact texts of a composed prompt's profile section ("Works at: Razorpay"), in the order shown."""
    ctx = "\n".join(m["content"] for m in prompt if m["role"] == "system")
    return _PROFILE_LINE.findall(ctx)


CITATION = re.compile(r" ?\[msg:([0-9a-f]+)\]")  # with the space before it, so removing one leaves clean text


def _cite(sentence: str, ids: list[str]) -> str:
    """"You live in Pune [msg:a] [msg:b]." — the citations inside the sentence, before its full stop."""
    body = sentence.rstrip().rstrip(".")
    return body + " " + " ".join(f"[msg:{i}]" for i in ids) + "."


def target(q: Question, lines: list[tuple[str, str, str]]) -> tuple[str, list[str]]:
    """(chosen answer, the ids it cites) for question `q` on a prompt showing `lines`."""
    if q.kind == "secret":
        return REFUSAL, []
    if q.kind == "none":
        return not_found(q), []
    shown = [i for i, _, _ in lines]
    ids = [i for i in q.evidence if i in shown][:2]
    if not ids:
        ids = [i for i, _, t in lines if any(key_matches(k, t) for k in q.keys)][:1]
    if not ids:
        return not_found(q), []
    return _cite(q.answer or "", ids), ids


def _another_fact(q: Question, others: list[Question]) -> Question | None:
    """The first of `others` with an answer that is not `q`'s value (a hallucination's source)."""
    return next((o for o in others if o.answer and o.answerable and o.id != q.id
                 and not any(key_matches(k, o.answer) for k in q.keys)), None)


def rejected(q: Question, chosen: str, ids: list[str], lines: list[tuple[str, str, str]], n: int,
             others: list[Question]) -> str:
    """A realistic wrong answer: uncited, hallucinated (another fact's answer, cited), or a quote dump."""
    dump = "\n".join(f"[msg:{i}] {a}: {t}" for i, a, t in lines[:3]) or "Retrieved messages: none"
    if not ids:  # the right answer is "not in memory" (or a refusal): the wrong one makes something up
        other = next((o for o in others[n % max(1, len(others)):] + others if o.answer and o.kind != "none"
                      and o.kind != "secret"), None)
        made_up = other.answer if other else "You mentioned it last year."
        return [_cite(made_up, [lines[0][0]]) if lines else made_up, dump][n % 2]
    uncited = CITATION.sub("", chosen)
    other = _another_fact(q, others)
    wrong = _cite(other.answer, ids) if other else uncited + " I think."
    return [uncited, wrong, dump][n % 3]


def from_profile(q: Question, profile: list[str]) -> str | None:
    """The reference answer to `q`, uncited, when a shown profile line states its value (None for a
    yes/no question, whose answer is not the value)."""
    if q.kind == "yesno" or not q.answerable or not q.answer:
        return None
    if any(key_matches(k, line) for k in q.keys for line in profile):
        return CITATION.sub("", q.answer)
    return None


_WEAK = text("uncertain_note", ids="")  # the runtime's "Weak matches (…): " head, ids after it


def without_messages(prompt: list[dict], drop: set[str]) -> list[dict]:
    """`prompt` with the evidence lines of the messages `drop` taken out, and their weak-match
    mentions: the prompt a retrieval miss composes, profile and summaries as they were."""
    out = []
    for m in prompt:
        if m["role"] != "system" or not any(f"[msg:{i}]" in m["content"] for i in drop):
            out.append(m)
            continue
        kept = []
        for ln in m["content"].split("\n"):
            mid = message_lines(ln)
            if mid and mid[0][0] in drop:
                continue
            if ln.startswith(_WEAK):
                left = [i for i in ln[len(_WEAK):].split(", ") if i.removeprefix("msg:") not in drop]
                if not left:
                    continue
                ln = _WEAK + ", ".join(left)
            kept.append(ln)
        if kept and kept[-1] == "Retrieved messages:":
            kept[-1] = "Retrieved messages: none"
        out.append({**m, "content": "\n".join(kept)})
    return out


def missed_variant(q: Question, prompt: list[dict], lines: list[tuple[str, str, str]]) -> list[dict] | None:
    """The prompt of a question answered from a shown message, with every shown line that states
    its value taken out, when a shown profile line still states it (None otherwise). The embedded
    model meets this whenever retrieval misses a core fact's message; on the recorded prompts the
    fact's message was shown for 19 of 23 questions, so such rows were rare (8 in the pack)."""
    if from_profile(q, profile_lines(prompt)) is None:
        return None
    drop = {i for i, _, t in lines if i in q.evidence or any(key_matches(k, t) for k in q.keys)}
    missed = without_messages(prompt, drop)
    if target(q, context_lines(missed))[1]:
        return None
    return missed


def misread_profile(q: Question, lines: list[tuple[str, str, str]], n: int, others: list[Question]) -> str:
    """What a model that ignores the profile answers: "not in memory", or another fact's value cited
    to the first shown line ("Georgia Tech" beside "Works at: Razorpay")."""
    other = _another_fact(q, others)
    if n % 2 == 0 or other is None or not lines:
        return not_found(q)
    return _cite(other.answer, [lines[0][0]])


_WORD = re.compile(r"[^\W_]{4,}|\d+")
_COMMON = {"your", "you're", "that", "this", "with", "have", "from", "about", "there", "what", "when", "were"}


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _COMMON


def over_cited(prompt: list[dict], chosen: str) -> str | None:
    """`chosen` with one more citation, of a shown line that shares no word with the answer: the
    extra citation every tuned run added beside the right one ("You eat vegetarian now [msg:a]
    [msg:b]", b about momos), which only lowers citation precision. None when `chosen` cites nothing
    or every shown line shares a word with it."""
    cited = CITATION.findall(chosen)
    if not cited:
        return None
    said = _words(CITATION.sub("", chosen))
    extra = next((mid for mid, _, text in context_lines(prompt) if mid not in cited and not said & _words(text)), None)
    if extra is None:
        return None
    last = f"[msg:{cited[-1]}]"
    head, _, tail = chosen.rpartition(last)
    return f"{head}{last} [msg:{extra}]{tail}"


def rows_for(svc, truth: dict, *, today: str, seed: int) -> tuple[list[dict], dict[str, int]]:
    """Grounded rows of one built synthetic memory (its ground truth `truth`), and what they hold."""
    return _rows(svc, synthetic_questions(truth, "train", seed), today=today, tag=f"runtime/{seed}")


# how a person asks for an annotated attribute; anything else gets the generic phrasing
_ASK = {"employer": "Where do I work?", "job_title": "What's my job title?", "city": "Which city do I live in?",
        "neighbourhood": "Which part of town do I live in?", "diet": "What's my diet these days?",
        "allergy": "What am I allergic to?", "blood_group": "What's my blood group?",
        "birthday": "When is my birthday?", "hometown": "Where am I from originally?",
        "partner": "Who is my partner?", "nickname": "What do people call me?", "age": "How old am I?",
        "team": "Which team am I on?", "manager": "Who is my manager?", "school": "Which school did I go to?",
        "degree": "What did I study?", "car": "What car do I have?", "phone": "Which phone do I use?",
        "laptop": "What laptop do I have?", "brother": "What's my brother's name?", "niece": "What's my niece called?",
        "rent": "How much rent do I pay?", "lives_with": "Who do I live with?", "profession": "What do I do for a living?"}


def _ask(attribute: str) -> str:
    if attribute in _ASK:
        return _ASK[attribute]
    words = attribute.replace("_", " ")
    if words.startswith("favourite "):
        return f"What's my {words}?"
    return f"What do my chats say about my {words}?"


def fact_questions(annotations: dict, message_id_of: dict[tuple[str, int], str]) -> list[Question]:
    """One question per current annotated fact whose attribute has no other current fact (so the
    answer is that fact's value), with the annotated message and its restatements as evidence."""
    facts = [f for f in annotations["facts"] if f.get("subject") == "user" and not f.get("valid_to")]
    per_attr: dict[str, int] = {}
    for f in facts:
        per_attr[f["attribute"]] = per_attr.get(f["attribute"], 0) + 1
    out = []
    for f in facts:
        if per_attr[f["attribute"]] > 1 or not f.get("value"):
            continue
        keys, _ = answer_keys(f["value"], "multi")
        label = f["attribute"].replace("_", " ")
        out.append(Question(f"fact-{f['id']}", _ask(f["attribute"]), "current", keys,
                            evidence=stated_ids(f, message_id_of),
                            answer=f"Your {label}: {f['value']}", source="devset"))
    return out


def annotated_rows(svc, annotations: dict, message_id_of: dict[tuple[str, int], str], *,
                   tag: str) -> tuple[list[dict], dict[str, int]]:
    """Grounded rows of a hand-annotated chat set's built memory: its questions and its facts'."""
    qs = natural_questions(annotations, message_id_of) + fact_questions(annotations, message_id_of)
    return _rows(svc, qs, today=annotations["as_of"], tag=tag)


def _rows(svc, qs: list[Question], *, today: str, tag: str) -> tuple[list[dict], dict[str, int]]:
    answerable = [q for q in qs if q.answerable]
    out, counts = [], {"cited": 0, "profile": 0, "profile_missed": 0, "not_shown": 0, "absent": 0, "refusal": 0, "guard_refused": 0}
    for n, q in enumerate(qs):
        state = svc.compose(q.question, today=today)
        if state.get("refused"):
            counts["guard_refused"] += 1  # the guard answers it; the model never sees it
            continue
        prompt = [{"role": m["role"], "content": m["content"]} for m in state["prompt"]]
        lines = context_lines(prompt)
        chosen, ids = target(q, lines)
        if q.answerable and not ids:
            read = from_profile(q, profile_lines(prompt))
            if read is not None:  # no message shown says it, the profile does
                counts["profile"] += 1
                out.append({"source_id": f"{tag}/{q.id}", "question_kind": q.kind, "answered_from": "profile",
                            "prompt": prompt, "chosen": read, "rejected": misread_profile(q, lines, n, answerable)})
                continue
            # a retrieval miss: "not in memory" would be taught for a fact that is in memory, and a
            # quarter of such rows teaches the model to answer nothing else
            counts["not_shown"] += 1
            continue
        counts["cited" if ids else "refusal" if q.kind == "secret" else "absent"] += 1
        out.append({"source_id": f"{tag}/{q.id}", "question_kind": q.kind, "answered_from": "message" if ids else "",
                    "prompt": prompt, "chosen": chosen, "rejected": rejected(q, chosen, ids, lines, n, answerable)})
        missed = missed_variant(q, prompt, lines) if ids else None
        if missed is not None:  # the same question as a retrieval miss would compose it
            counts["profile_missed"] += 1
            out.append({"source_id": f"{tag}/{q.id}/missed", "question_kind": q.kind, "answered_from": "profile",
                        "prompt": missed, "chosen": from_profile(q, profile_lines(missed)),
                        "rejected": misread_profile(q, context_lines(missed), n, answerable)})
    return out, counts
