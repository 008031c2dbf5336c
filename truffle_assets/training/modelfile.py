"""Ollama Modelfile for an exported GGUF: template, stop tokens and system prompt from one source."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from truffle_assets.chat_format.template import go_template, stop_tokens

NUM_CTX = 16384
# Qwen2.5-Instruct's own generation_config.json values
DEFAULT_SAMPLING = {"temperature": 0.7, "top_p": 0.8, "repeat_penalty": 1.05}


def write_modelfile(gguf_path: str | Path, out_path: str | Path, system_prompt: str,
                    params: dict | None = None) -> str:
    """Write the Modelfile next to (or near) the GGUF and return its text.

    FROM is relative to the Modelfile's folder, so the folder can be moved or copied whole.
    """
    gguf_path, out_path = Path(gguf_path), Path(out_path)
    rel = Path(os.path.relpath(gguf_path.resolve(), out_path.resolve().parent)).as_posix()
    template = go_template()
    for label, value in (("TEMPLATE", template), ("SYSTEM", system_prompt)):
        if '"""' in value:
            raise ValueError(f'{label} contains """, which ends an Ollama multiline string')
    lines = [f"FROM {rel if rel.startswith('.') else './' + rel}"]
    for key, value in {"num_ctx": NUM_CTX, **DEFAULT_SAMPLING, **(params or {})}.items():
        lines.append(f"PARAMETER {key} {value}")
    lines += [f'TEMPLATE """{template}"""', f'SYSTEM """{system_prompt}"""']
    lines += [f'PARAMETER stop "{tok}"' for tok in stop_tokens()]
    text = "\n".join(lines) + "\n"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(text, encoding="utf-8")
    return text


def ollama_create(modelfile_path: str | Path, name: str) -> bool:
    """`ollama create name -f Modelfile` when the CLI is installed; False when it is not."""
    exe = shutil.which("ollama")
    if exe is None:
        return False
    path = Path(modelfile_path).resolve()
    subprocess.run([exe, "create", name, "-f", str(path)], cwd=path.parent, check=True, timeout=1800)
    return True


# --- Ollama's Modelfile parser (parser/parser.go ParseFile), ported to check what we write --------

_COMMANDS = {"from", "license", "template", "system", "adapter", "draft", "renderer", "parser",
             "parameter", "requires"}


def _unquote(s: str) -> tuple[str, bool]:
    if s.startswith('"""'):
        return (s[3:-3], True) if len(s) >= 6 and s.endswith('"""') else ("", False)
    if s.startswith('"'):
        return (s[1:-1], True) if len(s) >= 2 and s.endswith('"') else ("", False)
    return s, True


def _step(r: str, state: str) -> tuple[str, str]:
    """Next state and the rune to keep ("" for none), as parseRuneForState."""
    space, newline = r in " \t", r in "\r\n"
    if state == "nil":
        return ("comment", "") if r == "#" else ("nil", "") if space or newline else ("name", r)
    if state == "name":
        if r.isascii() and r.isalpha():
            return "name", r
        if space:
            return "value", ""
    elif state == "value":
        return ("nil", r) if space or newline else ("value", r)
    elif state == "parameter":
        if r.isascii() and (r.isalnum() or r == "_"):
            return "parameter", r
        if space:
            return "value", ""
    elif state == "comment":
        return ("nil", "") if newline else ("comment", "")
    raise ValueError(f"unexpected {r!r} in Modelfile")


def parse_modelfile(text: str) -> list[tuple[str, str]]:
    """(command, args) pairs as `ollama create` reads them; FROM comes back as "model"."""
    commands: list[tuple[str, str]] = []
    state, buf, name = "nil", "", ""
    for r in text:
        nxt, keep = _step(r, state)
        if nxt != state:
            if state == "name":
                word = buf.lower()
                if word not in _COMMANDS:
                    raise ValueError(f"unknown Modelfile command {buf!r}")
                if word == "parameter":
                    nxt = "parameter"
                else:
                    name = "model" if word == "from" else word
            elif state == "parameter":
                name = buf
            elif state == "value":
                value, ok = _unquote(buf.strip())
                if not ok or r in " \t":  # inside quotes, or a space that does not end the value
                    buf += r
                    continue
                commands.append((name, value))
            buf, state = "", nxt
        if keep.isprintable():
            buf += keep
    if state == "value":
        value, ok = _unquote(buf.strip())
        if not ok:
            raise ValueError("unterminated string in Modelfile")
        commands.append((name, value))
    elif state not in ("nil", "comment"):
        raise ValueError("Modelfile ends mid-command")
    if not any(c == "model" for c, _ in commands):
        raise ValueError("Modelfile has no FROM")
    return commands
