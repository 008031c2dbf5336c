"""Which model answers: a new data root serves the shared shipped fine-tune, and `truffle ask`,
`truffle models` and `/v1/models` (through the official `openai` client against a real `truffle
serve`) name it. The shipped run here is the tiny GGUF installed in a temporary shared models folder
as `install-shipped` leaves one; the last test reads the repository's real installed run."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
import openai
import pytest

from truffle_assets import paths
from truffle_assets.files import sha256_file
from truffle_assets.llm.gguf import DEFAULT_MODEL_ENV, installed_shipped
from truffle_assets.llm.server import free_port
from truffle_assets_tests.model_fixtures import shared_tiny_gguf
from truffle_assets_tests.runtime_api.conftest import QUESTION, TOKEN, serve_process
from truffle_assets_tests.test_cli import TRUFFLE

ENV_ENDPOINT = ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY",
                "TRUFFLE_API_TOKEN", DEFAULT_MODEL_ENV, paths.SHARED_MODELS_ENV, paths.HOME_ENV)
RUN_ID = "20260101-000000-shipped"
LARGE = 1 << 20  # the tiny GGUF is ~1.5 MB, the Qwen base 469 MB: nothing that size belongs in a new root


def large_files(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and p.stat().st_size >= LARGE]


def env_for(home: Path, shared: Path | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_ENDPOINT}
    return env | {paths.HOME_ENV: str(home), "HF_HUB_OFFLINE": "1", **(
        {paths.SHARED_MODELS_ENV: str(shared)} if shared else {}), **extra}


def truffle(env: dict[str, str], *args: str, timeout: float = 300) -> tuple[int, str, str]:
    import subprocess

    done = subprocess.run([*TRUFFLE, *args], capture_output=True, text=True, timeout=timeout, env=env)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Path:
    """A shared models folder holding the tiny GGUF as an installed shipped run (GGUF + ship.json)."""
    gguf = shared_tiny_gguf(tmp_path_factory)
    root = tmp_path_factory.mktemp("shared-models")
    run = root / "runs" / RUN_ID
    (run / "gguf").mkdir(parents=True)
    target = run / "gguf" / "model-f16.gguf"
    target.write_bytes(gguf.read_bytes())
    (run / "base.json").write_text(json.dumps({"base_model": "tiny"}))
    (run / "ship.json").write_text(json.dumps({
        "run_id": RUN_ID, "base_model": "tiny", "quant": "f16", "gguf_name": target.name,
        "gguf_sha256": sha256_file(target), "gguf_bytes": target.stat().st_size,
        "shipped_at": "2026-01-01T00:00:00+00:00"}))
    return root


@pytest.mark.subprocess
def test_ask_names_the_endpoint_model(memory, tmp_path, llm):
    """With an OpenAI-compatible endpoint, `ask`'s last line names the endpoint's model and where it is;
    `--json` carries the same description."""
    env = env_for(tmp_path / "home")
    common = ["--published", str(memory), "--store", str(tmp_path / "store"), "--base-url", llm.base_url,
              "--model", "fake-model"]
    code, out, err = truffle(env, "ask", "Where does Arjun live now?", *common)
    assert code == 0, err[-2000:]
    assert out.splitlines()[-1] == f"model: fake-model (OpenAI-compatible endpoint at 127.0.0.1:{llm.port}/v1)"
    code, out, err = truffle(env, "ask", "Where does Arjun live now?", "--json", *common)
    assert code == 0, err[-2000:]
    data = json.loads(out)
    assert data["model"] == "fake-model" and data["model_description"].startswith("fake-model (OpenAI-compatible")


@pytest.mark.llama
@pytest.mark.subprocess
def test_a_new_root_asks_the_shared_shipped_fine_tune(memory, tmp_path, shared):
    """A fresh $TRUFFLE_HOME: `truffle models` and `truffle ask` name the shipped run, served from the
    shared folder; nothing large lands in the new root. TRUFFLE_DEFAULT_MODEL=base is the way to the base."""
    home = tmp_path / "home"
    env = env_for(home, shared)
    code, out, err = truffle(env, "models")
    assert code == 0, err[-2000:]
    assert f"served: {RUN_ID} (shipped fine-tune of tiny), {shared / 'runs' / RUN_ID / 'gguf' / 'model-f16.gguf'}" \
        in out.splitlines()
    code, out, err = truffle(env, "ask", "What did Priya say about the trip?", "--published", str(memory),
                             "--store", str(tmp_path / "store"), "--n-ctx", "2048")
    assert code == 0, err[-2000:]
    assert out.splitlines()[-1] == f"model: {RUN_ID} (shipped fine-tune of tiny)"
    assert large_files(home) == [] and large_files(tmp_path / "store") == []

    code, out, _ = truffle(env | {DEFAULT_MODEL_ENV: "base"}, "models")
    assert "served: qwen2.5-coder-0.5b-instruct-q4_k_m (base model, not fine-tuned)" in out
    assert large_files(home) == []  # named, not assembled: a status command writes nothing


@pytest.mark.llama
@pytest.mark.subprocess
def test_v1_models_names_the_served_model_through_the_openai_client(memory, tmp_path, shared):
    """`truffle serve` in a fresh root: the official client lists the shipped run under its own id with
    owned_by and a description, completions carry that id, and the health route agrees."""
    port, home = free_port(), tmp_path / "home"
    env = env_for(home, shared, TRUFFLE_API_TOKEN=TOKEN)
    argv = [*TRUFFLE, "serve", "--port", str(port), "--published", str(memory), "--store", str(tmp_path / "store"),
            "--n-ctx", "2048"]
    base = f"http://127.0.0.1:{port}"
    with serve_process(argv, env, tmp_path / "serve.log") as proc:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            try:
                if httpx.get(base + "/", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()[-3000:]
            time.sleep(0.25)
        client = openai.OpenAI(base_url=f"{base}/v1", api_key=TOKEN, max_retries=0, timeout=120)
        [model] = client.models.list().data
        assert (model.id, model.owned_by) == (RUN_ID, "truffle")
        assert model.model_extra["description"] == f"{RUN_ID} (shipped fine-tune of tiny)"
        status = model.model_extra["truffle"]["model"]
        assert (status["source"], status["run_id"], status["file"]) == ("shipped", RUN_ID, "model-f16.gguf")
        reply = client.chat.completions.create(model="truffle", messages=[{"role": "user", "content": QUESTION}],
                                               max_tokens=16)
        assert reply.model == RUN_ID  # the model that wrote it, whatever the request named
        health = httpx.get(f"{base}/api/health", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        assert health["model"]["id"] == RUN_ID and health["model"]["description"] == model.model_extra["description"]
        log = (tmp_path / "serve.log").read_text()
        assert f"truffle: serving {RUN_ID} (shipped fine-tune of tiny) from model-f16.gguf" in log
    assert large_files(home) == []


@pytest.mark.subprocess
def test_a_new_root_names_the_repositorys_installed_fine_tune(tmp_path):
    """With the shipped model installed by setup (scripts/setup.sh), a second data root serves that
    very file: `truffle models` there names it, and nothing is copied into the root."""
    found = installed_shipped(paths.PROJECT_ROOT / "models")
    if found is None:
        pytest.skip("no shipped fine-tune installed in models/runs (scripts/setup.sh installs it)")
    gguf, manifest = found
    home = tmp_path / "home"
    code, out, err = truffle(env_for(home), "models")
    assert code == 0, err[-2000:]
    assert f"served: {manifest['run_id']} (shipped fine-tune of {manifest['base_model']}), {gguf}" in out.splitlines()
    assert large_files(home) == []
