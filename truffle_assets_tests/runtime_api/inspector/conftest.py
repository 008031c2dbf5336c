"""A small real memory for the memory inspector: two hand-written chats through the real chain.

The user states where they live, later that they moved (so `lives_in` Pune is superseded by
Bangalore, Graphiti-style), a favourite food and a sister; the message saying they moved also
carries their wifi password, and a family chat carries an OTP. `build_memory(root)` writes the
exports under `root/exports` and materializes messages … memory_index for each chat's months, then
the profile, into the data-root layout (`memory.duckdb`, `index/`, `published/`, `cache/`) on real
DuckDB, LanceDB and a temporary Dagster instance; offline (no LLM: tier-A summaries, rule facts).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import dagster as dg
import pytest

from truffle_assets.defs.memory.assets import profile
from truffle_assets.defs.partitions import add_chat_months, chat_range_tags
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS
from truffle_assets.runtime import ChatService, RuntimeConfig
from truffle_assets_tests.defs.conftest import make_resources
from truffle_assets_tests.fake_llm import closed_port_url

USER = "Arjun Mehta"
PASSWORD = "Xk9mQ2vLp7wz"
OTP = "482913"
SECRETS = (PASSWORD, OTP)

# chat id -> export file, rows (dd/mm/yy, HH:MM, author, text) in Android's format
CHATS: dict[str, tuple[str, list[tuple[str, str, str, str]]]] = {
    "priya-sharma": ("WhatsApp Chat with Priya Sharma.txt", [
        ("10/01/23", "09:00", "Priya Sharma", "Hey, where are you staying these days?"),
        ("10/01/23", "09:02", USER, "I live in Pune now, near Koregaon Park."),
        ("10/01/23", "09:05", "Priya Sharma", "Nice! Let's plan a trek to Sinhagad fort."),
        ("10/01/23", "09:07", USER, "My favourite food is misal pav, we should get some after the trek."),
        ("12/01/23", "18:30", USER, "Booked the Sinhagad trek for Sunday, 6 am start."),
        ("12/01/23", "18:32", "Priya Sharma", "Great, I'll bring the snacks."),
        ("05/03/23", "20:10", USER, f"Big news: I moved to Bangalore last week. The new flat wifi password is {PASSWORD}"),
        ("05/03/23", "20:12", "Priya Sharma", "Wow, congrats on the move! How is the new place?"),
        ("05/03/23", "20:15", USER, "Loving it, the flat in Indiranagar has a huge balcony."),
    ]),
    "mehta-family": ("WhatsApp Chat with Mehta Family.txt", [
        ("14/02/23", "08:00", "Mummy", "Beta, did the bank send the code?"),
        ("14/02/23", "08:01", USER, f"Yes Mummy, the OTP is {OTP}"),
        ("14/02/23", "08:03", "Mummy", "Ok I have paid the electricity bill."),
        ("20/02/23", "19:45", USER, "Ananya is my younger sister, she starts college in June."),
        ("20/02/23", "19:47", "Papa", "Dinner at home on Saturday, everyone come."),
    ]),
}


def _month(ddmmyy: str) -> date:
    d, m, y = ddmmyy.split("/")
    return date(2000 + int(y), int(m), 1)


def build_memory(root: Path) -> Path:
    """Exports → the whole chain → published memory under `root`; returns `root`."""
    exports = root / "exports"
    exports.mkdir(parents=True)
    for name, rows in CHATS.values():
        (exports / name).write_text("".join(f"{d}, {t} - {a}: {x}\n" for d, t, a, x in rows), encoding="utf-8")
    with dg.DagsterInstance.ephemeral() as instance:
        add_chat_months(instance, {chat: [_month(d) for d, *_ in rows] for chat, (_, rows) in CHATS.items()})
        res = make_resources(root, exports)
        for chat, (_, rows) in CHATS.items():
            months = sorted({_month(d) for d, *_ in rows})
            run = dg.materialize(CHAT_MONTH_ASSETS, instance=instance, resources=res,
                                 tags=chat_range_tags(chat, months[0], months[-1]))
            assert run.success, chat
        assert dg.materialize([profile], instance=instance, resources=res).success
    return root


def inspector_service(root: Path, store_dir: Path | None = None) -> ChatService:
    """A ChatService over `root`'s published memory; the inspector never calls the chat model."""
    return ChatService(RuntimeConfig(published_dir=root / "published", store_dir=store_dir or root / "runtime",
                                     registry_dir=root / "models" / "registry",
                                     endpoint={"base_url": closed_port_url(), "model": "fake-model"}))


@pytest.fixture(scope="package")
def inspected(tmp_path_factory) -> Path:
    """The data root of the inspector's memory, built once for this package (read only: tests that
    forget build their own)."""
    return build_memory(tmp_path_factory.mktemp("inspected"))


@pytest.fixture
def service(inspected, tmp_path) -> ChatService:
    return inspector_service(inspected, tmp_path / "runtime")
