"""`benchmarks/privacy_eval.py` as a person runs it: options that leave no phase to run are refused
before any work (no corpus, no model), so a skipped phase can never read as a pass."""

import subprocess
import sys

import pytest

from truffle_assets.paths import PROJECT_ROOT

pytestmark = pytest.mark.subprocess


def test_nothing_to_run_is_refused_before_any_work():
    done = subprocess.run([sys.executable, "-m", "benchmarks.privacy_eval", "--mcp-only", "--no-mcp"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "leave nothing to run" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
