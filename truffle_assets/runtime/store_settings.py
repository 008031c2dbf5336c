"""What the runtime store keeps: the person's choice (`feedback.settings`), read on every use."""

from __future__ import annotations

import logging
from typing import Any

from truffle_assets.feedback.settings import FIELDS as KEEP_FIELDS, LoggingSettings, SettingsError, save
from truffle_assets.runtime.model_lease import ModelLease

log = logging.getLogger(__name__)


class StoreSettings:
    """The store's choices for the config `models` serves with: saved in the store, so every process
    on it follows; this process's own overrides are config fields (`RuntimeConfig.keeping`)."""

    def __init__(self, models: ModelLease) -> None:
        self._models = models

    def keeping(self) -> LoggingSettings:
        """What the store keeps right now; an unreadable saved choice keeps nothing (and says why in the log)."""
        try:
            return self._models.config.keeping()[0]
        except SettingsError as exc:
            log.warning("keeping nothing: %s", exc)
            return LoggingSettings()

    def save(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Save the person's choice in the store (every process on it follows) and drop this process's
        own overrides of what changed, so the saved choice is what applies here too."""
        saved = save(self._models.config.store_dir, changes)
        self._models.update(**{k: None for k in changes if k in KEEP_FIELDS})
        return saved
