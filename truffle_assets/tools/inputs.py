"""The arguments of every memory tool: what a call may say, checked before anything runs.

Strict on purpose (`extra="forbid"`, `strict=True`): "5" is not an int and an unknown key is an
error, so a sloppy call never half-works. The same classes check the chat model's tool calls
(`chat_format.toolcalls`), the training pack's call rows and the MCP server's calls, so what the
model is trained to call is exactly what an agent sees.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, model_validator

MAX_AROUND = 10           # neighbours each side of a message (get_messages, /api/evidence)
MAX_GET_MESSAGES = 20     # messages per get_messages call; more ids are reported as truncated
MAX_SEARCH_K = 50
FORGET_KINDS = ("chat", "message", "fact", "before", "contains")


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _iso_day(v: str | None) -> str | None:
    if v is not None and (not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) or not _valid_date(v)):
        raise ValueError(f"expected a YYYY-MM-DD date, got {v!r}")
    return v


def _valid_date(v: str) -> bool:
    try:
        date.fromisoformat(v)
    except ValueError:
        return False
    return True


_DAY_SCHEMA = {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
Day = Annotated[str | None, AfterValidator(_iso_day), WithJsonSchema({"anyOf": [_DAY_SCHEMA, {"type": "null"}]})]
RequiredDay = Annotated[str, AfterValidator(_iso_day), WithJsonSchema(_DAY_SCHEMA)]


class SearchMemoryArgs(Args):
    query: str = Field(min_length=1, description="What to look for, in the user's words.")
    chat: str | None = Field(None, description="Only this chat (a chat id from list_chats).")
    since: Day = Field(None, description="Only messages on or after this day, YYYY-MM-DD.")
    until: Day = Field(None, description="Only messages on or before this day, YYYY-MM-DD.")
    k: int | None = Field(None, ge=1, le=MAX_SEARCH_K, description="How many messages to return (default 10).")

    @model_validator(mode="after")
    def _ordered(self) -> SearchMemoryArgs:
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"since {self.since} is after until {self.until}")
        return self


class GetMessagesArgs(Args):
    ids: list[str] = Field(min_length=1, description=f"Message ids; the first {MAX_GET_MESSAGES} are read.")
    around: int | None = Field(None, ge=0, le=MAX_AROUND,
                               description="Also this many messages of the same chat and day before and after each.")


class GetFactArgs(Args):
    fact_id: str = Field(min_length=1, description="A fact id, in full or its first characters.")


class GetProfileArgs(Args):
    pass


class GetDayArgs(Args):
    chat: str = Field(min_length=1, description="A chat id (from list_chats).")
    day: RequiredDay = Field(description="The day, YYYY-MM-DD.")


class ListChatsArgs(Args):
    pass


class AskArgs(Args):
    question: str = Field(min_length=1, description="The question, as the user would ask it.")
    conversation_id: str | None = Field(None, max_length=200,
                                        description="Continue this conversation (the id an earlier answer returned).")


class ForgetArgs(Args):
    kind: Literal["chat", "message", "fact", "before", "contains"] = Field(
        description="What to forget: a whole chat, one message, one fact, everything before a day, "
                    "or every message containing a text.")
    id: str = Field(min_length=1, max_length=4096,
                    description="The chat, message or fact id; the day (YYYY-MM-DD) for `before`; the text for `contains`.")
    chat: str | None = Field(None, max_length=256, description="Limit message/before/contains to one chat.")
    confirm: bool = Field(False, description="False: a dry run that says what would go. True: forget, "
                                             "with the `confirmation` the dry run returned.")
    confirmation: str | None = Field(None, max_length=200, description="The dry run's confirmation code.")


# the write vocabulary: a chat model that reaches for these is caught by name and refused
class UpdateFactArgs(Args):
    fact_id: str
    value: str


class DeleteMemoryArgs(Args):
    ids: list[str] = Field(min_length=1)


class ForgetChatArgs(Args):
    chat: str


class UpdateProfileArgs(Args):
    field: str
    value: str
