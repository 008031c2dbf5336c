"""Questions about a synthetic corpus's ground truth (`truffle_assets.synth`): about its planted facts,
their people and dates, each chat and its members, plus generic personal-memory questions. The
latency and drift benchmarks ask them of a memory built from that corpus."""

from __future__ import annotations

from datetime import datetime

GENERIC = [
    "What are my hobbies?", "Where do I work?", "Where do I live?", "What did I do last weekend?",
    "Do I have any upcoming trips?", "What music do I like?", "Who are my closest friends?",
    "What did we decide about dinner?", "When is the next football game?", "What gifts did I buy recently?",
    "Did anyone recommend a restaurant?", "What are my goals this year?", "What happened at work last month?",
    "Summarise my last week.", "Which movies did we plan to watch?", "What did I cook recently?",
    "Who did I meet on my last trip?", "What is my dog's name?", "When is my birthday?",
    "What did my family talk about at Diwali?", "Who asked me for help recently?", "What am I saving money for?",
    "What sports do I play?", "What did I eat on my last holiday?", "Which friends live in Bengaluru?",
    "What was the last thing my mother asked me?", "What did I promise to do this month?",
    "Did I change jobs?", "When did I move cities?", "What do I usually do on Sundays?",
]
FACT_TEMPLATES = [
    "What is my {pred}?", "Who told me about {value}?", "When did we talk about {value}?",
    "What did {by} say about {value}?", "What happened on {date}?",
]
CHAT_TEMPLATES = [
    "What did I talk about with {title} recently?", "When did I last talk to {title}?",
    "What plans did I make with {title}?", "What did {title} ask me about last month?",
    "Summarise my chat with {title}.",
]
GROUP_TEMPLATES = [
    "What is the {title} group talking about lately?", "Who is in the {title} group?",
    "What did the {title} group decide last time?", "When was the {title} group last active?",
    "Summarise the {title} group.",
]
MEMBER_TEMPLATES = ["What did {member} say recently?", "What did I plan with {member}?"]


def _human(ts: str) -> str:
    d = datetime.fromisoformat(ts)
    return f"{d.day} {d.strftime('%B %Y')}"


def build_queries(truth: dict, n: int, refuse=None) -> tuple[list[str], int]:
    """(n questions, how many generated ones `refuse` rejected) from the ground truth: fact
    questions, chat and member questions and generic ones, interleaved, deduplicated; cycled with a
    "Remind me: " prefix when there are fewer than n."""
    user = truth.get("user") or ""
    facts, chats, members = [], [], []
    for f in truth.get("facts", []):
        by = next((s for s in f.get("stated_by") or [] if s != user), None) or "someone"
        at = (f.get("stated_at") or [None])[0]
        slots = {"pred": str(f.get("predicate", "")).replace("_", " "), "value": f.get("value", ""), "by": by,
                 "date": _human(at) if at else "that day"}
        facts.append([t.format(**slots) for t in FACT_TEMPLATES])
    seen_members: set[str] = set()
    for c in truth.get("chats", []):
        temps = GROUP_TEMPLATES if c.get("group") else CHAT_TEMPLATES
        chats.append([t.format(title=c["title"]) for t in temps])
        for m in c.get("members", []):
            if m != user and m not in seen_members:
                seen_members.add(m)
                members.append([t.format(member=m) for t in MEMBER_TEMPLATES])
    groups = [[q for qs in facts for q in qs], [q for qs in chats for q in qs],
              [q for qs in members for q in qs], list(GENERIC)]
    # interleave the four sources round-robin, each in its own order
    pool: list[str] = []
    for i in range(max((len(g) for g in groups), default=0)):
        pool += [g[i] for g in groups if i < len(g)]
    out, seen, refused = [], set(), 0
    for q in pool:
        if q in seen:
            continue
        seen.add(q)
        if refuse is not None and refuse(q):
            refused += 1
            continue
        out.append(q)
    if not out:
        return [], refused
    base = list(out)
    k = 0
    while len(out) < n:
        out.append(f"Remind me: {base[k % len(base)]}" if k < len(base) else f"Quick question: {base[k % len(base)]}")
        k += 1
    return out[:n], refused
