"""The unlucky user and the attacker, on a small synthetic corpus: kills, a bad file, oversize input, tampering.

    .venv/bin/python benchmarks/chaos_bench.py                  # 10 kill trials, 3 chats of 60 messages
    .venv/bin/python benchmarks/chaos_bench.py --trials 3       # quick look

1. Crash trials: `truffle ingest` (a fresh SQLite $DAGSTER_HOME with the project's dagster.yaml,
   as a newcomer has) is killed with SIGKILL at a random moment of a clean ingest's duration,
   then run again plainly (no `--full`). A trial converges when the memory equals what a clean
   ingest builds (truffle_assets.memory_digest: DuckDB table hashes, LanceDB rows at the published
   versions, pointer, profile, facts); it hangs when the re-run does not finish in `--timeout`.
2. A bad file among good ones: an empty `.txt` beside the exports. Isolated when the ingest exits
   3 ("partial"), names the file, and every good chat's memory is what a clean ingest builds.
3. Oversize input: API requests over the body and question limits, NaN/inf numbers, an
   unauthenticated oversize body, and export files over the size limit; each must be refused
   without being read whole (server / process peak RSS is printed).
4. Audit tampering: each case tampers with a fresh registry's audit log, head or active model and
   must be detected by `truffle audit verify`.

Last line: `crash_trials=<n> converged=<c> hung=<h> bad_file_isolated=<0|1> oversize_refused=<k>
oversize_cases=<K> tamper_detected=<t> tamper_cases=<T>`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TRUFFLE = str(Path(sys.executable).with_name("truffle"))

from truffle_assets.memory_digest import memory_digest  # noqa: E402


LINES = [  # (author is the user?, text): small talk plus statements the fact extractor keeps
    (False, "Good morning! Are you free this weekend?"), (True, "Morning! Yes, I live in Pune now so it is close"),
    (False, "Great, let's meet at the cafe on Saturday"), (True, "Perfect, my birthday is on 21 April by the way"),
    (False, "Noted! Did you finish the slides?"), (True, "Almost, I work at Infosys so evenings only"),
    (False, "Cricket on Sunday at 7am?"), (True, "Count me in, I love playing cricket"),
    (False, "Call me when you are free"), (True, "Will do after dinner"),
]


def write_small_corpus(out: Path, chats: int, messages: int, seed: int) -> None:
    """`chats` exports of `messages` lines each over about two consecutive months (one or two runs a
    chat): the synthetic sample set spreads a chat over years, and a kill trial needs a short ingest."""
    rng = random.Random(seed)
    out.mkdir(parents=True)
    names = ["Priya", "Rahul", "Meera", "Kabir", "Anita", "Dev"][:chats]
    for i, name in enumerate(names):
        day, minute, lines = 1 + 3 * i, 9 * 60, []
        for n in range(messages):
            mine, text = LINES[n % len(LINES)]
            if rng.random() < 0.3:
                day += rng.randint(1, 3)
                minute = 9 * 60 + rng.randint(0, 600)
            minute += rng.randint(1, 20)
            month, d = 3 + (day - 1) // 28, (day - 1) % 28 + 1
            lines.append(f"{d:02d}/{month:02d}/2024, {minute // 60 % 24:02d}:{minute % 60:02d} - "
                         f"{'Arjun' if mine else name}: {text}")
        (out / f"WhatsApp Chat with {name}.txt").write_text("\n".join(lines) + "\n")


def world(root: Path, corpus: Path) -> dict:
    """A data root holding a copy of the corpus and a fresh local instance; the env to run in."""
    shutil.copytree(corpus, root / "exports")
    home = root / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {**os.environ, "TRUFFLE_HOME": str(root), "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    for var in ("TRUFFLE_LLM_BASE_URL", "OPENROUTER_API_KEY", "TRUFFLE_CRASH_AT"):
        env.pop(var, None)
    return env


def ingest(env: dict, timeout: float) -> tuple[int | None, float, str]:
    """(exit code or None when it hung, seconds, stderr tail) of a plain `truffle ingest`."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([TRUFFLE, "ingest"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return None, time.perf_counter() - t0, err[-2000:]
    return proc.returncode, time.perf_counter() - t0, err[-2000:]


def digest(root: Path) -> dict:
    return memory_digest(root / "memory.duckdb", root / "published")


def crash_trials(corpus: Path, work: Path, trials: int, timeout: float, seed: int) -> dict:
    clean_root = work / "clean"
    code, clean_s, err = ingest(world(clean_root, corpus), timeout)
    if code != 0:
        sys.exit(f"the clean ingest failed ({code}):\n{err}")
    clean = digest(clean_root)
    print(f"clean ingest: {clean_s:.1f} s")
    rng = random.Random(seed)
    converged = hung = 0
    print("| trial | killed after s | re-run | re-run s | converged |\n|---|---|---|---|---|")
    for i in range(trials):
        root = work / f"trial{i}"
        env = world(root, corpus)
        at = rng.uniform(0.5, clean_s)
        proc = subprocess.Popen([TRUFFLE, "ingest"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            proc.wait(timeout=at)
            outcome = f"finished before the kill ({proc.returncode})"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            outcome = "killed"
        code, took, err = ingest(env, timeout)
        ok = code == 0 and digest(root) == clean
        hung += code is None
        converged += ok
        print(f"| {i} | {at:.1f} ({outcome}) | {'hung' if code is None else code} | {took:.1f} | {ok} |", flush=True)
        if not ok and code is not None:
            print(err)
        shutil.rmtree(root, ignore_errors=True)
    return {"trials": trials, "converged": converged, "hung": hung, "clean": clean, "clean_root": clean_root}


def bad_file_trial(corpus: Path, work: Path, timeout: float, clean: dict) -> int:
    root = work / "bad_file"
    env = world(root, corpus)
    bad = root / "exports" / "WhatsApp Chat with Nobody.txt"
    bad.write_text("")
    t0 = time.perf_counter()
    proc = subprocess.run([TRUFFLE, "ingest", "--json"], env=env, capture_output=True, text=True, timeout=timeout)
    report = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    listed = [u["file"] for u in report.get("unreadable", [])]
    same = digest(root) == clean
    ok = proc.returncode == 3 and listed == [str(bad)] and str(bad) in proc.stderr and same
    print(f"bad file: exit {proc.returncode}, unreadable {listed}, good chats as in a clean ingest: {same}, "
          f"{time.perf_counter() - t0:.1f} s -> {'isolated' if ok else 'NOT isolated'}")
    return int(ok)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--chats", type=int, default=3)
    ap.add_argument("--messages", type=int, default=60, help="per chat")
    ap.add_argument("--timeout", type=float, default=600, help="seconds before a re-run counts as hung")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="truffle-chaos-"))
    corpus = work / "corpus"
    write_small_corpus(corpus, args.chats, args.messages, args.seed)
    try:
        crash = crash_trials(corpus, work, args.trials, args.timeout, args.seed)
        isolated = bad_file_trial(corpus, work, args.timeout, crash["clean"])
        refused, cases = oversize_cases(work, corpus, crash["clean_root"])
        detected, tampers = tamper_cases(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"crash_trials={crash['trials']} converged={crash['converged']} hung={crash['hung']} "
          f"bad_file_isolated={isolated} oversize_refused={refused} oversize_cases={cases} "
          f"tamper_detected={detected} tamper_cases={tampers}")
    from benchmarks import exit_quietly

    exit_quietly(0)


PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "sys.stdout.write(r.stdout); sys.stderr.write(r.stderr); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)")


def peak_run(cmd: list[str], env: dict | None = None, timeout: float = 600) -> tuple[int, float, str, str]:
    """(exit code, peak RSS in MB, stdout, stderr) of `cmd` in a process of its own."""
    proc = subprocess.run([sys.executable, "-c", PEAK, *cmd], env=env, capture_output=True, text=True, timeout=timeout)
    err, _, peak_kb = proc.stderr.rstrip().rpartition("\n")
    return proc.returncode, int(peak_kb) / 1024, proc.stdout, err


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def api_cases(built_root: Path) -> list[tuple[str, bool, str]]:
    """Oversize and malformed requests against a real `truffle serve` on the built memory."""
    import urllib.request

    import httpx

    from truffle_assets.runtime.limits import MAX_BODY_BYTES, MAX_QUESTION_CHARS
    from truffle_assets.runtime.serve import TOKEN_ENV

    token = "chaos-" + os.urandom(12).hex()
    port = _free_port()
    env = {**os.environ, "TRUFFLE_HOME": str(built_root), TOKEN_ENV: token, "HF_HUB_OFFLINE": "1",
           # an endpoint that is never called: every case below is refused before the model
           "TRUFFLE_LLM_BASE_URL": "http://127.0.0.1:9/v1", "TRUFFLE_LLM_MODEL": "none", "TRUFFLE_LLM_API_KEY": "x"}
    server = subprocess.Popen([TRUFFLE, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"

    def post(body: bytes, auth: bool = True) -> tuple[int, bytes]:
        # httpx reads the 413 the server sends while the upload is still going (urllib dies on the cut pipe)
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if auth else {})}
        try:
            r = httpx.post(url, content=body, headers=headers, timeout=120)
            return r.status_code, r.content
        except httpx.TransportError as exc:
            return 0, str(exc).encode()

    def chat(question: str, **extra) -> bytes:
        return json.dumps({"messages": [{"role": "user", "content": question}], **extra}).encode()

    out = []
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"truffle serve did not start:\n{server.stderr.read()[-2000:]}") from None
                time.sleep(0.5)
        before = _rss_mb(server.pid)
        big = "x" * (20 * 1024 * 1024)
        nan = chat("hi").replace(b"}]", b"}], \"temperature\": NaN", 1)
        inf = chat("hi").replace(b"}]", b"}], \"temperature\": Infinity", 1)
        cases = [
            (f"20 MB body (limit {MAX_BODY_BYTES:,} B)", lambda: post(chat(big)), {413}),
            ("20 MB body without the token", lambda: post(chat(big), auth=False), {401}),
            (f"question of {MAX_QUESTION_CHARS + 1:,} characters", lambda: post(chat("y" * (MAX_QUESTION_CHARS + 1))),
             {400, 413}),
            ("temperature NaN", lambda: post(nan), {400, 422}),
            ("temperature Infinity", lambda: post(inf), {400, 422}),
        ]
        for name, send, want in cases:
            status, body = send()
            try:
                openai_style = set(json.loads(body)["error"]) >= {"message", "type", "code"}
            except (ValueError, KeyError, TypeError):
                openai_style = False
            ok = status in want and openai_style and len(body) < 4096
            out.append((f"API: {name}", ok, f"{status}, {len(body)} B body, server RSS {_rss_mb(server.pid):.0f} MB "
                                             f"(was {before:.0f})"))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return out


def export_cases(work: Path, corpus: Path) -> list[tuple[str, bool, str]]:
    """An export over the size limit (sparse: no disk, must not be read) and one 10 MB message."""
    from truffle_assets.parsing.limits import MAX_EXPORT_BYTES, MAX_MESSAGE_CHARS

    out = []
    root = work / "oversize_export"
    env = world(root, corpus)
    huge = root / "exports" / "WhatsApp Chat with Huge.txt"
    with open(huge, "wb") as f:
        f.truncate(MAX_EXPORT_BYTES + 1)
    code, peak, stdout, err = peak_run([TRUFFLE, "ingest", "--messages-only", "--json"], env)
    listed = {u["file"]: u["reason"] for u in json.loads(stdout).get("unreadable", [])} if stdout.startswith("{") else {}
    ok = code == 3 and str(huge) in listed and peak < 2048
    out.append((f"export of {MAX_EXPORT_BYTES + 1:,} B (sparse)", ok,
                f"exit {code}, peak RSS {peak:.0f} MB, {listed.get(str(huge), 'not reported')[:80]}"))

    small = work / "small.txt"
    small.write_text("01/03/2023, 09:01 - Alice: Good morning!\n")
    long_msg = work / "long_message.txt"
    long_msg.write_text("01/03/2023, 09:01 - Alice: " + "y" * (10 * 1024 * 1024) + "\n")
    _, base, _, _ = peak_run([TRUFFLE, "parse", str(small), "--json"])
    code, peak, stdout, err = peak_run([TRUFFLE, "parse", str(long_msg), "--json"])
    kept = len(json.loads(stdout.splitlines()[0])["text"]) if code == 0 and stdout else 0
    ok = code == 0 and kept <= MAX_MESSAGE_CHARS + 200 and peak - base <= 100
    out.append(("one 10 MB message", ok, f"exit {code}, text kept {kept:,} chars, peak RSS {peak:.0f} MB "
                                        f"({peak - base:+.0f} MB over a one-line export)"))
    return out


def oversize_cases(work: Path, corpus: Path, built_root: Path) -> tuple[int, int]:
    cases = api_cases(built_root) + export_cases(work, corpus)
    print("| oversize case | refused/handled | what happened |\n|---|---|---|")
    for name, ok, what in cases:
        print(f"| {name} | {'yes' if ok else 'NO'} | {what} |")
    return sum(ok for _, ok, _ in cases), len(cases)


def _run_dir(root: Path, name: str) -> Path:
    """A finished training run as the registry takes it: GGUF, Modelfile, a passed eval gate."""
    run = root / "runs" / name
    (run / "gguf").mkdir(parents=True)
    (run / "eval").mkdir()
    (run / "gguf" / f"{name}-q4_k_m.gguf").write_bytes(b"GGUF" + name.encode())
    (run / "Modelfile").write_text(f"FROM ./gguf/{name}-q4_k_m.gguf\n")
    (run / "eval" / "report.json").write_text(json.dumps({"gate": {"passed": True}}))
    return run


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _put(path: Path, lines: list[str]) -> None:
    path.write_text("".join(ln + "\n" for ln in lines))


def _edit_active(reg: Path, **change) -> None:
    rec = json.loads((reg / "active.json").read_text())
    (reg / "active.json").write_text(json.dumps(rec | change, indent=2) + "\n")


TAMPERS = {  # name -> what an attacker without the key does to the registry (older: its files after line 2)
    "cut the log's tail, put the older head back": lambda reg, older: [
        (reg / "audit.log").write_bytes(older["audit.log"]), (reg / "audit.head").write_bytes(older["audit.head"])],
    "cut log, head and history back to line 2": lambda reg, older: [
        (reg / n).write_bytes(older[n]) for n in ("audit.log", "audit.head", "model_history.jsonl")],
    "delete log and head": lambda reg, older: [(reg / n).unlink() for n in ("audit.log", "audit.head")],
    "delete log, head and history": lambda reg, older: [
        (reg / n).unlink() for n in ("audit.log", "audit.head", "model_history.jsonl")],
    "edit a log line": lambda reg, older: _put(reg / "audit.log", [
        ln.replace('"who":"', '"who":"mallory-') if i == 1 else ln for i, ln in enumerate(_lines(reg / "audit.log"))]),
    "swap two log lines": lambda reg, older: _put(reg / "audit.log", [
        _lines(reg / "audit.log")[i] for i in (0, 2, 1, *range(3, len(_lines(reg / "audit.log"))))]),
    "point active.json at another model": lambda reg, older: _edit_active(
        reg, gguf_path=str(reg.parent / "runs" / "run-0" / "gguf" / "run-0-q4_k_m.gguf")),
    "put an older active.json back": lambda reg, older: (reg / "active.json").write_bytes(older["active.json"]),
    "replace the served GGUF": lambda reg, older: Path(json.loads((reg / "active.json").read_text())["gguf_path"])
    .write_bytes(b"GGUF evil"),
}


def tamper_cases(work: Path) -> tuple[int, int]:
    """Each tamper on a fresh registry (promote run-0, run-1, run-2, roll back to run-1), then
    `truffle audit verify`: detected when it exits non-zero."""
    from truffle_assets.registry import Registry

    detected = 0
    print("| tamper | audit verify |\n|---|---|")
    for i, (name, tamper) in enumerate(TAMPERS.items()):
        root = work / f"tamper{i}"
        reg = Registry(root / "registry", key="chaos-bench-key")
        for n in range(3):
            reg.promote(_run_dir(root, f"run-{n}"), gate_passed=True)
            if n == 1:
                older = {p.name: p.read_bytes() for p in reg.root.iterdir() if p.is_file()}
        reg.rollback()
        env = {**os.environ, "TRUFFLE_AUDIT_KEY": "chaos-bench-key"}
        clean = subprocess.run([TRUFFLE, "audit", "verify", "--registry", str(reg.root)], env=env,
                               capture_output=True, text=True)
        assert clean.returncode == 0, clean.stderr  # the untampered registry verifies
        tamper(reg.root, older)
        proc = subprocess.run([TRUFFLE, "audit", "verify", "--registry", str(reg.root)], env=env,
                              capture_output=True, text=True)
        detected += proc.returncode != 0
        said = (proc.stderr or proc.stdout).strip().splitlines()[-1][:110]
        print(f"| {name} | {'detected' if proc.returncode else 'NOT detected'}: {said} |")
    return detected, len(TAMPERS)


if __name__ == "__main__":
    main()
