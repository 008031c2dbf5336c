"""Chat idioms the small parser splits badly, read as words rather than as a parse.

Chat drops subjects and verbs ("switched to contacts full time", "journaling. 10 years now, every
single night", "Aundh mein 1BHK hai, rent 24 hazaar"), and en_core_web_sm then tags "tattoo" as an
adverb or hangs the verb off a noun. Each pattern here is a family of phrasings, not a sentence: a
condition the speaker "gets", eyewear they switch to, a rent figure, a weekday class, an office
schedule. They run on one sentence of the speaker's own message and stay quiet when the sentence
asks, supposes, or talks about someone else (`_OTHERS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from truffle_assets.memory.facts import lexicon as L
from truffle_assets.memory.facts.values import NOT_NAMES

# (predicate, value, confidence, rule)
Claim = tuple[str, str, float, str]

_HEDGED = re.compile(r"\b(?:if|maybe|might|would|will|'ll|thinking|(?<!term\s)plan(?:ning)?|want|wish|hope|agar|shayad|"
                     r"sochti|sochta|chahti|chahta)\b", re.I)
# the sentence is about the listener or a third person ("your vitamin D is low", "uska rent 30k")
_OTHERS = re.compile(r"\b(?:you|your|you're|he|she|his|her|they|their|tera|teri|tere|tumhara|tumhari|aapka|aapki|"
                     r"uska|uski|unka|unki)\b", re.I)

_CHRONIC = sorted((c for c in L.CONDITIONS if c not in L.ACUTE and len(c) > 3), key=len, reverse=True)
_CONDITION = "|".join(map(re.escape, _CHRONIC))
# "mild asthma since school", "chronic migraines", "asthma since childhood"
_CONDITION_SINCE = re.compile(rf"\b(?:(?:mild|chronic|severe|bad)\s+({_CONDITION})\b|({_CONDITION})\s+since\s+"
                              r"(?:school|childhood|college|birth|forever|i\s+was|\d{4}|class))", re.I)
# "migraine again ... I get these every time I skip sleep"
_I_GET_THESE = re.compile(r"\bI\s+(?:get|have|suffer\s+from)\s+(?:these|those|them)\b", re.I)
_CONDITION_WORD = re.compile(rf"\b({_CONDITION})\b", re.I)
# "Vitamin D bhi bahut low hai", "my B12 is low", "iron is super low"
_LOW = re.compile(r"\b(vitamin\s+[a-z]\d{0,2}|b12|iron|haemoglobin|hemoglobin|calcium|ferritin)\s+"
                  r"(?:(?:bhi|bahut|very|super|is|was|really|too|kaafi|thoda)\s+)*low\b", re.I)
# "sprained my ankle", "ankle mein sprain hai", "fractured my wrist"
_BODY = r"ankle|wrist|knee|back|arm|leg|foot|shoulder|toe|finger|elbow|neck"
_INJURY_EN = re.compile(rf"\b(sprained|twisted|fractured|broke|injured|pulled|tore)\s+my\s+({_BODY})\b", re.I)
_INJURY_HI = re.compile(rf"\b({_BODY})\s+(?:mein|me|mai)\s+(sprain|fracture|injury|chot|moch)\s+(?:hai|h|ho\s+(?:gaya|gayi|gai))\b",
                        re.I)
_INJURY_WORD = {"sprain": "sprained", "moch": "sprained", "fracture": "fractured", "injury": "injured",
                "chot": "injured", "broke": "broken", "tore": "torn"}
# "got my first tattoo", "got a nose piercing", "bob cut karwa liya" (glossed "I got bob cut.")
_MARK = re.compile(r"\b(?:got|did|had|karwa\s+(?:liya|li|lia))\s+(?:my\s+|a\s+|an\s+)?(?:first\s+|new\s+|second\s+)?"
                   r"((?:\w+\s+)?(?:tattoo|piercing|haircut))\b|\b((?:bob|pixie|short|boy|buzz|crew)\s+cut)\b", re.I)
# eyewear: "switched to contacts", "my specs"
_EYEWEAR_SWITCH = re.compile(r"\b(?:switched|moved|shifted|went\s+back)\s+to\s+(contacts|lenses|glasses|specs)\b", re.I)
_MY_EYEWEAR = re.compile(r"\bmy\s+(specs|glasses|spectacles|contacts|contact\s+lenses)\b", re.I)
# rent: "rent 24 hazaar", "rent is 18k", "42 ka rent hai", "paying 30k rent"
_RUPEES = r"(?:₹|rs\.?\s*|inr\s*)?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"  # "₹24,000", "rs 18", "12.5"
_UNITS = r"k|hazaar|hazar|thousand|lakh|l"
_AMOUNT = rf"{_RUPEES}\s*({_UNITS})?"
_RENT = re.compile(rf"\brent\s+(?:is\s+|hai\s+|of\s+|was\s+|:\s*)?{_AMOUNT}|{_AMOUNT}\s+(?:ka\s+|ki\s+|in\s+)?rent\b", re.I)
# pay: "salary is 24", "package 18 LPA", "ctc 12.5 lakh", "in-hand 85k"
_SALARY = re.compile(rf"\b(?:salary|package|ctc|in-?hand)\s+(?:is\s+|hai\s+|of\s+|was\s+|now\s+|:\s*)?"
                     rf"{_RUPEES}\s*(lpa|lakhs?|lacs?|l|k|hazaar|hazar|thousand|cr|crore)?\b", re.I)
# saving and borrowing: "10k ka SIP hai har mahine", "SIP chal rahi hai 15 hazaar ki", "EMI 14k",
# "10 lakh ka family floater", "health insurance of 5 lakh"
_NOT_MONEY = r"(?!\s*(?:months?|mahine|years?|saal|installments?|instalments?|%|din|days?)\b)"  # "EMI of 6 months"
_SIP = re.compile(rf"\b(?:sip|sips)\b.{{0,30}}?{_AMOUNT}{_NOT_MONEY}|{_AMOUNT}\s+(?:ka|ki|ke|of|worth)?\s*(?:monthly\s+)?sips?\b",
                  re.I)
_EMI = re.compile(rf"\bemis?\s+(?:is\s+|hai\s+|of\s+|:\s*)?{_AMOUNT}{_NOT_MONEY}|{_AMOUNT}\s+(?:ka|ki|ke|of)?\s*emis?\b",
                  re.I)
_COVER = r"(family\s+floater|health\s+insurance|health\s+cover|mediclaim|term\s+(?:plan|insurance|cover)|insurance)"
_SUM = rf"{_RUPEES}\s*({_UNITS}|crore|cr)?"  # a cover runs to crores: "1 crore ka term plan"
_INSURANCE = re.compile(rf"{_SUM}\s+(?:ka|ki|ke|of|worth)?\s*{_COVER}\b|\b{_COVER}\s+(?:of|for|worth)\s+{_SUM}\b", re.I)
_LOAN_FOR = re.compile(r"\b(car|home|house|bike|education|personal|phone|iphone)\s+(?:ki|ka|ke|loan|emi)\b", re.I)
# a hobby someone "got bitten by": "photography ka keeda lag gaya", "caught the running bug"
_BUG = re.compile(r"\b([a-z]+)\s+ka\s+keeda\b|\b(?:bitten\s+by|caught|got)\s+the\s+([a-z]+)\s+bug\b", re.I)
# living alone: "akeli rahungi ab", "akela rehta hu"
_ALONE = re.compile(r"\b(?:akeli|akela|akele)\s+(?:hi\s+)?(?:rehti|rehta|rahti|rahta|rahungi|rahunga|reh\s+rahi|reh\s+raha)\b",
                    re.I)
# "I don't do horror", "I don't do mornings"
_DONT_DO = re.compile(r"\bI\s+(?:don't|dont|do\s+not)\s+do\s+((?:[a-z]+\s+)?[a-z]+)\b", re.I)
# "I can't function before filter coffee", "can't live without my chai"
_CANT_WITHOUT = re.compile(r"\b(?:I\s+)?(?:can't|cannot|cant)\s+(?:function|live|survive|start\s+(?:my|the)\s+day|wake\s+up)\s+"
                           r"(?:before|without)\s+(?:my\s+|a\s+|some\s+)?((?:[a-z]+\s+){0,2}[a-z]+)", re.I)
# a routine stated as a fragment: "journaling. 10 years now, every single night"
_EVERY = re.compile(r"\b(?:every\s+(?:single\s+)?(?:day|night|morning|evening)|daily|roz|har\s+(?:din|roz|subah|raat)|"
                    r"(?:\d|one|two|three|four|five|six)\s+(?:days|times)\s+a\s+week)\b", re.I)
_HABIT_NOUN = re.compile(r"\b(" + "|".join(sorted(L.HABIT_NOUNS - {"gym", "exercise"}, key=len, reverse=True)) + r")\b", re.I)
# a weekly class or outing: "Kathak classes every Saturday", "Saturday pottery class", "Sunday cycling"
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_WEEKLY = re.compile(rf"\b([a-z]+)\s+class(?:es)?\s+(?:every|on|har)\s+{_DAY}s?\b|\b(?:every\s+)?{_DAY}s?\s+([a-z]+)\s+class(?:es)?\b"
                     rf"|\b{_DAY}\s+((?-i:[a-z]+ing))\b(?!\s+(?:late|behind|out|low))", re.I)
# an office schedule: "office made it 2 days a week", "3 days in office", "mon and fri from home"
_OFFICE_DAYS = re.compile(r"\b(\d|one|two|three|four)\s+days?\s+(?:a|per|every)\s+week\b|\b(\d|one|two|three|four)\s+days?\s+"
                          r"(?:in|at|from)\s+(?:the\s+)?office\b", re.I)
_OFFICE_DAILY = re.compile(r"\b(?:in|to)\s+(?:the\s+)?office\s+every\s+(?:single\s+)?day\b", re.I)
_HOME_DAYS = re.compile(r"\b(?:mon|tue|wed|thu|fri)\w*\b[^.!?]*\bfrom\s+home\b", re.I)
# a named pet: Hinglish "adopt ki ... naam Mishti rakha", English "named her Mishti"
_PET_NAMED = re.compile(r"\bnaam\s+([A-Z][\w\-]+)\s+rakh|\bnamed\s+(?:her|him|it|them)\s+([A-Z][\w\-]+)\b")
_CLAUSE = re.compile(r"[,;]|\s(?:but|par|lekin|aur)\s", re.I)
_LAUGH = re.compile(r"(?<![\w:])(?:" + "|".join(map(re.escape, sorted(L.LAUGHS, key=len, reverse=True)))
                    + r")(?![\w:])|\b(?:ha){2,}|\blo+l\b", re.I)


def laughs(text: str) -> bool:
    """A laugh or "jk" in the message: its idioms may be jokes ("I'm a total chai addict lol")."""
    return bool(_LAUGH.search(text))


# birth order: "main ghar mein sabse chhoti hu", "I'm the eldest"
_BIRTH_ORDER = re.compile(r"\bsabse\s+(chhoti|chhota|choti|chota|badi|bada|badi)\s+(?:hu|hoon|hun)\b|"
                          r"\bI(?:'m|\s+am)\s+the\s+(youngest|eldest|oldest|middle)\s+(?:one|child|kid|sibling|of)?", re.I)
# a diet returned to: "wapas normal vegetarian", "back to vegan"
_DIET_BACK = re.compile(r"\b(?:back\s+to|wapas|ab)\s+(?:normal\s+|being\s+|full[- ]time\s+)?(" + "|".join(
    sorted(map(re.escape, L.DIETS), key=len, reverse=True)) + r")\b", re.I)
_NOT_AFTER = re.compile(r"\s+(?:nahi|nahin|nhi|not|no\s+more)\b", re.I)
# a diet given up: "vegan band", "vegetarian chhod diya", "no longer vegetarian"
_DIET_STOPPED = re.compile(r"\b(" + "|".join(sorted(map(re.escape, L.DIETS), key=len, reverse=True)) +
                           r")\s+(?:band|chhod|chod|khatam|over)\b|\bno\s+longer\s+(?:a\s+)?(" +
                           "|".join(sorted(map(re.escape, L.DIETS), key=len, reverse=True)) + r")\b", re.I)
# "my first proper Sahyadri trek", "my first half marathon" (said of something done: past tense or "done")
_MY_FIRST = re.compile(r"\bmy\s+first\s+((?:proper\s+|real\s+|ever\s+)?(?:[\w\-]+\s+){0,2}(?:trek|marathon|half|10k|5k|21k|race|"
                       r"triathlon|summit|century|ultra|climb))\b", re.I)
# "<Place> trip was the best", "Vietnam trip best tha"
_TRIP_WAS = re.compile(r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s+trip\s+(?:was|tha|best|bahut|ekdum|amazing|was\s+amazing)\b")
# an aunt's or uncle's new title: "Kiara ki bua" (the speaker is Kiara's aunt)
_KIN_OF = re.compile(r"\b([A-Z][a-z]+)\s+(?:ki|ka|ke)\s+(bua|mausi|maasi|masi|chachi|chacha|chachu|mama|mami|fufa|taya|tayi)\b")
# a pet introduced by name with an animal emoji: "meet Bruno :dog_face:", "Toffee se milo"
_MEET = re.compile(r"\b(?:meet|say\s+hi\s+to|say\s+hello\s+to)\s+([A-Z][a-z]+)\b|\b([A-Z][a-z]+)\s+se\s+milo\b")
_ANIMAL = re.compile(r":(?:dog|dog_face|cat|cat_face|puppy|paw_prints|guide_dog|service_dog|rabbit_face|rabbit|parrot|"
                     r"hamster|kitten)[a-z_]*:|\b(?:puppy|kitten|pup|doggo|pet)\b", re.I)
# a resolution with its aim: "2024 resolution number two: learn Kathak properly"
_RESOLUTION = re.compile(r"\bresolution\b[^:.!?]{0,20}:\s*((?:learn|run|read|lose|save|start|quit|finish|visit|write|"
                         r"climb|travel)\s+(?:[\w\-]+\s*){1,3})", re.I)
# sleep needs: "can't sleep without the fan", "AC ke bina neend nahi aati"
_SLEEP_WITHOUT = re.compile(r"\b(?:can't|cannot|cant)\s+sleep\s+without\s+(?:the\s+|my\s+|a\s+)?([\w\-]+(?:\s+[\w\-]+)?)|"
                            r"\b([\w\-]+)\s+ke\s+bina\s+neend\s+(?:hi\s+)?(?:nahi|nahin)\s+aati\b", re.I)
# sleeping late as a rule: "never asleep before 2", "can't sleep before 1", "2 baje se pehle neend nahi aati"
_LATE_SLEEP = re.compile(r"\b(?:never|rarely|can't|cannot|cant)\s+(?:fall\s+)?(?:asleep|sleep)\s+(?:before|till)\s+(12|[1-4])\b|"
                         r"\b(12|[1-4])\s+baje\s+(?:se\s+)?(?:pehle|tak)\s+(?:neend|so(?:na|ta|ti))\s+(?:hi\s+)?(?:nahi|nahin|nhi)\b",
                         re.I)
# an exam or certificate passed, named by its capitalized name ("cleared PMP", "passed CFA Level 1")
_PASSED = re.compile(r"\b(?:cleared|passed)\s+(?:the\s+|my\s+)?([A-Z0-9][\w\-]*(?:\s+[A-Z0-9][\w\-]*){0,2})")
# "the Hitec City office is ...": the speaker's office, named by its place
_THE_OFFICE = re.compile(r"\bthe\s+([A-Z][\w\-]+(?:\s+[A-Z][\w\-]+)?)\s+office\s+(?:is|was|has)\b")
# a new title, cued by a promotion, a first day or being made something
_TITLE_CUE = re.compile(r"\bpromot(?:ion|ed)\b|\bfirst\s+day\b|\bmade\s+me\b|\bjoined\s+as\b|\bnew\s+(?:role|designation)\b",
                        re.I)
# capitalized words, after "as" / "to" / "now" / "aaj se" when they follow one ("promotion ho gaya!!! aaj se
# Senior Associate", "promoted, now Staff Engineer")
_TITLE = re.compile(r"(?:\b(?:aaj\s+se|now|as|to|from\s+today)\s+(?:a\s+|an\s+)?)?\b((?:[A-Z][\w&\-]*\s+){0,3}[A-Z][\w\-]*)")
_TITLE_WORDS = L.ROLE_NOUNS | {"counsel", "partner", "principal"}
_OWNED = re.compile(r"\b(?:my|our|his|her|their|your)\s+(?:new\s+)?$", re.I)
# learning a language in class: "Telugu class update", "German classes twice a week"
_LANGUAGE_CLASS = re.compile(r"\b(" + "|".join(sorted(L.LANGUAGES, key=len, reverse=True)) + r")\s+(?:class|classes|lessons|course|tuition)\b",
                             re.I)
# the speaker's own breakup, in Hinglish: "hamara breakup ho gaya", "Naina aur mera breakup ho gaya"
_OUR_BREAKUP = re.compile(r"(?i)\b(?:hamara|humara|mera|apna)\s+break\s?-?up\s+ho\s+(?:gaya|gya|gayi|gyi)\b")
# a job lost: "naukri chali gayi", "job chhut gayi", "company ne mujhe nikal diya"
_JOB_LOST = re.compile(r"(?i)(?<!ki\s)(?<!ka\s)(?<!ke\s)\b(?:meri\s+)?(?:naukri|job)\s+(?:chali|chhut|chut)\s+(?:gayi|gai|gyi)\b"
                       r"|\bmujhe\s+(?:job|naukri|company|office)\s+se\s+nikal\s+diya\b"
                       r"|\b(?:company|office|boss)\s+ne\s+mujhe\s+nikal\s+diya\b")
# the speaker's phone gone: "my phone got stolen", "lost my phone", "mera phone chori ho gaya"
_PHONE_GONE = re.compile(r"(?i)\bmy\s+(?:phone|mobile)\s+(?:got|was)\s+(?:stolen|nicked)\b|\blost\s+my\s+(?:phone|mobile)\b"
                         r"|\b(?:mera|meri)\s+(?:phone|mobile)\s+(?:chori|gum)\s+ho\s+(?:gaya|gya)\b")
# a course finished: "passed the data privacy certificate", "finished my Python course"
_FINISHED = re.compile(r"(?i)\b(?:passed|cleared|completed|finished|done\s+with)\s+(?:the\s+|my\s+|our\s+)?"
                       r"((?:[\w\-]+\s+){0,4}?(?:course|certificate|certification|diploma|program|programme|degree|bootcamp))\b")
# ... but a level or a part passed is a step along it ("cleared the German A1 exam")
_MILESTONE = re.compile(r"(?i)\b(?:[ABC][12]|level|part|module|semester|year|round|stage|\d+)\b")
# someone else as the seller, right before "sold": "papa sold the car", "Rohan sold his bike"
_SELLER = re.compile(r"\b(?:he|she|they|papa|mummy|mom|dad|bhaiya|bhai|didi|([A-Z][a-z]+))\s+(?:has\s+|had\s+|just\s+|finally\s+)?$")
_NOT_SELLERS = {"finally", "just", "also", "today", "yesterday", "recently", "officially", "so", "and", "i", "we"}


def _someone_sold(before: str) -> bool:
    m = _SELLER.search(before)
    return bool(m) and (m.group(1) is None or m.group(1).lower() not in NOT_NAMES | _NOT_SELLERS)


# a death: "Bruno passed away last night", "we lost Coco", "Bruno nahi raha"
_DIED = re.compile(r"\b([A-Z][a-z]+)\s+(?:passed\s+away|died|is\s+no\s+more|nahi\s+(?:raha|rahi))\b"
                   r"|\bwe\s+lost\s+(?:our\s+|my\s+)?([A-Z][a-z]+)\b")
# a vehicle or gadget sold: "sold the bullet today", "sold my old Activa"
_SOLD = re.compile(r"\bsold\s+(?:my\s+|the\s+|our\s+)?(?:old\s+)?([\w\-]+)\b", re.I)
# a race done: "10K done", "half marathon done in 2:05"
_RACE_DONE = re.compile(r"\b(\d{1,2}\s?k|half\s+marathon|full\s+marathon|marathon|ultra|triathlon|century\s+ride)\s+(?:done|finished|complete|completed)\b",
                        re.I)
# "I'm a chai addict", "I'm a dog person now"
_NOUN_PERSON = re.compile(r"\bI(?:'m|\s+am)\s+(?:a|an)\s+(?:total\s+|complete\s+|big\s+|huge\s+)?([a-z]+)\s+(addict|person|fan|lover|nerd|junkie)\b",
                          re.I)
# test results: "BP border pe hai", "LDL 168 ... borderline high", "my sugar is high"
_HIGH = re.compile(r"\b(BP|blood\s+pressure|LDL|cholesterol|sugar|uric\s+acid|TSH)\b[^.!?]{0,40}?\b(borderline\s+high|border|high)\b",
                   re.I)
_HIGH_NAME = {"bp": "blood pressure", "ldl": "LDL cholesterol", "tsh": "TSH", "sugar": "blood sugar"}
# a report read out, its verdict in the next sentence: "LDL 168 aaya hai. doctor ne bola borderline high"
_READING = re.compile(r"\b(LDL|cholesterol|sugar|uric\s+acid|TSH)\s+(?:is\s+|was\s+|came\s+(?:out\s+)?(?:at\s+)?)?\d{2,3}\b", re.I)
_VERDICT = re.compile(r"\b(borderline\s+high|high)\b(?!\s+(?:nahi|nahin|not)\b)", re.I)
_KIN = re.compile(r"\b(?:papa|mummy|mom|mum|dad|maa|bhai|didi|dadi|nani|dada|nana|wife|husband|sister|brother)\b", re.I)
# body weight in first person: "80 kilo hu", "I'm 72 kg now"
_WEIGHT = re.compile(r"\b(\d{2,3})\s*(?:kg|kgs|kilo|kilos)\s+(?:hu|hoon|hun|ho\s+gaya|ho\s+gayi|now)\b|"
                     r"\bI(?:'m|\s+am)\s+(?:now\s+)?(\d{2,3})\s*(?:kg|kgs|kilo|kilos)\b", re.I)
# a blood group said with what it means ("O negative. universal donor hu main")
_BLOOD_WORDS = re.compile(r"\b(AB|A|B|O)\s?(positive|negative|\+ve|-ve|\+|-)(?=\W|$)", re.I)
_SPINE = re.compile(r"\b(?:slipped\s+disc|disc\s+slip|slip\s+disc|disc\s+bulge|herniated\s+disc)\b", re.I)
_PHYSIO = re.compile(r"\b(?:physio(?:therapy)?)\s+(?:shuru|start(?:ed)?|chal\s+rahi)\b|\bstarted\s+physio(?:therapy)?\b", re.I)
# an age reached: "31 ho gaya", "30 ka ho gaya hu" (with a birthday word nearby)
_AGE_REACHED = re.compile(r"\b([1-9]\d)\s+(?:ka\s+|ki\s+|saal\s+ka\s+|saal\s+ki\s+)?ho\s+(?:gaya|gayi|gai)\b", re.I)
_BIRTHDAY_WORDS = re.compile(r"\b(?:birthday|bday|happy\s+birthday|cake|budha|budhi|umar|saal)\b", re.I)
# "I'm off alcohol now", "off sugar since March"
_OFF = re.compile(r"\bI(?:'m|\s+am)\s+off\s+(alcohol|booze|drinking|sugar|meat|caffeine|coffee|cigarettes|smoking|social\s+media)\b", re.I)
# "I only read Amish and cricket biographies", "I only watch horror"
_ONLY = re.compile(r"\bI\s+only\s+(read|watch|listen\s+to|eat|drink)\s+((?:[\w\-]+\s+){0,4}?[\w\-]+)(?=[.!,;]|$)", re.I)
# "<Title> is still the best cricket movie", "Lagaan is my all-time favourite film"
_BEST = re.compile(r"^\W*([A-Z][\w']*(?:\s+[A-Z][\w']*){0,3})\s+is\s+(?:still\s+)?(?:the\s+best|my\s+(?:all[- ]time\s+)?fav\w*)\s+"
                   r"(?:[a-z]+\s+){0,2}?(movie|film|show|series|book|song|album|dish|food|place|team|band|game)\b")
# "<Area>, 2BHK" / "2BHK, <Area>" as one fragment
_AREA_HOME = re.compile(r"\b([A-Z][\w\-]+(?:\s+[A-Z][\w\-]+)?),\s+(\d\s?BHK)\b")

# a phone or gadget of one's own by its brand: "mera bhi Redmi Note 8 hai", "my Pixel 7 is dying"
_BRANDS = r"iPhone|Redmi|Samsung|Galaxy|OnePlus|Pixel|Realme|Vivo|Oppo|Poco|Moto|Motorola|Nokia|Nothing\s+Phone|iPad|MacBook|Kindle"
_MY_DEVICE = re.compile(rf"\b(?:mera|meri|my)\s+(?:bhi\s+|naya\s+|new\s+|old\s+|purana\s+)?((?:{_BRANDS})(?:\s+[\w\-]+){{0,3}}?)"
                        r"\s+(?:hai|h|is|tha)\b")
# the employer in a resignation the parse cannot read ("I resigned from K&R." from the Hinglish gloss)
_RESIGNED_FROM = re.compile(r"\bresigned\s+from\s+([A-Z][\w&.\-]*(?:\s+[A-Z][\w&.\-]*)?)")

_SENTENCE = re.compile(r"(?:[^.!?\n]|(?<=\d)\.(?=\d))+[.!?]*")  # "10.5 lakh" is one sentence

# a driving test passed or a licence in hand: "cleared the driving test", "licence aa gaya", "got my DL"
_DRIVING = re.compile(r"\b(?:cleared|passed)\s+(?:the\s+|my\s+)?driving\s+test\b|\bgot\s+(?:my\s+)?(?:driving\s+licen[cs]e|licen[cs]e|DL)\b"
                      r"|\b(?:driving\s+)?(?:licen[cs]e|DL)\s+(?:aa|mil)\s+(?:gaya|gayi|gai)\b", re.I)
# a goal named as the speaker's: "my 2025 goal. Pune half marathon in december", "august me Hyderabad
# 10K hai, wahi target hai". Not "the goal is ..." (a team's), nor "goal hai <a Hindi clause>": with no
# gloss for the clause, the fact would read as the untranslated sentence
_GOAL_AFTER = re.compile(r"\bmy\s+(?:\d{4}\s+)?(?:goal|target)(?:\s+for\s+\d{4})?\s*(?:is\s+(?:to\s+)?|:|\.|-|–)"
                         r"\s*(?P<v>[^.!?\n]{3,80})", re.I)
_GOAL_BEFORE = re.compile(r"(?:^|[.!\n]\s*)(?P<v>[^.!?\n,]{3,60}?)(?:\s+(?:hai|h))?,?\s+(?:wahi|yahi|bas\s+wahi|that's\s+my)"
                          r"\s+(?:goal|target)\b", re.I)


def goals(message: str) -> Iterator[Claim]:
    """A goal the speaker names as their goal or target, in a sentence not about someone else."""
    for rx in (_GOAL_AFTER, _GOAL_BEFORE):
        for m in rx.finditer(message):
            value = re.split(r"\s*,\s*(?=(?:that's|bas|yaar|lol)\b)", m.group("v").strip())[0].strip(" ,")
            sentence = next((x.group() for x in _SENTENCE.finditer(message) if x.start() <= m.start() < x.end()), "")
            if message[m.end():].lstrip().startswith("?") or sentence.rstrip().endswith("?") or _OTHERS.search(sentence):
                continue
            if len(value.split()) >= 2 and not re.match(r"(?i)(?:kya|what|which|is|was|tha|nahi|not)\b", value):
                yield "goal", " ".join(value.split()[:10]), 0.6, "named_goal"
                return


def read_message(message: str, quoted: list[tuple[int, int]] = ()) -> Iterator[Claim]:
    """Claims the speaker's message makes through idioms; quoted words (`quoted` spans) are not theirs."""
    for m in _SENTENCE.finditer(message):
        if not any(a <= m.start() < b for a, b in quoted):
            yield from read_phrases(m.group(), message)
    yield from pet_names(message)
    yield from goals(message)
    if _ANIMAL.search(message):
        for m in _MEET.finditer(message):
            yield "pet", m.group(1) or m.group(2), 0.6, "meet_pet"


def _hedged(text: str) -> bool:
    """A hedge or plan word, written in lower case or opening the text ("Senior Planning Engineer" is a title)."""
    start = len(text) - len(text.lstrip())
    return any(m.group()[0].islower() or m.start() == start for m in _HEDGED.finditer(text))


def read_phrases(sentence: str, message: str) -> Iterator[Claim]:
    """Claims one sentence of the speaker's message makes through an idiom (`message` gives context)."""
    if sentence.rstrip().endswith("?"):
        return
    # read whole: the comma is part of these ("Kondapur, 2BHK"; "first day, Senior Planning Engineer")
    if not _hedged(sentence):
        if m := _AREA_HOME.search(sentence):
            yield "lives_in", m.group(1), 0.6, "area_home"
            yield "home_type", m.group(2), 0.6, "area_home"
        yield from _title(sentence, message)
        if (m := _SALARY.search(sentence)) and not _OTHERS.search(sentence):  # whole: "45,000" has a comma
            if value := salary_value(m.group(1), m.group(2)):
                yield "salary", value, 0.65, "salary"
    for clause in _CLAUSE.split(sentence):
        if clause.strip() and not _hedged(clause):
            yield from _clause(clause, message)


def _title(sentence: str, message: str) -> Iterator[Claim]:
    """A job title the message cues (a promotion, a first day, "made me", "joined as", a new role):
    capitalized words ending in a role noun, one word only right after "as" / "to" / "now" / "aaj se"
    ("promoted to Manager"), never in a clause about someone else ("she made Partner") unless they
    made the speaker it ("they made me Team Lead"), nor after "my" / "our" (a person: "met my Team Lead")."""
    if not _TITLE_CUE.search(message):
        return
    promoted = bool(re.search(r"\bpromot", message, re.I))
    for m in _TITLE.finditer(sentence):
        words = m.group(1).split()
        led = m.group(0) != m.group(1)
        clause = next((c for c in _CLAUSE.split(sentence) if m.group(1) in c), sentence)
        about_others = _OTHERS.search(clause) and not re.search(r"\bmade\s+me\b", clause, re.I)
        a_person = _OWNED.search(sentence[:m.start(1)])  # "met my Team Lead": someone who holds it
        if words[-1].lower() in _TITLE_WORDS and (led or len(words) > 1) and not about_others and not a_person:
            yield "job", m.group(1), 0.7 if promoted else 0.65, "promotion_title" if promoted else "title_cue"
            return


def _clause(sentence: str, message: str) -> Iterator[Claim]:
    others = bool(_OTHERS.search(sentence))
    if not others:
        yield from _health(sentence, message)
        yield from _home(sentence)
        yield from _money(sentence)
        yield from _routine(sentence, message)
    for m in _MARK.finditer(sentence):
        if not others or re.search(r"\bmy\b", sentence, re.I):
            yield "appearance", (m.group(1) or m.group(2)).lower(), 0.65, "got_mark"
    if (m := _EYEWEAR_SWITCH.search(sentence)) and not others:
        yield "eyesight", L.EYEWEAR[m.group(1).lower()], 0.7, "switched_eyewear"
    elif (m := _MY_EYEWEAR.search(sentence)) and not re.search(r"\b(?:wine|beer|shot|sun)\s*glasses\b", sentence, re.I):
        yield "eyesight", L.EYEWEAR.get(m.group(1).lower().split()[0], "glasses"), 0.6, "my_eyewear"
    if (m := _DONT_DO.search(sentence)) and m.group(1).lower().split()[-1] not in _NOT_A_TASTE:
        yield "dislikes", m.group(1).lower(), 0.6, "dont_do"
    if m := _CANT_WITHOUT.search(sentence):
        value = m.group(1).lower()
        if value.split()[-1] not in _NOT_A_TASTE:
            yield "likes", value, 0.65, "cant_without"
    if not others:
        yield from _life(sentence, message)
    yield from _stopped(sentence, others)


# An activity given up (the habit reads "stopped <activity>", whose opposite it ends): "no more running",
# "physio ne gym mana kar diya", "doctor asked me to stop running", "haven't run in months",
# "running chhut gayi". The activity is a gerund or a routine noun.
_ACTIVITY = r"([a-z]+ing|" + "|".join(sorted(L.HABIT_NOUNS, key=len, reverse=True)) + r")"
_BARRED = re.compile(rf"\b(?:no\s+more|(?:asked|told)\s+me\s+to\s+stop)\s+(?:the\s+|my\s+)?{_ACTIVITY}\b"
                     rf"|\b{_ACTIVITY}\s+(?:ne\s+)?(?:mana|band|chhut|chhoot|chut)\s+(?:kar\s+|karwa\s+|ho\s+)?"
                     r"(?:diya|di|dia|kiya|ki|gaya|gayi|gai|gya|hai|h)\b", re.I)
_BARRED_BY = re.compile(r"\b(?:doctor|dr|physio|ortho|trainer|coach)\b", re.I)
_LAPSED = re.compile(r"\b(?:haven'?t|have\s+not|not)\s+(?:been\s+)?(run|ran|running|jogged|swum|cycled|climbed|lifted|"
                     r"been\s+to\s+the\s+gym|gone\s+to\s+the\s+gym|played\s+\w+)\s+(?:in|for)\s+(?:months|ages|a\s+year|years|"
                     r"\w+\s+months)\b", re.I)
_GERUND = {"run": "running", "ran": "running", "jogged": "jogging", "swum": "swimming", "cycled": "cycling",
           "climbed": "climbing", "lifted": "lifting"}


# a wedding that happened, which ends the engagement: "tied the knot", "married life", "our wedding was ..."
_WED = re.compile(r"\b(?:tied\s+the\s+knot|got\s+hitched|newly\s*weds?|married\s+life|"
                  r"I(?:'m|\s+am)\s+a\s+(?:husband|wife)\s+now|our\s+wedding\s+(?:was|went)|"
                  r"(?:hamari|humari|meri)\s+shaadi\s+ho\s+(?:gayi|gai|gyi))\b", re.I)


def _stopped(sentence: str, others: bool) -> Iterator[Claim]:
    if _WED.search(sentence):
        yield "relationship_status", "married", 0.65, "wed"
    m = _BARRED.search(sentence)
    # about the speaker: no third person, or a doctor's word to them ("physio ne gym mana kar diya")
    if m and (not others or _BARRED_BY.search(sentence)):
        what = (m.group(1) or m.group(2)).lower()
        if what not in ("thing", "nothing", "something", "anything", "morning", "evening", "being", "king", "wedding",
                        "saying", "talking", "worrying", "complaining", "joking", "waiting"):
            yield "habit", f"stopped {what}", 0.6, "barred"
    elif (m := _LAPSED.search(sentence)) and not others:
        what = m.group(1).lower()
        what = "gym" if "gym" in what else _GERUND.get(what, what.removeprefix("played ").strip())
        yield "habit", f"stopped {what}", 0.55, "lapsed"


# objects of "don't do" / "can't live without" that are no taste ("I don't do that", "can't function without it")
_NOT_A_TASTE = {"that", "this", "it", "anything", "much", "well", "so", "too", "you", "them", "him", "her", "me", "sleep",
                "good", "bad", "enough", "more", "less", "yet", "now", "today", "any", "nothing"}


def _life(sentence: str, message: str) -> Iterator[Claim]:
    if m := _BIRTH_ORDER.search(sentence):
        word = (m.group(1) or m.group(2)).lower()
        order = "youngest" if word in ("chhoti", "chhota", "choti", "chota", "youngest") else \
            "middle" if word == "middle" else "eldest"
        yield "family", f"{order} child", 0.7, "birth_order"
    if m := _DIET_BACK.search(sentence):
        if _NOT_AFTER.match(sentence, m.end()):  # "ab vegetarian nahi hu": no longer
            yield "end:diet", L.DIETS[m.group(1).lower()], 0.7, "diet_no_more"
        else:
            yield "diet", L.DIETS[m.group(1).lower()], 0.7, "diet_back"
    if m := _DIET_STOPPED.search(sentence):
        diet = L.DIETS[(m.group(1) or m.group(2)).lower()]
        if re.search(r"(?i)\bnon[\s-]$", sentence[:m.start()]):  # "non veg chhod diya": gave up meat
            diet = "non-vegetarian"
        yield "end:diet", diet, 0.7, "diet_stopped"
    if (m := _MY_FIRST.search(sentence)) and re.search(r"\b(?:did|done|finished|completed|ran|climbed|summited|today)\b",
                                                       message, re.I):
        yield "completed", "first " + re.sub(r"^(?:proper|real|ever)\s+", "", m.group(1), flags=re.I), 0.6, "my_first"
    if m := _TRIP_WAS.search(sentence):
        yield "trip", m.group(1), 0.6, "trip_was"
    if _DRIVING.search(sentence):
        yield "skill", "can drive", 0.65, "driving_test"
    if m := _KIN_OF.search(sentence):
        yield "family", m.group(1), 0.6, "kin_of"
    if m := _RESOLUTION.search(sentence):
        yield "goal", m.group(1).strip(), 0.65, "resolution"
    if m := _SLEEP_WITHOUT.search(sentence):
        yield "sleep", "can't sleep without " + (m.group(1) or m.group(2)), 0.65, "sleep_without"
    if m := _BUG.search(sentence):
        yield "hobby", (m.group(1) or m.group(2)).lower(), 0.65, "bitten_by_bug"
    if m := _LATE_SLEEP.search(sentence):
        yield "sleep", f"night owl (rarely asleep before {m.group(1) or m.group(2)})", 0.65, "late_sleep"
    if m := _THE_OFFICE.search(sentence):
        yield "office", f"{m.group(1)} office", 0.6, "the_office"
    if m := _LANGUAGE_CLASS.search(sentence):
        yield "learning", m.group(1).capitalize(), 0.65, "language_class"
    if _OUR_BREAKUP.search(sentence):
        yield "end:partner", "", 0.7, "breakup_ho_gaya"
    if _JOB_LOST.search(sentence):
        yield "end:employer", "", 0.65, "job_lost"
    if m := _PHONE_GONE.search(sentence):
        yield "end:phone", "", 0.65, "phone_gone"
    if (m := _DIED.search(sentence)) and (name := m.group(1) or m.group(2)).lower() not in NOT_NAMES:
        yield "died", name, 0.7, "died"  # ends only a pet (or a partner) held under that name
    if (m := _SOLD.search(sentence)) and (kind := L.POSSESSIONS.get(m.group(1).lower())) \
            and not _someone_sold(sentence[:m.start()]):
        yield "end:" + kind, m.group(1), 0.7, "sold"
    if m := _RACE_DONE.search(sentence):
        yield "completed", m.group(1).upper().replace(" ", "") if re.match(r"\d", m.group(1)) else m.group(1).lower(), 0.65, "race_done"
    if m := _NOUN_PERSON.search(sentence):
        what, kind = m.group(1).lower(), m.group(2).lower()
        if what not in ("morning", "night", "people", "party", "big", "total", "huge", "complete", "massive", "great",
                        "true", "real", "diehard", "crazy"):
            yield "likes", f"{what} {kind}" if kind == "person" else what, 0.6, "noun_person"
    if m := _HIGH.search(sentence):
        name = _HIGH_NAME.get(m.group(1).lower(), m.group(1))
        yield "condition", f"{'borderline ' if 'border' in m.group(2).lower() else ''}high {name}", 0.6, "high_reading"
    elif (m := _READING.search(sentence)) and (v := _VERDICT.search(message)) and not _KIN.search(sentence[:m.start()]) \
            and not re.search(r"\bnot\s+high\b", message, re.I):
        name = _HIGH_NAME.get(m.group(1).lower(), m.group(1))
        yield "condition", f"{'borderline ' if 'border' in v.group(1).lower() else ''}high {name}", 0.55, "high_reading"
    if m := _WEIGHT.search(sentence):
        yield "weight", f"{m.group(1) or m.group(2)} kg", 0.55, "weight"
    if (m := _BLOOD_WORDS.search(sentence)) and re.search(r"\b(?:donor|blood|group)\b", message, re.I):
        sign = "+" if m.group(2).lower() in ("positive", "+ve", "+") else "-"
        yield "blood_group", f"{m.group(1).upper()}{sign}", 0.7, "blood_words"
    if _SPINE.search(sentence):
        yield "condition", "slipped disc", 0.65, "slipped_disc"
    if _PHYSIO.search(sentence):
        yield "condition", "physiotherapy", 0.55, "physio"
    if (m := _AGE_REACHED.search(sentence)) and _BIRTHDAY_WORDS.search(message) and 15 < int(m.group(1)) < 90:
        yield "age", m.group(1), 0.65, "age_reached"
    if m := _OFF.search(sentence):
        what = m.group(1).lower()
        yield "habit", "stopped drinking" if what in ("alcohol", "booze", "drinking") else f"stopped {what}", 0.65, "off"
    if m := _ONLY.search(sentence):
        yield "likes", m.group(2), 0.6, "only_" + m.group(1).split()[0].lower()
    if m := _BEST.search(sentence):
        kind = L.FAVOURITE_KINDS.get(m.group(2).lower(), m.group(2).lower())
        yield f"favourite_{kind}", m.group(1), 0.65, "the_best"
    if m := _MY_DEVICE.search(sentence):
        first = m.group(1).split()[0].lower()
        yield ("phone" if first not in ("ipad", "macbook", "kindle") else "possession"), m.group(1), 0.6, "my_device"
    if m := _PASSED.search(sentence):
        yield "completed", m.group(1), 0.65, "passed"
    if (m := _FINISHED.search(sentence)) and not _MILESTONE.search(m.group(1)):
        yield "finished", m.group(1), 0.65, "finished_course"  # ends the course being learnt, asserts nothing
    if m := _RESIGNED_FROM.search(sentence):
        yield "left_job", m.group(1).rstrip("."), 0.7, "resigned_from"


def _health(sentence: str, message: str) -> Iterator[Claim]:
    for m in _CONDITION_SINCE.finditer(sentence):
        yield "condition", (m.group(1) or m.group(2)).lower(), 0.7, "condition_since"
    if _I_GET_THESE.search(sentence) and (m := _CONDITION_WORD.search(message)):
        yield "condition", m.group(1).lower(), 0.65, "i_get_these"
    for m in _LOW.finditer(sentence):
        what = " ".join(w.capitalize() if i == 0 else w.upper() for i, w in enumerate(m.group(1).split()))
        yield "condition", f"{what} deficiency", 0.65, "low_level"
    for m in _INJURY_EN.finditer(sentence):
        yield "condition", f"{_INJURY_WORD.get(m.group(1).lower(), m.group(1).lower())} {m.group(2).lower()}", 0.7, "injury"
    for m in _INJURY_HI.finditer(sentence):
        yield "condition", f"{_INJURY_WORD[m.group(2).lower()]} {m.group(1).lower()}", 0.7, "injury"


def _home(sentence: str) -> Iterator[Claim]:
    if (m := _RENT.search(sentence)) and (amount := _amount(m)):
        yield "rent", f"₹{amount:,} a month", 0.65, "rent"
    if _ALONE.search(sentence):
        yield "lives_with", "alone", 0.7, "lives_alone"


def _money(sentence: str) -> Iterator[Claim]:
    """A monthly SIP, an EMI, a health cover, each with its amount."""
    if (m := _SIP.search(sentence)) and (amount := _amount(m)):
        yield "investment", f"₹{amount:,} monthly SIP", 0.65, "sip"
    if (m := _EMI.search(sentence)) and (amount := _amount(m)):
        what = _LOAN_FOR.search(sentence)
        yield "loan", f"{what.group(1).lower() + ' loan ' if what else ''}EMI of ₹{amount:,} a month", 0.6, "emi"
    if m := _INSURANCE.search(sentence):
        num, unit, cover = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(5), m.group(6), m.group(4))
        kind = "term" if cover.lower().startswith("term") else "" if cover.lower() == "insurance" else "health"
        lakh = float(num.replace(",", ""))
        if (unit or "").lower() in ("crore", "cr"):
            unit, lakh = "lakh", lakh * 100
        if (unit or "").lower() in ("lakh", "l") or not unit and lakh < 100:  # a cover is named in lakh
            yield "insurance", f"{in_lakh(lakh)} {kind + ' ' if kind else ''}insurance", 0.6, "cover"


def _amount(m: re.Match) -> int | None:
    """The rupees of a match with two `_AMOUNT` alternatives (groups 1-2 or 3-4)."""
    num, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return _rupees(num, unit)


def salary_value(num: str, unit: str | None) -> str | None:
    """A pay figure as it is meant: Indian chat names yearly pay in lakh ("24", "18 LPA", "12.5 lakh") and
    monthly pay in thousands ("85k", "85,000"): '24' -> '₹24 lakh a year', '85k' -> '₹85,000 a month'."""
    value = float(num.replace(",", ""))
    unit = (unit or "").lower()
    if unit in ("cr", "crore"):
        unit, value = "lakh", value * 100
    if unit in ("lpa", "l") or unit.startswith(("lakh", "lac")) or (not unit and 1 <= value < 200):
        return f"{in_lakh(value)} a year"
    if unit in ("k", "hazaar", "hazar", "thousand"):
        value *= 1000
    return f"₹{int(value):,} a month" if 5_000 <= value <= 2_000_000 else None


def in_lakh(lakh: float) -> str:
    """An amount in lakh as people write it: '₹24 lakh', and from 100 lakh on '₹1 crore', '₹1.5 crore'."""
    return f"₹{lakh / 100:g} crore" if lakh >= 100 else f"₹{lakh:g} lakh"


def _rupees(num: str, unit: str | None) -> int | None:
    """'24' + 'hazaar' -> 24000; '18k' -> 18000; '42' (a rent in thousands, as people say it) -> 42000;
    None below ₹1,000 (no rent, SIP or EMI worth a fact)."""
    value = float(num.replace(",", ""))
    unit = (unit or "").lower()
    if unit in ("k", "hazaar", "hazar", "thousand"):
        value *= 1000
    elif unit in ("lakh", "l"):
        value *= 100_000
    elif value < 100:  # "42" is 42,000; "500" is ₹500
        value *= 1000
    return int(value) if 1000 <= value <= 1_000_000 else None


def _routine(sentence: str, message: str) -> Iterator[Claim]:
    if (m := _HABIT_NOUN.search(sentence)) and _EVERY.search(message) and re.match(r"\W*" + m.group(1), sentence, re.I):
        yield "habit", m.group(1).lower(), 0.6, "routine_fragment"
    for m in _WEEKLY.finditer(sentence):
        what = (m.group(1) or m.group(2) or m.group(3)).lower()
        if what not in ("the", "my", "a", "this", "next", "last", "every", "morning", "evening", "yoga", "gym", "office",
                        "meeting", "morning", "shopping", "nothing", "something", "everything", "working", "sleeping"):
            yield "hobby", what, 0.6, "weekly_class"
    if not re.search(r"\boffice\b|\bwfh\b|\bfrom\s+home\b", message, re.I):
        return
    if _OFFICE_DAYS.search(sentence) or _HOME_DAYS.search(sentence):
        yield "work_mode", "hybrid", 0.6, "office_days"
    elif _OFFICE_DAILY.search(sentence):
        yield "work_mode", "from office", 0.6, "office_daily"


def pet_names(message: str) -> Iterator[Claim]:
    """A pet named as it was adopted (the adoption and the name may be in different sentences)."""
    if not re.search(r"\badopt|\brescue|\bshelter\b", message, re.I):
        return
    for m in _PET_NAMED.finditer(message):
        yield "pet", m.group(1) or m.group(2), 0.7, "pet_named"
