"""The chat runtime's own store of turns, prompt content and ratings (`feedback.turns`).

The runtime writes it; the Dagster feedback assets and the training harness read it. It lives
here, not under `training/`, so serving never depends on the fine-tuning code.
"""
