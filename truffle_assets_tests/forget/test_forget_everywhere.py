"""`truffle forget` on a real ingested corpus: a chat, a message and a fact are gone from DuckDB,
every retained LanceDB version, the published files, `truffle recall` and the API; a re-ingest of
the same exports does not bring them back; the memory after forgetting a chat and a message is
exactly the memory a clean ingest of the exports without them builds; a forget that crashed half-way
is finished by running it again.

The commands run through the CLI's own `main` in this process (none of these properties is about
processes: a real kill is proven by the crash-recovery tests), and the corpus is ingested once per
module; a test that changes it works on a copy of that data root.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from truffle_assets import faults
from truffle_assets.forget.inventory import left_in_index, left_in_store
from truffle_assets_tests.conftest import TWO_CHATS, newcomer_env, run_truffle, write_export
from truffle_assets_tests.fake_llm import FakeLLM

pytestmark = pytest.mark.slow  # a dozen whole ingests and forgets

PRIYA, RAHUL = "WhatsApp Chat with Priya.txt", "WhatsApp Chat with Rahul.txt"
PUNE = TWO_CHATS[PRIYA][1]
# the crash tests' two chats, with a secret in Rahul's
EXPORTS = {PRIYA: TWO_CHATS[PRIYA], RAHUL: [ln.replace("7am", "7am, my otp is 482913 lol") for ln in TWO_CHATS[RAHUL]]}


def _truffle(env: dict, *args: str, check: bool = True):
    proc = run_truffle(env, *args)
    if check:
        assert proc.returncode == 0, f"truffle {' '.join(args)}: {proc.returncode}\n{proc.stderr[-4000:]}"
    return proc


def _env(root: Path) -> dict:
    return {**newcomer_env(root), "TRUFFLE_ENTITY_KEYS": "1"}  # keys on: a forget must take them too


def _world(root: Path, exports: dict[str, list[str]], *ingest_args: str) -> dict:
    for name, lines in exports.items():
        write_export(root / "exports", name, lines)
    env = _env(root)
    _truffle(env, "ingest", *ingest_args)
    return env


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> Path:
    """A data root holding the exports, ingested once (not to be changed: tests copy it)."""
    root = tmp_path_factory.mktemp("ingested")
    _world(root, EXPORTS)
    return root


def _copy(src: Path, dest: Path) -> dict:
    """A private copy of the data root `src` at `dest`, and the env to run `truffle` on it. The
    published pointer names its LanceDB folder by absolute path: the copy's points at the copy."""
    shutil.copytree(src, dest, dirs_exist_ok=True)
    pointer = dest / "published" / "latest.json"
    pointer.write_text(json.dumps({**json.loads(pointer.read_text()), "root": str((dest / "index").resolve())}))
    return _env(dest)


def _db(root: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(root / "memory.duckdb"), read_only=True)


def _message_id(root: Path, text: str) -> str:
    with _db(root) as con:
        return con.execute("SELECT id FROM messages WHERE raw_text LIKE ?", [f"%{text}%"]).fetchall()[0][0]


def _recall_ids(env: dict, query: str) -> set[str]:
    pack = json.loads(_truffle(env, "recall", query, "--json").stdout)
    return {i.get("message_id") or i.get("id") for i in pack.get("items", pack.get("evidence", []))}


@pytest.fixture(scope="module")
def forgotten(ingested, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("forget")
    env = _copy(ingested, root)
    with _db(root) as con:
        rahul_ids = {r[0] for r in con.execute("SELECT id FROM messages WHERE chat_id = 'rahul'").fetchall()}
    pune = _message_id(root, "I live in Pune now")
    _truffle(env, "logging", "on")  # so `truffle recall` keeps its traces: they name the forgotten ids
    traced = _recall_ids(env, "where do I work, Infosys?") | _recall_ids(env, "I live in Pune")
    assert traced & (rahul_ids | {pune})
    with duckdb.connect(str(root / "runtime.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM retrieval_logs").fetchall()[0][0] == 2
    dry = json.loads(_truffle(env, "forget", "--chat", "rahul", "--dry-run", "--json").stdout)
    chat = json.loads(_truffle(env, "forget", "--chat", "rahul", "--json").stdout)
    msg = json.loads(_truffle(env, "forget", "--message", pune, "--json").stdout)
    return {"root": root, "env": env, "rahul_ids": rahul_ids, "pune": pune, "dry": dry, "chat": chat, "msg": msg}


def test_dry_run_lists_what_goes_and_changes_nothing(forgotten):
    dry, chat = forgotten["dry"], forgotten["chat"]
    assert dry["dry_run"] is True and dry["removed"]["messages"] == len(forgotten["rahul_ids"]) == 4
    assert chat["dry_run"] is False and chat["removed"]["messages"] == 4  # what the dry run announced
    assert chat["removed"]["episodes"] >= 1 and chat["removed"]["runtime_turns"] == 0
    assert chat["audit"].startswith("line ")


def test_nothing_of_them_is_left_in_any_store_or_version(forgotten):
    root = forgotten["root"]
    ids = forgotten["rahul_ids"] | {forgotten["pune"]}
    assert not any(left_in_store(root / "memory.duckdb", ids, set()).values())
    left = left_in_index(root / "index", ids)
    assert left["lance_versions_checked"] >= 2 and left["lance_raw_rows"] == left["lance_summary_rows"] == 0
    import lancedb

    pointer = json.loads((root / "published" / "latest.json").read_text())
    raw = lancedb.connect(str(root / "index")).open_table("raw_episodes_index", version=pointer["tables"]["raw_episodes_index"])
    keys = " ".join(k or "" for k in raw.to_arrow()["keys"].to_pylist()).split()
    assert "saturday" in keys and not {"pune", "infosys", "rahul"} & set(keys)  # Priya's keys stay, the forgotten go
    shown = "\n".join(raw.to_arrow()["shown_text"].to_pylist())  # the text the runtime shows, as written
    assert "meetup on Saturday?" in shown and not any(w in shown for w in ("Pune", "Infosys", "7am", "[OTP]"))
    with _db(root) as con:
        assert con.execute("SELECT count(*) FROM messages WHERE raw_text LIKE '%Infosys%' OR raw_text LIKE '%Pune%'"
                           ).fetchall()[0][0] == 0
        assert con.execute("SELECT count(*) FROM ingestion_jobs WHERE chat_id = 'rahul'").fetchall()[0][0] == 0
        assert con.execute("SELECT count(*) FROM messages WHERE chat_id = 'priya'").fetchall()[0][0] == 6
    published = (root / "published" / "facts.json").read_text() + (root / "published" / "profile.json").read_text()
    assert "Infosys" not in published and "Pune" not in published
    with duckdb.connect(str(root / "runtime.duckdb"), read_only=True) as con:  # the traces made before
        traces = con.execute("SELECT query, item_ids FROM retrieval_logs").fetchall()
    assert not any(set(items) & ids or "Infosys" in (q or "") or "Pune" in (q or "") for q, items in traces)
    assert not _recall_ids(forgotten["env"], "where do I work, Infosys?") & ids
    assert not _recall_ids(forgotten["env"], "I live in Pune") & ids


def _content(root: Path) -> dict[str, list]:
    """What the memory holds, row by row: every text and id. Salience and the LLM tiers it selects
    are left out: they are scored with whole-chat inputs as of when each day was built (see
    `memory.salience`), so a day the forget did not touch keeps its score."""
    queries = {
        "messages": "SELECT id, chat_id, day, raw_text FROM messages",
        "message_pii": "SELECT id, redacted_text FROM message_pii",
        "message_streams": "SELECT id, normalized_text FROM message_streams",
        "episodes": "SELECT id, message_ids, text FROM episodes",
        "summaries": "SELECT episode_id, text, evidence_message_ids FROM summaries WHERE tier = 'A'",
        "fact_claims": "SELECT message_id, predicate, value FROM fact_claims",
        "stage_days": "SELECT * FROM stage_days",
    }
    with _db(root) as con:
        out = {t: sorted(map(repr, con.execute(q).fetchall())) for t, q in queries.items()}
    pointer = json.loads((root / "published" / "latest.json").read_text())
    import lancedb

    raw = lancedb.connect(str(root / "index")).open_table("raw_episodes_index", version=pointer["tables"]["raw_episodes_index"])
    # keys (entities, answer tags) ride in the message's row: a forgotten line takes its keys along
    out["lance_raw"] = sorted(map(repr, raw.to_arrow().select(["message_id", "passage", "keys", "shown_text"]).to_pylist()))
    return out


def test_truffle_ask_no_longer_sees_them(forgotten):
    """The answer path (graph, budgets, privacy guard) over the republished memory, with a real
    OpenAI-compatible test server as the model: it cites whatever message ids its prompt holds."""
    ids = forgotten["rahul_ids"] | {forgotten["pune"]}
    with FakeLLM() as llm:
        env = {**forgotten["env"], "TRUFFLE_LLM_BASE_URL": llm.base_url}
        for question in ("Where do I work? Infosys?", "Do I live in Pune?"):
            out = _truffle(env, "ask", question, "--json").stdout
            answer = json.loads(out)
            assert answer["answer"] and answer["trace"]["steps"]
            assert not any(i in out for i in ids), question  # not in the context, the citations or the trace
            assert not {c if isinstance(c, str) else c.get("message_id") for c in answer["citations"]} & ids
        assert llm.requests >= 2 and not any(i in json.dumps(llm.bodies) for i in ids)


def test_the_memory_is_what_a_clean_ingest_without_them_builds(forgotten, tmp_path):
    without = {PRIYA: [ln for ln in EXPORTS[PRIYA] if ln != PUNE]}
    _world(tmp_path, without, "--user", "Arjun")  # one chat alone does not say who the user is
    mine, clean = _content(forgotten["root"]), _content(tmp_path)
    assert mine["messages"] and mine["lance_raw"]
    assert {t: rows for t, rows in mine.items() if rows != clean[t]} == {}


def test_a_reingest_does_not_bring_them_back_until_unforgotten(forgotten):
    root, env = forgotten["root"], forgotten["env"]
    report = json.loads(_truffle(env, "ingest", "--json").stdout)
    assert all(c["status"] == "up to date" for c in report["chats"].values())
    _truffle(env, "ingest", "--full")
    with _db(root) as con:
        assert con.execute("SELECT count(*) FROM messages WHERE chat_id = 'rahul' OR id = ?",
                           [forgotten["pune"]]).fetchall()[0][0] == 0
    listed = json.loads(_truffle(env, "forget", "--list", "--json").stdout)
    assert len(listed) == 2 and all(t["done"] for t in listed)
    assert "Pune" not in _truffle(env, "forget", "--list").stdout  # ids and kinds, never the text


def test_forget_is_audited_and_shows_in_dagster(forgotten):
    env = forgotten["env"]
    assert _truffle(env, "audit", "verify", "--registry", str(forgotten["root"] / "models" / "registry")).returncode == 0
    log = (forgotten["root"] / "models" / "registry" / "audit.log").read_text()
    assert log.count('"event":"forget"') == 2 and "Pune" not in log and "Infosys" not in log
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        runs = instance.get_run_records(dg.RunsFilter(job_name="forget_memory"))
        assert len(runs) == 2 and all(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        rebuilt = instance.get_run_records(dg.RunsFilter(tags={"truffle/forget": forgotten["chat"]["tombstone"]}))
        assert len(rebuilt) >= 2  # the chain runs it caused, and its own


def test_forgetting_a_fact(forgotten):
    root, env = forgotten["root"], forgotten["env"]
    facts = json.loads((root / "published" / "facts.json").read_text())["facts"]
    birthday = next(f for f in facts if "birthday" in (f["predicate"] + f["fact_text"]).lower())
    out = json.loads(_truffle(env, "forget", "--fact", birthday["fact_id"], "--json").stdout)
    assert out["removed"]["facts"] == 1
    assert out["selection"]["facts"] == [{"fact_id": birthday["fact_id"], "text": birthday["fact_text"]}]
    after = json.loads((root / "published" / "facts.json").read_text())["facts"]
    assert birthday["fact_id"] not in {f["fact_id"] for f in after} and len(after) == len(facts) - 1
    assert birthday["fact_id"] not in (root / "published" / "profile.json").read_text()
    with _db(root) as con:  # the message that stated it stays: only the fact was taken back
        assert con.execute("SELECT count(*) FROM messages WHERE raw_text LIKE '%birthday is on 21 April%'"
                           ).fetchall()[0][0] == 1
    _truffle(env, "ingest", "--full")
    assert birthday["fact_id"] not in {f["fact_id"] for f in json.loads((root / "published" / "facts.json").read_text())["facts"]}


def test_unknown_ids_and_bad_requests_are_refused(forgotten):
    env = forgotten["env"]
    for args, why in ((("--message", "nope"), "no message"), (("--before", "last week"), "YYYY-MM-DD"),
                      (("--contains", "a"), "at least 3")):
        proc = _truffle(env, "forget", *args, check=False)
        assert proc.returncode == 2 and why in proc.stderr


def test_a_forget_crashed_half_way_is_finished_by_running_it_again(ingested, tmp_path):
    env = _copy(ingested, tmp_path)
    target = _message_id(tmp_path, "I work at Infosys")
    # crashed after the rebuilt index days are written, before they are published and old versions go
    with faults.armed("memory_index:lance_written"), pytest.raises(faults.Crash):
        _truffle(env, "forget", "--message", target)
    with _db(tmp_path) as con:
        assert con.execute("SELECT count(*) FROM messages WHERE id = ?", [target]).fetchall()[0][0] == 0
    assert left_in_index(tmp_path / "index", {target})["lance_raw_rows"] > 0  # old versions still hold it
    assert not all(t["done"] for t in json.loads(_truffle(env, "forget", "--list", "--json").stdout))
    _truffle(env, "forget", "--message", target)
    assert not any(left_in_store(tmp_path / "memory.duckdb", {target}, set()).values())
    left = left_in_index(tmp_path / "index", {target})
    assert left["lance_raw_rows"] == left["lance_summary_rows"] == 0
    assert all(t["done"] for t in json.loads(_truffle(env, "forget", "--list", "--json").stdout))


def test_a_reexport_without_a_day_removes_it_everywhere(ingested, tmp_path):
    env = _copy(ingested, tmp_path)
    with _db(tmp_path) as con:
        gone = {r[0] for r in con.execute("SELECT id FROM messages WHERE chat_id = 'rahul' AND day = '2024-03-03'"
                                          ).fetchall()}
    assert len(gone) == 2
    # the person deleted 3 March in WhatsApp and exported the chat again
    write_export(tmp_path / "exports", RAHUL, [ln for ln in EXPORTS[RAHUL] if not ln.startswith("[03/03/2024")])
    _truffle(env, "ingest")
    assert not any(left_in_store(tmp_path / "memory.duckdb", gone, set()).values())
    left = left_in_index(tmp_path / "index", gone)
    assert left["lance_raw_rows"] == left["lance_summary_rows"] == 0 and left["lance_versions_checked"] >= 2
    with _db(tmp_path) as con:
        assert con.execute("SELECT count(*) FROM messages WHERE chat_id = 'rahul'").fetchall()[0][0] == 2
