"""facts_eval's LLM tier C path on a real llama.cpp server (the tiny random GGUF: its answers are noise,
so this checks the plumbing: every episode is asked, answers are cached, offline facts survive the merge)."""

from __future__ import annotations

from benchmarks import facts_eval
from truffle_assets_tests.model_fixtures import shared_tiny_gguf


def test_tier_c_asks_each_episode_and_keeps_the_offline_facts(tmp_path_factory, tmp_path, capsys):
    gguf = shared_tiny_gguf(tmp_path_factory)
    offline = facts_eval.main(["--dev"])["dev"]
    capsys.readouterr()

    out = facts_eval.main(["--dev", "--llm", "add", "--gguf", str(gguf), "--llm-limit", "2", "--work", str(tmp_path)])
    printed = capsys.readouterr().out
    assert "+ LLM tier C over 2 episodes" in printed
    assert out["llm"]["calls"] + out["llm"]["cache_hits"] >= 2
    assert out["dev"].recall >= offline.recall  # tier C claims are added, never replace the offline tier's
    assert any((tmp_path / "llm-cache").rglob("*")) or out["llm"]["failures"] >= 2

    again = facts_eval.main(["--dev", "--llm", "add", "--gguf", str(gguf), "--llm-limit", "2", "--work", str(tmp_path)])
    assert again["dev"].recall == out["dev"].recall
