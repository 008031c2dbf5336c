"""One template, five renderers: training, serving and Ollama must see the same text and tokens."""

import os
import re

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from truffle_assets.chat_format.template import (  # noqa: E402
    STOP_TOKENS,
    go_template,
    render,
    render_go,
    serving_template,
    stop_tokens,
    template_version,
    training_template,
    _render_jinja2,
)
from truffle_assets.training.tiny import build_tokenizer  # noqa: E402

TOOL_CALL = '{"toolCalls":[{"name":"search_memory","arguments":{"query":"Alice arrivée mardi"}}]}'
CONVO = [
    {"role": "system", "content": "You are Truffle.\nRéponds en français si on te parle français."},
    {"role": "user", "content": "Quand est-ce qu'Alice arrive ? 🚆\nElle a dit mardi."},
    {"role": "assistant", "content": TOOL_CALL},
    {"role": "user", "content": "Et l'heure exacte ?"},
    {"role": "assistant", "content": "Mardi à 9h30, à la gare [msg:abc123]. ✅"},
]


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer([render(CONVO)] * 3 + ["Bonjour, ça va ? 12345 [msg:def456]"], vocab_size=512)


def _llama_cpp(tokenizer, gen):
    formatter_module = pytest.importorskip(
        "llama_cpp.llama_chat_format", reason="llama-cpp-python is not installed: no llama.cpp parity case"
    )
    formatter = formatter_module.Jinja2ChatFormatter(
        template=serving_template(), eos_token="<|im_end|>", bos_token="", add_generation_prompt=gen
    )
    return formatter(messages=CONVO).prompt


RENDERERS = {
    "apply_chat_template": lambda tok, gen: tok.apply_chat_template(CONVO, tokenize=False, add_generation_prompt=gen),
    "render_serving": lambda tok, gen: render(CONVO, gen, template=serving_template()),
    "render_go": lambda tok, gen: render_go(go_template(), CONVO, add_generation_prompt=gen),
    # transformers' jinja environment rebuilt from jinja2 alone (render's fallback)
    "jinja2_only": lambda tok, gen: _render_jinja2(training_template(), CONVO, gen),
    "llama_cpp": _llama_cpp,
}


@pytest.mark.parametrize("gen", [False, True], ids=["closed", "generation_prompt"])
def test_training_rendering_is_chatml(gen):
    text = render(CONVO, gen)
    assert text.startswith("<|im_start|>system\nYou are Truffle.\nRéponds")
    assert f"<|im_start|>assistant\n{TOOL_CALL}<|im_end|>\n<|im_start|>user\nEt l'heure" in text
    assert text.endswith("<|im_start|>assistant\n" if gen else "[msg:abc123]. ✅<|im_end|>\n")
    assert text.count("<|im_start|>") == 5 + gen and text.count("<|im_end|>") == 5


@pytest.mark.parametrize("gen", [False, True], ids=["closed", "generation_prompt"])
@pytest.mark.parametrize("renderer", list(RENDERERS))
def test_every_renderer_gives_the_training_text_and_tokens(tokenizer, renderer, gen):
    expected = render(CONVO, gen)
    text = RENDERERS[renderer](tokenizer, gen)
    assert text == expected
    expected_ids = tokenizer.encode(expected, add_special_tokens=False)
    assert tokenizer.encode(text, add_special_tokens=False) == expected_ids
    assert expected_ids.count(tokenizer.convert_tokens_to_ids("<|im_start|>")) == 5 + gen
    if renderer == "apply_chat_template":
        out = tokenizer.apply_chat_template(CONVO, tokenize=True, return_dict=True, add_generation_prompt=gen)
        assert list(out["input_ids"]) == expected_ids


def test_assistant_mask_covers_assistant_content_and_im_end_only(tokenizer):
    out = tokenizer.apply_chat_template(CONVO, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    ids, mask = list(out["input_ids"]), list(out["assistant_masks"])
    spans, current = [], []
    for token, m in zip(ids, mask):
        if m:
            current.append(token)
        elif current:
            spans.append(current)
            current = []
    spans += [current] if current else []
    decoded = [tokenizer.decode(span, skip_special_tokens=False) for span in spans]
    assert decoded == [TOOL_CALL + "<|im_end|>", CONVO[4]["content"] + "<|im_end|>"]
    unmasked = tokenizer.decode([t for t, m in zip(ids, mask) if not m], skip_special_tokens=False)
    assert "Alice arrive" in unmasked and "toolCalls" not in unmasked and "[msg:abc123]" not in unmasked


def test_serving_template_has_no_generation_tags_and_a_stable_version():
    tag = re.compile(r"\{%-?\s*(end)?generation\s*-?%\}")
    assert len(tag.findall(training_template())) == 2
    assert not tag.search(serving_template())
    assert len(template_version()) == 12 and template_version() == template_version()


def test_go_template_is_generated_from_the_jinja_source():
    assert STOP_TOKENS == stop_tokens() == ["<|im_end|>", "<|im_start|>"]
    assert "<|im_start|>" in go_template() and "{{ .Content }}" in go_template()
    other = training_template().replace("<|im_start|>", "<start_of_turn>").replace("<|im_end|>", "<end_of_turn>")
    go = go_template(other)
    assert go != go_template() and "<|im" not in go and "<start_of_turn>" in go
    assert stop_tokens(other) == ["<end_of_turn>", "<start_of_turn>"]
    for gen in (False, True):
        assert render_go(go, CONVO, add_generation_prompt=gen) == render(CONVO, gen, template=other)
    tool = [{"role": "tool", "content": "[]"}]  # a role without a branch of its own
    assert render_go(go_template(), tool, False) == render(tool) == "<|im_start|>tool\n[]<|im_end|>\n"


def test_templates_a_go_range_cannot_express_are_refused():
    default_system = (
        "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nYou are helpful.<|im_end|>\n{% endif %}"
        + training_template()
    )
    with pytest.raises(ValueError, match="per-message"):
        go_template(default_system)
    with pytest.raises(ValueError, match="verbatim"):
        go_template(training_template().replace("message['content']", "message['content'] | trim"))


def test_render_go_trims_whitespace_as_go_does():
    # expected strings are what Go 1.19's text/template printed for these templates and messages
    msgs = [{"role": "system", "content": "  sys \n"}, {"role": "user", "content": "hi"},
            {"role": "tool", "content": "x"}]
    t1 = ('a  {{- range .Messages -}}  \n [{{ .Role }}]\t{{- if eq .Role "user" -}} U {{- else if eq .Role "tool" }}'
          ' T {{ else }} E {{ end -}}\n\n{{ .Content -}} | {{- end }}  tail\n ')
    assert render_go(t1, msgs) == "a[system] E   sys \n|[user]Uhi|[tool] T x|  tail\n "
    t2 = '{{- range .Messages }}\r\n\t{{ if eq .Role "tool" }}q{{ end }}{{ .Content }}  {{- end -}}\n\n end'
    assert render_go(t2, msgs) == "\r\n\t  sys \n\r\n\thi\r\n\tqxend"
    with pytest.raises(ValueError, match="unsupported"):
        render_go("{{ range .Messages }}{{ .Content | len }}{{ end }}", msgs)


def test_render_go_mirrors_ollama_request_handling():
    # Ollama merges consecutive same-role messages and prepends the Modelfile SYSTEM when the
    # request has no system message of its own
    msgs = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    text = render_go(go_template(), msgs, system="S")
    assert text == render([{"role": "system", "content": "S"}, {"role": "user", "content": "a\n\nb"}], True)
    assert render_go(go_template(), CONVO, system="S") == render(CONVO, True)
