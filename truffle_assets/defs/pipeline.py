"""The chat × month chain, in order: what a sensor request or `truffle ingest` materializes per range."""

from truffle_assets.defs.index.assets import memory_index
from truffle_assets.defs.ingest.assets import messages
from truffle_assets.defs.memory.assets import episodes, facts, message_pii, message_streams, profile, summaries

CHAT_MONTH_ASSETS = [messages, message_pii, message_streams, episodes, summaries, facts, memory_index]
CHAT_MONTH_KEYS = [a.key for a in CHAT_MONTH_ASSETS]
WHOLE_MEMORY_ASSETS = [profile]  # unpartitioned: follows every ranged run
