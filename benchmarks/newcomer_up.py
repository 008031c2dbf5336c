"""Time to a newcomer's first answer: a fresh clone, `bash scripts/up.sh`, one question.

    .venv/bin/python benchmarks/newcomer_up.py                    # pip's cache as this machine has it (warm)
    .venv/bin/python benchmarks/newcomer_up.py --pip-cache empty  # an empty pip cache: llama.cpp compiles

Clones this repository's HEAD into a new folder beside it (its `../shared` is the same), runs
`bash scripts/up.sh` there exactly as the README says (its own `.venv`, `data/`, `.dagster_home`)
and reads its console: the seconds until the `Chat:` line, then one question through the official
`openai` client against the chat's `/v1` (the sample set's "when is the birthday party?"), and
whether the memory was still building when it answered; then the seconds until the build's summary
and the `Dagster UI:` line. Stops everything and removes the clone (`--keep` keeps it).

Last line: `chat_s=<s> first_answer_s=<s> asked_while_building=<0|1> build_done_s=<s> pip_cache=<warm|empty>
model=<the served model's id>`
(goal: first_answer_s ≤ 240 with a warm cache).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "when is the birthday party?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pip-cache", choices=["warm", "empty"], default="warm",
                    help="warm: pip's cache as it is; empty: a new empty cache (llama-cpp-python compiles)")
    ap.add_argument("--keep", action="store_true", help="keep the clone")
    ap.add_argument("--timeout", type=float, default=3600, help="give up after this many seconds")
    args = ap.parse_args()

    clone = Path(tempfile.mkdtemp(prefix="newcomer-", dir=ROOT.parent))
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRUFFLE_", "DAGSTER_", "VIRTUAL_ENV")) and k not in ("OPENROUTER_API_KEY", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    cache = None
    if args.pip_cache == "empty":
        cache = Path(tempfile.mkdtemp(prefix="pip-cache-"))
        env["PIP_CACHE_DIR"] = str(cache)
    ui, chat = free_port(), free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(["bash", "scripts/up.sh", "--port", str(ui), "--chat-port", str(chat)], cwd=clone, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    marks: dict[str, float] = {}
    building = model = None
    lines: list[str] = []
    try:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            now = time.perf_counter() - t0
            if line.startswith("Chat: http") and "chat" not in marks:
                marks["chat"] = now
                import openai

                with urllib.request.urlopen(f"http://127.0.0.1:{chat}/api/memory/coverage", timeout=30) as r:
                    building = json.load(r)["building"] is not None  # asked while the rest still builds
                client = openai.OpenAI(base_url=f"http://127.0.0.1:{chat}/v1", api_key="unused", timeout=900)
                model = client.models.list().data[0].id
                answer = client.chat.completions.create(model=model, messages=[{"role": "user", "content": QUESTION}])
                marks["answer"] = time.perf_counter() - t0
                print(f"[{marks['answer']:.0f} s] answer: {answer.choices[0].message.content.strip()[:200]!r}")
            elif line.startswith("Ingested "):
                marks["build"] = now
            elif line.startswith("Dagster UI: http") or now > args.timeout:
                marks["ui"] = now
                break
            print(f"[{now:.0f} s] {line.rstrip()}", flush=True)
    finally:
        proc.terminate()  # up.sh execs `truffle up`, which stops the chat server and the UI on SIGTERM
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        if not args.keep:
            shutil.rmtree(clone, ignore_errors=True)
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)
    if "answer" not in marks:
        sys.exit("no answer: scripts/up.sh's last lines:\n" + "\n".join(lines[-30:]))
    print(f"chat_s={marks['chat']:.0f} first_answer_s={marks['answer']:.0f} asked_while_building={int(bool(building))} "
          f"build_done_s={marks.get('build', float('nan')):.0f} pip_cache={args.pip_cache} model={model}")


if __name__ == "__main__":
    main()
