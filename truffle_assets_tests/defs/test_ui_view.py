"""What the Dagster UI shows after a real ingest, read through the webserver's own GraphQL schema.

A code server loads `truffle_assets.definitions` as `dagster dev` does; the instance is the one
`truffle ingest` recorded its runs in. The partition counts and per-partition metadata asserted
here are what the asset graph, the partition matrix and a partition's page display.
"""

from __future__ import annotations

import shutil

import dagster as dg
import pytest

from truffle_assets import paths
from truffle_assets.defs.pipeline import CHAT_MONTH_KEYS
from truffle_assets_tests.conftest import write_export
from truffle_assets_tests.defs.test_memory_sensor import ERIN

QUERY = """
query ($keys: [AssetKeyInput!]) {
  assetNodes(assetKeys: $keys) {
    assetKey { path }
    partitionStats { numMaterialized numPartitions numFailed }
    assetMaterializations(partitions: ["erin|2023-02", "erin|2023-04"]) {
      partition
      metadataEntries { label ... on IntMetadataEntry { intValue } ... on TextMetadataEntry { text }
                        ... on MarkdownMetadataEntry { mdStr } ... on UrlMetadataEntry { url } }
    }
  }
}
"""


@pytest.fixture
def ingested(tmp_path, monkeypatch):
    """A data root with Erin's export (Jan, Feb, Apr 2023: March silent) after a real `truffle ingest`."""
    from truffle_assets.defs.ingest.runner import ingest_all

    monkeypatch.setenv("TRUFFLE_HOME", str(tmp_path))  # the code server's resources point here too
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for k in ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    write_export(paths.exports_dir(), "WhatsApp Chat with Erin.txt", ERIN)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(paths.PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        report = ingest_all(paths.exports_dir(), paths.store_path(), user_name="Arjun", instance=instance)
        assert report["failed"] == 0
        yield instance, report


def test_partition_matrix_and_metadata_are_true(ingested):
    from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql

    instance, report = ingested
    assert [(r["first_month"], r["last_month"]) for r in report["chats"]["erin"]["runs"]] == [("2023-01", "2023-04")]
    keys = [{"path": k.path} for k in CHAT_MONTH_KEYS]
    with define_out_of_process_context(str(paths.PROJECT_ROOT / "truffle_assets" / "definitions.py"), "defs",
                                       instance) as ctx:
        result = execute_dagster_graphql(ctx, QUERY, {"keys": keys})
    assert not result.errors, result.errors
    nodes = {n["assetKey"]["path"][0]: n for n in result.data["assetNodes"]}
    assert set(nodes) == {k.path[0] for k in CHAT_MONTH_KEYS}
    for name, node in nodes.items():
        stats = node["partitionStats"]
        # the three months with messages are the partitions, all materialized: silent March has none
        assert (stats["numMaterialized"], stats["numPartitions"], stats["numFailed"]) == (3, 3, 0), name
        meta = {m["partition"]: {e["label"]: e for e in m["metadataEntries"]} for m in node["assetMaterializations"]}
        assert set(meta) == {"erin|2023-02", "erin|2023-04"}, name
        assert meta["erin|2023-02"]["month"]["text"] == "2023-02" and meta["erin|2023-04"]["month"]["text"] == "2023-04"
        assert meta["erin|2023-02"]["days_redone"]["intValue"] == 3 and meta["erin|2023-04"]["days_redone"]["intValue"] == 1
        uri = meta["erin|2023-02"]["dagster/uri"]
        assert (uri.get("text") or uri.get("url")).startswith("file:///"), name  # a well-formed URI, not a bare path
    rows = {p: m["dagster/partition_row_count"]["intValue"] for p, m in
            ((m["partition"], {e["label"]: e for e in m["metadataEntries"]}) for m in nodes["messages"]["assetMaterializations"])}
    assert rows == {"erin|2023-02": 5, "erin|2023-04": 2}  # each partition's own rows, not the run's
    preview = {m["partition"]: {e["label"]: e for e in m["metadataEntries"]}["preview"]["mdStr"]
               for m in nodes["messages"]["assetMaterializations"]}
    assert "Italian place" in preview["erin|2023-02"] and "easter" not in preview["erin|2023-02"]
