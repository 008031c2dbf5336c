"""What an entry is: message, media, deleted, location, contact, poll, call or system.

WhatsApp localizes its placeholders. iOS marks every generated placeholder with a leading
U+200E/U+200F, which identifies them in any language; Android does not, so its placeholders
are recognised by shape (`<...>`, `name.ext (...)`) and by the phrase lists below.
"""

from __future__ import annotations

import re

from truffle_assets.parsing.headers import clean

MESSAGE, MEDIA, DELETED, LOCATION, CONTACT, POLL, CALL, SYSTEM = (
    "message", "media", "deleted", "location", "contact", "poll", "call", "system",
)
KINDS = (MESSAGE, MEDIA, DELETED, LOCATION, CONTACT, POLL, CALL, SYSTEM)

_BIDI_START = ("\u200e", "\u200f")

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
    "mensaje eliminado", "eliminaste este mensaje", "deleted message",
}
_EDITED = re.compile(r"\s*<(?:This message was edited|Diese Nachricht wurde bearbeitet|Se editó este mensaje|"
                     r"Ce message a été modifié|Questo messaggio è stato modificato|Esta mensagem foi editada)>$")
_CALL = re.compile(
    r"^(?:missed (?:voice|video|group voice|group video) call|(?:voice|video) call|"
    r"zmeškaný (?:hlasový |video)?hovor|пропущенный (?:аудио|видео)звонок|"
    r"verpasster (?:sprach|video)anruf|appel (?:vocal|vidéo) manqué|llamada perdida|"
    r"chiamata (?:vocale|video) persa|chamada (?:de voz|de vídeo) perdida|"
    r"пропущений (?:аудіо|відео)дзвінок)(?:\b.*)?$",
    re.IGNORECASE,
)
# iOS placeholder phrases for contact cards (everything else bidi-marked is media).
_CONTACT_WORDS = re.compile(r"contact|contatt|kontak|контакт|vizitka|連絡先|รายชื่อ|liên lạc|جهة اتصال|कॉन्टैक्ट|contacto", re.I)
_LOCATION = re.compile(r"https://maps\.google\.com/\?q=|https://foursquare\.com/|live location", re.I)
_MID_MARK = re.compile(r"\s[\u200e\u200f]\S")
_ANGLE_PLACEHOLDER = re.compile(r"^<[^<>\n]{2,40}>$")
_ATTACHED = re.compile(r"<[^<>:\n]{2,30}: ([^<>\n]+)>\s*$")
_FILE_ATTACHED = re.compile(r"^\S[^\n]*\.(\w{2,5}) \([^()\n]{3,40}\)$")
_POLL = re.compile(r"^(?:POLL|ENCUESTA|UMFRAGE|SONDAGE|SONDAGGIO|ENQUETE):\s*\n", re.I)
_SYSTEM_TEXT = re.compile(
    r"end-to-end|ende-zu-ende|de bout en bout|de extremo a extremo|ponto a ponto|crittografat|"
    r"сквозным|наскрізним|koncovým|encriptad|terenkripsi|エンドツーエンド|เข้ารหัส|mã hóa đầu cuối|"
    r"مشفرة|एन्क्रिप्ट|versleuteld|uçtan uca|secure service from Meta|"
    # "Your security code with X changed", which iOS attributes to X
    r"security code|код безопасности|код безпеки|sicherheitsnummer|code de sécurité|codice di sicurezza|"
    r"código de seguridad|código de segurança|bezpečnostní kód|kode keamanan|セキュリティコード|"
    r"รหัสความปลอดภัย|mã bảo mật|رمز الأمان|सुरक्षा कोड|veiligheidscode",
    re.I,
)


def classify(author: str | None, text: str) -> tuple[str, bool]:
    """Return (kind, edited) for an entry's raw text."""
    if author is None:
        return SYSTEM, False
    edited = False
    m = _EDITED.search(text)
    if m:
        edited, text = True, text[: m.start()]
    first = text.split("\n", 1)[0]
    plain = clean(first).strip()
    low = plain.lower().rstrip(".")
    if "\n" not in text and _SYSTEM_TEXT.search(text) and (text.startswith(_BIDI_START) or "WhatsApp" in text):
        return SYSTEM, edited  # iOS attributes the encryption notice to the chat or contact name
    if low in _DELETED:
        return DELETED, edited
    if _POLL.match(clean(text)):
        return POLL, edited
    if _LOCATION.search(text) and (text.startswith(_BIDI_START) or len(text) < 300):
        return LOCATION, edited
    if _CALL.match(plain):
        return CALL, edited
    att = _ATTACHED.search(first)
    if att:
        return (CONTACT if att.group(1).lower().endswith(".vcf") else MEDIA), edited
    fa = _FILE_ATTACHED.match(plain)
    if fa:
        return (CONTACT if fa.group(1).lower() == "vcf" else MEDIA), edited
    if _ANGLE_PLACEHOLDER.match(plain) or low == "null":  # `null` is Android's view-once media
        return MEDIA, edited
    if text.startswith(_BIDI_START) or _MID_MARK.search(first):
        # iOS writes generated placeholders after a bidi mark: "‎image omitted", "x.pdf ‎document omitted"
        return (CONTACT if _CONTACT_WORDS.search(plain) else MEDIA), edited
    if re.fullmatch(r"(?:image|video|audio|sticker|GIF|document|Contact card) omitted", plain):
        return (CONTACT if plain.startswith("Contact") else MEDIA), edited
    return MESSAGE, edited
