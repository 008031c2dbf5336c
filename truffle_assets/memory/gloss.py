"""An offline English gloss of romanized-Hindi clauses, so the English parse can read Hinglish facts.

Hindi puts the verb last ("iPhone 13 le liya", "Pune shift ho gayi", "main vegan hu"). The gloss finds
a Hindi verb group from `VERBS`, takes the words before it back to the clause start as its object
(postpositions, fillers and forms of address dropped) and writes one plain English clause with the
speaker as subject: "I bought iPhone 13.", "I moved to Pune.", "I am vegan.". Negation is kept
("driving nahi aati" -> "I cannot drive."). Clauses with no first-person reading are left out, and a
message with none has no gloss. This is the offline stand-in for Rosetta's LLM English tier: it
covers the common verb groups, not Hindi grammar.
"""

from __future__ import annotations

import re

# address words and fillers that never belong to a value
_FILLERS = {
    "yaar", "yar", "bro", "bhai", "bhaiya", "didi", "di", "mummy", "mumma", "mom", "maa", "papa", "dad", "beta",
    "haan", "han", "ha", "nahi", "toh", "to", "bhi", "hi", "ab", "aaj", "kal", "abhi", "finally", "aakhir",
    "waise", "bas", "sirf", "ek", "aur", "par", "lekin", "ki", "ka", "ke", "ko", "se", "ne", "mein", "me", "mai",
    "main", "maine", "mujhe", "mera", "meri", "mere", "hum", "humne", "humara", "hamara", "apna", "apni", "wala",
    "wali", "wale", "na", "re", "arre", "are", "accha", "achha", "ok", "okay", "guess", "what", "pe", "already", "officially", "aajkal", "sach", "bolu", "so", "and", "but", "also", "now", "today",
    "purana", "purani", "purane", "naya", "nayi", "naye", "aapki", "aapka", "aapke", "uski", "uska", "iski",
    "bilkul", "bahut", "thoda", "thodi", "sabse", "kuch", "wahi", "yahi", "roz", "pakka", "pura", "puri",
    "subah", "shaam", "raat", "har", "hafte", "hafta", "din", "mahine", "weekend", "log", "apne", "liye", "khud",
}
# loanwords and Hindi nouns the English reader knows under another word
_NON_VEG = re.compile(r"\bnon[\s\-]?veg\b", re.I)
_NOUNS = {"sigarette": "smoking", "cigarette": "smoking", "cigarettes": "smoking", "sutta": "smoking",
          "sharab": "alcohol", "daaru": "alcohol", "baje": "", "gaadi": "car", "scooty": "scooter", "naukri": "job",
          "kutta": "dog", "billi": "cat", "anda": "eggs", "ande": "eggs", "anday": "eggs", "murga": "chicken",
          "machli": "fish", "chashma": "glasses", "chashme": "glasses", "driving": "drive", "swimming": "swim", "cooking": "cook",
          "cycling": "cycle", "dancing": "dance", "singing": "sing",
          # foods people are allergic to or give up, by their English names (the memory is asked in English)
          "kaju": "cashews", "mungfali": "peanuts", "moongfali": "peanuts", "moongphali": "peanuts", "badam": "almonds",
          "jhinga": "prawns", "jhinge": "prawns", "doodh": "milk", "gehun": "wheat", "gehu": "wheat", "baingan": "brinjal"}
_POSTPOSITION = re.compile(r"\b(?:mujhe|maine|main|mein|se|ko|ne|humne)\b", re.I)
_SUBJECT = r"(?:main|mai|maine|mujhe|hum|humne|mein)"
# clause boundaries inside a sentence
_BOUNDARY = re.compile(r"[.!?;:,\n()]+|\s(?:aur|par|lekin|but|and|kyunki|toh|phir|isliye)\s", re.I)

# (Hindi verb group, English clause with {o} for the object; "neg" when the group is negative)
_V = r"(?:hai|hain|h|he|tha|thi|the)?"
VERBS: list[tuple[re.Pattern, str]] = [(re.compile(p, re.I), e) for p, e in (
    (rf"\b(?:le|khareed|kharid)\s+(?:li|liya|lie|liye|lee)\s*{_V}|\b(?:li|liya)\s+hai\b", "bought {o}"),
    # "maine Sony a6400 liya" (needs "maine"); "kar liya" is the light verb of "join kar liya", not "took"
    (r"(?<=\s)(?<!kar )(?:liya|lia)\b(?!\s+(?:tha|thi|hai))", "bought {o}"),
    (r"\b(?:gayi|gaya|gaye|gai)\s+(?:thi|tha|the)\b", "went to {o}"),
    (rf"\bbech\s+(?:di|diya|dee|diye)\s*{_V}|\bbik\s+(?:gayi|gaya|gai)\b", "sold {o}"),
    (rf"\b(?:chhod|chod|chhor)\s+(?:di|diya|dee|diye|chuki|chuka)\s*{_V}|\bband\s+(?:kar\s+)?(?:di|diya|hai)\b", "quit {o}"),
    (rf"\bjoin\s+(?:ki|kiya|kar\s+li|kar\s+liya|kari)\s*{_V}", "joined {o}"),
    (r"\bseekh\s+(?:rahi|raha|rahe)\s+(?:hu|hoon|hun|hai|h)\b", "am learning {o}"),
    (rf"\bseekh\s+(?:li|liya|gayi|gaya|lia)\s*{_V}", "can {o}"),
    (rf"\badopt\s+(?:ki|kiya|kar\s+li|kar\s+liya|kiya\s+hai)\s*{_V}", "adopted {o}"),
    (r"\b(?:bahut\s+|sabse\s+|sirf\s+)?pasand\s+(?:hai|h|he|hain)\b", "like {o}"),
    (r"\b(?:ki|ka|ke)\s+(?:addict|deewani|deewana|shauqeen)\s+(?:hu|hoon|hun)\b", "am a fan of {o}"),
    (r"\b(?:mein|me|mai)\s+(?:hi\s+)?(?:rehti|rehta|rehte)\s+(?:thi|tha|the)\b", "used to live in {o}"),
    (r"\b(?:mein|me|mai)\s+(?:hi\s+)?(?:rehti|rehta|rehte|reh\s+rahi|reh\s+raha)\s*(?:hu|hoon|hun|hain)?\b", "live in {o}"),
    (r"\bshift\s+(?:ho\s+gayi|ho\s+gaya|ho\s+gaye|ho\s+gai|kar\s+liya|kar\s+gaye|hue)\b", "moved to {o}"),
    (rf"\bresign\s+(?:kar\s+)?(?:diya|di|kiya)\s*{_V}", "resigned from {o}"),
    (r"\ballergy\s+(?:hai|h)\b", "am allergic to {o}"),
    (r"\b(?:nahi|nahin|nai)\s+(?:aati|aata|aate)\b", "cannot {o}"),
    (r"\b(?:nahi|nahin|nai)\s+(?:chhod|chod)\s+(?:sakti|sakta|sakte)\b", "eat {o}"),  # "chicken nahi chhod sakti"
    (r"\bchala\s+(?:sakti|sakta)\s+(?:hu|hoon|hun)\b", "can drive"),
    (r"\bkaam\s+(?:karta|karti|karte|kar\s+(?:raha|rahi))\s+(?:hu|hoon|hun)\b", "work at {o}"),
    (r"\b(?:job|naukri)\s+(?:mil|lag)\s+(?:gayi|gai|gaya)\b", "joined {o}"),
    (r"\bse\s+(?:hi\s+)?(?:hu|hoon|hun)\b", "am from {o}"),
    (r"\b(?:shaadi|shadi)\s+(?:ho\s+(?:gayi|gai|gaya)|kar\s+(?:li|liya))\b", "got married to {o}"),
    (r"\b(?:engagement|sagai|roka)\s+ho\s+(?:gayi|gai|gaya)\b", "got engaged to {o}"),
    (r"\b(?:nahi|nahin)\s+(?:khata|khati|khate)\b", "do not eat {o}"),
    (r"\b(?:khata|khati|khate)\s+(?:hu|hoon|hun)\b", "eat {o}"),
    (r"\b(?:nahi|nahin)\s+(?:peeta|peeti|pita|piti)\b", "do not drink {o}"),
    (r"\b(?:khelta|khelti|khelte|khel\s+(?:raha|rahi|rahe))\s+(?:hu|hoon|hun)\b", "play {o}"),
    (r"\b(?:bhaagta|bhagta|bhaagti|bhagti|daudta|daudti)\s+(?:hu|hoon|hun)\b", "run every week"),
    (r"\b(?:peeta|peeti|pita|piti)\s+(?:hu|hoon|hun)\b", "drink {o}"),
    (r"\bclear\s+(?:ho\s+(?:gaya|gayi|gai)|kar\s+(?:liya|li|diya|di))\b", "cleared {o}"),
    (r"\b(?:ka|ki|ke)?\s*fan\s+(?:hu|hoon|hun)\b", "am a fan of {o}"),
    (r"\b(?:nahi|nahin|nai)\s+(?:jaati|jaata|jaate)\b", "do not go to {o}"),  # "gym nahi jaati"
    (r"\b(?:jaati|jaata|jaate)\s+(?:hu|hoon|hun)\b", "go to {o} every day"),  # the habitual present
    (r"\b(?:bolta|bolti|bolte)\s+(?:hu|hoon|hun)\b", "speak {o}"),
    (r"\b(?:uthta|uthti|uthte)\s+(?:hu|hoon|hun)\b", "wake up at {o} every day"),
    (r"\bpasand\s+nahi\b|\bnafrat\s+hai\b", "dislike {o}"),
    (r"\b(?:ka|ki|ke)\s+(?:keeda|keera)\s+(?:lag\s+(?:gaya|gayi|gai)|hai)\b", "got really into {o}"),
    (r"\b(?:ka|ki|ke)\s+(?:bahut\s+)?(?:shauk|shauq)\s+hai\b", "love {o}"),
    (r"\b(?:ho|ban)\s+(?:gayi|gaya|gai|gaye)\s+(?:hu|hoon|hun)\b", "am {o}"),
    (r"\bban\s+(?:gayi|gaya|gai)\b(?!\s+(?:tha|thi))", "became {o}"),  # "Lead Engineer ban gaya"
    (r"\b(?:khane|khana)\s+(?:lag|shuru\s+kar)\s*(?:gayi|gaya|gai|diya|di|liya)?\b", "started eating {o}"),
    (r"\bkarwa\s+(?:liya|li|lia)\b", "got {o}"),  # "LASIK karwa liya"
    (r"\b(?:ka|ki)\s+offer\s+(?:mila|mil\s+gaya|aa\s+gaya|aaya)\b", "got an offer from {o}"),
    (r"\b(?:ki|ka)\s+ho\s+(?:gayi|gaya|gai)\b", "am {o}"),  # "29 ki ho gayi main"
    (r"\bkarti\s+(?:hu|hoon|hun)\b|\bkarta\s+(?:hu|hoon|hun)\b", "do {o}"),
    (r"\b(?:hu|hoon|hun)\b", "am {o}"),  # "hu" is first person singular: the subject is implied
)]
# a day, a festival, a time or a place the clause is bounded to ("Tuesday ko", "navratri mein", "raat ko",
# "ghar pe"): a habit not kept then is kept at other times
_OCCASION = re.compile(r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|navratri|navratre|shravan|sawan|saavan|"
                       r"ekadashi|ramzan|ramadan|lent|weekdays?|weekends?|raat|shaam|subah|party|parties|office|ghar|"
                       r"family|gharwalon)\s+(?:ko|me|mein|pe|par|ke\s+(?:din|saamne|time))\b", re.I)
_NEGATED_HABITS = {"do not eat {o}", "do not drink {o}", "do not go to {o}"}
# an object that opens with a demonstrative or the listener names nothing of the speaker's own
_POINTED = {"ye", "yeh", "wo", "woh", "vo", "is", "iss", "us", "uss", "tu", "tum", "aap", "teri", "tera",
            "tere", "tumhari", "tumhara", "tumhare", "unki", "unka", "unke"}
# two-slot clauses: "<Area> mein 1BHK hai/liya hai", "<Name> ne propose kiya", "B+ hai mera", "PCOS hai"
_HOME = re.compile(r"(?P<area>(?:[A-Z][\w\-]*\s+){0,2}[A-Z][\w\-]*)\s+(?:mein|me)\s+(?P<home>\d\s?bhk|flat|pg|studio|room)"
                   r"\s+(?:hai|h|liya|li|le\s+liya|mil\s+gaya)\b", re.I)
_PROPOSED = re.compile(r"(?P<name>[A-Z][\w\-]+)\s+ne\s+propose\s+(?:kiya|kar\s+diya)", re.I)
_BLOOD = re.compile(r"\b(?P<g>AB|A|B|O)\s?(?P<s>[+-]|\+ve|-ve|positive|negative)\s+(?:hai\s+)?(?:mera|meri)\b", re.I)
_HAS = re.compile(r"\b(?P<o>[A-Za-z][\w\-]*(?:\s+[A-Za-z][\w\-]*)?)\s+(?:hai|h)\s+(?:mujhe|mummy|papa|yaar|bhaiya|didi)\b"
                  r"|(?:^|[.!,]\s*)(?P<o2>[A-Za-z][\w\-]*)\s+(?:hai|h)\b(?=\s*[,.!]|\s+mummy|\s+papa)", re.I)
_AGE = re.compile(r"\b(?P<n>[2-9]\d)\b(?:\s+(?:saal|years?))?(?:\s+:[a-z_]+:)*\s+(?:\w+\s+)?(?:(?:ki|ka)\s+ho\s+(?:gayi|gaya|gai)\b|"
                  r"ho\s+(?:gayi|gaya|gai)\s+(?:main|hu|hoon)\b)", re.I)
_SLEEP = re.compile(r"\b(?P<t>\d{1,2}(?:[:.]\d{2})?(?:\s?-\s?\d{1,2}(?:[:.]\d{2})?)?)\s+baje\s+(?:tak\s+)?(?:hi\s+)?(?:soti|sota)\s+(?:hu|hoon|hun)\b", re.I)
_FLAT_IN = re.compile(r"\b(?P<home>\d\s?bhk)\s+in\s+(?P<area>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)?)", re.I)
_CONDITIONS = {"pcos", "pcod", "thyroid", "asthma", "diabetes", "migraine", "bp", "sugar", "hypothyroid", "anxiety",
               "acidity", "sinus", "allergy", "arthritis", "insomnia", "anemia"}
_HABIT_NOUNS = {"meditation", "yoga", "journaling", "workout", "gym", "running", "exercise", "pooja", "puja"}
# verbs whose object people put first, as the topic, before "toh"
_TOPIC_FIRST = {"drink {o}", "eat {o}", "play {o}", "do not eat {o}", "do not drink {o}"}
# "main X hu" needs the subject; most other groups are first person on their own in a chat.
_NEEDS_SUBJECT = {"am {o}", "do {o}"}
_NOT_A_STATEMENT = re.compile(r"^\s*(?:kya|kyun|kab|kahan|kaise)\b|\b(?:agar|if|shayad|maybe|jab\s+bhi|soch\s+(?:rahi|raha)|"
                              r"sochti|sochta|plan\s+hai|wala\s+hu|wali\s+hu|wale\s+hai|chahti|chahta|kash|kaash)\b"
                              # a question put at the end ("... hu kya", "... ho gayi kya tu"), someone's words
                              r"|\bkya\s*(?:tu|tum|aap|yaar)?\s*[?!.]*\s*$|\bkya\s+(?:tu|tum|aap)\b"
                              r"|\b(?:bolti|bolta|bolte|kehti|kehta|kehte)\s+(?:hai|hain|h|thi|tha|the)\b", re.I)
# a future verb makes its own clause a plan ("akela rahunga ab"), not the done thing beside it
# ("Gachibowli me 1BHK le liya, akela rahunga ab")
_FUTURE = re.compile(r"\b(?:karungi|karunga|jaungi|jaunga|lungi|lunga|rahungi|rahunga)\b", re.I)
_WORD = re.compile(r"[\w'’+&]+(?:[.\-][\w'’+&]+)*")
# someone else as the clause's subject: an agent other than the speaker ("Rohan ne Infosys join kiya",
# "papa ne car bech di"), an event that is someone else's ("Riya ki shaadi ho gayi", "didi ki job lag
# gayi"), or a kin word with the plural verb of respect and no "hum" ("bhaiya Pune shift ho gaye")
_OTHER_AGENT = re.compile(r"\b(?!(?:maine|humne|hamne|mai|main|mein)\b)[\w']+\s+ne\b", re.I)
_OTHERS_EVENT = re.compile(r"\b(?!(?:meri|mera|mere|hamari|humari|hamara|humara|apni|apna)\b)[\w']+\s+(?:ki|ka|ke)\s+"
                           r"(?:shaadi|shadi|engagement|sagai|roka|job|naukri)\b", re.I)
_KIN = re.compile(r"\b(?:papa|mummy|mumma|mom|dad|maa|bhaiya|bhai|didi|di|dadi|nani|dada|nana|chacha|chachi|mama|mami|"
                  r"bua|mausi|uncle|aunty|aunti)\b", re.I)
_RESPECT_PLURAL = re.compile(r"\b(?:gaye|hue|kiye|liye|diye|chuke|rahe)\b", re.I)
# bought for someone else: "mummy ke liye", "Riya ke liye" (not "mere liye", "apne liye")
_FOR_OTHER = re.compile(r"\b(?!(?:mere|apne|khud|hamare|humare|mujh)\b)\w+\s+ke\s+liye\b", re.I)
_I_AS_SUBJECT = re.compile(r"\b(?:main|mai|maine|hum|humne|hamne)\b", re.I)  # "Rohan ne bataya main ... ho gayi"
_WE = re.compile(r"\b(?:hum|humne|hamne|humlog|main|mai|maine|mujhe)\b", re.I)


# the habitual present in the third person: "wo Pune mein rehta hai", "meri behen ... rehti hai"
_THIRD_PERSON = re.compile(r"\b\w+(?:ta|ti)\s+(?:hai|h|he)\b|\b\w+te\s+(?:hain|hai)\b", re.I)


def someone_else(clause: str, group: str) -> bool:
    """The clause is about someone other than the speaker (`group`: its verb group)."""
    if _OTHER_AGENT.search(clause) and not _I_AS_SUBJECT.search(clause) or _OTHERS_EVENT.search(clause):
        return True
    if _THIRD_PERSON.search(clause) and not _WE.search(clause):
        return True
    return bool(_KIN.search(clause) and _RESPECT_PLURAL.search(group) and not _WE.search(clause))


def _present(sentence: str) -> str:
    """The sentence without its clauses in the future tense."""
    if not _FUTURE.search(sentence):
        return sentence
    return ", ".join(c for c in re.split(r"\s*,\s*", sentence) if not _FUTURE.search(c))


def _object(before: str) -> str:
    """The words a verb group takes: back to the clause start, fillers and address words dropped."""
    parts = [p for p in _POSTPOSITION.split(before)]
    for part in reversed(parts):  # the words after the last postposition, else the ones before it
        kept = [x for x in (_NOUNS.get(w.lower(), w) for w in _WORD.findall(part) if w.lower() not in _FILLERS) if x]
        if kept:
            return " ".join(kept[-6:])
    return ""


def gloss(text: str) -> str | None:
    """English clauses for the Hinglish first-person clauses in `text`, or None when there are none."""
    if not text:
        return None
    out: list[str] = []
    text = " ".join(_present(x) for x in re.split(r"(?<=[.!?\n])\s*", text)
                    if x.strip() and not x.rstrip().endswith("?") and not _NOT_A_STATEMENT.search(x))
    for m in _HOME.finditer(text):
        out.append(f"I live in a {m.group('home')} in {m.group('area')}.")
    for m in _PROPOSED.finditer(text):
        if re.search(r"\b(?:haan|yes|ha)\b", text[m.end():], re.I):
            out.append(f"I got engaged to {m.group('name')}.")
    for m in _BLOOD.finditer(text):
        sign = "+" if m.group("s").lower() in ("+", "+ve", "positive") else "-"
        out.append(f"My blood group is {m.group('g').upper()}{sign}.")
    for m in _HAS.finditer(text):
        o = (m.group("o") or m.group("o2") or "").split()[-1].lower()
        if o in _CONDITIONS:
            out.append(f"I have {o}.")
    for m in _AGE.finditer(text):
        out.append(f"I am {m.group('n')}.")
    for m in _SLEEP.finditer(text):
        out.append(f"I sleep at {m.group('t')} every night.")
    for m in _FLAT_IN.finditer(text):
        out.append(f"I live in a {m.group('home')} in {m.group('area')}.")
    if re.search(r"\badopt", text, re.I):
        m = re.search(r"\bnaam\s+(?P<n>[A-Z][\w\-]+)\s+rakha", text)
        if m:
            out.append(f"My pet {m.group('n')}.")
    clauses = []
    for sentence in re.split(r"(?<=[.!?\n])\s*", text):
        # questions, suppositions and hedges state nothing ("agar main Delhi shift ho gaya toh ...")
        if sentence.rstrip().endswith("?") or _NOT_A_STATEMENT.search(sentence):
            continue
        clauses.extend(c for c in _BOUNDARY.split(sentence) if not _FUTURE.search(c))
    last = ""
    for clause in clauses:
        previous, last = last, clause
        clause = clause.strip()
        if not clause:
            continue
        for pat, english in VERBS:
            m = pat.search(clause)
            if not m:
                continue
            before, after = clause[:m.start()], clause[m.end():]
            if someone_else(clause, m.group()):
                break
            if english in _NEGATED_HABITS and _OCCASION.search(clause):
                break  # "Tuesday ko non veg nahi khati": meat on the other days
            if english in _NEEDS_SUBJECT and not re.search(rf"\b{_SUBJECT}\b|\b(?:hu|hoon|hun)\b", clause, re.I):
                break
            # "Mishti ko pasand hai", "mummy ko bhindi pasand nahi": someone else's taste (a dative that is
            # not "mujhe")
            if english in ("like {o}", "dislike {o}") and re.search(r"\b(?!mujhe)\w+\s+ko\b", before, re.I) \
                    and not re.search(r"\bmujhe\b", before, re.I):
                break
            # "allergy hai mujhe" / "shift ho gayi mummy": the object is before the verb group
            obj = _object(before)
            if english == "do {o}":  # "roz 10 minute meditation karti hu": only a habit reads this way
                hit = next((w for w in obj.lower().split() if w in _HABIT_NOUNS), None)
                if hit is None:
                    break
                obj = hit
            if not obj:
                obj = _object(after)
            if not obj and english in _TOPIC_FIRST:  # "beer toh main har weekend peeta hu": the topic, then toh
                obj = _object(previous)
            if english == "bought {o}" and _FOR_OTHER.search(clause):
                break  # "mummy ke liye iPhone le liya": a gift
            if english == "bought {o}" and m.group().lower() in ("liya", "lia") and not re.search(r"\bmaine\b", before, re.I):
                break  # a bare "liya" is "took" as often as "bought": only the speaker's own "maine ... liya"
            if english == "bought {o}" and re.search(r"\d\s?bhk|\b(?:flat|room|pg|ghar)\b", obj, re.I):
                break  # a rented home ("Gachibowli me 1BHK le liya"): _HOME reads it
            if not obj and "{o}" in english and not english.startswith(("got ",)):
                break
            if english == "am {o}" and re.search(r"(?:ti|ta|te)$", obj.split()[-1].lower()):
                break  # "... soti hu", "karti hu": a verb's habitual form, not "I am <noun>"
            if english in ("am {o}", "became {o}"):  # "Acme mein backend developer hoon": a role at a place
                at = re.search(r"\b([A-Z][\w&\-]*(?:\s+[A-Z][\w&\-]*)?)\s+(?:mein|me)\s+\S", before)
                if at and at.group(1).lower() not in _FILLERS and at.group(1) not in obj:
                    obj = f"{obj} at {at.group(1)}"
            negated = bool(re.search(r"\b(?:nahi|nahin|nai|mat)\b", before[-12:], re.I)) \
                and not re.search(r"cannot|not|dislike", english)
            if negated and not english.startswith(("am ", "can ")):
                break  # "Zoho nahi chhoda": what did not happen states nothing
            if obj and obj.split()[0].lower() in _POINTED:
                break  # "ye gaana pasand hai", "aap ki cooking": a thing pointed at, or the listener's
            obj = _NON_VEG.sub("nonveg", obj)  # one token for the parser
            if negated:  # "main vegetarian nahi hu": I am not vegetarian
                english = "am not " + english[3:] if english.startswith("am ") else "cannot " + english[4:]
            sentence = ("I " + english.format(o=obj)).strip()
            sentence = re.sub(r"\s+(?:to|at)\s*$", "", sentence)  # "got married" with no one named
            out.append(sentence.rstrip(".") + ".")
            break
    return " ".join(out) or None
