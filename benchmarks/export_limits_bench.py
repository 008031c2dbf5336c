"""Peak memory and time of reading oversized exports, each case in a fresh subprocess.

    .venv/bin/python benchmarks/export_limits_bench.py             # 10 MB message, ~500 MB export, oversize
    .venv/bin/python benchmarks/export_limits_bench.py --mb 50     # quick look with a 50 MB export

In a temporary folder (deleted afterwards) it writes:
- msg10mb: an Android export whose one message is a single 10 MB line of words, then a short reply;
- msg10mb_lines: the same message as 10 MB of short lines (~900k continuation lines);
- export<N>mb: an Android export of about --mb megabytes of ordinary chat (short messages, emoji,
  Devanagari, a multi-line message every 20), generated from a fixed seed;
- oversize: a sparse .txt one byte over parsing.limits.MAX_EXPORT_BYTES (truncate: no disk used).
Each file is read in a fresh interpreter through the ingest path, twice: `parse_file(path).frame`
(what the parser bench times) and `truffle_assets.ingest.exports.load_chat` (the parse plus the message
rows, ids and content hashes the `messages` asset writes). Peak RSS is the child's VmHWM from
/proc/self/status at the end; "base" is its RSS after imports, before the file is touched.
The oversize file must be refused with an ExportError naming its size and the limit while the
child stays under 300 MB, i.e. without reading it.

Last line: `msg10mb_peak_mb=<m> export500mb_peak_mb=<m> oversize_refused=<0|1>`, the peaks being the
largest over the two paths (and, for msg10mb, both shapes of the message; the keys keep their names
whatever --mb and --message-mb are).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from truffle_assets.parsing.limits import MAX_EXPORT_BYTES  # noqa: E402

OVERSIZE_RSS_MB = 300

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from truffle_assets.ingest.exports import load_chat
from truffle_assets.parsing import ExportError, parse_file

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024

path, mode = Path(sys.argv[2]), sys.argv[3]
base = status("VmRSS:")
t0 = time.perf_counter()
out = {"base_mb": base}
try:
    if mode == "frame":
        out["rows"] = parse_file(path).frame.height
    else:
        load = load_chat("bench", [path])
        out["rows"] = load.rows.height
        out["truncated"] = len(load.truncated)
except ExportError as exc:
    out["error"] = str(exc)
out["seconds"] = time.perf_counter() - t0
out["peak_mb"] = status("VmHWM:")
print(json.dumps(out))
"""

WORDS = ("ok", "haan", "yaar", "see you at 5", "running late", "😂", "🙏", "biryani tonight?", "बहुत अच्छा",
         "did you see the match", "call me when free", "kal milte hain", "sure", "haha", "<Media omitted>",
         "the meeting moved to Tuesday", "sending the tickets now", "👍👍", "where are you?", "on my way")
AUTHORS = ("Ananya Mehta", "Kabir", "Mummy", "Arjun Mehta", "Priya Sharma")


def write_message_export(path: Path, size: int, line: str = "lorem ipsum dolor sit amet ") -> None:
    body = (line * (size // len(line) + 1))[:size]
    path.write_text(f"01/02/2020, 10:00 - Alice: {body}\n01/02/2020, 10:01 - Bob: that was long\n", encoding="utf-8")


def write_chat_export(path: Path, size: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    ts = datetime(2015, 1, 1, 9, 0)
    with path.open("w", encoding="utf-8") as f:
        written = n = 0
        while written < size:
            block = []
            for _ in range(10_000):
                ts += timedelta(minutes=rng.choice((0, 1, 1, 2, 5, 30, 240)))
                text = " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))
                if n % 20 == 0:
                    text += "\n" + " ".join(rng.choices(WORDS, k=3))
                block.append(f"{ts:%d/%m/%Y, %H:%M} - {rng.choice(AUTHORS)}: {text}\n")
                n += 1
            chunk = "".join(block)
            f.write(chunk)
            written += len(chunk.encode())


def run(path: Path, mode: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), str(path), mode],
                          capture_output=True, text=True)
    if proc.returncode:
        return {"error": f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}", "peak_mb": float("nan"),
                "base_mb": float("nan"), "seconds": float("nan")}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=500, help="size of the large export in MB (10^6 bytes)")
    ap.add_argument("--message-mb", type=int, default=10, help="size of the single message in MB (2^20 bytes)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="export_limits_") as tmp:
        tmp = Path(tmp)
        cases = {
            "msg10mb": (tmp / "WhatsApp Chat with Alice.txt", lambda p: write_message_export(p, args.message_mb << 20)),
            "msg10mb_lines": (tmp / "WhatsApp Chat with Bob.txt",
                              lambda p: write_message_export(p, args.message_mb << 20, "lorem ipsum\n")),
            "export500mb": (tmp / "WhatsApp Chat with Family.txt", lambda p: write_chat_export(p, args.mb * 10**6)),
            "oversize": (tmp / "WhatsApp Chat with Huge.txt", lambda p: os.truncate(p, MAX_EXPORT_BYTES + 1)),
        }
        peaks = {}
        refused = 1
        for name, (path, make) in cases.items():
            t0 = time.perf_counter()
            path.touch()
            make(path)
            print(f"{name}: {path.stat().st_size / 1e6:,.1f} MB written in {time.perf_counter() - t0:.1f} s", flush=True)
            for mode in ("frame", "load_chat"):
                r = run(path, mode)
                what = r.get("error") or f"{r['rows']:,} rows" + (f", {r['truncated']} truncated" if r.get("truncated") else "")
                print(f"  {mode:9} peak {r['peak_mb']:7.0f} MB  (+{r['peak_mb'] - r['base_mb']:.0f} over base "
                      f"{r['base_mb']:.0f})  {r['seconds']:6.2f} s  {what[:200]}", flush=True)
                peaks[name] = max(peaks.get(name, 0.0), r["peak_mb"])
                if name == "oversize":  # refused, saying why, and not read
                    error = r.get("error", "")
                    refused &= int("export limit" in error and f"{MAX_EXPORT_BYTES + 1:,}" in error
                                   and r["peak_mb"] < OVERSIZE_RSS_MB)
            path.unlink()
    print(f"msg10mb_peak_mb={max(peaks['msg10mb'], peaks['msg10mb_lines']):.0f} export500mb_peak_mb={peaks['export500mb']:.0f} "
          f"oversize_refused={refused}")


if __name__ == "__main__":
    main()
