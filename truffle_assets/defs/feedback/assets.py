"""Feedback stage: the chat runtime's transcripts and ratings, seen by Dagster one day at a time.

The runtime owns its store (append-only JSON lines per day, never locked by a run); these assets
read a day of it, account for every line, check that no secret reached a stored answer, and feed
the training datasets through lineage.
"""

from datetime import date

import dagster as dg

from truffle_assets.defs.resources import ModelsResource
from truffle_assets.pii import SECRET_TYPES, redact_text
from truffle_assets.feedback.turns import read_store

# the runtime started writing transcripts long after the chats began: its own, shorter calendar
runtime_days = dg.DailyPartitionsDefinition(start_date="2025-01-01", end_offset=1)
FEEDBACK = {"group_name": "feedback", "partitions_def": runtime_days}


def _day(context: dg.AssetExecutionContext) -> date:
    return date.fromisoformat(context.partition_key)


@dg.asset(
    **FEEDBACK,
    kinds={"jsonl"},
    check_specs=[dg.AssetCheckSpec("no_secrets_in_answers", asset="transcripts", description=(
        "No stored answer holds a secret-shaped value (card, OTP, password, account number …): the "
        "runtime scrubs answers, and this catches any that slipped through before they reach training."))],
    description="One day of chat turns from the runtime store: metadata (model, template version, prompt "
                "hash, retrieval ids, tokens, latency) and, where the content toggle was on, the redacted content.",
)
def transcripts(context: dg.AssetExecutionContext, models: ModelsResource) -> dg.MaterializeResult:
    day = _day(context)
    read = read_store(models.runtime_dir, since=day, until=day)
    turns = read.turns
    leaks = [(t.turn_id, sorted(redact_text(t.answer).types)) for t in turns
             if t.answer and set(redact_text(t.answer).types) & SECRET_TYPES]
    models_used = sorted({str(t.meta.get("model")) for t in turns})
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(turns),
            "dagster/uri": f"file://{models.runtime_dir}/turns/{day}.jsonl",
            "with_content": sum(t.has_content for t in turns),
            "rerolls": sum(t.reroll_of is not None for t in turns),
            "torn_lines": len(read.torn_lines),
            "models": dg.MetadataValue.json(models_used),
        },
        check_results=[dg.AssetCheckResult(check_name="no_secrets_in_answers", passed=not leaks,
                                           metadata={"turns": dg.MetadataValue.json(leaks[:20])})],
    )


@dg.asset(
    **FEEDBACK,
    kinds={"jsonl"},
    description="Ratings given on one day (thumbs up/down, notes, changes of mind) for turns of any day.",
)
def feedback(context: dg.AssetExecutionContext, models: ModelsResource) -> dg.MaterializeResult:
    day = _day(context)
    read = read_store(models.runtime_dir)  # a rating can be for a turn from any earlier day
    given = [(t, f) for t in read.turns for f in t.feedback if str(f.ts or "")[:10] == day.isoformat()]
    ratings = [f.rating for _, f in given]
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(given),
        "dagster/uri": f"file://{models.runtime_dir}/feedback/{day}.jsonl",
        "thumbs_up": ratings.count(1),
        "thumbs_down": ratings.count(-1),
        "changed_minds": sum(len(t.feedback) > 1 for t, _ in given),
        "with_note": sum(bool(f.note) for _, f in given),
    })
