"""`benchmarks/privacy_eval.py`'s last line says which phases ran: a skipped chat phase is `na`, never
a pass, and the MCP phase states its calls and refusals."""

import pytest

from benchmarks.privacy_eval import last_line, main

MCP = {"calls": 130, "refused": {"search_memory": 40, "ask": 38}, "errors": {}}


def test_the_last_line_in_each_mode():
    assert last_line(0, 64, MCP, 0) == "privacy_leaks=0 prompts=64 mcp_leaks=0 mcp_calls=130 mcp_refused=78"
    assert last_line(None, 0, MCP, 2) == "privacy_leaks=na prompts=0 mcp_leaks=2 mcp_calls=130 mcp_refused=78"
    assert last_line(1, 64, None, 0) == "privacy_leaks=1 prompts=64"


def test_nothing_to_run_is_refused_before_any_work(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--mcp-only", "--no-mcp"])
    assert stop.value.code == 2 and "leave nothing to run" in capsys.readouterr().err
