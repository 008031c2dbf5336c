"""In-process runs inside `run_console`: every event in the log file, none on the console unless
verbose, each step handed to a progress view (what `truffle train` and `truffle eval` show)."""

import io

import dagster as dg

from truffle_assets.cli.progress import StepsView
from truffle_assets.defs.run_log import failures, listening, materialize, run_console


@dg.asset
def first(context) -> int:
    context.log.info("first says hello")
    return 1


@dg.asset
def second(first: int) -> int:
    return first + 1


@dg.asset
def broken(first: int) -> int:
    raise ValueError("the disk is full\nand more detail")


def test_events_go_to_the_log_file_and_the_view_not_the_console(tmp_path, capfd):
    log = tmp_path / "logs" / "truffle.log"
    out = io.StringIO()
    view = StepsView(2, stream=out, live=False)
    with run_console(log), listening(view), view:
        result = materialize([first, second], dg.DagsterInstance.ephemeral(), {})
    assert result.success
    console = capfd.readouterr()
    assert "dagster" not in console.out + console.err
    lines = out.getvalue().splitlines()
    assert [line.split(" in ")[0] for line in lines] == ["  first: done", "  second: done"]
    assert lines[-1].endswith("[2/2 steps, " + lines[-1].split("[2/2 steps, ")[1])
    text = log.read_text()
    assert 'STEP_START - Started execution of step "second"' in text and "first says hello" in text


def test_verbose_prints_the_events_and_a_failure_is_named(tmp_path, capfd):
    with run_console(tmp_path / "truffle.log", verbose=True):
        result = materialize([first, broken], dg.DagsterInstance.ephemeral(), {})
    assert not result.success
    assert 'Started execution of step "broken"' in capfd.readouterr().err
    assert failures(result) == ["broken: ValueError: the disk is full and more detail"]
