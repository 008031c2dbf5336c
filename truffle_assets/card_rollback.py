"""The rollback section of a model card, written from the registry: the one rollback target
`truffle models` and `truffle rollback` use, so a card never names another."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from truffle_assets.files import to_the_second

CARD = "model_card.md"
ROLLBACK_HEADING = "## Rollback"


def rollback_lines(run_id: str, registry: Any | None) -> list[str]:
    """The rollback section, from the registry: the target `truffle rollback` restores when this run is
    active, or what promoting it would make the target when it is not."""
    lines = [ROLLBACK_HEADING]
    if registry is None:
        return lines + ["- `truffle models` names the rollback target: the model `truffle rollback` restores.", ""]
    active = registry.active()
    where = f"the registry at `{registry.root}`"
    if active is not None and active.run_id == run_id:
        target = registry.rollback_target()
        lines.append(f"- Active model of {where} since {to_the_second(active.promoted_at)}.")
        lines.append(f"- Rollback target: {target.run_id} (`truffle rollback` restores it; `truffle models` shows "
                     "the same)" if target else
                     "- Rollback target: none (no earlier model in this registry's history; `truffle rollback` "
                     "has nothing to restore)")
    elif active is not None:
        lines.append(f"- Not the active model when this card was written: {where} served {active.run_id}; "
                     f"promoting this run then would make {active.run_id} the rollback target.")
    else:
        lines.append(f"- Not the active model when this card was written: {where} served none; promoting this "
                     "run then would leave no rollback target.")
    return lines + ["- `truffle audit verify` checks the registry's log.", ""]


def refresh_rollback(run_dir: str | Path, registry: Any) -> bool:
    """Rewrite the rollback section of an existing card from the registry; False when there is no card."""
    path = Path(run_dir) / CARD
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    head, found, _ = text.partition(ROLLBACK_HEADING)
    body = (head if found else text.rstrip("\n") + "\n\n")
    path.write_text(body + "\n".join(rollback_lines(Path(run_dir).name, registry)), encoding="utf-8")
    return True
