"""Everyday message text: English, Hinglish in Latin and Devanagari script, Spanish, a little German.

Templates carry `{slot}` fields filled from the pools below (`{name}` from the chat's members).
Nothing here contains digits long enough to look like a secret, a leading digit (a continuation
line must never look like a header), angle-bracket placeholders or the words that make WhatsApp
placeholders, so filler never collides with what the ground truth lists.
"""

from __future__ import annotations

import random

POOLS: dict[str, tuple[str, ...]] = {
    "food": ("biryani", "momos", "pizza", "dosa", "maggi", "chole bhature", "paneer tikka", "pav bhaji",
             "rajma chawal", "vada pav", "sushi", "pasta", "dal makhani", "poha", "samosa", "thali", "tacos"),
    "place": ("the mall", "Phoenix", "the cafe near office", "Koregaon Park", "Indiranagar", "the airport",
              "the station", "home", "the gym", "the hospital", "Nani's place", "the office", "the market",
              "Third Wave", "the park", "Starbucks"),
    "day": ("Saturday", "Sunday", "Friday", "tomorrow", "tonight", "next week", "Monday", "this weekend"),
    "thing": ("the tickets", "the keys", "the charger", "the documents", "the cake", "the gift", "the laptop",
              "the photos", "the invite", "the bill", "the cab", "the booking", "the slides", "the recipe"),
    "show": ("Panchayat", "Succession", "the match", "Kota Factory", "the new Marvel one", "Money Heist",
             "The Office", "Scam 1992", "Dune", "the IPL final", "Paatal Lok", "Friends"),
    "e": ("😂", "🤣", "❤️", "🙏", "👍", "😅", "🔥", "🥲", "😍", "🙄", "😭", "🎉", "😴", "🤔", "💯", "😬", "👀"),
    "mins": ("5", "10", "15", "20", "30"),
    "hr": ("7", "8", "9", "6", "5", "11"),
    "hi_food": ("बिरयानी", "पराठे", "खीर", "राजमा चावल", "पोहा", "समोसे", "गाजर का हलवा", "दाल बाटी", "कचौरी"),
    "hi_place": ("मंदिर", "बाज़ार", "नानी के घर", "स्टेशन", "डॉक्टर के पास", "ऑफिस", "मॉल"),
    "es_place": ("el centro", "la playa", "el gimnasio", "casa", "la oficina", "el bar de siempre", "el parque"),
    "es_food": ("tortilla", "paella", "tapas", "churros", "croquetas", "gazpacho", "pizza"),
    "es_day": ("mañana", "el sábado", "el domingo", "esta noche", "el finde", "la semana que viene"),
    "work": ("the pipeline", "the dashboard", "the sprint demo", "the migration", "the Airflow DAG", "the PR",
             "the release", "the standup", "the on-call handover", "the data model", "the Jira ticket",
             "the client call", "the backfill", "the quarterly review", "the infra budget"),
}

TEMPLATES: dict[str, tuple[str, ...]] = {
    "en": (
        "Are we still on for {day}?", "Just reached home", "Running {mins} mins late, sorry", "On my way",
        "Did you watch {show}?", "Can you send me {thing}?", "Haha that's hilarious {e}", "Good night!",
        "Good morning {e}", "Call me when you're free", "Where are you?", "Let's get {food} {day}",
        "I'm so tired today", "That sounds amazing", "Miss you guys", "Totally forgot about {thing}",
        "How was your day?", "Sure, no problem", "Wait what", "Ok cool", "Yes!!", "Nope", "Sounds good",
        "Did {name} reply?", "Tell {name} I said hi", "We should meet at {place}", "I'll be there by {hr}",
        "Can't believe it's already {day}", "Thanks a lot {e}", "Stuck in traffic again", "Just woke up lol",
        "Seriously?", "Same here", "Let me check and tell you", "Booked {thing}", "Don't forget {thing}",
        "I finally finished {show}, the ending was wild", "Weather is crazy today", "Headed to {place}",
        "Eating {food} right now {e}", "Send pics!", "Lol", "Hmm", "Ok", "Yeah", "Haha", "True", "Exactly",
        "Let's plan something for {day}", "Anyone up for {food}?", "I'll call you in a bit",
        "So proud of you {e}", "Congrats!!", "Take care", "Drive safe", "Reached?", "Bringing {thing}",
        "Who's coming to {place} {day}?", "That was such a fun evening", "My phone is almost dead",
    ),
    "hinglish": (
        "Kal {place} chalein?", "Haan yaar bilkul", "Theek hai", "Kitne baje?", "Main {hr} baje tak pahunch jaunga",
        "Arre wah {e}", "Bhai {thing} ka kya scene hai?", "Aaj {food} khaya, maza aa gaya", "Kya kar rahe ho?",
        "Office mein bahut kaam hai aaj", "Weekend pe kya plan hai?", "Sahi hai", "Pakka?", "Chal phir milte hain",
        "Mummy ne {food} banaya hai, aa jao", "Kuch nahi bas chill", "Yaar {show} dekha kya?", "Bas {mins} min",
        "Abhi free hoon, call kar", "Kal baat karte hain", "Accha sun", "Haha sahi pakde", "Kya baat hai {e}",
        "Ghar pe sab theek?", "Bahut thak gaya hoon aaj", "Arre {name} ko bhi bol de", "Chalo done",
        "Itna late kyun?", "Bhool gaya yaar {thing}", "Mast hai ye", "Koi na", "Ekdum sahi", "Haan haan",
        "Khana kha liya?", "Neend aa rahi hai", "Traffic mein phasa hoon", "{name} kahan hai?",
        "Photo bhej na", "Bas aise hi", "Kal pakka milte hain {place} pe", "Tension mat le", "Ho jayega",
        "Thoda busy hoon, baad mein call karta hoon", "Arre yaar", "Sach mein?", "Ye dekh {e}",
    ),
    "hindi": (
        "कल {hi_place} चलें?", "खाना खाया?", "ठीक है बेटा", "आज बहुत थक गया हूँ", "सब ठीक है ना?",
        "आज {hi_food} बनाए हैं", "घर कब आ रहे हो?", "अपना ध्यान रखना", "भगवान तुम्हें खुश रखे 🙏",
        "आज meeting बहुत लंबी थी", "कल weekend है, plan बनाओ", "photo भेजो ना", "बहुत अच्छा लगा {e}",
        "{name} का phone नहीं लग रहा", "दवाई time पे ले लेना", "बारिश बहुत हो रही है यहाँ", "जल्दी सो जाना",
        "आज office से late आऊंगा", "ये video देखो, बहुत funny है", "kal सुबह {hi_place} जाना है",
        "सुप्रभात 🌞", "शुभ रात्रि", "हाँ ठीक है", "बिल्कुल", "अरे वाह {e}", "कितने बजे पहुँचोगे?",
        "mummy की तबियत अब ठीक है", "दीदी का call आया था", "train time पे है", "सबको मेरा प्यार",
    ),
    "es": (
        "¿Qué tal el finde?", "Jajaja qué bueno", "Nos vemos {es_day} en {es_place}", "Estoy muy cansada hoy",
        "¿Has comido ya?", "Me encanta {es_food} {e}", "Vale, perfecto", "¡Qué guay!", "No pasa nada",
        "¿Quedamos {es_day}?", "Te echo de menos", "Buenos días {e}", "Buenas noches", "¿Cómo va todo?",
        "Qué fuerte", "Jajajaja", "Claro que sí", "Hoy hace un calor horrible", "Llego en {mins} minutos",
        "¿Viste el partido?", "Mi jefe está insoportable", "Ánimo con eso", "Qué rico {es_food}",
        "Tu español está mejorando mucho", "Se dice 'me gustaría', no 'me gusto' jaja", "Un abrazo fuerte",
        "¿Y tú qué tal?", "Todo bien por aquí", "Vamos a {es_place} {es_day}", "Muchas gracias {e}",
    ),
    "en_de": (
        "Are we still on for {day}?", "Danke!", "Alles klar", "Prost {e}", "Did you see the standup notes?",
        "Berlin is freezing right now", "Let's grab {food} after work", "Sehr gut", "I'll push the fix tonight",
        "Genau", "Na ja, it's fine", "Can you review the PR?", "Schönes Wochenende!", "Tschüss", "Let's sync {day}",
        "Bengaluru traffic is something else", "Coffee at {place}?", "Ja, passt", "Good catch {e}",
    ),
    "work": (
        "Can someone review the PR for {work}?", "Standup in {mins} mins", "I'll take {work}", "Deployed, please verify",
        "Is {work} blocked?", "Pushed the fix", "Thanks all {e}", "Joining in {mins}", "Running late for {work}",
        "{name} can you check {work}?", "Looks good to me", "Let's discuss in the sync", "Any updates on {work}?",
        "Done and merged", "Will update by EOD", "Sorry, was in a meeting", "Great work team {e}", "Noted",
        "Who is on call this week?", "Moving {work} to next sprint", "Please fill the timesheet", "Lunch?",
        "The build is green again", "Rolling back {work}", "Sharing the doc in a bit", "+1", "Agreed",
        "Happy Friday folks {e}", "Reminder: {work} review {day}", "Can we push {work} to {day}?",
    ),
}

# Continuation lines for longer messages: never start with a digit, a bracket or a bidi mark.
LONG = {
    "en": ("Also, don't forget {thing}.", "And tell {name} too.", "Let me know what works.", "Anyway, more later {e}"),
    "hinglish": ("Aur haan, {thing} le aana.", "{name} ko bhi bata dena.", "Baaki baad mein baat karte hain {e}",
                 "Aur sun, {day} free rehna."),
    "hindi": ("और हाँ, {hi_food} भी ले आना।", "सबको बता देना।", "बाकी बाद में बात करते हैं {e}"),
    "es": ("Por cierto, ¿vienes {es_day}?", "Y dile a {name} también.", "Ya me contarás {e}"),
    "en_de": ("Also, danke for the help.", "Let me know what works.", "Bis dann {e}"),
    "work": ("Details in the doc.", "Ping me if anything breaks.", "cc {name}", "Thanks in advance {e}"),
}


class Slots(dict):
    """format_map filler: unknown slots draw from POOLS with the generator's rng."""

    def __init__(self, rng: random.Random, names: list[str]):
        super().__init__()
        self.rng = rng
        self.names = names or ["everyone"]

    def __missing__(self, key: str) -> str:
        if key == "name":
            return self.rng.choice(self.names)
        return self.rng.choice(POOLS[key])


class Texter:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def fragment(self, style: str, slots: Slots) -> str:
        t = self.rng.choice(TEMPLATES[style])
        return t.format_map(slots) if "{" in t else t

    def message(self, style: str, names: list[str]) -> str:
        """One message body; ~4% span several lines."""
        rng = self.rng
        slots = Slots(rng, names)
        r = rng.random()
        if r < 0.62:
            text = self.fragment(style, slots)
        elif r < 0.90:
            text = self.fragment(style, slots) + " " + self.fragment(style, slots)
        elif r < 0.96:
            text = " ".join(self.fragment(style, slots) for _ in range(rng.randint(3, 5)))
        else:
            lines = [self.fragment(style, slots)]
            for _ in range(rng.randint(1, 3)):
                lines.append(rng.choice(LONG[style]).format_map(slots))
            text = "\n".join(lines)
        if rng.random() < 0.12:
            text += " " + rng.choice(POOLS["e"])
        return text


    def multiline(self, style: str, names: list[str]) -> str:
        slots = Slots(self.rng, names)
        lines = [self.fragment(style, slots)] + [self.rng.choice(LONG[style]).format_map(slots) for _ in range(2)]
        return "\n".join(lines)


def _check_templates() -> None:
    for style, ts in list(TEMPLATES.items()) + list(LONG.items()):
        for t in ts:
            assert t and not t[0].isdigit() and t[0] not in "[<\u200e\u200f", (style, t)
            assert "\n" not in t and "<" not in t and "WhatsApp" not in t, (style, t)


_check_templates()
