"""Markdown hygiene and the four-shape contract for grounded answers.

A grounded answer (the model saw retrieved messages `[msg:<id>] <author> (<day sent>): <text>`) is exactly one
of four shapes, so the chat UI can render it predictably and every claim can be traced:

- `direct`: 1–3 short paragraphs; every factual sentence cites a message as `[msg:<id>]`
  (questions and offers such as "Want me to…" need no citation).
- `list`: one lead line, then one bullet list; every bullet cites.
- `quote`: a `>` blockquote with the raw wording, then an attribution line that cites.
- `not_found`: says memory has nothing on it and offers what it can search; no citations.

Hygiene on top of the shape: no raw HTML (the UI renders Markdown only), every code fence closed,
and citations only in the canonical form `[msg:<6–64 lowercase hex>]` — `(msg 123)`, `[msg 12]`,
`[[msg:…]]` or upper-case ids are failures, because the UI links only the canonical form.

`check_markdown(text)` parses with markdown-it (CommonMark) rather than regexes over the text, so
a `<b>` inside a code span is not HTML and a `-` inside a sentence is not a bullet.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

CITATION = re.compile(r"\[msg:[0-9a-f]{6,64}\]")
_CANONICAL = re.compile(r"(?<!\[)\[msg:([0-9a-f]{6,64})\](?!\])")
# Anything that tries to cite a message; each hit must be exactly one canonical citation.
_CITATION_LIKE = re.compile(
    r"[\[\(【（]{1,2}\s*(?:msg\b[^\]\)】）\n]{0,80}|(?:message|source|ref)\s*[:#=]?\s*[\w-]*\d[^\]\)】）\n]{0,60})"
    r"[\]\)】）]{1,2}"
    r"|(?<![\w\[:])msg[:#_-][0-9a-fA-F]{4,}\b",
    re.I,
)
_NOT_FOUND = re.compile(
    r"\b(?:couldn'?t|could not|can'?t|cannot|didn'?t|did not|don'?t|do not|wasn'?t able to)\s+"
    r"(?:find|see|locate|spot)\b|\b(?:has|have|had|found|there(?:'s| is))\s+nothing\b|\bnothing\s+(?:about|on|in)\b"
    r"|\bno\s+(?:messages?|mentions?|record|results?)\b",
    re.I,
)
_OFFER = re.compile(
    r"\b(?:I can|I could|I'?ll|want me to|shall I|should I|would you like|if you (?:tell|remember|know|give|let))\b",
    re.I,
)
_NON_FACTUAL = re.compile(
    r"^(?:want me to|would you like|shall I|should I|I can|I could|let me know|if you|happy to|that'?s all|"
    r"\(?uncertain\b)", re.I)  # offers, and the "uncertain" flag the system prompt asks for
_SENTENCE_END = re.compile(r"(?<![\s.][A-Z]\.)(?<=[.!?])\s+")  # an initial ("A. R. Rahman") ends no sentence
_LEADING_CITES = re.compile(r"(?:\s*" + CITATION.pattern + r"[\s.,;:]*)+")
MAX_PARAGRAPH_CHARS = 600

_md = MarkdownIt("commonmark")


@dataclass(frozen=True)
class MarkdownVerdict:
    parses: bool
    raw_html: bool
    fences_ok: bool
    citations_ok: bool          # canonical forms only, and the shape's citation rule holds
    shape: str | None           # direct | list | quote | not_found | None (none of the four)
    problems: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)  # cited message ids, in order

    @property
    def ok(self) -> bool:
        return self.parses and not self.raw_html and self.fences_ok and self.citations_ok \
            and self.shape is not None and not self.problems

    def to_dict(self) -> dict:
        return asdict(self) | {"ok": self.ok}


def _strip_code(text: str) -> str:
    return re.sub(r"`[^`\n]*`", "", text)


def _cites(text: str) -> list[str]:
    return _CANONICAL.findall(_strip_code(text))


def _fence_closed(tok: Token, lines: list[str]) -> bool:
    start, end = tok.map or (0, 0)
    if end - start < 2 or end > len(lines):
        return False
    last = re.sub(r"^(?:\s*>)*\s*", "", lines[end - 1]).rstrip()
    ch = tok.markup[:1]
    return bool(last) and set(last) == {ch} and len(last) >= len(tok.markup)


def _blocks(tokens: list[Token]) -> list[tuple[str, int, int]]:
    """Top-level blocks as (type, first token index, last token index)."""
    out, start = [], 0
    for i, t in enumerate(tokens):
        if t.level == 0 and t.nesting == 1:
            start = i
        if t.level == 0 and t.nesting == 0:
            out.append((t.type, i, i))
        elif t.nesting == -1 and t.level == 0:
            out.append((t.type.replace("_close", ""), start, i))
    return out


def _inline_text(tokens: list[Token], a: int, b: int) -> str:
    return "\n".join(t.content for t in tokens[a:b + 1] if t.type == "inline")


def _uncited_sentences(paragraph: str) -> list[str]:
    sentences: list[str] = []
    for s in _SENTENCE_END.split(_strip_code(paragraph).strip()):
        lead = _LEADING_CITES.match(s)
        if sentences and lead and lead.group(0):
            sentences[-1] += " " + lead.group(0)  # "Fact. [msg:…]": the citation belongs to the sentence before
            s = s[lead.end():]
        if s.strip():
            sentences.append(s)
    return [s for s in sentences
            if not CITATION.search(s) and not s.rstrip().endswith("?") and not _NON_FACTUAL.match(s.strip())
            and re.search(r"\w", s)]


def _shape(tokens: list[Token], blocks: list[tuple[str, int, int]], problems: list[str]) -> tuple[str | None, bool]:
    """(shape, whether its citation rule holds); problems gets the reasons."""
    kinds = [k for k, _, _ in blocks]
    if kinds == ["blockquote", "paragraph"]:
        (_, qa, qb), (_, pa, pb) = blocks
        quoted, attribution = _inline_text(tokens, qa, qb), _inline_text(tokens, pa, pb)
        if not quoted.strip():
            problems.append("quote: the blockquote is empty")
        if not _cites(attribution):
            problems.append("quote: the attribution line has no citation")
            return "quote", False
        return "quote", True
    if kinds == ["paragraph", "bullet_list"]:
        (_, la, lb), (_, ba, bb) = blocks
        lead = tokens[la]
        if lead.map and lead.map[1] - lead.map[0] > 1:
            problems.append("list: the lead is more than one line")
        cited, item_start = True, None
        for i in range(ba, bb + 1):
            t = tokens[i]
            if t.type == "list_item_open" and t.level == 1:
                item_start = i
            elif t.type == "list_item_close" and t.level == 1 and item_start is not None:
                text = _inline_text(tokens, item_start, i)
                if not _cites(text):
                    problems.append(f"list: bullet without citation: {text[:60]!r}")
                    cited = False
        return "list", cited
    if kinds and all(k == "paragraph" for k in kinds):
        paragraphs = [_inline_text(tokens, a, b) for _, a, b in blocks]
        if len(paragraphs) > 3:
            problems.append(f"direct: {len(paragraphs)} paragraphs (at most 3)")
        for p in paragraphs:
            if len(p) > MAX_PARAGRAPH_CHARS:
                problems.append(f"direct: a paragraph of {len(p)} characters (at most {MAX_PARAGRAPH_CHARS})")
        whole = "\n\n".join(paragraphs)
        if not _cites(whole) and _NOT_FOUND.search(whole):
            if not _OFFER.search(whole):
                problems.append("not_found: does not offer what it can search")
            return "not_found", True
        uncited = [s for p in paragraphs for s in _uncited_sentences(p)]
        for s in uncited:
            problems.append(f"direct: sentence without citation: {s[:60]!r}")
        return "direct", not uncited
    problems.append(f"not one of the four shapes (blocks: {', '.join(kinds) or 'none'})")
    return None, True


def check_markdown(text: str) -> MarkdownVerdict:
    problems: list[str] = []
    if not isinstance(text, str) or not text.strip():
        return MarkdownVerdict(False, False, True, False, None, ["empty answer"])
    try:
        tokens = _md.parse(text)
    except Exception as exc:  # markdown-it accepts any text; this is belt and braces
        return MarkdownVerdict(False, False, False, False, None, [f"does not parse: {exc}"])
    lines = text.split("\n")

    raw_html = False
    fences_ok = True
    for t in tokens:
        if t.type == "html_block" or any(c.type == "html_inline" for c in t.children or ()):
            raw_html = True
        if t.type == "fence" and not _fence_closed(t, lines):
            fences_ok = False
    if raw_html:
        problems.append("raw HTML")
    if not fences_ok:
        problems.append("unclosed code fence")

    code_free = "\n".join(ln for i, ln in enumerate(lines)
                          if not any(t.type in ("fence", "code_block") and t.map and t.map[0] <= i < t.map[1]
                                     for t in tokens))
    malformed = [m.group(0) for m in _CITATION_LIKE.finditer(_strip_code(code_free))
                 if not _CANONICAL.fullmatch(m.group(0))]
    for m in malformed:
        problems.append(f"non-canonical citation {m!r}")

    shape, rule_ok = _shape(tokens, _blocks(tokens), problems)
    citations = _cites(code_free)
    if shape == "not_found" and citations:
        rule_ok = False
    return MarkdownVerdict(True, raw_html, fences_ok, rule_ok and not malformed, shape, problems, citations)


def question_card(text: str) -> tuple[str, list[str]] | None:
    """(question, options) when `text` is exactly one question card — a `**Question:** …` line and
    a bullet list of 2–4 options — else None."""
    tokens = _md.parse(text.strip())
    blocks = _blocks(tokens)
    if [k for k, _, _ in blocks] != ["paragraph", "bullet_list"]:
        return None
    question = _inline_text(tokens, blocks[0][1], blocks[0][2]).strip()
    if not question.startswith("**Question:**") or "\n" in question:
        return None
    options = [t.content for t in tokens[blocks[1][1]:blocks[1][2] + 1] if t.type == "inline"]
    if not 2 <= len(options) <= 4:
        return None
    return question.removeprefix("**Question:**").strip(), options
