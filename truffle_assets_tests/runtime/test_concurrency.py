"""Chatting while a materialization rewrites the memory never errors: the runtime reads only
published files and immutable LanceDB versions, and writes only its own append-only store."""

import threading

import dagster as dg

from truffle_assets.defs.memory.assets import profile
from truffle_assets.defs.partitions import RECOMPUTE_TAG
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS
from truffle_assets.runtime import ChatService, RuntimeConfig
from truffle_assets_tests.defs.conftest import llm_resource, make_resources, range_tags, register
from truffle_assets_tests.runtime.conftest import KEEP_ALL


def test_chat_turns_succeed_while_the_chain_rematerializes(tmp_path, corpus, fake_llm, llm, qwen_tokens):
    root = tmp_path / "pipeline"
    instance = dg.DagsterInstance.ephemeral()
    register(instance)
    res = make_resources(root, corpus.exports, llm_resource(fake_llm.base_url, root / "cache" / "llm"))
    assert dg.materialize(CHAT_MONTH_ASSETS, instance=instance, resources=res, tags=range_tags()).success
    assert dg.materialize([profile], instance=instance, resources=res).success

    service = ChatService(RuntimeConfig(
        published_dir=root / "published", store_dir=tmp_path / "runtime", registry_dir=tmp_path / "registry",
        tokenizer=str(qwen_tokens.source), endpoint={"base_url": llm.base_url, "model": "fake-model", "timeout_s": 5.0},
        **KEEP_ALL))  # the store is written on every turn of the race
    question = [{"role": "user", "content": "What have Priya and I been planning lately?"}]
    service.ask(question)  # warm: embedder and tokenizer loaded before the race starts

    running, turns, errors = threading.Event(), [], []

    def chat() -> None:
        while running.is_set():
            try:
                turns.append(service.ask(question))
            except Exception as exc:  # the assertion below reports it
                errors.append(exc)

    running.set()
    chatter = threading.Thread(target=chat)
    chatter.start()
    try:
        # the whole chain again, every day redone: DuckDB delete-then-insert per day, LanceDB upserts,
        # latest.json republished
        rerun = dg.materialize(CHAT_MONTH_ASSETS, instance=instance, resources=res,
                               tags={**range_tags(), RECOMPUTE_TAG: "all"})
    finally:
        running.clear()
        chatter.join()
    assert rerun.success
    assert not errors, errors
    assert len(turns) >= 3
    for turn in turns:
        assert turn.answer and turn.citations
        assert turn.fallback is None, turn.trace.get("fallback_detail")
        assert "store_error" not in turn.trace
