"""Memory stage: PII flags, Rosetta streams, salient episodes, tiered summaries, facts, profile.

Every partitioned asset covers chat × month partitions. Within the run's months it redoes only
the days whose inputs changed (`truffle_assets.ingest.stage_days`): it reads them from DuckDB, computes
with a plain module, and replaces exactly those days together with their digests in one
transaction, so re-materializing is idempotent. Only redacted text flows past `message_pii`.
"""

import time
from collections import Counter
from datetime import date, datetime, timedelta

import dagster as dg
import polars as pl

from truffle_assets.faults import crash_point
from truffle_assets import store
from truffle_assets.ingest import stage_days
from truffle_assets.files import write_json_atomic
from truffle_assets.defs.ingest.assets import messages
from truffle_assets.defs.chat_months import PARTITIONED, ensure_tables, month_work, store_metadata
from truffle_assets.defs.metadata import png_md, uri
from truffle_assets.defs.resources import DuckDBStore, ExportsResource, LLMResource, PublishedResource
from truffle_assets.memory.episodes import build_episodes
from truffle_assets.ingest.tombstones import drop_facts
from truffle_assets.memory.facts.coherence import contradictions
from truffle_assets.memory.facts.consolidation import consolidate, one_value_conflicts
from truffle_assets.memory.facts.extraction import EXTRACTOR_VERSION, extract_claims
from truffle_assets.memory.tables import TABLES
from truffle_assets.pii import redact_messages
from truffle_assets.pii.redact import redacted_authors
from truffle_assets.memory.profile import (
    CLOSEST_PEOPLE_SQL,
    PEOPLE_MAX,
    build_profile,
    closest_people,
    FACTS_FORMAT,
    estimate_tokens,
    published_facts,
    write_profile,
)
from truffle_assets.memory.rosetta import english_tier, normalize_messages
from truffle_assets.memory.salience import salience_histogram_png, score_episodes, term_document_counts
from truffle_assets.memory.summaries import rollups as build_rollups
from truffle_assets.memory.summaries import summarize_episodes
from truffle_assets.memory.llm_facts import extract_facts, plan_llm_work, route


class StreamsConfig(dg.Config):
    english_tier: bool = False  # concise English via the LLM for non-English lines (cached by content hash)


class EpisodesConfig(dg.Config):
    gap_minutes: int = 30
    max_tokens: int = 1000
    recency_half_life_days: float = 180.0


class SummariesConfig(dg.Config):
    tier_b: float = 0.45  # salience from which an episode gets an LLM summary
    tier_c: float = 0.70  # ... and a richer summary with fact extraction


@dg.asset(
    **PARTITIONED,
    deps=[messages],
    kinds={"duckdb", "polars"},
    code_version="1",
    check_specs=[dg.AssetCheckSpec("every_message_flagged", asset="message_pii",
                                   description="Each message of the partition has exactly one PII row.")],
    description=(
        "Per message: PII/secret types (cards, accounts, IFSC, UPI, OTPs, Aadhaar, PAN, passwords, PINs, "
        "emails, phones), a sensitivity level and `redacted_text` with typed placeholders such as [CARD]. "
        "Downstream assets, embeddings and LLM prompts only ever see the redacted text."
    ),
)
def message_pii(context: dg.AssetExecutionContext, duckdb: DuckDBStore) -> dg.MaterializeResult:
    types: Counter = Counter()
    levels: Counter = Counter()
    written = missing = 0
    with duckdb.connect() as con:
        ensure_tables(con, "message_pii")
        parts, work = month_work(context, con, "message_pii", ["messages"])
        for chat, w in work.items():
            if not w.todo:  # every day of its months is up to date
                continue
            msgs = store.read_days(con, "messages", chat, w.days, "id, chat_id, day, ts, raw_text", "ts, line_start")
            pii = redact_messages(msgs)
            with store.transaction(con):
                store.replace_partitions(con, "message_pii", chat, w.days, pii)
                stage_days.record(con, "message_pii", chat, w)
            written += pii.height
            missing += msgs.height - pii.height
            types.update(t for ts in pii["pii_types"].to_list() for t in ts)
            levels.update(pii["sensitivity"].to_list())
        meta = store_metadata(context, con, "message_pii", parts, work, written, duckdb)
    crash_point("message_pii")  # written, not yet recorded by Dagster
    return dg.MaterializeResult(
        metadata={
            **meta,
            "pii_types": dg.MetadataValue.json(dict(types)),  # counts only: values never leave DuckDB
            "sensitivity": dg.MetadataValue.json(dict(levels)),
        },
        check_results=[dg.AssetCheckResult(check_name="every_message_flagged", passed=missing == 0,
                                           metadata={"messages_without_row": missing})],
    )


@dg.asset(
    **PARTITIONED,
    deps=[message_pii],
    kinds={"duckdb", "polars"},
    code_version="1",
    description=(
        "Rosetta dual stream: `normalized_text` for retrieval (NFKC, invisible marks removed, emoji as "
        "words) with script and language tags and code-mixing, beside the byte-exact raw text in "
        "`messages`. With an LLM configured and `english_tier` on, non-English lines also get concise English."
    ),
)
def message_streams(context: dg.AssetExecutionContext, config: StreamsConfig, duckdb: DuckDBStore,
                    llm: LLMResource) -> dg.MaterializeResult:
    langs: Counter = Counter()
    scripts: Counter = Counter()
    written = mixed = 0
    client = llm.client if config.english_tier else None
    english = client.model if client is not None and client.enabled else "off"
    with duckdb.connect() as con:
        ensure_tables(con, "message_streams")
        parts, work = month_work(context, con, "message_streams", ["message_pii"], f"english={english}")
        for chat, w in work.items():
            if not w.todo:  # every day of its months is up to date
                continue
            pii = store.read_days(con, "message_pii", chat, w.days, "id, chat_id, day, redacted_text")
            streams = normalize_messages(pii)
            if client is not None and client.enabled:
                streams = english_tier(streams, client.to_english)
            with store.transaction(con):
                store.replace_partitions(con, "message_streams", chat, w.days, streams)
                stage_days.record(con, "message_streams", chat, w)
            written += streams.height
            mixed += streams["code_mixed"].sum()
            langs.update(streams["lang"].to_list())
            scripts.update(s for ss in streams["scripts"].to_list() for s in ss)
        meta = store_metadata(context, con, "message_streams", parts, work, written, duckdb)
    meta = {
        **meta,
        "languages": dg.MetadataValue.json(dict(langs.most_common())),
        "scripts": dg.MetadataValue.json(dict(scripts.most_common())),
        "code_mixed_share": round(mixed / written, 4) if written else 0.0,
    }
    if client is not None:
        meta["llm"] = dg.MetadataValue.json(client.stats.as_dict())
    crash_point("message_streams")  # written, not yet recorded by Dagster
    return dg.MaterializeResult(metadata=meta)


@dg.asset(
    **PARTITIONED,
    deps=[message_streams],
    kinds={"duckdb", "polars"},
    code_version="1",
    description=(
        "Conversation chunks split at gaps and bounded by a token budget, with a stable content hash "
        "and a salience score whose components (recency, user-centricity, repetition, entity/event "
        "density, sentiment/urgency) are stored beside it."
    ),
)
def episodes(context: dg.AssetExecutionContext, config: EpisodesConfig, duckdb: DuckDBStore) -> dg.MaterializeResult:
    frames: list[pl.DataFrame] = []
    unchanged = 0
    with duckdb.connect() as con:
        ensure_tables(con, "episodes")
        parts, work = month_work(context, con, "episodes", ["message_streams"], config.model_dump_json())
        for chat, w in work.items():
            if not w.todo:  # every day of its months is up to date
                continue
            days = w.days
            msgs = store.read_frame(con, """
                SELECT m.id, m.chat_id, m.day, m.ts, m.author, m.is_user, m.kind, m.line_start, s.normalized_text
                FROM messages m JOIN message_streams s USING (id)
                WHERE m.chat_id = ? AND list_contains(?::DATE[], m.day)""", [chat, days])
            msgs = msgs.with_columns(pl.col("author").replace(redacted_authors(msgs)))
            eps = build_episodes(msgs, gap_minutes=config.gap_minutes, max_tokens=config.max_tokens)
            whole = store.read_frame(con, """
                SELECT m.id, m.chat_id, m.is_user, s.normalized_text FROM messages m JOIN message_streams s USING (id)
                WHERE m.chat_id = ?""", [chat])
            # Whole-chat inputs keep a day's score independent of which days share its run.
            latest = con.execute("SELECT max(ts) FROM messages WHERE chat_id = ?", [chat]).fetchall()[0][0]
            users = [r[0] for r in con.execute(
                "SELECT DISTINCT author FROM messages WHERE chat_id = ? AND is_user AND author IS NOT NULL", [chat]).fetchall()]
            eps = score_episodes(eps, msgs, {chat: latest}, term_document_counts(whole),
                                 half_life_days=config.recency_half_life_days, user_names=users)
            before = set(store.read_days(con, "episodes", chat, days, "id")["id"].to_list())
            unchanged += len(before & set(eps["id"].to_list()))
            with store.transaction(con):
                store.replace_partitions(con, "episodes", chat, days, eps)
                stage_days.record(con, "episodes", chat, w)
            frames.append(eps)
        eps = pl.concat(frames) if frames else pl.DataFrame(schema=TABLES["episodes"])
        meta = store_metadata(context, con, "episodes", parts, work, eps.height, duckdb)
    if eps.height:
        comps = ["salience", "recency", "user_centricity", "repetition", "density", "urgency"]
        meta.update({
            "unchanged_episodes": unchanged,
            "mean_components": dg.MetadataValue.json({c: round(float(eps[c].mean()), 4) for c in comps}),
            "tokens_per_episode_p50": int(eps["n_tokens"].median()),
            "salience_histogram": png_md(salience_histogram_png(eps["salience"].to_list()), "salience histogram"),
            "top_episodes": dg.MetadataValue.md(_top_episodes(eps)),
        })
    crash_point("episodes")  # written, not yet recorded by Dagster
    return dg.MaterializeResult(metadata=meta)


def _top_episodes(eps: pl.DataFrame, n: int = 5) -> str:
    lines = ["| day | salience | recency | user | repetition | density | urgency | first line |", "|---|---|---|---|---|---|---|---|"]
    for r in eps.sort("salience", descending=True).head(n).iter_rows(named=True):
        first = r["text"].split("\n", 1)[0][:70].replace("|", "\\|")
        lines.append(f"| {r['day']} | {r['salience']:.2f} | {r['recency']:.2f} | {r['user_centricity']:.2f} | "
                     f"{r['repetition']:.2f} | {r['density']:.2f} | {r['urgency']:.2f} | {first} |")
    return "\n".join(lines)


@dg.asset(
    **{**PARTITIONED, "pool": "llm"},  # not "duckdb": the store is taken only around the LLM calls
    deps=[episodes],
    kinds={"duckdb", "openai"},
    code_version="1",
    retry_policy=dg.RetryPolicy(max_retries=2, delay=5, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS),
    description=(
        "Tiered episode summaries with evidence message ids: tier A extractive for every episode (no LLM); "
        "tier B (medium salience) and C (high salience, with fact extraction) through the LLM resource, "
        "falling back to the extractive text when the endpoint is off, down or returns garbage. With an "
        "endpoint, every other episode holding a candidate statement about the user is also read for facts "
        "(its candidate lines, batched to the model's context, cached per episode). The run's LLM work "
        "(calls, tokens, cost at the configured price) is logged when it starts and kept as `llm_plan`; "
        "the resource's `max_tokens_per_run` / `max_cost_usd` stop it. Also daily and weekly roll-ups per "
        "chat (table `rollups`)."
    ),
)
def summaries(context: dg.AssetExecutionContext, config: SummariesConfig, duckdb: DuckDBStore,
              llm: LLMResource) -> dg.MaterializeResult:
    client = llm.client
    tiers: Counter = Counter()
    written = candidates = 0
    t0 = time.perf_counter()
    salt = f"{config.model_dump_json()}:{client.model + ':routed' if client.enabled else 'extractive'}"
    # Two short visits to the store around the LLM calls, which hold no lock: outside the `duckdb`
    # pool, one chat's summaries overlap another chat's DuckDB steps (multiprocess executor).
    with duckdb.connect() as con:
        ensure_tables(con, "summaries", "rollups", "llm_fact_candidates")
        parts, work = month_work(context, con, "summaries", ["episodes"], salt)
        inputs = {chat: store.read_days(con, "episodes", chat, w.days) for chat, w in work.items() if w.todo}
        texts = {chat: store.read_frame(con, """
            SELECT m.id, m.is_user, s.normalized_text FROM messages m JOIN message_streams s USING (id)
            WHERE m.chat_id = ? AND list_contains(?::DATE[], m.day)""", [chat, work[chat].days])
            for chat in inputs} if client.enabled else {}
    llm_client = client if client.enabled else None
    plan = fact_reads = None
    if llm_client is not None and inputs:
        plan = plan_llm_work(pl.concat(list(inputs.values())), pl.concat(list(texts.values())), client.config,
                             config.tier_b, config.tier_c, client.config.context_tokens)
        context.log.info(f"LLM work for this run ({client.model}): {plan.describe(client.config)}")
        if plan.over_budget(client.config):
            context.log.warning(f"the run's LLM budget ({client.config.max_tokens_per_run:,} tokens, "
                                f"${client.config.max_cost_usd:g}) ends the LLM work before it is done: the rest "
                                "falls back to the extractive tier")
        fact_reads = Counter()
    results = {}
    for chat, eps in inputs.items():
        summ, claims = summarize_episodes(eps, llm_client, config.tier_b, config.tier_c)
        if llm_client is not None:  # the episodes no tier-C answer covered, routed by the candidate detector
            answered = set(summ.filter((pl.col("tier") == "C") & (pl.col("source") == "llm"))["episode_id"])
            routed, stats = extract_facts(route(eps, texts[chat], skip=answered), llm_client,
                                          client.config.context_tokens)
            claims = pl.concat([claims, routed]).unique("id", keep="first", maintain_order=True)
            fact_reads.update(stats)
        results[chat] = (summ, claims)
    with duckdb.connect() as con:
        for chat, (summ, claims) in results.items():
            w, days = work[chat], work[chat].days
            if claims.height:  # exact timestamps from the store, not the transcript's HH:MM
                ts = store.read_frame(con, "SELECT id AS message_id, ts AS exact FROM messages WHERE list_contains(?, id)",
                                      [claims["message_id"].to_list()])
                claims = claims.join(ts, on="message_id", how="left").with_columns(
                    pl.coalesce("exact", "ts").alias("ts")).drop("exact")
            with store.transaction(con):
                store.replace_partitions(con, "summaries", chat, days, summ)
                store.replace_partitions(con, "llm_fact_candidates", chat, days, claims)
                _replace_rollups(con, chat, days)
                stage_days.record(con, "summaries", chat, w)
            written += summ.height
            candidates += claims.height
            tiers.update(f"{t}/{s}" for t, s in zip(summ["tier"].to_list(), summ["source"].to_list()))
        meta = store_metadata(context, con, "summaries", parts, work, written, duckdb)
    crash_point("summaries")  # written, not yet recorded by Dagster
    return dg.MaterializeResult(metadata={
        **meta,
        "tiers": dg.MetadataValue.json(dict(sorted(tiers.items()))),
        "llm_enabled": client.enabled,
        "llm_model": client.model if client.enabled else "",
        "llm": dg.MetadataValue.json(client.stats.as_dict()),
        **({"llm_plan": dg.MetadataValue.json(plan.as_dict()),
            "llm_fact_reads": dg.MetadataValue.json(dict(fact_reads))} if plan is not None else {}),
        "llm_fact_candidates": candidates,
        "seconds": round(time.perf_counter() - t0, 2),
    })


def _replace_rollups(con, chat: str, days: list[date]) -> None:
    """Day roll-ups for `days`; week roll-ups for every ISO week they touch, over the whole week."""
    weeks = sorted({d - timedelta(days=d.weekday()) for d in days})
    span = [w + timedelta(days=i) for w in weeks for i in range(7)]
    summ = store.read_days(con, "summaries", chat, span)
    eps = store.read_days(con, "episodes", chat, span)
    roll = build_rollups(summ, eps)
    keep = pl.col("period_start").is_in(days) & (pl.col("period") == "day") | \
        pl.col("period_start").is_in(weeks) & (pl.col("period") == "week")
    roll = roll.filter(keep)
    con.execute("DELETE FROM rollups WHERE chat_id = ? AND ((period = 'day' AND list_contains(?::DATE[], period_start))"
                " OR (period = 'week' AND list_contains(?::DATE[], period_start)))", [chat, days, weeks])
    store.insert_frame(con, "rollups", roll)


@dg.asset(
    **PARTITIONED,
    deps=[message_streams, summaries],
    kinds={"duckdb", "polars"},
    code_version="2",  # the parse-based reader
    check_specs=[dg.AssetCheckSpec(
        "facts_have_evidence", asset="facts", blocking=True,
        description="Every fact cites at least one evidence message id, and every cited id exists in `messages`.",
    ), dg.AssetCheckSpec(
        "one_value_at_a_time", asset="facts",
        description="A one-at-a-time predicate (employer, home city, diet, partner, ...) has at most one current "
                    "value per person: two are a conflict the store could not settle, not two truths.",
    ), dg.AssetCheckSpec(
        "one_role_per_person", asset="facts",
        description="No reader's claims from one message give one person roles nobody holds at once (partner, "
                    "mother, brother, pet, ...). Such claims stay in `fact_claims` and make no fact; this lists them.",
    )],
    description=(
        "Evidence-backed facts (identity, preference, relationship, event, goal). Rule claims from the "
        "user's messages and LLM claims (tier C and the routed fact reads) are stored per partition in "
        "`fact_claims`; table `facts` is consolidated from all claims: contradictions are kept with "
        "`valid_to` and `superseded_by`."
    ),
)
def facts(context: dg.AssetExecutionContext, duckdb: DuckDBStore, exports: ExportsResource) -> dg.MaterializeResult:
    written = 0
    with duckdb.connect() as con:
        ensure_tables(con, "fact_claims", "facts", "llm_fact_candidates")
        # the extractor's version salts the day digests: a new reader re-reads every day once
        parts, work = month_work(context, con, "facts", ["message_streams", "summaries"], EXTRACTOR_VERSION)
        for chat, w in work.items():
            if not w.todo:  # every day of its months is up to date
                continue
            days = w.days
            # everyone's messages: the reader takes only the user's, kin address needs to know who else writes
            msgs = store.read_frame(con, """
                SELECT m.id, m.chat_id, m.day, m.ts, m.author, m.is_user, s.normalized_text
                FROM messages m JOIN message_streams s USING (id)
                WHERE m.chat_id = ? AND m.author IS NOT NULL AND list_contains(?::DATE[], m.day)""", [chat, days])
            claims = pl.concat([extract_claims(msgs), store.read_days(con, "llm_fact_candidates", chat, days)],
                               how="vertical_relaxed")
            with store.transaction(con):
                store.replace_partitions(con, "fact_claims", chat, days, claims)
                stage_days.record(con, "facts", chat, w)
            written += claims.height
        all_claims = store.read_frame(con, "SELECT * FROM fact_claims")
        consolidated = drop_facts(consolidate(all_claims), exports.tombstones().fact_ids())  # the user forgot them
        with store.transaction(con):
            con.execute("DELETE FROM facts")
            store.insert_frame(con, "facts", consolidated)
        no_evidence = con.execute("SELECT count(*) FROM facts WHERE coalesce(len(evidence_message_ids), 0) = 0").fetchall()[0][0]
        dangling = con.execute("""
            SELECT count(*) FROM (SELECT unnest(evidence_message_ids) AS mid FROM facts) e
            LEFT JOIN messages m ON m.id = e.mid WHERE m.id IS NULL""").fetchall()[0][0]
        meta = store_metadata(context, con, "fact_claims", parts, work, written, duckdb)
    current = consolidated.filter(pl.col("valid_to").is_null()) if consolidated.height else consolidated
    conflicts = one_value_conflicts(consolidated)
    self_contradicting = contradictions(all_claims)
    crash_point("facts")  # written, not yet recorded by Dagster
    return dg.MaterializeResult(
        metadata={
            **meta,
            "facts": consolidated.height,
            "current_facts": current.height,
            "superseded_facts": consolidated.height - current.height,
            "by_category": dg.MetadataValue.json(dict(Counter(consolidated["category"].to_list()))) if consolidated.height else {},
            "sources": dg.MetadataValue.json(dict(Counter(all_claims["source"].to_list()))) if all_claims.height else {},
        },
        check_results=[dg.AssetCheckResult(
            check_name="facts_have_evidence", passed=no_evidence == 0 and dangling == 0,
            metadata={"facts_without_evidence": no_evidence, "dangling_evidence_ids": dangling},
        ), dg.AssetCheckResult(
            check_name="one_value_at_a_time", passed=not conflicts, severity=dg.AssetCheckSeverity.WARN,
            metadata={"conflicts": len(conflicts), "examples": dg.MetadataValue.json(conflicts[:10])},
        ), dg.AssetCheckResult(
            check_name="one_role_per_person", passed=not self_contradicting, severity=dg.AssetCheckSeverity.WARN,
            metadata={"contradictions": len(self_contradicting),
                      "claims_set_aside": sum(len(c["claim_ids"]) for c in self_contradicting),
                      "examples": dg.MetadataValue.json(self_contradicting[:10])},
        )],
    )


class ProfileConfig(dg.Config):
    max_tokens: int = 5000
    min_confidence: float = 0.6


@dg.asset(
    deps=[facts],
    group_name="memory",
    kinds={"json"},
    pool="duckdb",
    code_version="1",
    automation_condition=dg.AutomationCondition.eager(),
    description=(
        "profile.json: a compact snapshot (≤ 5K tokens) of the user's current, confident facts with their "
        "ids and evidence counts, written atomically with a version the chat runtime reads; facts.json holds "
        "every fact with its validity and evidence ids, for the runtime's memory inspector."
    ),
)
def profile(config: ProfileConfig, duckdb: DuckDBStore, exports: ExportsResource,
            published: PublishedResource) -> dg.MaterializeResult:
    with duckdb.connect() as con:
        ensure_tables(con, "facts")
        all_facts = store.read_frame(con, "SELECT * FROM facts")
        user = exports.user_name or store.stored_user(con)  # an explicit name still wins
        inputs = stage_days.stage_digest(con, "facts")
        people = closest_people(con.execute(CLOSEST_PEOPLE_SQL, [PEOPLE_MAX]).fetchall())
    snapshot = build_profile(all_facts, user, datetime.now().replace(microsecond=0),
                             max_tokens=config.max_tokens, min_confidence=config.min_confidence, people=people)
    path = published.path("profile.json")
    written = write_profile(path, snapshot)
    # every fact, current and superseded, for the runtime's memory inspector (it never opens DuckDB)
    write_json_atomic(published.path("facts.json"), {
        "format": FACTS_FORMAT,
        "version": written.get("version"),
        "inputs": inputs,  # `truffle ingest` re-runs the profile when the facts moved past this
        "facts": published_facts(all_facts),  # timestamps in ISO 8601, as write_json_atomic writes them
    })
    crash_point("profile")  # written, not yet recorded by Dagster
    return dg.MaterializeResult(metadata={
        "dagster/uri": uri(path),
        "version": written.get("version"),
        "content_hash": written.get("content_hash", ""),
        "tokens_estimate": estimate_tokens(written),
        "facts_in_profile": written.get("n_facts", 0),
        "preview": dg.MetadataValue.json(written),
        "facts_published": all_facts.height,
    })
