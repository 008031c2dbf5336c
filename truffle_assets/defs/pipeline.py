"""The chat × month chain, in order, and the jobs its runs belong to: what a sensor request or
`truffle ingest` materializes per range, named so the Runs page tells them apart."""

import dagster as dg

from truffle_assets.defs.index.assets import memory_index
from truffle_assets.defs.ingest.assets import messages
from truffle_assets.defs.memory.assets import episodes, facts, message_pii, message_streams, profile, summaries

CHAT_MONTH_ASSETS = [messages, message_pii, message_streams, episodes, summaries, facts, memory_index]
CHAT_MONTH_KEYS = [a.key for a in CHAT_MONTH_ASSETS]
WHOLE_MEMORY_ASSETS = [profile]  # unpartitioned: follows every ranged run

chat_memory = dg.define_asset_job(
    "chat_memory", selection=CHAT_MONTH_KEYS,
    description="One chat's months, messages through the memory index; a run covers one chat's range of "
                "months (tags truffle/chat and truffle/months say which).")
memory_profile = dg.define_asset_job(
    "memory_profile", selection=[a.key for a in WHOLE_MEMORY_ASSETS],
    description="The profile rebuilt from every chat's facts, after the chats' runs.")
