"""What a newcomer's console shows: lines printed by a first `truffle ingest` and by `scripts/up.sh`.

    .venv/bin/python benchmarks/console_lines.py                      # both, up.sh on the default sample set
    .venv/bin/python benchmarks/console_lines.py --skip-up            # the ingest figure only (about a minute)

In a temporary `$TRUFFLE_HOME` and a fresh SQLite `$DAGSTER_HOME`, with no terminal (as in CI or a
pipe, where the progress view prints plain lines): (1) `truffle ingest` of two small natural chats
from `benchmarks/devset/natural`, every stdout and stderr line counted; (2) `bash scripts/up.sh`
on an empty exports folder (it writes the sample set, ingests it and starts the chat and the UI),
every line counted up to and including the `Chat: http://…` line, then stopped. Lines that look
like a debugger (Dagster event lines, tracebacks, warnings, loading bars) are counted apart.

Last line: `ingest_lines=<n> ingest_noise=<n> up_lines_to_chat=<n> up_noise=<n> up_s=<s>`
(goal: ingest ≤ 40, up.sh ≤ 100, noise 0).
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRUFFLE = str(Path(sys.executable).with_name("truffle"))
CHATS = ("WhatsApp Chat with Mummy.txt", "WhatsApp Chat - Tanya Grewal.txt")
NOISE = re.compile(r"DEBUG|dagster - |Traceback|warning|warn\(|Loading weights|n_ctx_seq|it/s\]|^\s*\{", re.I)


def fresh_env(home: Path) -> dict:
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    env = {**os.environ, "TRUFFLE_HOME": str(home), "DAGSTER_HOME": str(dagster_home), "HF_HUB_OFFLINE": "1"}
    for var in ("TRUFFLE_LLM_BASE_URL", "OPENROUTER_API_KEY"):  # a newcomer's offline default
        env.pop(var, None)
    return env


def ingest_lines(home: Path) -> list[str]:
    (home / "exports").mkdir(parents=True)
    for name in CHATS:
        shutil.copy(ROOT / "benchmarks" / "devset" / "natural" / name, home / "exports" / name)
    proc = subprocess.run([TRUFFLE, "ingest"], env=fresh_env(home), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=1800)
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        sys.exit(f"truffle ingest failed ({proc.returncode}):\n{out[-3000:]}")
    return out.rstrip("\n").split("\n")  # lines as a terminal shows them: a bar redrawn with \r is one


def up_lines(home: Path, ui_port: int, chat_port: int, timeout_s: float) -> tuple[list[str], float]:
    """scripts/up.sh's merged output up to its `Chat:` line, and the seconds it took to get there."""
    env = fresh_env(home)
    t0 = time.perf_counter()
    proc = subprocess.Popen(["bash", "scripts/up.sh", "--port", str(ui_port), "--chat-port", str(chat_port)], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    lines: list[str] = []
    try:
        for raw in proc.stdout:  # split on \n only: a bar redrawn with \r is one line, as on a terminal
            line = raw.decode("utf-8", "replace").rstrip("\n")
            lines.append(line)
            if line.startswith("Chat: http"):
                return lines, time.perf_counter() - t0
            if time.perf_counter() - t0 > timeout_s:
                break
        sys.exit(f"scripts/up.sh printed no Chat: line (exit {proc.poll()}); its last lines:\n" + "\n".join(lines[-30:]))
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: up stops the chat server and the UI
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skip-up", action="store_true", help="only the ingest figure")
    ap.add_argument("--ui-port", type=int, default=3123, help="Dagster UI port for up.sh")
    ap.add_argument("--chat-port", type=int, default=8823, help="chat port for up.sh")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds to wait for up.sh's Chat: line")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="truffle-console-") as tmp:
        ingest = ingest_lines(Path(tmp) / "ingest")
        print(f"--- truffle ingest, two natural chats: {len(ingest)} lines")
        print("\n".join(ingest))
        figures = f"ingest_lines={len(ingest)} ingest_noise={sum(bool(NOISE.search(x)) for x in ingest)}"
        if not args.skip_up:
            up, took = up_lines(Path(tmp) / "up", args.ui_port, args.chat_port, args.timeout)
            print(f"--- scripts/up.sh, empty exports folder: {len(up)} lines to the Chat: line, {took:.0f} s")
            print("\n".join(up))
            figures += f" up_lines_to_chat={len(up)} up_noise={sum(bool(NOISE.search(x)) for x in up)} up_s={took:.0f}"
    print(figures)


if __name__ == "__main__":
    main()
