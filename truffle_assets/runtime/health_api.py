"""`GET /api/health`: the service answers, and which model it serves now.

    {"status": "ok", "model": {"name": "local", "source": "registry", "file": "run-7-q4_k_m.gguf",
     "run_id": "run-7", "sha256": "…", "since": "…", "follows_registry": true, "error": null, ...}}

`source` is registry (the promoted model), shipped (before any promotion, the shipped fine-tune
installed once for every data root), base (the Qwen GGUF when none is installed, or
`TRUFFLE_DEFAULT_MODEL=base`), explicit (`--gguf`) or endpoint (a configured URL); `id` is the name
it answers under and `description` what it is (`llm.gguf.describe`). Under `truffle serve` a promotion or rollback shows
here within seconds (`served_model.ServedModel`); a change that could not be served (a registry
that fails its audit, a GGUF llama.cpp cannot load) sets `status: degraded` and `model.error`
while the model named keeps answering. Behind the API token like every other route.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

router = APIRouter()


@router.get("/api/health")
def health(request: Request) -> dict[str, Any]:
    model = request.app.state.service.model_status()
    return {"status": "degraded" if model.get("error") else "ok", "model": model}
