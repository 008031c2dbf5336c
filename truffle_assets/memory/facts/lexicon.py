"""The vocabulary the parse-based reader maps clauses through: predicates and the words that signal them.

Words, not sentences: a verb lemma with its preposition ("work at", "move to", "allergic to"), a
noun class (a possession, an animal, a condition, a language) or an attribute noun after "my"
("my blood group is ..."). `PREDICATES` says, per predicate, its category, the label of its fact
text ("Allergy: peanuts") and whether it holds one value at a time (a new value supersedes the old).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Predicate:
    category: str
    label: str
    single: bool = False  # one value at a time: a new value closes the current one
    timeless: bool = False  # holds for life: no valid_from from the first mention


PREDICATES: dict[str, Predicate] = {
    # identity
    "name": Predicate("identity", "Name", single=True, timeless=True),
    "nickname": Predicate("identity", "Nickname"),
    "age": Predicate("identity", "Age", single=True),
    "birthday": Predicate("identity", "Birthday", single=True, timeless=True),
    "hometown": Predicate("identity", "From", single=True, timeless=True),
    "handedness": Predicate("identity", "Handedness", single=True, timeless=True),
    "height": Predicate("identity", "Height", single=True),
    "weight": Predicate("identity", "Weight", single=True),  # one at a time: "80 kg now" ends "92 kg"
    "blood_group": Predicate("health", "Blood group", single=True, timeless=True),
    # home
    "lives_in": Predicate("home", "Lives in", single=True),
    "home_type": Predicate("home", "Home", single=True),
    "lives_with": Predicate("home", "Lives with", single=True),
    "rent": Predicate("home", "Rent", single=True),
    # work and study
    "employer": Predicate("work", "Works at", single=True),
    "job": Predicate("work", "Job", single=True),
    "team": Predicate("work", "Team", single=True),
    "work_mode": Predicate("work", "Works", single=True),
    "education": Predicate("education", "Studied"),
    "learning": Predicate("skill", "Learning"),
    "skill": Predicate("skill", "Can"),
    "language": Predicate("skill", "Speaks"),
    # money
    "salary": Predicate("finance", "Salary", single=True),
    "investment": Predicate("finance", "Invests"),
    "insurance": Predicate("finance", "Insurance"),
    "loan": Predicate("finance", "Loan"),
    # people
    "partner": Predicate("relationship", "Partner", single=True),
    "relationship_status": Predicate("relationship", "Relationship", single=True),
    "sister": Predicate("relationship", "Sister"),
    "brother": Predicate("relationship", "Brother"),
    "mother": Predicate("relationship", "Mother", single=True, timeless=True),
    "father": Predicate("relationship", "Father", single=True, timeless=True),
    "family": Predicate("relationship", "Family"),
    "best_friend": Predicate("relationship", "Best friend"),
    "friend": Predicate("relationship", "Friend"),
    "pet": Predicate("relationship", "Pet"),
    "personality": Predicate("identity", "Personality"),
    "appearance": Predicate("identity", "Appearance"),
    "internship": Predicate("work", "Interned at"),
    "office": Predicate("work", "Office", single=True),
    # health and habits
    "allergy": Predicate("health", "Allergy"),
    "condition": Predicate("health", "Health"),
    "eyesight": Predicate("health", "Eyesight", single=True),
    "diet": Predicate("preference", "Diet", single=True),
    "habit": Predicate("habit", "Habit"),
    "sleep": Predicate("habit", "Sleep", single=True),
    # tastes
    "likes": Predicate("preference", "Loves"),
    "dislikes": Predicate("preference", "Dislikes"),
    "favourite": Predicate("preference", "Favourite"),
    "hobby": Predicate("hobby", "Hobby"),
    # things, plans, events
    "possession": Predicate("possession", "Owns"),
    "vehicle": Predicate("possession", "Vehicle"),
    "phone": Predicate("possession", "Phone", single=True),
    "goal": Predicate("goal", "Goal"),
    "completed": Predicate("event", "Did"),
    "trip": Predicate("event", "Trip"),
    "moved": Predicate("event", "Moved to"),
    "started_job": Predicate("event", "Started at"),
    "started_unnamed_job": Predicate("event", "Started"),  # consolidation names the company, or drops it
    "left_job": Predicate("event", "Left"),
    "engaged": Predicate("event", "Engaged"),
}


def predicate_info(predicate: str) -> Predicate:
    """`favourite_food` and friends share `favourite`'s entry with their own label."""
    if predicate in PREDICATES:
        return PREDICATES[predicate]
    if predicate.startswith("favourite_"):
        kind = predicate.removeprefix("favourite_").replace("_", " ")
        return Predicate("preference", f"Favourite {kind}")
    return Predicate("other", predicate.replace("_", " ").capitalize())


# ---- words that place a clause -------------------------------------------------------------------
LIVE_VERBS = {"live", "stay", "reside", "settle"}
MOVE_VERBS = {"move", "shift", "relocate"}
JOIN_VERBS = {"join"}
LEAVE_VERBS = {"quit", "leave", "resign"}
LIKE_VERBS = {"love", "like", "enjoy", "adore", "prefer", "dig"}
DISLIKE_VERBS = {"hate", "dislike", "detest", "loathe"}
OWN_VERBS = {"buy", "get", "purchase", "own", "have", "bring", "gift", "upgrade", "switch"}
SELL_VERBS = {"sell"}
ADOPT_VERBS = {"adopt", "rescue", "foster", "get", "bring", "have"}
START_VERBS = {"start", "begin", "take"}
STOP_VERBS = {"stop", "quit", "give", "cancel"}
FINISH_VERBS = {"finish", "complete", "run", "do", "clear", "pass", "cross", "hit", "read", "give"}
STUDY_VERBS = {"study", "graduate", "major", "do"}
GOAL_VERBS = {"want", "plan", "hope", "aim", "train", "wish"}
SAY_VERBS = {"say", "tell", "ask", "joke", "claim", "reckon", "think", "believe", "text", "write", "reply"}
HEDGE_HEADS = {"think", "consider", "plan", "maybe", "might", "may", "could", "would", "should", "wonder",
               "probably", "perhaps", "hope", "dream", "wish", "imagine", "suppose"}

ROLE_NOUNS = {
    "engineer", "developer", "designer", "analyst", "manager", "scientist", "consultant", "architect", "intern",
    "teacher", "professor", "lecturer", "doctor", "nurse", "lawyer", "accountant", "researcher", "founder",
    "writer", "journalist", "chef", "pharmacist", "dentist", "banker", "marketer", "recruiter", "administrator",
    "specialist", "technician", "officer", "associate", "executive", "lead", "director", "programmer", "tester",
    "editor", "photographer", "student", "surgeon", "physician", "therapist", "psychologist", "artist",
    "musician", "coach", "trainer", "pilot", "cofounder", "co-founder", "ceo", "cto", "sde", "swe", "staff",
    "freelancer", "entrepreneur", "resident", "owner", "partner", "head", "vp", "president", "clerk",
    "cook", "baker", "driver", "farmer", "mechanic", "electrician", "plumber", "illustrator",
    "animator", "producer", "actor", "singer", "dancer", "ca", "mba", "phd", "pm", "sre", "devops",
}
PETS = {"pet", "dog", "puppy", "pup", "doggo", "cat", "kitten", "kitty", "parrot", "bird", "rabbit", "bunny", "hamster",
        "fish", "turtle", "tortoise", "beagle", "labrador", "lab", "retriever", "pug", "husky", "indie", "shihtzu",
        "persian", "dachshund", "spaniel", "terrier", "shepherd", "golden", "pomeranian", "budgie"}
POSSESSIONS = {
    "phone": "phone", "iphone": "phone", "pixel": "phone", "smartphone": "phone", "mobile": "phone", "oneplus": "phone",
    "laptop": "possession", "macbook": "possession", "ipad": "possession", "tablet": "possession",
    "kindle": "possession", "camera": "possession", "guitar": "possession", "piano": "possession",
    "keyboard": "possession", "ukulele": "possession", "violin": "possession", "ps5": "possession",
    "playstation": "possession", "xbox": "possession", "console": "possession", "switch": "possession",
    "watch": "possession", "smartwatch": "possession", "headphones": "possession", "tv": "possession",
    "car": "vehicle", "bike": "vehicle", "motorbike": "vehicle", "motorcycle": "vehicle", "scooter": "vehicle",
    "scooty": "vehicle", "enfield": "vehicle", "bullet": "vehicle", "activa": "vehicle", "ather": "vehicle",
    "cycle": "vehicle", "bicycle": "vehicle", "ev": "vehicle", "suv": "vehicle", "sedan": "vehicle",
    "hatchback": "vehicle", "house": "possession", "flat": "possession", "apartment": "possession",
    "drone": "possession", "dslr": "possession",
    # makes and models people name instead of the thing ("bought a Nexon", "Sony a6400 liya"); only names
    # that are no everyday word ("City", "Swift", "Access" are left out)
    "samsung": "phone", "redmi": "phone", "realme": "phone", "poco": "phone", "galaxy": "phone",
    "thinkpad": "possession", "chromebook": "possession", "airpods": "possession", "gopro": "possession",
    "canon": "possession", "nikon": "possession", "fujifilm": "possession", "sony": "possession", "mirrorless": "possession",
    "i10": "vehicle", "i20": "vehicle", "creta": "vehicle", "nexon": "vehicle", "baleno": "vehicle", "wagonr": "vehicle",
    "innova": "vehicle", "seltos": "vehicle", "brezza": "vehicle", "tiago": "vehicle", "verna": "vehicle",
    "ertiga": "vehicle", "fortuner": "vehicle", "altroz": "vehicle", "kwid": "vehicle", "xuv700": "vehicle",
    "xuv300": "vehicle", "splendor": "vehicle", "pulsar": "vehicle", "ktm": "vehicle", "ntorq": "vehicle",
    "jawa": "vehicle", "himalayan": "vehicle", "meteor": "vehicle", "tesla": "vehicle",
}
CONDITIONS = {"asthma", "diabetes", "migraine", "migraines", "thyroid", "hypothyroidism", "pcos", "pcod", "anxiety",
              "depression", "adhd", "eczema", "psoriasis", "arthritis", "bp", "hypertension", "insomnia",
              "sinus", "sinusitis", "acidity", "gerd", "ibs", "anemia", "cholesterol", "vertigo", "allergy",
              "allergies", "injury", "fracture", "sprain", "tear", "slip", "disc", "knee", "back", "lactose",
              "gluten", "celiac", "colour-blind", "colorblind", "dyslexia", "tinnitus", "covid", "dengue",
              "typhoid", "jaundice", "fever", "cold", "flu"}
ACUTE = {"fever", "cold", "flu", "covid", "dengue", "typhoid", "jaundice"}  # passing illnesses: events, not traits
LANGUAGES = {"english", "hindi", "tamil", "telugu", "kannada", "malayalam", "marathi", "bengali", "bangla",
             "gujarati", "punjabi", "urdu", "odia", "assamese", "konkani", "sanskrit", "french", "german",
             "spanish", "japanese", "mandarin", "chinese", "korean", "italian", "portuguese", "russian", "arabic",
             "dutch", "bhojpuri", "sindhi", "nepali"}
SKILL_VERBS = {"swim", "drive", "cook", "code", "dance", "sing", "ride", "skate", "ski", "surf", "knit", "paint",
               "draw", "play", "speak", "read", "type", "juggle", "whistle", "bat", "bowl", "climb", "sew", "bake"}
HABIT_VERBS = {"drink", "smoke", "vape", "meditate", "pray", "fast", "exercise", "run", "jog", "cycle", "swim",
               "walk", "journal", "gym", "workout", "lift", "yoga"}
DIETS = {"vegetarian": "vegetarian", "veg": "vegetarian", "vegan": "vegan", "eggetarian": "eggetarian",
         "pescatarian": "pescatarian", "non-vegetarian": "non-vegetarian", "nonvegetarian": "non-vegetarian",
         "non-veg": "non-vegetarian", "nonveg": "non-vegetarian", "keto": "keto", "jain": "jain"}
DRINKS_AND_SMOKES = {"beer", "wine", "alcohol", "whisky", "whiskey", "rum", "vodka", "gin", "cigarettes", "cigarette",
                     "beedi", "cigars", "hookah", "booze"}
MEATS = {"meat", "chicken", "mutton", "fish", "beef", "pork", "prawns", "seafood", "lamb", "nonveg", "non-veg", "egg", "eggs"}
RACES = {"certificate", "diploma", "marathon", "half", "10k", "5k", "21k", "42k", "race", "triathlon", "trek", "ultra", "hike", "century",
         "run", "ride", "swim", "talk", "course", "certification", "exam", "degree", "thesis", "book", "books",
         "challenge", "project", "summit", "climb"}
GOAL_OBJECTS = RACES | {"learn", "lose", "read", "save", "become", "finish", "complete", "build", "visit", "write",
                        "run", "climb", "travel", "buy", "get", "master", "start", "crack", "clear"}
SIBLING_NOUNS = {"sister": "sister", "sis": "sister", "brother": "brother", "bro": "brother", "didi": "sister",
                 "bhaiya": "brother", "behen": "sister", "bhai": "brother"}
PARENT_NOUNS = {"mom": "mother", "mum": "mother", "mother": "mother", "mummy": "mother", "maa": "mother",
                "mumma": "mother", "dad": "father", "father": "father", "papa": "father", "daddy": "father"}
PARTNER_NOUNS = {"girlfriend", "boyfriend", "partner", "wife", "husband", "fiance", "fiancee", "fiancé", "fiancée",
                 "gf", "bf", "spouse", "bae"}
FAMILY_NOUNS = {"niece", "nephew", "grandmother", "grandfather", "grandma", "grandpa", "nani", "dadi", "nana",
                "dada", "aunt", "uncle", "cousin", "son", "daughter", "kid", "baby", "mama", "chacha", "bua",
                "mausi", "in-laws"}
# "my <noun> is <value>": attribute nouns and the predicate they fill
ATTRIBUTES = {
    "name": "name", "birthday": "birthday", "bday": "birthday", "b'day": "birthday", "hometown": "hometown",
    "height": "height", "weight": "weight", "age": "age", "nickname": "nickname", "rent": "rent",
    "goal": "goal", "resolution": "goal", "aim": "goal", "dream": "goal", "team": "team",
    "blood": "blood_group", "group": "blood_group", "diet": "diet", "hobby": "hobby", "hobbies": "hobby",
    "passion": "likes", "weakness": "likes", "obsession": "likes", "jam": "likes",
    "native": "hometown", "religion": "identity_religion", "role": "job", "title": "job", "designation": "job",
    "job": "job", "office": "office", "company": "employer", "employer": "employer", "internship": "internship",
}
PERSONALITY = {"introvert", "extrovert", "ambivert", "foodie", "workaholic", "homebody", "perfectionist",
               "procrastinator", "overthinker", "nerd", "geek"}
# "I'm a runner now", "social smoker": a noun that says what the person does
DOER_NOUNS = {"runner": ("hobby", "running"), "cyclist": ("hobby", "cycling"), "swimmer": ("hobby", "swimming"),
              "trekker": ("hobby", "trekking"), "hiker": ("hobby", "hiking"), "gamer": ("hobby", "gaming"),
              "reader": ("hobby", "reading"), "smoker": ("habit", "smokes"), "drinker": ("habit", "drinks"),
              "teetotaler": ("habit", "doesn't drink"), "teetotaller": ("habit", "doesn't drink"),
              "vegetarian": ("diet", "vegetarian"), "vegan": ("diet", "vegan"), "climber": ("hobby", "climbing"),
              "baker": ("hobby", "baking"), "photographer": ("hobby", "photography")}
HABIT_NOUNS = {"meditation", "yoga", "journaling", "workout", "gym", "running", "exercise", "pilates", "zumba",
               "crossfit", "pooja", "puja", "namaz"}
BODY_MARKS = {"tattoo", "piercing", "haircut", "braces"}
EYEWEAR = {"glasses": "glasses", "specs": "glasses", "spectacles": "glasses", "contacts": "contact lenses",
           "lenses": "contact lenses", "lasik": "LASIK"}
FAVOURITE_WORDS = {"favourite", "favorite", "fav", "fave", "favourit"}
FAVOURITE_KINDS = {"dish": "food", "cuisine": "food", "snack": "food", "dessert": "food", "meal": "food",
                   "film": "movie", "singer": "music", "band": "music", "artist": "music", "musician": "music",
                   "song": "music", "album": "music", "game": "sport", "colour": "color", "series": "show",
                   "writer": "author", "novel": "book", "cricketer": "sport", "player": "sport", "club": "team",
                   "place": "place", "city": "place", "season": "season", "drink": "drink", "food": "food",
                   "movie": "movie", "show": "show", "book": "book", "author": "author", "sport": "sport",
                   "team": "team", "color": "color", "music": "music", "actor": "movie", "holiday": "place"}
LAUGHS = {"lol", "lmao", "rofl", "haha", "hahaha", "jk", "jokes", "kidding", ":face_with_tears_of_joy:",
          ":rolling_on_the_floor_laughing:", ":winking_face_with_tongue:", ":zany_face:"}
FUTURE_WORDS = {"tomorrow", "next", "soon", "someday", "later", "upcoming"}
WORK_MODES = {"remote": "remote", "wfh": "remote", "hybrid": "hybrid", "office": "from office",
              "onsite": "from office", "on-site": "from office"}
# "my <noun> is ..." about something passing, not a property of the person
TRANSIENT = {"flight", "train", "bus", "cab", "meeting", "call", "plan", "day", "week", "weekend", "mood", "head",
             "battery", "order", "package", "parcel", "turn", "fault", "problem", "question", "point", "life",
             "bad", "guess", "bet", "treat", "pleasure", "dream", "luck", "time", "stomach", "back", "mind",
             "heart", "bill", "ticket", "seat", "slot", "appointment", "exam", "result", "deadline", "laptop",
             "internet", "wifi", "network", "data", "screen", "place", "room", "thing", "stuff", "side", "way",
             "answer", "reply", "message", "number", "address", "email", "password", "pin", "otp", "account",
             "aadhaar", "aadhar", "pan", "passport", "card", "ssn", "upi", "ifsc", "phone", "mobile", "id", "code"}
# bought, but not a possession worth remembering
CONSUMABLES = {"ticket", "grocery", "groceries", "food", "vegetable", "milk", "gift", "stuff", "thing", "medicine",
               "coffee", "snack", "lunch", "dinner", "breakfast", "pizza", "cake", "flower", "book", "tickets",
               "pass", "subscription", "recharge", "plan", "insurance", "dress", "shirt", "top", "jeans", "ice",
               "cream", "chocolate", "sweet", "mithai", "fruit", "bread", "egg", "water", "beer", "wine", "drink",
               "one", "lot", "bunch", "couple", "pair", "some", "something"}
