"""The chat format the runtime serves and the training harness teaches, defined once.

`template` (the ChatML template and its serving/Ollama forms), `prompt` (the system prompt, the
context block with retrieved messages, a prompt's message list) and `toolcalls` (the tool-call
envelope). Both `runtime/` and `training/` import from here; neither imports the other.
"""
