"""The Definitions Dagster loads (workspace.yaml → truffle_assets.definitions): loadable, with the expected lineage."""

from __future__ import annotations

import dagster as dg

from truffle_assets.defs.partitions import chat_months
from truffle_assets.definitions import defs

K = dg.AssetKey

PARENTS = {
    "messages": {"whatsapp_exports"},
    "message_pii": {"messages"},
    "message_streams": {"message_pii"},
    "episodes": {"message_streams"},
    "summaries": {"episodes"},
    "facts": {"message_streams", "summaries"},
    "memory_index": {"message_pii", "message_streams", "episodes", "summaries"},  # message_pii: shown_text
    "profile": {"facts"},
    # training and eval: not partitioned, one candidate run folder per training run
    "transcripts": set(),
    "feedback": set(),
    "sft_dataset": {"transcripts", "feedback"},
    "dpo_dataset": {"transcripts", "feedback"},
    "lora_adapter": {"sft_dataset", "dpo_dataset"},
    "merged_model": {"lora_adapter"},
    "gguf_model": {"merged_model"},
    "modelfile": {"gguf_model"},
    "eval_report": {"gguf_model", "modelfile"},
    "model_card": {"lora_adapter", "gguf_model", "eval_report"},
}
TRAINING = ("sft_dataset", "dpo_dataset", "lora_adapter", "merged_model", "gguf_model", "modelfile")


def test_definitions_validate_loadable():
    dg.Definitions.validate_loadable(defs)


def test_asset_graph_lineage_and_partitions():
    graph = defs.resolve_asset_graph()
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == set(PARENTS) | {"whatsapp_exports"}
    for child, parents in PARENTS.items():
        assert {p.to_user_string() for p in graph.get(K(child)).parent_keys} == parents, child
    for key in ("messages", "message_pii", "message_streams", "episodes", "summaries", "facts", "memory_index"):
        node = graph.get(K(key))
        assert node.partitions_def == chat_months, key
        assert node.backfill_policy == dg.BackfillPolicy.single_run(), key  # one run per chat range
    assert graph.get(K("profile")).partitions_def is None
    assert graph.get(K("profile")).automation_condition is not None
    assert graph.get(K("memory_index")).group_name == "index"
    assert {graph.get(K(k)).group_name for k in ("message_pii", "episodes", "facts", "profile")} == {"memory"}
    assert {graph.get(K(k)).group_name for k in TRAINING} == {"training"}
    assert {graph.get(K(k)).group_name for k in ("eval_report", "model_card")} == {"eval"}
    assert all(graph.get(K(k)).partitions_def is None for k in (*TRAINING, "eval_report", "model_card"))
    # a change to the trainer or exporter code must invalidate what was built with it
    assert all(graph.get(K(k)).code_version for k in ("lora_adapter", "merged_model", "gguf_model", "eval_report"))


def test_blocking_checks_and_sensors():
    graph = defs.resolve_asset_graph()
    specs = [graph.get_check_spec(k) for k in graph.asset_check_keys]
    checks = {(c.asset_key.to_user_string(), c.name): c for c in specs}
    assert ("facts", "facts_have_evidence") in checks and checks[("facts", "facts_have_evidence")].blocking
    assert ("message_pii", "every_message_flagged") in checks
    assert {s.name for s in defs.sensors} == {"exports_sensor", "memory_automation", "rated_turns_sensor"}
    assert set(defs.resources) == {"exports", "duckdb", "llm", "index", "published", "models"}
    for asset, name in (("sft_dataset", "sft_rows_valid"), ("dpo_dataset", "dpo_rows_valid"),
                        ("gguf_model", "gguf_answers_tool_call")):
        assert checks[(asset, name)].blocking, name  # bad rows or a broken GGUF stop the chain
    assert not checks[("eval_report", "eval_gate")].blocking  # promotion enforces it; the card still gets written
    assert {j.name for j in defs.jobs} >= {"train_candidate", "evaluate_candidate", "promote_model", "rollback_model"}


def test_loading_the_definitions_leaves_the_heavy_libraries_to_the_steps_that_use_them():
    # every step process of a multiprocess run (how the daemon runs what the UI launches) and every CLI
    # command loads the code location: spaCy (with the torch thinc brings) and LanceDB cost ~3.5 s of it,
    # and only the facts and index steps need them
    import subprocess
    import sys

    code = ("import sys, truffle_assets.definitions; "
            "print(sorted(m for m in ('spacy', 'lancedb', 'torch', 'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout
