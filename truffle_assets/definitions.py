"""The one entry point Dagster loads (workspace.yaml points here)."""

import dagster as dg

from truffle_assets.defs.eval.assets import eval_gate, eval_report, model_card
from truffle_assets.defs.feedback.assets import feedback, transcripts
from truffle_assets.defs.feedback.jobs import runtime_retention, runtime_retention_schedule
from truffle_assets.defs.feedback.sensors import rated_turns_sensor
from truffle_assets.defs.forget.jobs import forget_memory
from truffle_assets.defs.index.assets import memory_index
from truffle_assets.defs.ingest.assets import messages, whatsapp_exports
from truffle_assets.defs.ingest.sensors import exports_sensor
from truffle_assets.defs.memory.assets import episodes, facts, message_pii, message_streams, profile, summaries
from truffle_assets.defs.pipeline import chat_memory, memory_profile
from truffle_assets.defs.registry.jobs import promote_model, rollback_model
from truffle_assets.defs.resources import (
    DuckDBStore, ExportsResource, IndexResource, LLMResource, ModelsResource, PublishedResource, env_var_if_set,
)
from truffle_assets.defs.training.assets import dpo_dataset, gguf_model, lora_adapter, merged_model, modelfile, sft_dataset
from truffle_assets.registry import KEY_ENV

TRAINING_ASSETS = [sft_dataset, dpo_dataset, lora_adapter, merged_model, gguf_model, modelfile, eval_report, model_card]
TRAINING_CHAIN = [*TRAINING_ASSETS, eval_gate]  # what `truffle train` and the tests materialize
EVAL_CHAIN = [eval_report, eval_gate, model_card]  # what `truffle eval` re-materializes on a finished run

defs = dg.Definitions(
    assets=[whatsapp_exports, messages, message_pii, message_streams, episodes, summaries, facts, profile, memory_index,
            transcripts, feedback, *TRAINING_ASSETS],
    asset_checks=[eval_gate],
    jobs=[
        chat_memory, memory_profile,  # what the exports sensor and `truffle ingest` run
        dg.define_asset_job("train_candidate", selection=TRAINING_ASSETS,
                            description="Datasets → LoRA → merged → GGUF → Modelfile → eval report → model card."),
        dg.define_asset_job("evaluate_candidate", selection=[eval_report, model_card],
                            description="Re-evaluate the candidate's GGUF (e.g. at other temperatures) and re-check "
                                        "its gate; `truffle eval RUN` makes RUN the candidate first."),
        promote_model, rollback_model,
        runtime_retention,
        forget_memory,  # the last step of `truffle forget` / POST /api/forget, one run per forget
    ],
    schedules=[runtime_retention_schedule],
    sensors=[
        exports_sensor,
        rated_turns_sensor,
        # profile.json follows `facts` on its own (eager automation); declared so it runs by default
        dg.AutomationConditionSensorDefinition(
            "memory_automation", target=[profile], default_status=dg.DefaultSensorStatus.RUNNING,
        ),
    ],
    resources={
        "exports": ExportsResource(),
        "duckdb": DuckDBStore(),
        # secrets as dg.EnvVar, bound only when set: with none the build runs offline
        "llm": LLMResource.from_env(),
        "index": IndexResource(),
        "published": PublishedResource(),
        "models": ModelsResource(audit_key=env_var_if_set(KEY_ENV)),
    },
)
