"""Forgetting: tombstones that keep what the user took back out of every build, and the purge of
everything derived from it (`truffle forget`, `POST /api/forget`, the inspector's buttons)."""
