"""`truffle … --help` teaches every option, and the README's command table says what `--help` says."""

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from truffle_assets.cli import build_parser
from truffle_assets.cli.help_format import options
from truffle_assets.paths import PROJECT_ROOT

TRUFFLE = str(Path(sys.executable).with_name("truffle"))
FLAG = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9-]*)")


def parser_flags() -> dict[str, set[str]]:
    return {name: {flag for a in actions for flag in a.option_strings} for name, actions in options(build_parser()).items()}


def _both(text: str) -> str:
    """`--[no-]content` is the README's way of writing `--content` and `--no-content`."""
    return re.sub(r"--\[no-\]([a-z-]+)", r"--\1 --no-\1", text)


def readme_flags() -> dict[str, set[str]]:
    """Each command the README's table (and its 'also take' line) names, with the flags it shows."""
    text = (PROJECT_ROOT / "README.md").read_text()
    table = text[text.index("| command | what it does |"):]
    table = table[:table.index("\n\n")]
    found: dict[str, set[str]] = {}
    for row in table.splitlines()[2:]:
        first = row.split(" | ")[0]
        for span in re.findall(r"`truffle ([a-z-]+)([^`]*)`", first):
            found.setdefault(span[0], set()).update(FLAG.findall(_both(span[1].replace("\\|", " "))))
    for para in text.split("\n\n"):
        if para.startswith("`") and "also take" in para:  # `ask`, `chat` and `serve` also take …
            head, _, tail = " ".join(para.split()).partition("also take")
            for command in re.findall(r"`([a-z-]+)`", head):
                found.setdefault(command, set()).update(FLAG.findall(_both(tail)))
    return found


def test_every_option_has_a_description():
    missing = [f"{name} {'/'.join(a.option_strings) or a.dest}" for name, actions in options(build_parser()).items()
               for a in actions if not (a.help or "").strip()]
    assert missing == []


def test_every_option_with_a_value_shows_its_default():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    unshown = []
    for name, actions in options(parser).items():
        text = " ".join(sub.choices[name].format_help().split())
        for a in actions:
            if a.option_strings and a.default not in (None, False, [], argparse.SUPPRESS):
                shown = " ".join(map(str, a.default)) if isinstance(a.default, list) else str(a.default)
                if f"default: {shown}" not in text and "default" not in (a.help or ""):
                    unshown.append(f"{name} {a.option_strings[0]}")
    assert unshown == []


def test_the_readme_table_names_every_command_and_every_flag_it_has():
    readme, real = readme_flags(), parser_flags()
    assert sorted(readme) == sorted(real), "commands in the README table vs `truffle --help`"
    assert {c: sorted(f - real[c]) for c, f in readme.items() if f - real[c]} == {}, "README flags --help lacks"
    assert {c: sorted(f - readme[c]) for c, f in real.items() if f - readme[c] - {"-h", "--help"}} == {}, \
        "flags --help has and the README does not show"


@pytest.mark.subprocess
def test_help_from_the_console_script_shows_descriptions_and_defaults():
    out = subprocess.run([TRUFFLE, "serve", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "--port PORT port of the chat page and the API (default: 8800)" in text
    assert "context window, in tokens, of the embedded llama.cpp server (default: 16384)" in text
