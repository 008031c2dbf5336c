"""How `truffle … --help` shows options: each with its description and, when it has one, its default."""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Appends `(default: …)` to an option's help unless the help already names its default; flags and
    options without a value (None, False, an empty list) show none, since there is nothing to say."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if "default" in text or default in (None, False, [], argparse.SUPPRESS) or not action.option_strings:
            return text
        shown = " ".join(map(str, default)) if isinstance(default, list | tuple) else str(default)
        return f"{text} (default: {shown.replace('%', '%%')})"  # argparse %-formats the help text


def apply(parser: argparse.ArgumentParser) -> None:
    """Give `parser` and every subcommand's parser the formatter."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                apply(sub)


def options(parser: argparse.ArgumentParser) -> dict[str, list[argparse.Action]]:
    """Each subcommand's documented arguments (not --help), by name: what the help test and the README
    table are checked against."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: [a for a in p._actions if not isinstance(a, argparse._HelpAction)] for name, p in sub.choices.items()}
