"""LLM access: the OpenAI-compatible client with budgets and a breaker (`client`), the embedded
llama.cpp server and endpoint resolution (`server`), and which GGUF it serves (`gguf`)."""
