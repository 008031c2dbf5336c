"""Export header styles: how WhatsApp on each platform and locale writes one message line.

Each style renders the header prefix for a timestamp (everything before the author), knows its
line ending, whether the clock shows seconds, and how that platform spells its placeholders.
`hformat` is the same header in whatstk's notation, used only by the benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from collections.abc import Callable

NNBSP = "\u202f"  # narrow no-break space: newer Android/iOS put it before AM/PM
LRM = "\u200e"  # left-to-right mark: iOS puts it before generated placeholders


def _h12(ts: datetime) -> tuple[int, str]:
    h = ts.hour % 12 or 12
    return h, ("AM" if ts.hour < 12 else "PM")


def _android_dmy24(ts: datetime) -> str:  # en-GB / en-IN Android: 14/03/21, 21:07 -
    return f"{ts.day:02}/{ts.month:02}/{ts.year % 100:02}, {ts.hour:02}:{ts.minute:02} - "


def _android_mdy12(ts: datetime) -> str:  # en-US Android: 3/14/21, 9:07 PM -
    h, ap = _h12(ts)
    return f"{ts.month}/{ts.day}/{ts.year % 100:02}, {h}:{ts.minute:02} {ap} - "


def _android_mdy12_nnbsp(ts: datetime) -> str:  # en-US Android 2023+: 3/14/21, 9:07\u202fPM -
    h, ap = _h12(ts)
    return f"{ts.month}/{ts.day}/{ts.year % 100:02}, {h}:{ts.minute:02}{NNBSP}{ap} - "


def _android_in12(ts: datetime) -> str:  # en-IN Android 2023+: 14/03/2021, 9:07\u202fpm -
    h, ap = _h12(ts)
    return f"{ts.day:02}/{ts.month:02}/{ts.year}, {h}:{ts.minute:02}{NNBSP}{ap.lower()} - "


def _android_es(ts: datetime) -> str:  # es-ES Android: 14/3/21, 21:07 -
    return f"{ts.day}/{ts.month}/{ts.year % 100:02}, {ts.hour}:{ts.minute:02} - "


def _android_de(ts: datetime) -> str:  # de-DE Android: 14.03.21, 21:07 -
    return f"{ts.day:02}.{ts.month:02}.{ts.year % 100:02}, {ts.hour:02}:{ts.minute:02} - "


def _ios_dmy24(ts: datetime) -> str:  # en-GB / en-IN iOS: [14/03/2021, 21:07:45]
    return f"[{ts.day:02}/{ts.month:02}/{ts.year}, {ts.hour:02}:{ts.minute:02}:{ts.second:02}] "


def _ios_mdy12(ts: datetime) -> str:  # en-US iOS 17: [3/14/21, 9:07:45\u202fPM]
    h, ap = _h12(ts)
    return f"[{ts.month}/{ts.day}/{ts.year % 100:02}, {h}:{ts.minute:02}:{ts.second:02}{NNBSP}{ap}] "


@dataclass(frozen=True)
class Format:
    key: str
    platform: str  # "android" | "ios"
    header: Callable[[datetime], str]
    seconds: bool
    hformat: str  # whatstk notation (after its NFKC clean-up, U+202F is a plain space)
    newline: str = "\n"
    media_style: str = "omitted"  # android: "omitted" | "file"; ios: "omitted" | "attached"

    @property
    def ios(self) -> bool:
        return self.platform == "ios"

    def visible(self, ts: datetime) -> datetime:
        """The timestamp a parser can recover from this header."""
        return ts if self.seconds else ts.replace(second=0, microsecond=0)


FORMATS: dict[str, Format] = {
    f.key: f
    for f in (
        Format("android_dmy24", "android", _android_dmy24, False, "%d/%m/%y, %H:%M - %name:"),
        Format("android_dmy24_file", "android", _android_dmy24, False, "%d/%m/%y, %H:%M - %name:", media_style="file"),
        Format("android_mdy12", "android", _android_mdy12, False, "%m/%d/%y, %I:%M %p - %name:"),
        Format("android_mdy12_nnbsp", "android", _android_mdy12_nnbsp, False, "%m/%d/%y, %I:%M %p - %name:"),
        Format("android_in12", "android", _android_in12, False, "%d/%m/%Y, %I:%M %p - %name:"),
        Format("android_es", "android", _android_es, False, "%d/%m/%y, %H:%M - %name:"),
        Format("android_de", "android", _android_de, False, "%d.%m.%y, %H:%M - %name:"),
        Format("ios_dmy24", "ios", _ios_dmy24, True, "[%d/%m/%Y, %H:%M:%S] %name:", "\r\n", "attached"),
        Format("ios_dmy24_omitted", "ios", _ios_dmy24, True, "[%d/%m/%Y, %H:%M:%S] %name:", "\r\n", "omitted"),
        Format("ios_mdy12", "ios", _ios_mdy12, True, "[%m/%d/%y, %I:%M:%S %p] %name:", "\r\n", "omitted"),
    )
}

E2E_ANDROID = (
    "Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, "
    "can read or listen to them. Tap to learn more."
)
E2E_IOS = LRM + "Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them."
EDITED = "<This message was edited>"


def media_placeholder(fmt: Format, kind: str, ts: datetime, counter: int) -> str:
    """The body WhatsApp writes for an attachment of `kind` (photo/video/audio/sticker/gif/document)."""
    if fmt.ios:
        if fmt.media_style == "attached":
            tag, ext = {"photo": ("PHOTO", "jpg"), "video": ("VIDEO", "mp4"), "audio": ("AUDIO", "opus"),
                        "sticker": ("STICKER", "webp"), "gif": ("GIF", "mp4"), "document": ("DOC", "pdf")}[kind]
            return f"{LRM}<attached: {counter:08d}-{tag}-{ts:%Y-%m-%d-%H-%M-%S}.{ext}>"
        word = {"photo": "image", "gif": "GIF"}.get(kind, kind)
        return f"{LRM}{word} omitted"
    if fmt.media_style == "file":
        prefix, ext = {"photo": ("IMG", "jpg"), "video": ("VID", "mp4"), "audio": ("PTT", "opus"),
                       "sticker": ("STK", "webp"), "gif": ("VID", "mp4"), "document": ("DOC", "pdf")}[kind]
        return f"{prefix}-{ts:%Y%m%d}-WA{counter % 10000:04d}.{ext} (file attached)"
    return "<Media omitted>"
