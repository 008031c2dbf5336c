"""BM25 candidates are the same in every process: a tie group the engine may cut at its limit is left out."""

import lancedb
import pyarrow as pa
from lancedb.index import FTS

from truffle_assets.retrieval.search import _search


def table(tmp_path, rows: list[tuple[str, str]]):
    db = lancedb.connect(str(tmp_path / "db"))
    tbl = db.create_table("t", pa.table({"message_id": [m for m, _ in rows], "passage": [p for _, p in rows]}))
    tbl.create_index("passage", config=FTS(with_position=False))
    return tbl


def test_a_tie_group_cut_by_the_limit_is_left_out_and_the_rest_ordered_by_score_then_id(tmp_path):
    strong = [(f"s{i}", f"goa goa goa trip number {i}") for i in range(3)]
    tied = [(f"t{i:03d}", "goa was fun") for i in range(60)]  # one score: any 20 of them would do
    tbl = table(tmp_path, tied + strong)
    got = _search(tbl, "goa", 10, None, ["message_id"], fts_col="passage")
    assert [r["message_id"] for r in got] == ["s0", "s1", "s2"]
    assert [r["_score"] for r in got] == sorted((r["_score"] for r in got), reverse=True)


def test_a_tie_group_the_fetch_holds_whole_is_cut_by_id(tmp_path):
    tbl = table(tmp_path, [(f"t{i:03d}", "goa was fun") for i in range(12, 0, -1)] + [("s0", "goa goa goa trip")])
    got = [r["message_id"] for r in _search(tbl, "goa", 10, None, ["message_id"], fts_col="passage")]
    assert got == ["s0"] + [f"t{i:03d}" for i in range(1, 10)]
