"""The fourteenth run's GGUF and the base, suites at temperature 0.4 (no QA: the runtime answers at 0),
into /tmp/eval04 — the run's own eval folder (what the registry points at) stays as evaluated."""
import json, sys
from pathlib import Path
from truffle_assets import paths
from truffle_assets.defs.eval.assets import planted_secrets
from truffle_assets.evals.runner import evaluate_gguf

secrets = planted_secrets(str(paths.exports_dir()))
base = Path("models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
tuned = Path("models/runs/20261128-183206-101a01a4/gguf/model-q8_0.gguf")
b = evaluate_gguf(base, "/tmp/eval04/base", secrets, temperatures=(0.4,), meta={"run_id": "base"})
t = evaluate_gguf(tuned, "/tmp/eval04/tuned", secrets, active_report="/tmp/eval04/base/report.json",
                  temperatures=(0.4,), meta={"run_id": "20261128-183206-101a01a4", "reference": "base at t=0.4"})
print(json.dumps({"base": b["scores"], "tuned": t["scores"], "gate": t["gate"]["reasons"]}, indent=1))
