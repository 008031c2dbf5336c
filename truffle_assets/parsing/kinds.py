"""What an entry is: message, media, deleted, location, contact, poll, call or system.

WhatsApp localizes its placeholders. iOS marks every generated placeholder with a leading
U+200E/U+200F, which identifies them in any language; Android does not, so its placeholders
are recognised by shape (`<...>`, `name.ext (...)`) and by the phrase lists below.
"""

from __future__ import annotations

import re

import polars as pl

from truffle_assets.parsing.headers import MARKS

MESSAGE, MEDIA, DELETED, LOCATION, CONTACT, POLL, CALL, SYSTEM = (
    "message", "media", "deleted", "location", "contact", "poll", "call", "system",
)
KINDS = (MESSAGE, MEDIA, DELETED, LOCATION, CONTACT, POLL, CALL, SYSTEM)

_BIDI_START = ("\u200e", "\u200f")
_MARK = re.compile(f"[{MARKS}]")

# "This message was deleted" / "You deleted this message" as exported, lower-cased, no final dot.
_DELETED = {
    "this message was deleted", "you deleted this message", "diese nachricht wurde gelöscht",
    "du hast diese nachricht gelöscht", "ce message a été supprimé", "vous avez supprimé ce message",
    "se eliminó este mensaje", "eliminaste este mensaje", "este mensaje fue eliminado",
    "questo messaggio è stato eliminato", "hai eliminato questo messaggio",
    "esta mensagem foi apagada", "apagou esta mensagem", "você apagou esta mensagem", "mensagem apagada",
    "данное сообщение удалено", "вы удалили данное сообщение", "вы удалили это сообщение",
    "это сообщение удалено", "це повідомлення було видалено", "ви видалили це повідомлення",
    "tato zpráva byla smazána", "tato zpráva byla odstraněna", "tuto zprávu jste smazal/a",
    "tuto zprávu jste odstranil/a", "pesan ini dihapus", "anda menghapus pesan ini",
    "pesan ini telah dihapus", "anda telah menghapus pesan ini", "このメッセージは削除されました。",
    "このメッセージを削除しました。", "このメッセージは削除されました", "このメッセージを削除しました",
    "ข้อความนี้ถูกลบแล้ว", "คุณได้ลบข้อความนี้", "tin nhắn này đã bị xóa", "tin nhắn này đã bị xoá",
    "bạn đã xoá tin nhắn này", "bạn đã xóa tin nhắn này", "تم حذف هذه الرسالة", "أنت حذفت هذه الرسالة",
    "لقد حذَفت هذه الرسالة", "यह मैसेज डिलीट कर दिया गया है", "आपने यह मैसेज डिलीट किया",
    "dit bericht is verwijderd", "u hebt dit bericht verwijderd", "je hebt dit bericht verwijderd",
    "bu mesaj silindi", "bu mesajı sildiniz", "ta wiadomość została usunięta",
    "mensaje eliminado", "deleted message",
    "הודעה זו נמחקה", "מחקת את ההודעה הזו", "این پیام حذف شد", "شما این پیام را حذف کردید",
}
_EDITED = re.compile(r"\s*<(?:This message was edited|Diese Nachricht wurde bearbeitet|Se editó este mensaje|"
                     r"Ce message a été modifié|Questo messaggio è stato modificato|Esta mensagem foi editada)>$")
# _CALL, _CONTACT_WORDS and _SYSTEM_TEXT are lower-case and run on lower-cased text: re.IGNORECASE
# over a long alternation of non-ASCII words is ten times slower.
_CALL = re.compile(
    r"^(?:missed (?:voice|video|group voice|group video) call|(?:voice|video) call|"
    r"zmeškaný (?:hlasový |video)?hovor|пропущенный (?:аудио|видео)звонок|"
    r"verpasster (?:sprach|video)anruf|appel (?:vocal|vidéo) manqué|llamada perdida|"
    r"chiamata (?:vocale|video) persa|chamada (?:de voz|de vídeo) perdida|"
    r"пропущений (?:аудіо|відео)дзвінок)(?:\b.*)?$",
)
# iOS placeholder phrases for contact cards (everything else bidi-marked is media).
_CONTACT_WORDS = re.compile(r"contact|contatt|kontak|контакт|vizitka|連絡先|รายชื่อ|liên lạc|جهة اتصال|कॉन्टैक्ट|contacto")
_LOCATION = re.compile(r"https://maps\.google\.com/\?q=|https://foursquare\.com/|live location", re.I)
_MID_MARK = re.compile(r"\s[\u200e\u200f]\S")
_ANGLE_PLACEHOLDER = re.compile(r"^<[^<>\n]{2,40}>$")
_ATTACHED = re.compile(r"<[^<>:\n]{2,30}: ([^<>\n]+)>\s*$")
_FILE_ATTACHED = re.compile(r"^(?:\S[^\n]*)?\.(\w{2,5}) \([^()\n]{3,40}\)$")  # stem may be empty: ".jpg (file attached)"
# A poll's first line, lower-cased: "POLL:" then the question and "OPTION: x (n votes)" lines.
_POLL = {"poll:", "encuesta:", "umfrage:", "sondage:", "sondaggio:", "enquete:"}
_SYSTEM_TEXT = re.compile(
    r"end-to-end|ende-zu-ende|de bout en bout|de extremo a extremo|ponto a ponto|crittografat|"
    r"сквозным|наскрізним|koncovým|encriptad|terenkripsi|エンドツーエンド|เข้ารหัส|mã hóa đầu cuối|"
    r"مشفرة|एन्क्रिप्ट|versleuteld|uçtan uca|מוצפנות מקצה לקצה|رمزگذاری سرتاسری|secure service from meta|"
    # "Your security code with X changed", which iOS attributes to X
    r"security code|код безопасности|код безпеки|sicherheitsnummer|code de sécurité|codice di sicurezza|"
    r"código de seguridad|código de segurança|bezpečnostní kód|kode keamanan|セキュリティコード|"
    r"รหัสความปลอดภัย|mã bảo mật|رمز الأمان|सुरक्षा कोड|veiligheidscode",
)

# Group events iOS writes after a mark (English and the commonest locales); placeholders never match.
_GROUP_EVENT = re.compile(
    r"\b(?:added|removed|left|joined using|created (?:the |this )?group|changed (?:the|this|their|the group)|"
    r"changed to|turned (?:on|off)|pinned a message|is now an admin|no longer an admin|reset this group|"
    r"hinzugefügt|entfernt|hat die gruppe|a ajouté|a retiré|a créé|añadió|eliminó a|creó el grupo|"
    r"ha aggiunto|ha creato|adicionou|removeu|criou o grupo|добавил|удалил|создал|přidal|odebral)\b"
)


# Placeholders and notices are short: a longer first line is always a message, so no pattern
# below ever scans a long body (a 10 MB message costs one length check, not nine regex scans).
PLACEHOLDER_MAX = 300
# Whole-line phrases, lower-cased without a final dot.
_PHRASES = {
    **dict.fromkeys(_DELETED, DELETED),
    **dict.fromkeys(_POLL, POLL),  # a poll only with its question and options on the lines below
    **{f"{w} omitted": MEDIA for w in ("image", "video", "audio", "sticker", "gif", "document")},  # iOS, no mark
    "contact card omitted": CONTACT,
    "null": MEDIA,  # Android's view-once media
}
PHRASE_MAX = 60  # phrases are at most 34 characters; call notices ("Missed group video call") about as short
_EDITED_TAIL = 80  # the edited marker sits at the very end; only its tail is searched


def classify(author: str | None, text: str) -> tuple[str, bool]:
    """Return (kind, edited) for an entry's raw text."""
    if author is None:
        return SYSTEM, False
    edited = False
    if text.endswith(">"):
        text, edited = _strip_edited(text)
    nl = text.find("\n")
    first = text if nl < 0 else text[:nl]
    if len(first) > PLACEHOLDER_MAX:
        return MESSAGE, edited
    head = text if len(text) <= PLACEHOLDER_MAX else text[:PLACEHOLDER_MAX]
    if _suspect(head, first):
        return _placeholder_kind(text, first), edited
    # No mark, link, "WhatsApp" or closing bracket: only the short fixed phrases remain possible.
    if len(first) <= PHRASE_MAX:
        return short_kind(first, nl >= 0), edited
    return MESSAGE, edited


def short_kind(first: str, multiline: bool) -> str:
    """The kind of an entry whose first line (at most PHRASE_MAX long) _suspect() passed: a fixed
    phrase, a call notice, or a message."""
    low = first.strip().lower().rstrip(".")
    kind = _PHRASES.get(low)
    if kind is not None and (kind != POLL or multiline):
        return kind
    if _CALL.match(low):
        return CALL
    return MESSAGE


def _suspect(head: str, first: str) -> bool:
    """Whether the entry needs the full decision: a mark, a link or location, "WhatsApp" (the iOS
    notice), or a first line ending in ">" or ")" (attachments, placeholders). Plain `in` tests:
    one regex alternation over the text would cost more than all of them together."""
    return (
        (not head.isascii() and _MARK.search(head) is not None)
        or "://" in head
        or "ocation" in head
        or "OCATION" in head
        or "WhatsApp" in head
        or first.rstrip().endswith((">", ")"))
    )


# Python's str.isspace() / str.strip() whitespace; Rust's `\s` lacks U+001C..U+001F (test_kinds_columns checks it).
PY_SPACE = r"[\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"


def suspect_head(head: pl.Expr) -> pl.Expr:
    """_suspect()'s content tests over a whole column of heads (an entry's text up to
    PLACEHOLDER_MAX), as one regex: a mark, a link, "ocation"/"OCATION" or "WhatsApp"."""
    return head.str.contains(f"[{MARKS}]|://|ocation|OCATION|WhatsApp")


def suspect_first_line(first: pl.Expr) -> pl.Expr:
    """_suspect()'s test on the first line: it ends in ">" or ")" before trailing whitespace."""
    return first.str.contains(f"[>)]{PY_SPACE}*$")


def _rust_escape(text: str) -> str:
    return re.sub(r"([\\.+*?()|\[\]{}^$#&\-~])", r"\\\1", text)


# What short_kind() can tell from a MESSAGE: a whole-line phrase (after strip, lower, rstrip(".")) or
# a call notice's start, matched case-insensitively. Rust's case folding matches every character
# whose Python lower() is a character of these (test_columnar.py checks all code points), so the
# screen passes every line short_kind() could call something else; it decides those few.
_CALL_START = _CALL.pattern.removeprefix("^").removesuffix(r"(?:\b.*)?$")
PHRASE_SCREEN = (
    f"^{PY_SPACE}*(?i:(?:{'|'.join(map(_rust_escape, sorted(_PHRASES)))})\\.*{PY_SPACE}*$|{_CALL_START})"
)


def maybe_phrase(first: pl.Expr) -> pl.Expr:
    """False where short_kind(first) is surely MESSAGE, over a whole column."""
    return first.str.contains(PHRASE_SCREEN)


def _strip_edited(text: str) -> tuple[str, bool]:
    m = _EDITED.search(text, max(0, len(text) - _EDITED_TAIL))
    return (text[: m.start()], True) if m else (text, False)


def _placeholder_kind(text: str, first: str) -> str:
    """The full decision, for the few entries _suspect() flags; cheap tests guard every regex."""
    marked = not first.isascii() and _MARK.search(first) is not None
    plain = (_MARK.sub("", first) if marked else first).strip()
    low = plain.lower().rstrip(".")
    bidi_start = text.startswith(_BIDI_START)
    if first is text and (bidi_start or "WhatsApp" in text) and _SYSTEM_TEXT.search(text.lower()):
        return SYSTEM  # iOS attributes the encryption notice to the chat or contact name
    if low in _DELETED:
        return DELETED
    if low in _POLL and first is not text:
        return POLL
    if (bidi_start or len(text) < PLACEHOLDER_MAX) and _LOCATION.search(text, 0, PLACEHOLDER_MAX):
        return LOCATION
    if len(plain) <= PHRASE_MAX and _CALL.match(low):
        return CALL
    if plain.endswith(">"):
        att = _ATTACHED.search(first)
        if att:
            return CONTACT if att.group(1).lower().endswith(".vcf") else MEDIA
        if _ANGLE_PLACEHOLDER.match(plain):
            return MEDIA
    if plain.endswith(")"):
        fa = _FILE_ATTACHED.match(plain)
        if fa:
            return CONTACT if fa.group(1).lower() == "vcf" else MEDIA
    if bidi_start and _GROUP_EVENT.search(low):
        return SYSTEM  # iOS group events, attributed to the group or the actor: "‎Mummy added Papa"
    if bidi_start or (marked and _MID_MARK.search(first)):
        # iOS writes generated placeholders after a bidi mark: "‎image omitted", "x.pdf ‎document omitted"
        return CONTACT if _CONTACT_WORDS.search(low) else MEDIA
    kind = _PHRASES.get(low) if len(plain) <= PHRASE_MAX else None
    return kind if kind is not None and kind != POLL else MESSAGE
