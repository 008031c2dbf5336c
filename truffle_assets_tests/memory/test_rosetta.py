from datetime import date

import polars as pl
import pytest

from truffle_assets.memory.rosetta import STREAM_COLUMNS, english_tier, normalize_messages, normalize_text

INVISIBLE = "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff\u00ad\ufe0f"


def test_invisible_and_bidi_marks_removed():
    n = normalize_text("\u200eHello\u200b wor\u00adld\ufeff \u202aok\u202c \u2066ठीक\u2069 \u200fمرحبا")
    assert n.text == "Hello world ok ठीक مرحبا"
    assert not set(n.text) & set(INVISIBLE)


def test_nfkc_whitespace_and_newlines():
    n = normalize_text("  Ｆｕｌｌ\u00a0width   ﬁne\r\n\r\n\tsecond   line \n\n")
    assert n.text == "Full width fine\nsecond line"


@pytest.mark.parametrize("raw, words", [
    ("haha😂", "haha :face_with_tears_of_joy:"),
    ("❤️", ":red_heart:"),
    ("👍🏽 done", ":thumbs_up: done"),
    ("👩\u200d💻", ":woman_personal_computer:"),
    ("🇮🇳 jeet gaye", ":flag_in: jeet gaye"),
    ("1️⃣", ":keycap_1:"),
    ("🙏🙏", ":folded_hands: :folded_hands:"),
])
def test_emoji_become_shortcode_words(raw, words):
    n = normalize_text(raw)
    assert n.text == words
    assert "\u200d" not in n.text and "\ufe0f" not in n.text


def test_emoji_do_not_count_as_latin_words():
    n = normalize_text("बहुत अच्छा 😂🎉")
    assert n.scripts == ["Devanagari"] and n.lang == "hi" and not n.code_mixed


def test_placeholders_survive_and_are_not_words():
    n = normalize_text("Call me on [PHONE] or pay with [CARD]  <EMAIL_2>")
    assert n.text == "Call me on [PHONE] or pay with [CARD] <EMAIL_2>"
    d = normalize_text("मेरा नंबर [PHONE] है\u200e")
    assert d.text == "मेरा नंबर [PHONE] है"
    assert d.scripts == ["Devanagari"] and not d.code_mixed


@pytest.mark.parametrize("text, script", [
    ("खाना खाया?", "Devanagari"), ("مرحبا كيف حالك", "Arabic"), ("Are we still on?", "Latin"),
    ("Привет, как дела?", "Cyrillic"), ("Καλημέρα", "Greek"), ("你好吗", "Han"), ("안녕하세요", "Hangul"),
    ("שלום מה נשמע", "Hebrew"), ("สวัสดีครับ", "Thai"), ("আমি ভালো আছি", "Bengali"), ("வணக்கம்", "Tamil"),
    ("ਸਤ ਸ੍ਰੀ ਅਕਾਲ", "Gurmukhi"), ("ありがとう", "Hiragana"), ("コーヒー", "Katakana"),
])
def test_script_tags(text, script):
    assert normalize_text(text).scripts == [script]


@pytest.mark.parametrize("text, lang", [
    ("Are we still on for Saturday?", "en"), ("आज बहुत थक गया हूँ", "hi"), ("Office mein bahut kaam hai aaj", "hi-Latn"),
    ("¿Quedamos el sábado en la playa?", "es"), ("Tudo bem com você?", "pt"), ("Wie geht es dir heute?", "de"),
    ("Ce soir je suis pas là", "fr"), ("Ci vediamo domani, ciao", "it"), ("Ik ben er bijna, even wachten", "nl"),
    ("Bugün çok güzel", "tr"), ("Aku mau pulang sekarang", "id"), ("مرحبا كيف حالك", "ar"),
    ("Привет, как дела?", "ru"), ("こんにちは、元気ですか", "ja"),
    ("Ok", "und"), ("😂😂", "und"), ("12:30", "und"), ("", "und"),
])
def test_language_tags(text, lang):
    assert normalize_text(text).lang == lang


def test_hinglish_and_code_mixing():
    latin = normalize_text("Bhai the laptop ka kya scene hai? 👀")
    assert (latin.lang, latin.code_mixed, latin.scripts) == ("hi-Latn", True, ["Latin"])
    two_scripts = normalize_text("आज meeting बहुत लंबी थी")
    assert two_scripts.scripts == ["Devanagari", "Latin"] and two_scripts.code_mixed and two_scripts.lang == "hi"
    assert not normalize_text("Theek hai yaar").code_mixed
    assert not normalize_text("Did you watch the match?").code_mixed
    japanese = normalize_text("こんにちは、元気ですか")  # Han + kana is one writing system
    assert set(japanese.scripts) == {"Hiragana", "Han"} and not japanese.code_mixed


def _frame(texts: list[str | None]) -> pl.DataFrame:
    return pl.DataFrame({
        "id": [f"m{i}" for i in range(len(texts))], "chat_id": ["c"] * len(texts),
        "day": [date(2024, 1, 1)] * len(texts), "redacted_text": texts,
    })


def test_normalize_messages_contract():
    out = normalize_messages(_frame(["Kal milte hain 😂", None, "\u200eimage omitted", "Kal milte hain 😂", "नमस्ते"]))
    assert out.columns == list(STREAM_COLUMNS)
    assert out.schema["scripts"] == pl.List(pl.String) and out.schema["code_mixed"] == pl.Boolean
    assert out.schema["english_text"] == pl.String and out["english_text"].null_count() == out.height
    assert out["id"].to_list() == ["m0", "m1", "m2", "m3", "m4"]
    assert out["normalized_text"].to_list() == [
        "Kal milte hain :face_with_tears_of_joy:", "", "image omitted", "Kal milte hain :face_with_tears_of_joy:", "नमस्ते",
    ]
    assert out["scripts"].to_list() == [["Latin"], [], ["Latin"], ["Latin"], ["Devanagari"]]
    assert out["lang"].to_list()[:2] == ["hi-Latn", "und"]


def test_english_tier_fills_non_english_once_and_keeps_failures_null():
    streams = normalize_messages(_frame(["Kal milte hain yaar", "See you tomorrow", "Kal milte hain yaar",
                                         "¿Quedamos mañana?", "ok", "खाना खाया?"]))
    calls: list[list[str]] = []

    def translate(batch: list[str]) -> list[str | None]:
        calls.append(batch)
        return [None if t.startswith("¿") else f"EN({t})" for t in batch]

    out = english_tier(streams, translate, batch_size=2)
    assert out.columns == list(STREAM_COLUMNS) and out["id"].to_list() == streams["id"].to_list()
    sent = [t for b in calls for t in b]
    assert sorted(sent) == sorted(["Kal milte hain yaar", "¿Quedamos mañana?", "खाना खाया?"])
    assert all(len(b) <= 2 for b in calls)
    assert out["english_text"].to_list() == [
        "EN(Kal milte hain yaar)", None, "EN(Kal milte hain yaar)", None, None, "EN(खाना खाया?)",
    ]
    with pytest.raises(ValueError):
        english_tier(streams, lambda batch: [])
