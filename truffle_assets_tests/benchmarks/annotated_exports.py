"""Checks shared by the annotated export sets (benchmarks/heldout and benchmarks/devset): every export
parses whole with the user in it, and every annotated line holds its speaker and text."""

from pathlib import Path

from truffle_assets.parsing import parse_file, read_export


def raw_lines(path: Path) -> list[str]:
    return read_export(path).text.replace("\r\n", "\n").split("\n")


def check_exports(natural: Path, doc: dict, user: str) -> None:
    exports = sorted(p.name for p in natural.glob("*.txt"))
    assert exports == sorted(c["chat_file"] for c in doc["chats"])
    for name in exports:
        result = parse_file(natural / name)
        assert result.quarantined == [], name
        assert user in {e.author for e in result.entries}, name
        assert result.lines_total == len(raw_lines(natural / name)) - 1, name  # the file ends with a newline


def check_annotated_lines(natural: Path, doc: dict) -> dict[Path, dict]:
    """Each fact, restatement and distractor line, through the parser and on the raw line; returns
    the parsed entries by line per export."""
    records = [*doc["facts"], *doc["distractors"], *(r for f in doc["facts"] for r in f["also_stated"])]
    cache: dict[Path, tuple[dict, list[str]]] = {}
    for r in records:
        path = natural / r["chat_file"]
        if path not in cache:
            cache[path] = ({e.line_start: e for e in parse_file(path).entries}, raw_lines(path))
        entries, raw = cache[path]
        where = f'{r["chat_file"]}:{r["line"]}'
        entry = entries.get(r["line"])
        assert entry is not None, f"{where}: no message starts on this line"
        assert (entry.author, entry.text) == (r["speaker"], r["text"]), where
        # the raw line itself, independent of the parser: the header line ends with the text's first line
        assert raw[r["line"] - 1].endswith(f'{r["speaker"]}: {r["text"].split(chr(10))[0]}'), where
    return {p: e for p, (e, _) in cache.items()}
