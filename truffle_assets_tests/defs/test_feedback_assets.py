"""Runtime transcripts and ratings as daily assets, and the sensor that re-exports the datasets."""

import json

import dagster as dg

from truffle_assets.defs.feedback.assets import feedback, transcripts
from truffle_assets.defs.feedback.sensors import rated_turns_sensor
from truffle_assets.defs.resources import ModelsResource
from truffle_assets.feedback.turns import append_feedback, write_turn

DAY = "2026-11-20"
SYSTEM = {"role": "system", "content": "memory"}


def _turn(store, tid, answer, rating=None, **kw):
    write_turn(store, tid, "c1", messages=[SYSTEM, {"role": "user", "content": f"question {tid}"}], answer=answer,
               ts=f"{DAY}T09:00:00+00:00", model="qwen", **kw)
    if rating is not None:
        append_feedback(store, tid, rating, ts=f"{DAY}T09:05:00+00:00")


def test_transcripts_day_accounts_turns_and_catches_a_leaked_secret(tmp_path):
    store = tmp_path / "runtime"
    _turn(store, "a", "Your sister is Asha [msg:0a1b2c3d4e5f].", rating=1)
    _turn(store, "b", "The card is 4111 1111 1111 1111", rating=-1)
    _turn(store, "c", "Retry answer", reroll_of="b")
    models = ModelsResource(runtime_dir=str(store))
    result = dg.materialize([transcripts, feedback], partition_key=DAY, resources={"models": models},
                            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    meta = {k: v.value for k, v in result.asset_materializations_for_node("transcripts")[0].metadata.items()}
    assert meta["dagster/row_count"] == 3 and meta["with_content"] == 3 and meta["rerolls"] == 1
    check = result.get_asset_check_evaluations()[0]
    assert not check.passed and check.metadata["turns"].value == [["b", ["card"]]]
    fb = {k: v.value for k, v in result.asset_materializations_for_node("feedback")[0].metadata.items()}
    assert (fb["thumbs_up"], fb["thumbs_down"]) == (1, 1)


def test_sensor_requests_exports_after_enough_new_ratings(tmp_path):
    store = tmp_path / "runtime"
    models = ModelsResource(runtime_dir=str(store), min_new_rated_turns=2)
    instance = dg.DagsterInstance.ephemeral()
    _turn(store, "a", "first", rating=1)

    def tick(cursor=None):
        ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"models": models})
        return rated_turns_sensor(ctx), ctx

    result, _ = tick()
    assert not result.run_requests and "1 new rated turns" in result.skip_reason.skip_message

    _turn(store, "b", "second", rating=-1)
    result, _ = tick()
    keys = {(tuple(k.to_user_string() for k in r.asset_selection), r.partition_key) for r in result.run_requests}
    assert keys == {(("transcripts", "feedback"), DAY), (("sft_dataset", "dpo_dataset"), None)}
    cursor = json.loads(result.cursor)
    assert cursor["rated"] == 2

    again, _ = tick(result.cursor)  # nothing new: no second export
    assert not again.run_requests
