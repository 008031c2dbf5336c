"""The one person whose exports these are: contacts, chats, and a timeline of facts about them.

`make_persona(rng)` draws the variable details (birthday, hometown, tastes, pet, dates) and
returns the chats in the order of their size (the user's "top N"), each spanning the years it
was active. Facts are *intents*: what is true, when, and several ways it gets said, by whom and
in which chat they would most naturally come up; `corpus.py` places them in the chats that exist.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

USER = "Arjun Mehta"
USER_FIRST = "Arjun"
CORPUS_END = date(2024, 12, 28)


@dataclass
class Member:
    name: str
    styles: dict[str, float]  # text style -> weight
    joined: date | None = None  # None: there from the start
    share: float = 1.0  # how talkative, relative to the others

    @property
    def first(self) -> str:
        return self.name.split()[0]


@dataclass
class ChatSpec:
    key: str
    title: str  # contact or group name, as in the export's file name
    group: bool
    members: list[Member]  # everyone except the user
    start: date  # first day (day of month > 12, so the day/month order is always decidable)
    end: date
    fmt: str  # key into formats.FORMATS
    container: str  # "txt" | "zip"
    user_styles: dict[str, float]
    user_share: float = 1.0
    work: bool = False
    created_by: str | None = None  # groups: who created it ("You" for the user)
    user_left: bool = False  # the user leaves on `end` (job change)
    weight: float = 1.0  # share of the corpus, set from the rank


@dataclass
class Statement:
    chats: tuple[str, ...]  # preferred chats, best first
    author: str  # "user", "other", or a member's name
    when: date
    text: str


@dataclass
class Fact:
    id: str
    category: str  # identity | preference | relationship | event | goal
    predicate: str
    value: str
    fact_text: str
    valid_from: date | None
    valid_to: date | None
    statements: list[Statement] = field(default_factory=list)
    subject: str = USER


@dataclass
class Secret:
    type: str
    value: str
    chats: tuple[str, ...]
    author: str
    when: date
    text: str  # contains value verbatim
    decoy: bool = False
    note: str = ""


@dataclass
class Persona:
    user: str
    chats: list[ChatSpec]
    facts: list[Fact]
    secrets: list[Secret]  # secrets and decoys (decoy=True)
    anchors: dict[str, date]


EN = {"en": 1.0}
HINGLISH = {"hinglish": 0.55, "en": 0.35, "hindi": 0.10}
ELDERS = {"hindi": 0.5, "hinglish": 0.4, "en": 0.1}
WORK = {"work": 0.85, "hinglish": 0.1, "en": 0.05}

EXTRA_NAMES = ("Siddharth Rao", "Pooja Iyer", "Amit Kulkarni", "Divya Nair", "Manish Gupta", "Shreya Banerjee",
               "Harsh Vardhan", "Nisha Pillai", "Gaurav Malhotra", "Ritika Sen", "Yusuf Ali", "Kavya Menon",
               "Mateo García", "Sofía López", "Tom Becker", "Lena Schmidt")
EXTRA_FORMATS = ("android_dmy24", "ios_dmy24_omitted", "android_mdy12", "android_in12", "ios_mdy12",
                 "android_es", "android_de", "android_mdy12_nnbsp")


def _d(rng: random.Random, year: int, month: int, lo: int = 13, hi: int = 28) -> date:
    return date(year, month, rng.randint(lo, hi))


def _chats(a: dict[str, date]) -> list[ChatSpec]:
    end = CORPUS_END
    priya = Member("Priya Sharma", {"en": 0.6, "hinglish": 0.35, "hindi": 0.05})
    chats = [
        ChatSpec("priya", "Priya Sharma", False, [priya], a["priya_met"], end, "ios_dmy24", "zip",
                 {"en": 0.6, "hinglish": 0.35, "hindi": 0.05}),
        ChatSpec("family", "Mehta Parivaar", True, [
            Member("Mummy", ELDERS, share=1.4), Member("Papa", ELDERS, share=0.9),
            Member("Ananya Mehta", {"hinglish": 0.5, "en": 0.4, "hindi": 0.1}),
            Member("Kabir Mehta", {"hinglish": 0.5, "en": 0.5}, share=0.7),
            Member("Priya Sharma", {"en": 0.6, "hinglish": 0.4}, joined=a["engaged"] + timedelta(days=16), share=0.6),
        ], date(2019, 1, 14), end, "android_dmy24", "txt", HINGLISH, 0.8, created_by="Kabir Mehta"),
        ChatSpec("rohan", "Rohan Verma", False, [Member("Rohan Verma", {"hinglish": 0.6, "en": 0.4})],
                 date(2019, 1, 15), end, "android_mdy12", "txt", {"hinglish": 0.6, "en": 0.4}),
        ChatSpec("ananya", "Ananya Mehta", False, [Member("Ananya Mehta", {"hinglish": 0.5, "en": 0.45, "hindi": 0.05})],
                 date(2019, 1, 20), end, "ios_mdy12", "txt", {"hinglish": 0.5, "en": 0.5}),
        ChatSpec("zentrix", "Zentrix Data Team", True, [
            Member("Vikram Iyer", WORK, share=1.3), Member("Sneha Reddy", WORK), Member("Karthik Nair", WORK),
            Member("Farhan Sheikh", WORK, share=0.8), Member("Meera Joshi", WORK, share=0.9),
        ], date(2019, 1, 16), a["left_zentrix"], "android_mdy12_nnbsp", "txt", WORK, 0.9, work=True,
            created_by="Vikram Iyer", user_left=True),
        ChatSpec("kabir", "Kabir Mehta", False, [Member("Kabir Mehta", {"hinglish": 0.5, "en": 0.5})],
                 date(2019, 1, 21), end, "android_dmy24_file", "txt", {"hinglish": 0.5, "en": 0.5}),
        ChatSpec("lucia", "Lucía Fernández", False, [Member("Lucía Fernández", {"es": 0.85, "en": 0.15})],
                 date(2020, 10, 13), end, "android_es", "txt", {"es": 0.45, "en": 0.55}),
        ChatSpec("northwind", "Northwind Platform Squad", True, [
            Member("Daniel Thomas", WORK, share=1.3), Member("Aisha Khan", WORK), Member("Rahul Menon", WORK),
            Member("Tanvi Desai", WORK), Member("Jonas Weber", {"work": 0.9, "en_de": 0.1}, share=0.8),
        ], a["joined_northwind"] + timedelta(days=2), end, "android_in12", "txt", WORK, 0.9, work=True,
            created_by="Daniel Thomas"),
        ChatSpec("jonas", "Jonas Weber", False, [Member("Jonas Weber", {"en_de": 0.8, "en": 0.2})],
                 a["moved"] + timedelta(days=5), end, "android_de", "txt", {"en": 0.8, "en_de": 0.2}),
        ChatSpec("football", "Sunday Football HSR", True, [
            Member("Nikhil Rao", {"en": 0.5, "hinglish": 0.5}, share=1.2),
            Member("Sameer Khan", {"en": 0.4, "hinglish": 0.6}), Member("Aditya Pillai", EN),
            Member("Varun Shetty", {"en": 0.5, "hinglish": 0.5}), Member("Tenzin Dorje", EN, share=0.6),
        ], a["moved"] + timedelta(days=24), end, "ios_dmy24_omitted", "txt", {"en": 0.5, "hinglish": 0.5}, 0.8,
            created_by="Nikhil Rao"),
        ChatSpec("neha", "Neha Kapoor", False, [Member("Neha Kapoor", {"en": 0.6, "hinglish": 0.4})],
                 date(2019, 1, 13), a["breakup"] + timedelta(days=1), "android_dmy24", "txt",
                 {"en": 0.6, "hinglish": 0.4}),
        ChatSpec("college", "NIT Batch 2016", True, [
            Member("Rohan Verma", {"hinglish": 0.6, "en": 0.4}), Member("Siddharth Rao", HINGLISH),
            Member("Pooja Iyer", EN), Member("Amit Kulkarni", HINGLISH), Member("Divya Nair", EN),
        ], date(2019, 1, 17), end, "android_dmy24", "txt", HINGLISH, 0.7, created_by="You"),
    ]
    return chats


_EXTRA_FIRST = ("Siddharth", "Pooja", "Amit", "Divya", "Manish", "Shreya", "Harsh", "Nisha", "Gaurav", "Ritika",
                "Yusuf", "Kavya", "Mateo", "Sofía", "Tom", "Lena", "Irfan", "Meenal", "Deepak", "Zoya")
_EXTRA_LAST = ("Rao", "Iyer", "Kulkarni", "Nair", "Gupta", "Banerjee", "Vardhan", "Pillai", "Malhotra", "Sen",
               "Ali", "Menon", "García", "López", "Becker", "Schmidt", "Qureshi", "Bose", "Chawla")


def _extra_name(k: int) -> str:
    if k < len(EXTRA_NAMES):
        return EXTRA_NAMES[k]
    j = k - len(EXTRA_NAMES)  # every first name with every surname (coprime lengths: 380 pairs), then numbered
    n = len(_EXTRA_FIRST) * len(_EXTRA_LAST)
    name = f"{_EXTRA_FIRST[j % len(_EXTRA_FIRST)]} {_EXTRA_LAST[j % len(_EXTRA_LAST)]}"
    return name if j < n else f"{name} {j // n + 1}"


def _extra(i: int, name: str, rng: random.Random) -> ChatSpec:
    fmt = EXTRA_FORMATS[i % len(EXTRA_FORMATS)]
    styles = {"es": 0.7, "en": 0.3} if fmt == "android_es" else {"en_de": 0.5, "en": 0.5} if fmt == "android_de" else HINGLISH
    start = _d(rng, rng.randint(2019, 2023), rng.randint(1, 12))
    return ChatSpec(f"extra{i + 1}", name, False, [Member(name, styles)], start, CORPUS_END, fmt, "txt", styles)


def _fmt_day(d: date) -> str:
    return f"{d.day} {d:%B}"


def make_persona(rng: random.Random, n_chats: int) -> Persona:
    a: dict[str, date] = {}
    bday = date(1994, rng.choice((3, 5, 8, 10, 11)), rng.randint(13, 27))
    a["birthday"] = bday
    a["breakup"] = _d(rng, 2020, 11, 13, 20)
    a["priya_met"] = _d(rng, 2021, 3)
    a["dating"] = a["priya_met"] + timedelta(days=rng.randint(50, 80))
    a["pet"] = _d(rng, 2021, 2, 14, 24)
    a["offer"] = _d(rng, 2022, 6, 13, 22)
    a["left_zentrix"] = date(2022, 7, 8)
    a["joined_northwind"] = date(2022, 7, 11)
    a["moved"] = _d(rng, 2022, 8, 18, 24)
    a["veg"] = date(2023, 1, 1)
    a["goa"] = date(2019, 12, 27)
    a["spain"] = date(2023, 9, rng.randint(13, 16))
    a["hm_goal"] = _d(rng, 2023, 3, 13, 20)
    a["half_marathon"] = date(2024, 1, 21)
    a["engaged"] = date(2024, 2, 14)
    a["house_goal"] = _d(rng, 2024, 6)
    a["spanish_goal"] = date(2021, 1, rng.randint(13, 17))

    chats = _chats(a)
    used, k = {c.title for c in chats}, 0
    while len(chats) < n_chats:
        while _extra_name(k) in used:
            k += 1
        used.add(_extra_name(k))
        chats.append(_extra(len(chats) - 12, _extra_name(k), rng))
    chats = chats[:n_chats]
    for rank, c in enumerate(chats, 1):
        c.weight = rank ** -0.8

    hometown = rng.choice(("Jaipur", "Indore", "Lucknow", "Nagpur"))
    food = rng.choice(("pani puri", "masala dosa", "chole bhature", "rajma chawal"))
    music = rng.choice(("A. R. Rahman", "Arijit Singh", "Coldplay", "Prateek Kuhad"))
    sport = rng.choice(("badminton", "cricket", "tennis"))
    pet, breed = rng.choice(("Bruno", "Simba", "Oreo", "Coco")), rng.choice(("beagle", "indie", "golden retriever"))
    city = rng.choice(("Barcelona", "Madrid", "Sevilla", "Valencia"))
    pick = rng.choice
    y = lambda yr: bday.replace(year=yr)  # noqa: E731

    F = Fact
    S = Statement
    facts = [
        F("name", "identity", "name", USER, f"The user's name is {USER}.", None, None, [
            S(("lucia",), "user", date(2020, 10, 13),
              pick(("Hola Lucía! Soy Arjun Mehta, el amigo de Pooja. Encantado 😊",
                    "Hi Lucía, this is Arjun Mehta, Pooja's friend. Saving your number!"))),
            S(("northwind",), "user", a["joined_northwind"] + timedelta(days=2),
              "Hi everyone, I'm Arjun Mehta. Super excited to be here!"),
            S(("family", "kabir"), "other", date(2019, 6, 16), "Arjun Mehta, phone kyun nahi utha rahe? 😠"),
        ]),
        F("birthday", "identity", "birthday", bday.isoformat(), f"{USER}'s birthday is {_fmt_day(bday)} {bday.year}.", None, None, [
            S(("family",), "Mummy", y(2019), "Happy birthday beta! 🎂 भगवान तुम्हें हमेशा खुश रखे"),
            S(("rohan", "college"), "other", y(2021), pick(("Happy birthday Arjun!! 🎉 Party kab hai?",
                                                             "Happy birthday bro!! 🎉 Have a great one"))),
            S(("ananya", "family"), "other", y(2022), "Happy birthday bhaiya!! ❤️ Love you"),
            S(("priya", "rohan"), "user", y(2024) - timedelta(days=6),
              pick((f"I turn 30 on {_fmt_day(bday)}, let's keep it small this year",
                    f"Mera 30th birthday hai {_fmt_day(bday)} ko, kuch chhota sa plan karte hain"))),
        ]),
        F("hometown", "identity", "hometown", hometown, f"{USER}'s hometown is {hometown}.", None, None, [
            S(("lucia", "jonas"), "user", date(2021, 2, 17), f"Soy de {hometown}, en la India. Pero vivo en Pune ahora"),
            S(("priya", "neha", "rohan"), "user", a["priya_met"] + timedelta(days=9),
              pick((f"I grew up in {hometown}, came to Pune for work",
                    f"{hometown} is home, I still miss the food there"))),
        ]),
        F("job_zentrix", "identity", "job", "Data Engineer at Zentrix Labs",
          f"{USER} worked as a data engineer at Zentrix Labs.", date(2018, 7, 2), a["left_zentrix"], [
            S(("rohan", "neha", "college"), "user", date(2019, 3, 14),
              "Zentrix mein data engineer hoon, din bhar pipelines theek karta hoon 😅"),
            S(("zentrix",), "Vikram Iyer", date(2020, 6, 18),
              "Arjun, great job on the migration. Zentrix is lucky to have a data engineer like you 👏"),
        ]),
        F("job_northwind", "identity", "job", "Senior Data Engineer at Northwind Analytics",
          f"{USER} works as a senior data engineer at Northwind Analytics.", a["joined_northwind"], None, [
            S(("family",), "user", a["offer"],
              "Mummy, offer letter aa gaya! Northwind Analytics mein senior data engineer. July se join karunga"),
            S(("rohan", "college"), "Rohan Verma", a["offer"] + timedelta(days=1),
              "Bhai congrats on the Northwind offer!! Party toh banti hai"),
            S(("northwind",), "user", a["joined_northwind"] + timedelta(days=2, hours=0),
              "Joining the platform team as a senior data engineer, looking forward to working with you all"),
        ]),
        F("lives_pune", "identity", "lives_in", "Pune", f"{USER} lived in Pune.", date(2016, 7, 1), a["moved"] - timedelta(days=1), [
            S(("rohan", "neha", "college"), "user", date(2019, 7, 16), "Pune rains are the best thing about living here"),
        ]),
        F("lives_bengaluru", "identity", "lives_in", "Bengaluru", f"{USER} lives in Bengaluru (HSR Layout).", a["moved"], None, [
            S(("family",), "user", a["moved"], "Bengaluru pahunch gaya! Flat bhi mil gaya HSR Layout mein"),
            S(("jonas", "priya"), "user", a["moved"] + timedelta(days=30), "I live in HSR Layout now, come over for dinner sometime"),
        ]),
        F("food", "preference", "favourite_food", food, f"{USER}'s favourite food is {food}.", None, None, [
            S(("priya", "neha", "rohan"), "user", date(2021, 4, 14), f"{food.capitalize()} is my weakness honestly"),
            S(("rohan", "college"), "user", date(2019, 9, 21), f"{food.capitalize()} ke liye toh main kuch bhi kar sakta hoon"),
            S(("lucia",), "user", date(2021, 5, 19), f"Mi comida favorita es {food}. ¡Tienes que probarla!"),
        ]),
        F("diet_nonveg", "preference", "diet", "non-vegetarian", f"{USER} ate meat.", None, a["veg"] - timedelta(days=1), [
            S(("rohan", "neha"), "user", date(2020, 2, 14), "Chicken biryani tonight, non-veg Friday is sacred"),
        ]),
        F("diet_veg", "preference", "diet", "vegetarian", f"{USER} has been vegetarian since January 2023.", a["veg"], None, [
            S(("priya", "rohan"), "user", date(2023, 1, 3), "Day 3 of being fully vegetarian, going well so far"),
            S(("family",), "Mummy", date(2023, 2, 15), "Arjun ab pure vegetarian ho gaya hai, bahut accha laga sunke"),
        ]),
        F("music", "preference", "favourite_music", music, f"{USER}'s favourite musician is {music}.", None, None, [
            S(("priya", "rohan"), "user", date(2021, 8, 20), f"{music} is my all-time favourite, nothing comes close"),
            S(("rohan", "college"), "user", date(2023, 11, 14), f"{music} concert ke tickets mil gaye!! 🎶"),
        ]),
        F("sport", "preference", "favourite_sport", sport, f"{USER}'s favourite sport to play is {sport}.", None, None, [
            S(("rohan", "kabir", "neha"), "user", date(2019, 4, 13), f"{sport.capitalize()} is my favourite sport, I play every weekend"),
            S(("football", "priya"), "user", date(2022, 10, 16), f"Honestly {sport} is more my thing but football Sundays are fun"),
        ]),
        F("partner_neha", "relationship", "partner", "Neha Kapoor", f"{USER} was in a relationship with Neha Kapoor.",
          date(2018, 5, 20), a["breakup"], [
            S(("neha",), "Neha Kapoor", date(2019, 5, 20), "Happy anniversary Arjun ❤️ one year already!"),
            S(("rohan", "college"), "user", a["breakup"] + timedelta(days=1), "Neha and I broke up yesterday. Don't want to talk about it much"),
        ]),
        F("partner_priya", "relationship", "partner", "Priya Sharma", f"{USER}'s partner is Priya Sharma (engaged February 2024).",
          a["dating"], None, [
            S(("ananya", "family"), "user", a["dating"] + timedelta(days=3),
              "Okay I'm telling you first: I'm dating someone. Her name is Priya ❤️"),
            S(("family",), "Mummy", date(2021, 10, 27), "Priya ko Diwali pe ghar le aana beta"),
            S(("rohan", "college"), "Rohan Verma", date(2022, 2, 13), "Bro you and Priya are too cute together"),
        ]),
        F("sister", "relationship", "sister", "Ananya Mehta", f"Ananya Mehta is {USER}'s younger sister.", None, None, [
            S(("lucia",), "user", date(2021, 3, 23), "Mi hermana pequeña Ananya quiere aprender español también"),
            S(("priya", "rohan"), "user", a["priya_met"] + timedelta(days=20), "My younger sister Ananya is going to love you"),
        ]),
        F("brother", "relationship", "brother", "Kabir Mehta", f"Kabir Mehta is {USER}'s elder brother.", None, None, [
            S(("priya", "rohan"), "user", a["priya_met"] + timedelta(days=33), "Kabir is my elder brother, he'll be at the dinner too"),
            S(("kabir", "family"), "Kabir Mehta", date(2019, 8, 15), "Chhote, bade bhai ki baat maan le aur helmet pehen"),
        ]),
        F("best_friend", "relationship", "best_friend", "Rohan Verma", f"Rohan Verma is {USER}'s best friend (since school).", None, None, [
            S(("priya", "lucia"), "user", a["priya_met"] + timedelta(days=41), "Rohan has been my best friend since school, you'll like him"),
            S(("rohan",), "Rohan Verma", date(2020, 8, 16), "Best friends since class six, you can't get rid of me 😂"),
        ]),
        F("pet", "relationship", "pet", f"{pet} ({breed} dog)", f"{USER} has a {breed} dog named {pet}.", a["pet"], None, [
            S(("family", "rohan"), "user", a["pet"], f"We adopted a {breed} puppy! His name is {pet} 🐶"),
            S(("rohan", "priya"), "user", a["pet"] + timedelta(days=60), f"{pet} ne mera charger chaba diya 😭"),
            S(("priya",), "Priya Sharma", date(2022, 5, 14), f"Give {pet} a hug from me"),
        ]),
        F("trip_goa", "event", "trip", "Goa, 27–30 December 2019", f"{USER} went on a trip to Goa with friends in December 2019.",
          a["goa"], a["goa"] + timedelta(days=3), [
            S(("rohan", "college"), "user", date(2019, 11, 20), "Goa trip final: 27 to 30 Dec, tickets booked"),
            S(("college", "rohan"), "other", a["goa"] + timedelta(days=4), "Goa was epic, Arjun you were the best DJ"),
        ]),
        F("trip_spain", "event", "trip", f"{city}, Spain, September 2023", f"{USER} travelled to {city}, Spain in September 2023.",
          a["spain"], a["spain"] + timedelta(days=8), [
            S(("lucia",), "user", date(2023, 8, 16), f"¡Voy a {city} en septiembre! Llego el {a['spain'].day}"),
            S(("lucia", "priya"), "other", a["spain"] + timedelta(days=9), f"¡Qué pena que ya te vas de {city}! Vuelve pronto"),
            S(("priya", "family"), "user", a["spain"] + timedelta(days=1), f"Landed in {city}! It's beautiful here"),
        ]),
        F("job_change", "event", "job_change", "Zentrix Labs → Northwind Analytics",
          f"{USER} left Zentrix Labs on 8 July 2022 and joined Northwind Analytics on 11 July 2022.",
          a["joined_northwind"], a["joined_northwind"], [
            S(("zentrix",), "user", a["left_zentrix"], "Thank you all for four amazing years at Zentrix. Last day today 🥲"),
            S(("rohan", "priya"), "user", a["joined_northwind"], "First day at Northwind done, new laptop, new people, feels good"),
        ]),
        F("move", "event", "moved", "Pune → Bengaluru", f"{USER} moved from Pune to Bengaluru in August 2022.",
          a["moved"], a["moved"], [
            S(("rohan", "college"), "user", a["moved"] - timedelta(days=3),
              f"Packing everything, moving to Bengaluru on {_fmt_day(a['moved'])}. Pune I'll miss you"),
        ]),
        F("half_marathon", "event", "completed", "first half marathon, 21 January 2024",
          f"{USER} completed his first half marathon on 21 January 2024.", a["half_marathon"], a["half_marathon"], [
            S(("football", "priya"), "user", a["half_marathon"], "Finished my first half marathon today! Legs are gone"),
            S(("family",), "Papa", a["half_marathon"] + timedelta(days=1), "शाबाश बेटा! Half marathon पूरी कर ली 👏"),
        ]),
        F("engaged", "event", "engaged", "engaged to Priya Sharma", f"{USER} got engaged to Priya Sharma on 14 February 2024.",
          a["engaged"], a["engaged"], [
            S(("family",), "user", a["engaged"], "Priya and I are engaged!!! 💍"),
            S(("rohan", "ananya"), "other", a["engaged"] + timedelta(days=1), "Congratulations on the engagement!!! So happy for you two"),
        ]),
        F("goal_spanish", "goal", "goal", "learn Spanish fluently", f"{USER} wants to learn Spanish fluently.", a["spanish_goal"], None, [
            S(("priya", "rohan", "ananya"), "user", a["spanish_goal"], "New year goal: actually learn Spanish this time"),
            S(("lucia",), "user", date(2021, 1, 19), "Mi objetivo este año: hablar español con fluidez"),
        ]),
        F("goal_half_marathon", "goal", "goal", "run a half marathon", f"{USER} wanted to run a half marathon (achieved January 2024).",
          a["hm_goal"], a["half_marathon"], [
            S(("priya", "rohan"), "user", a["hm_goal"], "My goal this year is to run a half marathon. Training starts tomorrow"),
            S(("football", "rohan"), "user", date(2023, 6, 18), "Training for a half marathon so no beers for me for a while"),
        ]),
        F("goal_house", "goal", "goal", "save for a house down payment", f"{USER} is saving for a house down payment.", a["house_goal"], None, [
            S(("priya", "family"), "user", a["house_goal"], "Goal for the next two years: save enough for a house down payment"),
            S(("family",), "Papa", a["house_goal"] + timedelta(days=21), "Ghar ke liye saving shuru kar di? Bahut accha beta"),
        ]),
    ]
    secrets = make_secrets(rng, a)
    return Persona(USER, chats, facts, secrets, a)


def make_secrets(rng: random.Random, a: dict[str, date]) -> list[Secret]:
    from truffle_assets.synth.checksums import luhn_check_digit, luhn_valid, verhoeff_check_digit, verhoeff_valid

    def digits(n: int, first: str = "123456789") -> str:
        return rng.choice(first) + "".join(rng.choice("0123456789") for _ in range(n - 1))

    def card(prefix: str, length: int) -> str:
        body = prefix + "".join(rng.choice("0123456789") for _ in range(length - len(prefix) - 1))
        return body + luhn_check_digit(body)

    def group(s: str, sizes: tuple[int, ...], sep: str) -> str:
        out, i = [], 0
        for n in sizes:
            out.append(s[i:i + n])
            i += n
        return sep.join(out)

    def aadhaar() -> str:
        body = digits(11, "23456789")
        return body + verhoeff_check_digit(body)

    visa, mc, rupay, amex = card("4", 16), card(rng.choice(("51", "53", "55")), 16), card("6521", 16), card("37", 15)
    ad1, ad2 = aadhaar(), aadhaar()
    pan = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(3)) + "PM" + digits(4, "123456789") + rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ")
    ifsc = rng.choice(("HDFC", "ICIC", "SBIN", "UTIB")) + "0" + digits(6, "0123456789")
    acct = digits(14)
    otp1, otp2, otp3 = digits(6), digits(6), digits(4)
    pin = digits(4)
    pw1 = rng.choice(("Mango", "Sunflower", "Tiger", "Monsoon")) + "@" + digits(4, "12")
    pw2 = rng.choice(("Bruno", "Chai", "Pixel")) + digits(3) + "!"
    phone1 = f"+91 {digits(5, '6789')} {digits(5)}"
    phone2 = f"{digits(5, '6789')}{digits(5)}"
    phone3 = f"+49 151 {digits(8)}"
    email1, email2 = "arjun.mehta94@gmail.com", "arjun.mehta@northwind-analytics.com"
    upi1, upi2 = f"{digits(10, '6789')}@ybl", "arjunm94@okhdfcbank"
    cvv = digits(3)

    # Decoys: look like secrets, are not.
    nonluhn = digits(16)
    while luhn_valid(nonluhn):
        nonluhn = digits(16)
    nonverhoeff = digits(12, "23456789")
    while verhoeff_valid(nonverhoeff) or luhn_valid(nonverhoeff):
        nonverhoeff = digits(12, "23456789")
    order = f"403-{digits(7)}-{digits(7)}"

    S = Secret
    return [
        S("otp", otp1, ("family",), "Mummy", date(2020, 9, 14), f"Beta OTP aaya hai {otp1}, kisko batana hai?"),
        S("otp", otp2, ("priya", "rohan"), "user", date(2022, 3, 17), f"Your OTP is {otp2}, enter it quickly before it expires"),
        S("otp", otp3, ("rohan", "kabir"), "Rohan Verma", date(2021, 6, 19), f"Swiggy wala OTP maang raha hai: {otp3}"),
        S("card_number", group(visa, (4, 4, 4, 4), " "), ("family",), "Papa", date(2019, 10, 15),
          f"Beta mera card number {group(visa, (4, 4, 4, 4), ' ')} hai, expiry 08/27, CVV {cvv}. Flight book kar do"),
        S("cvv", cvv, ("family",), "Papa", date(2019, 10, 15), ""),  # same message as above
        S("card_number", group(mc, (4, 4, 4, 4), "-"), ("rohan", "college"), "user", date(2019, 11, 21),
          f"Use my card {group(mc, (4, 4, 4, 4), '-')} for the Goa hotel, I'll sort it out later"),
        S("card_number", rupay, ("priya", "ananya"), "user", date(2023, 4, 18), f"card no {rupay} exp 11/28"),
        S("card_number", group(amex, (4, 6, 5), " "), ("ananya", "kabir"), "Ananya Mehta", date(2022, 11, 16),
          f"Bhaiya papa ka amex {group(amex, (4, 6, 5), ' ')} use kar lo"),
        S("bank_account", acct, ("kabir", "family"), "Kabir Mehta", date(2020, 4, 22),
          f"Bhai paise yahan bhej de:\nA/c no: {acct}\nIFSC: {ifsc}\nName: Kabir Mehta"),
        S("ifsc", ifsc, ("kabir", "family"), "Kabir Mehta", date(2020, 4, 22), ""),  # same message as above
        S("upi_id", upi1, ("rohan", "college"), "Rohan Verma", date(2020, 1, 16), f"GPay kar de {upi1} pe"),
        S("upi_id", upi2, ("priya", "lucia"), "user", date(2022, 8, 14), f"Send it to {upi2}, thanks!"),
        S("aadhaar", group(ad1, (4, 4, 4), " "), ("family",), "user", date(2021, 7, 14),
          f"Mummy aapka aadhaar number {group(ad1, (4, 4, 4), ' ')} hai na? Form bhar raha hoon"),
        S("aadhaar", ad2, ("ananya", "kabir"), "user", date(2022, 1, 18), f"My aadhaar is {ad2}, fill it in the form"),
        S("pan", pan, ("kabir", "family"), "user", date(2021, 7, 20), f"Mera PAN {pan} hai, ITR file kar dena please"),
        S("password", pw1, ("priya", "ananya"), "user", date(2022, 9, 13), f"Wifi password is {pw1}"),
        S("password", pw2, ("rohan", "college"), "user", date(2021, 12, 19), f"Netflix login: {email1} password {pw2}"),
        S("email", email1, ("rohan", "college"), "user", date(2021, 12, 19), ""),  # same message as above
        S("pin", pin, ("ananya", "family"), "user", date(2020, 12, 16), f"ATM pin {pin} hai, kisi ko mat batana"),
        S("email", email2, ("northwind", "jonas"), "user", a["joined_northwind"] + timedelta(days=3),
          f"Please add me to the calendar invites: {email2}"),
        S("phone", phone1, ("family",), "Papa", date(2020, 7, 18), f"Plumber ka number {phone1}, call kar lena"),
        S("phone", phone2, ("rohan", "college"), "user", date(2022, 8, 28), f"New number, save it: {phone2}"),
        S("phone", phone3, ("jonas", "northwind"), "Jonas Weber", date(2022, 10, 18), f"My German number in case: {phone3}"),
        # decoys
        S("order_number", order, ("priya", "rohan"), "user", date(2022, 11, 21), f"Amazon order #{order} arrives Friday",
          decoy=True, note="e-commerce order id"),
        S("tracking_number", nonluhn, ("rohan", "family"), "user", date(2021, 9, 14), f"Tracking id {nonluhn} for the parcel",
          decoy=True, note="16 digits failing Luhn"),
        S("booking_ref", nonverhoeff, ("family", "priya"), "Papa", date(2023, 5, 16), f"Booking ref {nonverhoeff} hai train ka",
          decoy=True, note="12 digits failing Verhoeff"),
        S("date", "14/03/2024", ("northwind", "rohan", "family"), "other", date(2024, 3, 13), "Offsite moved to 14/03/2024",
          decoy=True, note="a date"),
        S("price", "₹4,999", ("priya", "ananya"), "user", date(2023, 10, 17), "Got the shoes for ₹4,999 in the sale",
          decoy=True, note="a price"),
        S("price", "Rs 12,500", ("college", "rohan"), "other", date(2019, 12, 31), "Total for the villa was Rs 12,500 per head",
          decoy=True, note="a price"),
        S("pincode", "560102", ("football", "jonas", "family"), "other", date(2022, 11, 13), "Ground is in HSR, pincode 560102",
          decoy=True, note="a postal code"),
        S("flight_number", "6E 2134", ("family", "priya"), "user", date(2023, 12, 20), "Flight 6E 2134 lands at 9:40 tonight",
          decoy=True, note="a flight number"),
    ]
