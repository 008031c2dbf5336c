"""Rosetta dual stream: one normalized text per message (what BM25, embeddings and LLMs read)
plus cheap script and language tags, and an optional LLM tier that adds an English rendering.

Normalization (deterministic, no model):
- NFKC (fullwidth forms, ligatures, NBSP, "‼" -> "!!"); line breaks unified to "\\n".
- Invisible and bidi marks dropped: LRM/RLM, embeddings/isolates, ZWSP, ZWNJ, word joiner, BOM,
  soft hyphen, variation selectors, other control characters. ZWJ survives only inside an emoji
  sequence, which is then replaced by words, so no ZWJ is left in the output.
- Emoji become shortcodes built from Unicode names: "😂" -> ":face_with_tears_of_joy:",
  "👍🏽" -> ":thumbs_up:" (skin tone dropped), "👩‍💻" -> ":woman_personal_computer:",
  "🇮🇳" -> ":flag_in:". Why shortcodes: a BM25 `\\w+` tokenizer keeps one exact, rare term per
  emoji (no pollution of the words "face" or "joy"), WordPiece embedders split the underscores
  into the plain words, and LLMs read the shortcode convention natively.
- Horizontal whitespace collapsed, lines stripped, blank lines dropped; newlines kept (the
  episode renderer turns them into " / ").
- Anything ASCII, such as PII placeholders "[CARD]" or "<PHONE_1>", passes through unchanged.

Tags: `scripts` lists the scripts with letters (most letters first), from Unicode ranges;
`lang` comes from the dominant script, and for Latin text from stopword hits (en, hi-Latn for
romanized Hindi, es, pt, de, fr, it, nl, tr, id); 'und' when nothing decides it.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

__all__ = [
    "Normalized", "normalize_text", "normalize_messages", "english_tier", "word_tokens", "STREAM_COLUMNS",
    "STOPWORDS",
]

STREAM_COLUMNS = ("id", "chat_id", "day", "normalized_text", "scripts", "lang", "code_mixed", "english_text")


@dataclass
class Normalized:
    text: str
    scripts: list[str]
    lang: str
    code_mixed: bool


# --- character classes -------------------------------------------------------------------

# Dropped everywhere (ZWJ and VS16 are kept until emoji are replaced, then dropped too).
_INVISIBLE = dict.fromkeys(
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x200B, 0x200C, 0x200E, 0x200F,
     0x3164, 0xFEFF, 0xFFA0, 0xFFFC]
    + list(range(0x202A, 0x202F)) + list(range(0x2060, 0x2070))
    + list(range(0xFE00, 0xFE0F))  # variation selectors 1-15; VS16 (FE0F) goes after emoji
    + [c for c in range(0x20) if c not in (0x09, 0x0A)] + [0x7F] + list(range(0x80, 0xA0)),
)
for _c in (0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029):  # line separators become "\n"
    _INVISIBLE[_c] = "\n"
_INVISIBLE[0x0D] = "\n"
_AFTER_EMOJI = {0x200D: None, 0xFE0F: None, **{c: None for c in range(0xE0000, 0xE0080)}}

_EMOJI_BASE = (
    "\u231a\u231b\u2328\u23cf\u23e9-\u23f3\u23f8-\u23fa\u25aa\u25ab\u25b6\u25c0\u25fb-\u25fe"
    "\u2600-\u27bf\u2934\u2935\u2b05-\u2b07\u2b1b\u2b1c\u2b50\u2b55\u3030\u303d\u3297\u3299"
    "\U0001F000-\U0001F1E5\U0001F200-\U0001FAFF"
)
_EMOJI_MOD = "\ufe0e\ufe0f\U0001F3FB-\U0001F3FF"
_EMOJI_SEQ = re.compile(
    "[\U0001F1E6-\U0001F1FF]{1,2}"  # flags: regional-indicator pairs
    "|[0-9#*]\ufe0f?\u20e3"  # keycaps
    f"|[{_EMOJI_BASE}][{_EMOJI_MOD}]*(?:\u200d[{_EMOJI_BASE}][{_EMOJI_MOD}]*)*[\U000E0020-\U000E007F]*"
)
_EMOJI_ANY = re.compile(f"[{_EMOJI_BASE}\U0001F1E6-\U0001F1FF\u20e3]")
_EMOJI_NAME_FIX = {0x2764: "red heart", 0x1F64F: "folded hands", 0x2665: "heart"}
_emoji_cache: dict[str, str] = {}


def _emoji_name(seq: str) -> str:
    cps = [ord(c) for c in seq]
    if 0x1F1E6 <= cps[0] <= 0x1F1FF:
        return "flag_" + "".join(chr(c - 0x1F1E6 + 97) for c in cps)
    if seq[-1] == "\u20e3":
        return "keycap_" + {"#": "hash", "*": "asterisk"}.get(seq[0], seq[0])
    tags = "".join(chr(c - 0xE0000) for c in cps if 0xE0020 <= c <= 0xE007E)
    if tags:
        return "flag_" + tags
    parts = []
    for c in cps:
        if c in (0x200D, 0xFE0E, 0xFE0F) or 0x1F3FB <= c <= 0x1F3FF or c >= 0xE0000:
            continue
        name = _EMOJI_NAME_FIX.get(c) or unicodedata.name(chr(c), "").lower() or f"emoji {c:x}"
        parts.append(re.sub(r" (?:sign|symbol)$", "", name))
    return re.sub(r"[^a-z0-9]+", "_", " ".join(parts)).strip("_")


def _emoji_repl(m: re.Match[str]) -> str:
    seq = m.group()
    out = _emoji_cache.get(seq)
    if out is None:
        name = _emoji_name(seq)
        out = _emoji_cache[seq] = f" :{name}: " if name else " "
    return out


# Letter ranges per script (marks included: Indic vowel signs belong to their script).
_SCRIPT_RANGES = sorted([
    (0x0041, 0x005A, "Latin"), (0x0061, 0x007A, "Latin"), (0x00C0, 0x00D6, "Latin"), (0x00D8, 0x00F6, "Latin"),
    (0x00F8, 0x02AF, "Latin"), (0x1E00, 0x1EFF, "Latin"), (0x0370, 0x03FF, "Greek"), (0x1F00, 0x1FFF, "Greek"),
    (0x0400, 0x052F, "Cyrillic"), (0x0531, 0x058F, "Armenian"), (0x0591, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"), (0x0750, 0x077F, "Arabic"), (0x08A0, 0x08FF, "Arabic"), (0xFB50, 0xFDFF, "Arabic"),
    (0xFE70, 0xFEFE, "Arabic"), (0x0900, 0x097F, "Devanagari"), (0xA8E0, 0xA8FF, "Devanagari"),
    (0x0980, 0x09FF, "Bengali"), (0x0A00, 0x0A7F, "Gurmukhi"), (0x0A80, 0x0AFF, "Gujarati"),
    (0x0B00, 0x0B7F, "Oriya"), (0x0B80, 0x0BFF, "Tamil"), (0x0C00, 0x0C7F, "Telugu"), (0x0C80, 0x0CFF, "Kannada"),
    (0x0D00, 0x0D7F, "Malayalam"), (0x0D80, 0x0DFF, "Sinhala"), (0x0E00, 0x0E7F, "Thai"), (0x0E80, 0x0EFF, "Lao"),
    (0x10A0, 0x10FF, "Georgian"), (0x1100, 0x11FF, "Hangul"), (0x3130, 0x318F, "Hangul"), (0xAC00, 0xD7AF, "Hangul"),
    (0x1200, 0x137F, "Ethiopic"), (0x1780, 0x17FF, "Khmer"), (0x3040, 0x309F, "Hiragana"),
    (0x30A0, 0x30FF, "Katakana"), (0x31F0, 0x31FF, "Katakana"), (0x3400, 0x4DBF, "Han"), (0x4E00, 0x9FFF, "Han"),
    (0xF900, 0xFAFF, "Han"), (0x20000, 0x2FA1F, "Han"),
])
_RANGE_STARTS = [r[0] for r in _SCRIPT_RANGES]
_char_script: dict[str, str | None] = {}


def _script_of(ch: str) -> str | None:
    s = _char_script.get(ch, "")
    if s != "":
        return s
    c = ord(ch)
    i = bisect_right(_RANGE_STARTS, c) - 1
    s = _SCRIPT_RANGES[i][2] if i >= 0 and c <= _SCRIPT_RANGES[i][1] else None
    if s is not None and not (ch.isalpha() or unicodedata.category(ch)[0] == "M"):
        s = None  # digits, dandas, punctuation inside a block are script-neutral
    _char_script[ch] = s
    return s


# Script -> language where the script alone decides it (Latin, Arabic, Cyrillic, CJK refine below).
_SCRIPT_LANG = {
    "Devanagari": "hi", "Bengali": "bn", "Gurmukhi": "pa", "Gujarati": "gu", "Oriya": "or", "Tamil": "ta",
    "Telugu": "te", "Kannada": "kn", "Malayalam": "ml", "Sinhala": "si", "Thai": "th", "Lao": "lo",
    "Greek": "el", "Hebrew": "he", "Armenian": "hy", "Georgian": "ka", "Hangul": "ko", "Ethiopic": "am",
    "Khmer": "km", "Hiragana": "ja", "Katakana": "ja", "Han": "zh", "Arabic": "ar", "Cyrillic": "ru",
}
# Japanese writes Han + kana together and Korean may use Han: one writing system, not code-mixing.
_SCRIPT_GROUP = {"Hiragana": "Japanese", "Katakana": "Japanese", "Han": "CJK"}
_CJK = {"Han", "Hiragana", "Katakana", "Hangul"}

# Word tokens: letters plus combining marks (Python's \w stops at Indic vowel signs).
_WORD = re.compile(r"(?:[^\W\d_]|[\u0300-\u036f\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u0900-\u0dff\u0e31-\u0e4e])+")
_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*\]|<[A-Z][A-Z0-9_]*>")
_HAS_LETTER = re.compile(r"[A-Za-z]")
_SHORTCODE = re.compile(r":[a-z0-9_]+:")


def word_tokens(text: str) -> list[str]:
    """Lower-cased word tokens, placeholders and emoji shortcodes excluded."""
    if "[" in text or "<" in text:
        text = _PLACEHOLDER.sub(" ", text)
    if ":" in text:
        text = _SHORTCODE.sub(" ", text)
    return _WORD.findall(text.lower())


# --- stopwords -----------------------------------------------------------------------------

STOPWORDS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in {
    "en": "the and is are was were you your you're i i'm im me my we our it this that what where when how why who "
          "have has had will would can don didn doesn isn wasn won haven couldn wouldn shouldn do did not just so "
          "but for with on at of to in be been going get got there they them he she his her all about if yes "
          "yeah no thanks thank please good morning night let lets see now today tomorrow sure cool okay really "
          "too very much from out up back time know think want need come coming done great sorry miss call free "
          "ready reached late still already again sounds right also tell said send any some an by or sounds "
          "tonight weekend guys amazing anyone believe finally forgot tired there here",
    "hi-Latn": "hai hain hoon hu hun ho tha thi nahi nahin nhi na kya kyu kyun kyon toh yaar yar kar karo karna "
               "karte karta karti kiya kiye raha rahi rahe rha rhi hoga hogi gaya gayi gaye gya bhai bhi aur mein "
               "main mera meri mere mujhe tera teri tere tujhe tum tumhara tumhe aap aapka hum humko apna apni yeh "
               "ye woh wo vo kal aaj abhi kab kahan kaha kaise kitna kitne kuch sab bahut bohot bht accha acha "
               "achha theek thik haan haa mat chal chalo chalein jaa jao jaana aao aaja wala wali wale ke ka ki "
               "ko pe par lekin phir fir matlab sahi pakka arre arey batao bata dekh dekho dekha ghar khana kha "
               "liya diya lena dena milte milenge baat baje raat subah shaam jaldi zyada thoda sach mast bilkul "
               "jayega kyunki isliye agar sirf kaun uska uski unka yahan wahan ekdum bol bolo sun suno hoja gayi "
               "karunga karungi jaunga aaya aayi pata chahiye bohat tension koi nahi kar",
    "es": "el la los las que qué de del en y un una es está estás estoy esta este eso esto por para con sí si "
          "pero muy más como cómo cuando cuándo donde dónde yo tú tu te mi nos vamos hoy mañana bien gracias "
          "hola jaja jajaja jajajaja vale bueno buenas buenos noche noches días día hay ya también nada algo todo "
          "todos pues ahora luego quedamos tengo tienes tiene hace hacer puedo puedes quiero eres soy fue ser voy "
          "vas al le lo les qué",
    "pt": "o os as que de do da dos das em no na nos nas um uma é não nao sim com para pra por mas muito muita "
          "mais como quando onde eu você voce vc ele ela nós eles meu minha seu sua tá está estou tudo bem "
          "obrigado obrigada oi olá bom boa dia noite hoje amanhã aqui agora então entao isso isto também tambem "
          "já vou vai vamos kkk kkkk né ainda tem tenho foi ser fazer",
    "de": "der die das und ist nicht ich du wir ihr sie er es ein eine einen mit auf für zu von den dem des im am "
          "auch noch schon aber oder wenn dass was wie wo wann ja nein danke bitte gut heute morgen mal doch "
          "jetzt hier bin bist sind hast habe haben kann kannst nach bei mir dir mich dich uns sehr viel gleich "
          "genau klar hallo hab",
    "fr": "le la les de des du un une et est je tu il elle nous vous ils on pas ne que qui quoi pour avec dans sur "
          "mais ou où oui non merci bonjour bonsoir salut bien très tres trop ça ca ce cette mon ma mes ton ta tes "
          "son sa ses suis sommes êtes sont ai avons avez ont fait faire vais aussi encore déjà demain soir peut "
          "veux moi toi lui au aux mdr bisous",
    "it": "il lo la gli le di del della che è non un una uno per con su ma sono sei siamo ho hai ha abbiamo io "
          "lui lei noi voi loro mi ti ci anche ancora già oggi domani stasera grazie ciao buongiorno buonanotte "
          "bene molto tanto tutto tutti cosa come quando dove perché perche allora poi questo questa quello "
          "quella fatto fare sto stai dai comunque adesso ora nel nella alla alle al dei delle",
    "nl": "de het een en is van ik je jij u we wij ze zij hij niet wel dat die dit met op voor naar maar of om "
          "ook nog al er te zijn ben bent heb hebt heeft hebben was kan kun wil gaan ga gaat doen wat hoe waar "
          "wanneer waarom ja nee dank bedankt goed vandaag morgen avond hoi hallo leuk even zo nu dan mijn jouw "
          "jullie ons onze graag toch heel",
    "tr": "bir ve bu şu da de mi mı mu mü ne için ile ama çok daha var yok ben sen biz siz onlar benim senin evet "
          "hayır tamam teşekkürler teşekkür merhaba nasıl nasılsın iyi güzel bugün yarın şimdi sonra gibi kadar "
          "değil olarak oldu olur gel abi canım tabi tabii hadi artık hep hiç neden niye nerede",
    "id": "yang dan di ke dari ini itu aku saya kamu dia kita kami mereka tidak nggak gak enggak iya sudah udah "
          "belum akan bisa mau ada apa siapa kapan mana bagaimana gimana kenapa dengan untuk juga lagi saja "
          "sama terima kasih makasih selamat pagi malam sore hari besok sekarang nanti banget sangat dong deh "
          "sih kok yuk oke baik tapi karena kalau kalo",
}.items()}
_LATIN_LANGS = tuple(STOPWORDS)
_EN, _HI = _LATIN_LANGS.index("en"), _LATIN_LANGS.index("hi-Latn")
_WORD_LANGS: dict[str, tuple[int, ...]] = {}
for _i, _words in enumerate(STOPWORDS.values()):
    for _w in _words:
        _WORD_LANGS[_w] = _WORD_LANGS.get(_w, ()) + (_i,)
_EN_ONLY = frozenset(w for w, ls in _WORD_LANGS.items() if _EN in ls and _HI not in ls)
_HI_ONLY = frozenset(w for w, ls in _WORD_LANGS.items() if _HI in ls and _EN not in ls)
# Letters that only a few of the Latin languages use: a small nudge, never decisive alone.
_CHAR_HINTS = {"ñ": "es", "¿": "es", "¡": "es", "ã": "pt", "õ": "pt", "ß": "de", "ş": "tr", "ğ": "tr", "ı": "tr"}


def _latin_lang(tokens: list[str], text: str) -> tuple[str, bool]:
    """(language, code_mixed) of Latin-script tokens from stopword hits (hot path: plain lists)."""
    score = [0] * len(_LATIN_LANGS)
    hit = False
    for t in tokens:
        langs = _WORD_LANGS.get(t)
        if langs is not None:
            hit = True
            for i in langs:
                score[i] += 1
    if not text.isascii():
        for ch, lang in _CHAR_HINTS.items():
            if ch in text:
                hit = True
                score[_LATIN_LANGS.index(lang)] += 1
    if not hit:
        return "und", False
    words = set(tokens)
    mixed = not words.isdisjoint(_EN_ONLY) and not words.isdisjoint(_HI_ONLY)
    best = max(score)
    if mixed and score[_HI] >= score[_EN] and score[_HI] == best:
        return "hi-Latn", True  # Hinglish: romanized-Hindi content beats the English glue
    if score.count(best) > 1:
        return "und", mixed
    return _LATIN_LANGS[score.index(best)], mixed


def _tag(analysis: str) -> tuple[list[str], str, bool]:
    """Scripts (most letters first), language and code-mixing of placeholder/emoji-free text."""
    if analysis.isascii():
        if not _HAS_LETTER.search(analysis):
            return [], "und", False
        lang, mixed = _latin_lang(_WORD.findall(analysis.lower()), analysis)
        return ["Latin"], lang, mixed
    counts: dict[str, int] = {}
    for ch, n in Counter(analysis).items():
        s = _script_of(ch)
        if s is not None:
            counts[s] = counts.get(s, 0) + n
    if not counts:
        return [], "und", False
    # A stray letter of a second script is noise; CJK characters are words on their own.
    scripts = [s for s, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
               if n >= 2 or s in _CJK or len(counts) == 1]
    if not scripts:
        scripts = [max(counts, key=lambda s: (counts[s], s))]
    groups = {_SCRIPT_GROUP.get(s, s) for s in scripts}
    if groups == {"Japanese", "CJK"}:
        groups = {"Japanese"}
    mixed = len(groups) > 1
    latin_lang = "und"
    if "Latin" in scripts:
        latin_tokens = [t for t in _WORD.findall(analysis.lower()) if _script_of(t[0]) == "Latin"]
        latin_lang, latin_mixed = _latin_lang(latin_tokens, analysis)
        mixed = mixed or latin_mixed
    main = scripts[0]
    if main == "Latin":
        other = next((s for s in scripts[1:] if s != "Latin"), None)
        lang = latin_lang if latin_lang != "und" or other is None else _script_lang(other, analysis)
    else:
        lang = _script_lang(main, analysis) if not ({"Hiragana", "Katakana"} & set(scripts)) else "ja"
    return scripts, lang, mixed


def _script_lang(script: str, text: str) -> str:
    if script == "Arabic":
        if any(c in text for c in "ےںٹڈڑ"):
            return "ur"
        if any(c in text for c in "پچژگکی"):
            return "fa"
    elif script == "Cyrillic" and any(c in text for c in "іїєґІЇЄҐ"):
        return "uk"
    return _SCRIPT_LANG.get(script, "und")


# --- normalization ---------------------------------------------------------------------------

def _collapse(text: str) -> str:
    if "\n" not in text:
        return " ".join(text.split())
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def normalize_text(text: str | None) -> Normalized:
    """Normalize one (already redacted) message and tag its scripts and language."""
    if not text:
        return Normalized("", [], "und", False)
    if text.isascii():  # the common case: no NFKC, invisible marks or emoji possible
        if "\r" in text or "\t" in text or "\x0b" in text or "\x0c" in text:
            text = text.replace("\r\n", "\n").translate(_INVISIBLE)
        elif not text.isprintable() and "\n" not in text:
            text = text.translate(_INVISIBLE)
        out = _collapse(text)
        analysis = _PLACEHOLDER.sub(" ", out) if ("[" in out or "<" in out) else out
        scripts, lang, mixed = _tag(analysis)
        return Normalized(out, scripts, lang, mixed)
    text = unicodedata.normalize("NFKC", text.replace("\r\n", "\n")).translate(_INVISIBLE)
    analysis = _PLACEHOLDER.sub(" ", text) if ("[" in text or "<" in text) else text
    if _EMOJI_ANY.search(text):
        text = _EMOJI_SEQ.sub(_emoji_repl, text)
    out = _collapse(text.translate(_AFTER_EMOJI))
    scripts, lang, mixed = _tag(analysis)
    return Normalized(out, scripts, lang, mixed)


def normalize_messages(frame: pl.DataFrame) -> pl.DataFrame:
    """`id, chat_id, day, redacted_text` -> the `message_streams` columns (english_text null).

    Identical texts are normalized once: chats repeat "ok", "haha" and forwarded messages a lot.
    """
    texts = frame["redacted_text"].to_list()
    cache: dict[str | None, Normalized] = {}
    out_text, out_scripts, out_lang, out_mixed = [], [], [], []
    for t in texts:
        n = cache.get(t)
        if n is None:
            n = cache[t] = normalize_text(t)
        out_text.append(n.text)
        out_scripts.append(",".join(n.scripts))
        out_lang.append(n.lang)
        out_mixed.append(n.code_mixed)
    return frame.select("id", "chat_id", "day").with_columns(
        pl.Series("normalized_text", out_text, dtype=pl.String),
        # joined then split in Rust: building a list column from Python lists costs ~9 µs a row
        pl.Series("scripts", out_scripts, dtype=pl.String).str.split(",").list.filter(pl.element() != ""),
        pl.Series("lang", out_lang, dtype=pl.String),
        pl.Series("code_mixed", out_mixed, dtype=pl.Boolean),
        pl.lit(None, dtype=pl.String).alias("english_text"),
    ).select(STREAM_COLUMNS)


def english_tier(
    streams: pl.DataFrame,
    translate: Callable[[list[str]], list[str | None]],
    batch_size: int = 32,
) -> pl.DataFrame:
    """Fill `english_text` via `translate` for rows not plainly English: lang not 'en'/'und', or
    code-mixed. Each distinct text is sent once, in batches; a None answer leaves the row null,
    as do English rows (readers use coalesce(english_text, normalized_text)).
    """
    need = (~pl.col("lang").is_in(["en", "und"]) | pl.col("code_mixed")) & pl.col("english_text").is_null() \
        & (pl.col("normalized_text").str.len_chars() > 0)
    todo = streams.filter(need)["normalized_text"].unique(maintain_order=True).to_list()
    done: dict[str, str | None] = {}
    for i in range(0, len(todo), batch_size):
        batch = todo[i:i + batch_size]
        answers = translate(batch)
        if len(answers) != len(batch):
            raise ValueError(f"translate returned {len(answers)} answers for {len(batch)} texts")
        done.update(zip(batch, answers))
    if not done:
        return streams
    mapping = pl.DataFrame({"normalized_text": list(done), "_en": list(done.values())},
                           schema={"normalized_text": pl.String, "_en": pl.String})
    return (
        streams.with_row_index("_row")
        .join(mapping, on="normalized_text", how="left")
        .sort("_row")
        .with_columns(english_text=pl.when(need).then(pl.coalesce("english_text", "_en")).otherwise("english_text"))
        .select(STREAM_COLUMNS)
    )
