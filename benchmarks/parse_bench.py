"""Parse throughput: our parser vs whatstk vs chat-miner, on the same synthetic corpus, same run.

    .venv/bin/pip install whatstk chat-miner        # or: pip install -e .[bench]
    .venv/bin/python benchmarks/parse_bench.py      # 5M tokens, 10 chats, seed 7 (cached)
    .venv/bin/python benchmarks/parse_bench.py --tokens 200000 --repeat 1   # quick look

The corpus is generated once into benchmarks/.work/ (git-ignored) and reused while the generator
source is unchanged. Zipped iOS exports are extracted (untimed) to a temporary folder for the
competitors; ours reads the .zip itself, so its time includes decompression. Each parser must
read a file correctly to be measured on it: whatstk gets its auto-detected header format, or the
explicit `hformat` when detection fails or miscounts; a file some parser cannot read at all is
left out for *all three* and named in the output. Throughput is decoded-UTF-8 megabytes (10^6
bytes) of chat text per second, timed per file with perf_counter around the parse call only,
best of --repeat runs. The last line is `parse_speedup_vs_whatstk=<x> parse_speedup_vs_chatminer=<y>`
(our MB/s over theirs).

What is timed is what the product runs: for us, reading the export and the columnar parse to the
entry frame (`parse_file(path).frame`, one row per entry, no per-message Python object; ingestion
builds its rows from that frame); for the peers, their own parse into their own result (whatstk:
a pandas DataFrame; chat-miner: its list of ParsedMessage objects, without the get_df() a frame
would cost it on top).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # chat-miner wraps its loop in tqdm; no progress bars in timings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from truffle_assets.parsing import parse_file  # noqa: E402
from benchmarks.corpus import corpus as _corpus  # noqa: E402

TOLERANCE = 0.02  # a competitor "reads" a file when its message count is within 2% of our authored count






def corpus(tokens: int, chats: int, seed: int, regen: bool) -> tuple[Path, dict, float | None]:
    return _corpus(tokens, chats, seed, regen=regen)


def timed(fn, repeat: int):
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


# ---- the three parsers: each returns its message count -----------------------------------------
def run_ours(path: Path) -> int:
    return parse_file(path).frame.height


def run_whatstk(path: Path, hformat: str | None) -> int:
    from whatstk import df_from_whatsapp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if hformat:
            df = df_from_whatsapp(str(path), auto_header=False, hformat=hformat, max_size=None)
        else:
            df = df_from_whatsapp(str(path), max_size=None)
    return len(df)


def run_chatminer(path: Path) -> int:
    from chatminer.chatparsers import WhatsAppParser

    p = WhatsAppParser(str(path))
    p.parse_file()
    return len(p.parsed_messages._parsed_messages)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=5_000_000)
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3, help="best of N timed runs per file and parser")
    ap.add_argument("--regen", action="store_true", help="regenerate the corpus even if cached")
    args = ap.parse_args()

    logging.disable(logging.INFO)  # chat-miner logs every system line at INFO
    try:
        import chatminer.chatparsers  # noqa: F401
        import whatstk  # noqa: F401
    except ImportError as exc:
        sys.exit(f"{exc}: install the competitors first: .venv/bin/pip install whatstk chat-miner")

    out, gt, gen_s = corpus(args.tokens, args.chats, args.seed, args.regen)
    print(f"corpus: {out.relative_to(ROOT)} ({len(gt['chats'])} files, ~{gt['approx_tokens']:,} tokens as chars/4)"
          + (f", generated in {gen_s:.1f}s" if gen_s is not None else ", cached"))

    with tempfile.TemporaryDirectory(prefix="parse_bench_") as tmp:
        plan = []
        for c in gt["chats"]:
            path = out / c["file"]
            if c["container"] == "zip":  # extraction is not timed
                with zipfile.ZipFile(path) as zf:
                    data = zf.read("_chat.txt")
                d = Path(tmp) / c["chat_id"]
                d.mkdir()
                plain = d / "_chat.txt"
                plain.write_bytes(data)
            else:
                plain = path
                data = path.read_bytes()
            plan.append({"chat": c, "ours": path, "plain": plain, "bytes": len(data)})

        # Which configuration reads each file correctly (untimed probe).
        print("\nformat support (messages: ours authored / whatstk / chat-miner):")
        for p in plan:
            authored = parse_file(p["ours"]).header_lines
            p["expect"] = authored
            notes = []
            wk_cfg, wk_n = "unsupported", None
            for cfg in (None, p["chat"]["whatstk_hformat"]):
                try:
                    n = run_whatstk(p["plain"], cfg)
                except Exception as exc:  # noqa: BLE001
                    notes.append(f"whatstk {'auto' if cfg is None else 'hformat'}: {type(exc).__name__}")
                    continue
                if abs(n - authored) <= TOLERANCE * authored:
                    wk_cfg, wk_n = ("auto" if cfg is None else cfg), n
                    break
                notes.append(f"whatstk {'auto' if cfg is None else repr(cfg)} miscounts ({n})")
            try:
                cm_n = run_chatminer(p["plain"])
                cm_ok = abs(cm_n - authored) <= TOLERANCE * authored
                if not cm_ok:
                    notes.append(f"chat-miner miscounts ({cm_n})")
            except Exception as exc:  # noqa: BLE001
                cm_n, cm_ok = None, False
                notes.append(f"chat-miner: {type(exc).__name__}: {exc}")
            p["whatstk_cfg"], p["ok"] = wk_cfg, wk_cfg != "unsupported" and cm_ok
            print(f"  {p['chat']['file']:<48} {p['chat']['format']:<20} {authored:>7} / {wk_n!s:>7} / {cm_n!s:>7}"
                  f"  whatstk={wk_cfg}" + ("" if p["ok"] else "  EXCLUDED") + (f"  [{'; '.join(notes)}]" if notes else ""))

        subset = [p for p in plan if p["ok"]]
        excluded = [p["chat"]["file"] for p in plan if not p["ok"]]
        if not subset:
            sys.exit("no file is read correctly by all three parsers")
        mb = sum(p["bytes"] for p in subset) / 1e6

        results = {}
        for name, fn in (
            ("truffle", lambda p: run_ours(p["ours"])),
            ("whatstk", lambda p: run_whatstk(p["plain"], None if p["whatstk_cfg"] == "auto" else p["whatstk_cfg"])),
            ("chat-miner", lambda p: run_chatminer(p["plain"])),
        ):
            secs = msgs = 0
            for p in subset:
                s, n = timed(lambda p=p, fn=fn: fn(p), args.repeat)
                secs += s
                msgs += n
            results[name] = (secs, msgs)

    scope = "all files" if not excluded else f"{len(subset)}/{len(plan)} files (excluded for all: {', '.join(excluded)})"
    print(f"\nmeasured on {scope}: {mb:.2f} MB of chat text, best of {args.repeat}")
    print(f"{'parser':<12} {'seconds':>9} {'messages':>10} {'messages/s':>12} {'MB/s':>8}")
    rate = {}
    for name, (secs, msgs) in results.items():
        rate[name] = mb / secs
        print(f"{name:<12} {secs:>9.3f} {msgs:>10,} {msgs / secs:>12,.0f} {mb / secs:>8.2f}")
    print(f"parse_speedup_vs_whatstk={rate['truffle'] / rate['whatstk']:.2f} "
          f"parse_speedup_vs_chatminer={rate['truffle'] / rate['chat-miner']:.2f}")


if __name__ == "__main__":
    main()
