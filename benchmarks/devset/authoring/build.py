"""Write the development (tuning) fact set from the hand-written chats beside this file.

    .venv/bin/python benchmarks/devset/authoring/build.py            # natural/ and MANIFEST.sha256
    .venv/bin/python benchmarks/devset/authoring/build.py --manifest # MANIFEST.sha256 only

Adapted from benchmarks/heldout/authoring/build.py (same chat markup, same annotation schema), for a
different user. The chats (`*.chat`) were written by hand, annotations inline. This script only lays
them out as WhatsApp exports, numbers the lines and gathers the annotations; it uses the project's
parser only to check its own output, never to decide a line or a text.

Chat markup: header lines `key: value` and `X = Display Name` until a blank line; `@ YYYY-MM-DD`
sets the day; `HH:MM X: text` is a message by X (`!` = a system line); a line starting with two
spaces continues the message; `<img>`, `<video>`, `<audio>`, `<sticker>`, `<gif>`, `<deleted>`,
`<mydeleted>` are placeholders. ` ## ` starts an annotation of the message (a line `  ## ...` adds one
more to the message above):
  F id category.attribute = value [| sup=id] [| lang=en|hinglish] [| from=YYYY-MM-DD|null] [| to=...]
                                  [| ctx=prev]   (the message needs the one before it to be understood)
  R id                      the fact `id` stated again
  D kind | claim | reason [| subject=Name]   a line that must not yield `claim` about the user
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from datetime import date, datetime
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ inside the set
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # benchmarks/devset
REPO = ROOT.parents[1]
sys.path[:0] = [str(HERE), str(REPO)]

USER = "Mehak Sethi"
AS_OF = "2024-12-31"
ABOUT = ("Development (tuning) fact-extraction set: hand-written WhatsApp exports of one user. Tune on "
         "this, never on benchmarks/heldout. See ../README.md.")


def configure(here: Path, user: str, as_of: str, about: str) -> None:
    """Point this builder at another set's chats (`here`: its authoring folder): benchmarks/devset2 uses it."""
    global HERE, ROOT, USER, AS_OF, ABOUT
    HERE, ROOT, USER, AS_OF, ABOUT = here, here.parent, user, as_of, about
    sys.path.insert(0, str(here))
    sys.modules.pop("questions", None)  # that set's questions.py, not this one's
LRM = "\u200e"
PLACEHOLDERS = {  # (Android, iOS)
    "img": ("<Media omitted>", LRM + "image omitted"),
    "video": ("<Media omitted>", LRM + "video omitted"),
    "sticker": ("<Media omitted>", LRM + "sticker omitted"),
    "audio": ("<Media omitted>", LRM + "audio omitted"),
    "gif": ("<Media omitted>", LRM + "GIF omitted"),
    "deleted": ("This message was deleted", LRM + "This message was deleted."),
    "mydeleted": ("You deleted this message", LRM + "You deleted this message."),
}
KINDS = {"other_person", "plan", "negation", "hypothetical", "joke", "hedge", "quote", "address", "question",
         "secondhand"}


def parse_chat(src: Path) -> tuple[dict, dict, list[dict]]:
    lines = src.read_text(encoding="utf-8").split("\n")
    hdr, alias, i = {}, {}, 0
    while lines[i].strip():
        if "=" in lines[i]:
            a, n = lines[i].split("=", 1)
            alias[a.strip()] = n.strip()
        else:
            k, v = lines[i].split(":", 1)
            hdr[k.strip()] = v.strip()
        i += 1
    msgs, day = [], None
    for n, raw in enumerate(lines[i:], i + 1):
        if not raw.strip():
            continue
        if raw.startswith("@ "):
            day = date.fromisoformat(raw[2:].strip())
            continue
        if raw.startswith("  ## "):  # one more annotation of the message above
            msgs[-1]["notes"] += raw[5:].split(" ## ")
            continue
        body, *notes = raw.split(" ## ")
        if body.startswith("  "):
            msgs[-1]["lines"].append(body[2:])
            msgs[-1]["notes"] += notes
            continue
        m = re.match(r"^(\d\d):(\d\d) (\S+?): ?(.*)$", body)
        if not m:
            raise ValueError(f"{src}:{n}: not a message line: {raw!r}")
        hh, mm, who, text = m.groups()
        if who != "!" and who not in alias:
            raise ValueError(f"{src}:{n}: unknown speaker {who!r}")
        ts = datetime(day.year, day.month, day.day, int(hh), int(mm))
        if msgs and ts < msgs[-1]["ts"]:
            raise ValueError(f"{src}:{n}: time runs backwards")
        msgs.append({"ts": ts, "who": who, "lines": [text], "notes": notes, "src_line": n})
    return hdr, alias, msgs


def header(fmt: str, t: datetime, sec: int) -> str:
    h12, ampm = (t.hour % 12) or 12, "am" if t.hour < 12 else "pm"
    if fmt == "android12":  # Indian English Android: 09/01/22, 9:14 am -
        return f"{t:%d/%m/%y}, {h12}:{t:%M} {ampm} - "
    if fmt == "android12n":  # newer Android: a narrow no-break space before am/pm
        return f"{t:%d/%m/%y}, {h12}:{t:%M}\u202f{ampm} - "
    if fmt == "android24":
        return f"{t:%d/%m/%Y}, {t:%H:%M} - "
    if fmt == "ios":
        return f"[{t:%d/%m/%y}, {h12}:{t:%M}:{sec:02d} {ampm.upper()}] "
    if fmt == "iosn":
        return f"[{t:%d/%m/%y}, {h12}:{t:%M}:{sec:02d}\u202f{ampm.upper()}] "
    raise ValueError(f"unknown format {fmt!r}")


def render(src: Path, outdir: Path) -> tuple[dict, list[dict], Path]:
    """Write one export; return its header and one record per annotation (line, speaker, text)."""
    hdr, alias, msgs = parse_chat(src)
    ios = hdr["format"].startswith("ios")
    seed = int(hashlib.sha256(src.name.encode()).hexdigest()[:8], 16)
    out, recs, prev, sec, prev_line = [], [], None, 0, None
    for k, m in enumerate(msgs):
        # iOS shows seconds: they rise inside a minute, so timestamps never run backwards
        sec = min(59, sec + 3 + (seed + 7 * k) % 9) if m["ts"] == prev else (seed + 37 * k) % 30
        prev = m["ts"]
        body = list(m["lines"])
        lead = ""
        ph = re.fullmatch(r"<(\w+)>", body[0])
        if ph and ph.group(1) in PLACEHOLDERS:
            body[0] = PLACEHOLDERS[ph.group(1)][ios]
            lead = LRM if ios and "deleted" not in ph.group(1) else ""  # iOS marks attachment lines
        line_no = len(out) + 1
        who = "" if m["who"] == "!" else alias[m["who"]] + ": "
        out.append(lead + header(hdr["format"], m["ts"], sec) + who + body[0])
        out.extend(body[1:])
        for note in m["notes"]:
            recs.append({"line": line_no, "speaker": alias.get(m["who"]), "ts": m["ts"], "text": "\n".join(body),
                         "note": note.strip(), "src": f"{src.name}:{m['src_line']}", "prev_line": prev_line})
        if m["who"] != "!":
            prev_line = line_no
    path = outdir / hdr["file"]
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return hdr, recs, path


def _opts(parts: list[str]) -> dict:
    return dict(p.split("=", 1) for p in parts)


def build_natural() -> dict:
    from truffle_assets.parsing import parse_file

    outdir = ROOT / "natural"
    outdir.mkdir(exist_ok=True)
    for old in outdir.glob("*.txt"):
        old.unlink()
    facts, restated, distractors, chats = {}, [], [], []
    for src in sorted(HERE.glob("*.chat")):
        hdr, recs, path = render(src, outdir)
        res = parse_file(path)  # a check of the layout, not a source of truth
        assert not res.quarantined, (path.name, res.quarantined)
        by_line = {e.line_start: e for e in res.entries}
        _, alias, msgs = parse_chat(src)
        said = [m for m in msgs if m["who"] != "!" and "end-to-end encrypted" not in m["lines"][0]]
        chats.append({"chat_file": path.name, "format": hdr["format"], "lines": res.lines_total,
                      "messages": len(said), "user_messages": sum(1 for m in said if alias[m["who"]] == USER)})
        for r in recs:
            e = by_line[r["line"]]
            assert (e.author, e.text) == (r["speaker"], r["text"]), (r["src"], e)
            kind, rest = r["note"].split(" ", 1)
            parts = [p.strip() for p in rest.split(" | ")]
            base = {"chat_file": path.name, "line": r["line"], "speaker": r["speaker"]}
            if kind == "F":
                assert r["speaker"] == USER, f"{r['src']}: a fact must be said by the user"
                fid, spec = parts[0].split(" ", 1)
                lhs, value = spec.split(" = ", 1)
                category, attribute = lhs.split(".", 1)
                o = _opts(parts[1:])
                assert set(o) <= {"sup", "lang", "from", "to", "ctx"}, f"{r['src']}: {o}"
                assert fid not in facts, f"{r['src']}: duplicate fact id {fid}"
                facts[fid] = {"id": fid, **base, "subject": "user", "category": category, "attribute": attribute,
                              "value": value, "language": o.get("lang", hdr["lang"]),
                              "valid_from": None if o.get("from") == "null" else o.get("from", r["ts"].date().isoformat()),
                              "valid_to": o.get("to"), "supersedes": o.get("sup"),
                              "context_line": r["prev_line"] if o.get("ctx") == "prev" else None,
                              "text": r["text"], "also_stated": [], "_to_set": "to" in o}
            elif kind == "R":
                o = _opts(parts[1:])
                restated.append((parts[0], {**base, "date": r["ts"].date().isoformat(),
                                            "language": o.get("lang", hdr["lang"]), "text": r["text"]}))
            elif kind == "D":
                o = _opts(parts[3:])
                assert parts[0] in KINDS, f"{r['src']}: unknown distractor kind {parts[0]!r}"
                distractors.append({**base, "subject": o.get("subject", "user"), "kind": parts[0],
                                    "claim": parts[1], "why_not": parts[2], "text": r["text"]})
            else:
                raise ValueError(f"{r['src']}: unknown annotation {r['note']!r}")
    for fid, rec in restated:
        assert fid in facts, f"restatement of unknown fact {fid}"
        facts[fid]["also_stated"].append(rec)
    twice = [k for k, n in Counter(f["supersedes"] for f in facts.values() if f["supersedes"]).items() if n > 1]
    assert not twice, f"superseded twice: {twice}"
    for f in facts.values():  # a superseded fact ends where its successor was stated, unless given
        assert not f["supersedes"] or f["supersedes"] in facts, f"{f['id']}: supersedes unknown {f['supersedes']}"
        if f["supersedes"] and not facts[f["supersedes"]]["_to_set"]:
            facts[f["supersedes"]]["valid_to"] = f["valid_from"]
    for f in facts.values():
        del f["_to_set"]
    ordered = sorted(facts.values(), key=lambda f: (f["valid_from"] or "", f["chat_file"], f["line"]))
    questions = []
    if (HERE / "questions.py").is_file():
        from questions import Q

        for n, (q, a, kind, ids) in enumerate(Q, 1):
            assert all(i in facts for i in ids), (q, ids)
            questions.append({"id": f"q{n:02d}", "question": q, "answer": a, "type": kind, "fact_ids": ids})
    doc = {
        "about": ABOUT,
        "user": USER,
        "as_of": AS_OF,
        "line_semantics": "1-based line of the message's header in chat_file; text is the whole message "
                          "(continuation lines joined with \\n). context_line, when set, is the line of the "
                          "message a fact needs to be understood.",
        "chats": chats,
        "facts": ordered,
        "distractors": distractors,
        "questions": questions,
    }
    doc["summary"] = summarize(doc)
    (outdir / "annotations.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return doc


def summarize(doc: dict) -> dict:
    facts = doc["facts"]
    return {
        "chats": len(doc["chats"]),
        "messages": sum(c["messages"] for c in doc["chats"]),
        "user_messages": sum(c["user_messages"] for c in doc["chats"]),
        "facts": len(facts),
        "facts_by_category": dict(sorted(Counter(f["category"] for f in facts).items())),
        "facts_by_language": dict(sorted(Counter(f["language"] for f in facts).items())),
        "facts_needing_context": sum(1 for f in facts if f["context_line"]),
        "changes_over_time": sum(1 for f in facts if f["supersedes"]),
        "restatements": sum(len(f["also_stated"]) for f in facts),
        "distractors": len(doc["distractors"]),
        "distractors_by_kind": dict(sorted(Counter(d["kind"] for d in doc["distractors"]).items())),
        "questions": len(doc["questions"]),
        "questions_by_type": dict(sorted(Counter(q["type"] for q in doc["questions"]).items())),
    }


def manifest_files(root: Path | None = None) -> list[Path]:
    """Every file of the set the manifest covers (not the manifest, not bytecode)."""
    root = root or ROOT
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != "MANIFEST.sha256"
                  and "__pycache__" not in p.parts)


def write_manifest() -> None:
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(ROOT).as_posix()}" for p in manifest_files()]
    (ROOT / "MANIFEST.sha256").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if "--manifest" not in sys.argv:
        print(json.dumps(build_natural()["summary"], ensure_ascii=False, indent=1))
    write_manifest()
