"""The memory index on an object-store URI: the chain writes LanceDB tables to S3, readers follow latest.json.

The S3 server is moto's (a real HTTP S3 API in-process, installed with the dev extra); LanceDB
reaches it with the standard AWS_* variables, exactly as it would reach a real bucket.
"""

from __future__ import annotations

import json
import socket
from datetime import date

import dagster as dg
import pytest

from truffle_assets.defs.partitions import chat_range_tags
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS
from truffle_assets.defs.resources import IndexResource
from truffle_assets.retrieval import retrieve
from truffle_assets_tests.conftest import write_export
from truffle_assets_tests.defs.conftest import make_resources, register
from truffle_assets_tests.defs.test_memory_sensor import ERIN

moto_server = pytest.importorskip("moto.server", reason="moto (dev extra) provides the local S3 server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def bucket(monkeypatch):
    import boto3

    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {"AWS_ENDPOINT": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
           "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT"])
    s3.create_bucket(Bucket="truffle")
    yield s3
    server.stop()


def test_chain_writes_the_index_to_s3_and_retrieval_reads_it(workdir, bucket, _no_llm_env):
    write_export(workdir / "exports", "WhatsApp Chat with Erin.txt", ERIN)
    res = {**make_resources(workdir, workdir / "exports"), "index": IndexResource(root="s3://truffle/memory/index")}
    instance = dg.DagsterInstance.ephemeral()
    register(instance, "erin", date(2023, 1, 1), date(2023, 2, 1))
    run = dg.materialize(CHAT_MONTH_ASSETS, instance=instance, resources=res,
                         tags=chat_range_tags("erin", date(2023, 1, 1), date(2023, 2, 1)))
    assert run.success
    meta = run.asset_materializations_for_node("memory_index")[0].metadata
    assert meta["dagster/uri"].value == "s3://truffle/memory/index"
    keys = [o["Key"] for o in bucket.list_objects_v2(Bucket="truffle", Prefix="memory/index/")["Contents"]]
    assert any(k.startswith("memory/index/raw_episodes_index.lance/") for k in keys)
    assert any("/_versions/" in k for k in keys)
    assert not list(workdir.glob("s3*")) and not (workdir / "index").exists()  # nothing landed on local disk
    pointer = workdir / "published" / "latest.json"
    doc = json.loads(pointer.read_text())
    assert doc["root"] == "s3://truffle/memory/index" and doc["rows"]["raw_episodes_index"] == 9
    pack = retrieve("when do we fly to Lisbon?", pointer, k=3)
    assert pack.items and "Lisbon" in " ".join(i.text for i in pack.items)
