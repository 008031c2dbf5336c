"""The Modelfile reads back, through a port of Ollama's own parser, as what we meant to write."""

import os
import shutil

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from truffle_assets.training.modelfile import ollama_create, parse_modelfile, write_modelfile  # noqa: E402
from truffle_assets.chat_format.template import (  # noqa: E402
    go_template,
    render,
    render_go,
    stop_tokens,
)
from truffle_assets.chat_format.prompt import system_prompt  # noqa: E402


@pytest.fixture
def export_dir(tmp_path):
    (tmp_path / "export").mkdir()
    gguf = tmp_path / "export" / "truffle-q8_0.gguf"
    gguf.write_bytes(b"GGUF")
    return gguf


def test_modelfile_parses_back_to_template_system_and_stops(export_dir):
    out = export_dir.parent / "Modelfile"
    text = write_modelfile(export_dir, out, system_prompt(), params={"temperature": 0.2, "seed": 7})
    assert out.read_text(encoding="utf-8") == text
    commands = parse_modelfile(text)
    single = {name: value for name, value in commands if name != "stop"}
    assert single["model"] == "./truffle-q8_0.gguf"
    assert single["num_ctx"] == "16384"
    sampling = [single[k] for k in ("temperature", "top_p", "repeat_penalty", "seed")]
    assert sampling == ["0.2", "0.8", "1.05", "7"]  # an override, two defaults, an extra
    assert single["template"] == go_template()
    assert single["system"] == system_prompt()
    stops = [value for name, value in commands if name == "stop"]
    assert stops == stop_tokens() == ["<|im_end|>", "<|im_start|>"]


def test_from_stays_valid_when_the_folder_moves(export_dir, tmp_path):
    write_modelfile(export_dir, export_dir.parent / "Modelfile", "Be brief.")
    moved = tmp_path / "elsewhere"
    shutil.move(export_dir.parent, moved)
    (name, path), *_ = parse_modelfile((moved / "Modelfile").read_text(encoding="utf-8"))
    assert name == "model" and (moved / path).read_bytes() == b"GGUF"
    text = write_modelfile(export_dir, tmp_path / "nested" / "Modelfile", "Be brief.")
    assert text.startswith("FROM ../export/truffle-q8_0.gguf\n")


def test_ollama_serves_the_training_text_with_the_modelfile_system_prompt(export_dir):
    text = write_modelfile(export_dir, export_dir.parent / "Modelfile", system_prompt())
    commands = dict(parse_modelfile(text))
    chat = [{"role": "user", "content": "Where is Alice?"}]
    served = render_go(commands["template"], chat, system=commands["system"])
    assert served == render([{"role": "system", "content": system_prompt()}, *chat], add_generation_prompt=True)


def test_system_prompt_states_the_runtime_contract():
    prompt = system_prompt()
    for needle in ('{"toolCalls":[{"name":"search_memory","arguments":{"query":"..."}}]}', "[msg:<id>]",
                   '"uncertain"', "get_messages(ids)", "get_fact(fact_id)", "get_profile()", "update_fact",
                   "delete_memory", "forget_chat", "update_profile", "OTP", "instructions"):
        assert needle in prompt, needle
    assert len(prompt) < 1400  # ~350 tokens: it precedes every eval prompt on a CPU model


def test_triple_quotes_are_refused(export_dir):
    with pytest.raises(ValueError, match='"""'):
        write_modelfile(export_dir, export_dir.parent / "Modelfile", 'say """hi"""')


def test_ollama_create_is_skipped_without_the_cli(export_dir):
    if shutil.which("ollama"):
        pytest.skip("Ollama is installed here")
    modelfile = export_dir.parent / "Modelfile"
    write_modelfile(export_dir, modelfile, "Be brief.")
    assert ollama_create(modelfile, "truffle-test") is False
