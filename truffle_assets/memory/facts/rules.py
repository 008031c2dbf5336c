"""The rule table: English and romanized-Hindi (Hinglish) patterns that state a fact about the speaker.

Each `Rule` names a predicate, a category, a confidence and how its capture becomes a value
(`extraction.build_value`); a cheap keyword gate per rule lets most messages skip most patterns.
Also here: the words that make a match no claim (questions, hypotheticals, negations) and the
Hinglish/English vocabularies the values are mapped through (siblings, favourite kinds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MONTH_RE = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|" \
            r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY_MONTH = rf"(?i:(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{MONTH_RE})\b|(?P<m2>{MONTH_RE})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b)"

NAME = r"\b(?P<v>[^\W\d_][\w'’.\-]*(?:\s+[^\W\d_][\w'’\-]*){0,2})"  # trimmed to its Capitalized prefix
PHRASE = r"(?P<v>[^\n]{1,80})"
ROLE_NOUN = (r"(?:engineer|developer|designer|analyst|manager|scientist|consultant|architect|intern|teacher|"
             r"professor|lecturer|doctor|nurse|lawyer|accountant|researcher|founder|product manager|writer|"
             r"journalist|chef|pharmacist|dentist|banker|marketer|recruiter|administrator|admin|specialist|"
             r"technician|officer|associate|executive|lead|director|programmer|tester|editor|photographer)s?")
ROLE = rf"(?P<role>(?i:(?:(?:senior|junior|lead|staff|principal|chief|head|associate|assistant|sr\.?|jr\.?)\s+)?" \
       rf"(?:[a-z]+\s+){{0,2}}?{ROLE_NOUN}))"
ORG = r"(?P<org>[A-Z][\w&.\-]*(?:\s+[A-Z][\w&.\-]*){0,2})"
NOT_THEIRS = r"(?!['’]s\b)"  # a relation word the possessor of another ("my wife's sister") names someone else's
REL_ADJ = r"(?:(?P<adj>younger|elder|older|little|big|baby|twin|chhoti|chhota|badi|bada|choti|chota)\s+)?"
_PARTNER = r"(?:girlfriend|boyfriend|partner|wife|husband|fianc[eé]e?|gf|bf)"
# "I moved to X" says both where the user lives (lives_in) and that they moved (event).
_MOVED_TO = r"(?i:\bi\s+(?:just\s+|finally\s+)?(?:moved|shifted|relocated)\s+to|\bwe\s+(?:just\s+|finally\s+)?(?:moved|shifted|relocated)\s+to)"
# The kinds a favourite can be said to be; FAVOURITE_KINDS folds their synonyms.
_FAV_KIND = r"(?P<type>(?i:food|dish|sport|game|band|singer|artist|musician|movie|film|show|book|author|team|song|colou?r|drink|place|city|cuisine|snack|dessert))"


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern
    predicate: str
    category: str
    confidence: float
    value: str = "name"  # name | phrase | place | role | org | birthday | const
    template: str = "{s} {p}: {v}."
    scope: str = "sentence"  # sentence | message
    allow_negation: bool = False
    const: str | None = None


def _r(name: str, pattern: str, predicate: str, category: str, confidence: float, **kw) -> Rule:
    return Rule(name, re.compile(pattern.replace("'?", "['’]?")), predicate, category, confidence, **kw)

RULES: list[Rule] = [
    # ---- identity ----------------------------------------------------------------------------
    _r("name_is", rf"(?i:\bmy name is|\bmera naam)\s+{NAME}", "name", "identity", 0.9,
       template="{s}'s name is {v}."),
    _r("intro", rf"^(?i:(?:hi|hello|hey|hola|namaste)\b[^.!?]{{0,30}}?[,!.]?\s*(?:i\s*'?m|i am|this is|myself))\s+{NAME}",
       "name", "identity", 0.75, template="{s}'s name is {v}.", scope="message"),
    _r("live_in", rf"(?i:\bi\s+(?:currently\s+|now\s+|still\s+)?live\s+in|\bi'?m\s+(?:now\s+)?(?:living|based|settled)\s+in|"
       rf"\bi\s+am\s+(?:now\s+)?(?:living|based|settled)\s+in|\bwe\s+(?:now\s+)?live\s+in)\s+{NAME}",
       "lives_in", "identity", 0.9, value="place", template="{s} lives in {v}."),
    _r("rehta", rf"{NAME}\s+(?i:(?:mein|me|main)\s+(?:hi\s+)?(?:rehta|rehti|rehte|reh\s+raha|reh\s+rahi)\s+(?:hoon|hu|hun|hain))",
       "lives_in", "identity", 0.85, value="place", template="{s} lives in {v}."),
    _r("moved_past", rf"{_MOVED_TO}\s+{NAME}",
       "lives_in", "identity", 0.8, value="place", template="{s} lives in {v}."),
    _r("shift_ho_gaya", rf"{NAME}\s+(?i:shift\s+(?:ho\s+gay[aie]|ho\s+gaye|kar\s+(?:liya|gaya|gaye)|hua)\b)",
       "lives_in", "identity", 0.8, value="place", template="{s} lives in {v}."),
    # "<City> pahunch gaya! Flat mil gaya <Area> mein": arrived and found a home.
    _r("found_home", rf"^{NAME}\s+(?i:pahunch\s+gay[aie]|pahuch\s+gay[aie]|reached)\b.*?(?i:\b(?:flat|ghar|room|apartment|house|pg)\b[^.!?\n]*?\bmil\s+gay[aie])"
       rf"(?:\s+(?P<area>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){{0,2}})\s+(?i:mein|me)\b)?",
       "lives_in", "identity", 0.8, value="place", template="{s} lives in {v}.", scope="message"),
    _r("living_here", rf"^{NAME}(?:'s)?\s+(?i:rains?|weather|winters?|summers?|traffic|food|people|monsoons?|mornings|evenings|vibes?|streets)\b"
       rf"[^.!?\n]*(?i:\bliving\s+here\b|\blive\s+here\b|\byahan\s+rehna\b)", "lives_in", "identity", 0.6, value="place",
       template="{s} lives in {v}."),
    _r("grew_up", rf"(?i:\bi\s+grew\s+up\s+in|\bi\s+was\s+(?:born\s+and\s+)?(?:raised|born)\s+in|\bi'?m\s+(?:originally\s+)?from|\bi\s+am\s+(?:originally\s+)?from|"
       rf"\bmy\s+home\s*town\s+is|\bmera\s+home\s*town)\s+{NAME}", "hometown", "identity", 0.85,
       value="place", template="{s}'s hometown is {v}."),
    _r("is_home", rf"^{NAME}\s+(?i:is|will\s+always\s+be)\s+(?i:(?:my\s+)?home)\b(?!\s+(?i:now|today|tonight|yet|early|late|alone|by|at|soon))",
       "hometown", "identity", 0.7, value="place", template="{s}'s hometown is {v}."),
    _r("se_hoon", rf"(?i:\bmain)\s+{NAME}\s+(?i:se\s+(?:hoon|hu|hun))\b", "hometown", "identity", 0.8, value="place",
       template="{s}'s hometown is {v}."),
    _r("birthday_turn", rf"(?i:\bi\s+(?:turn|will\s+turn|'ll\s+turn)\s+(?P<age>\d{{2}})\s+on)\s+{_DAY_MONTH}", "birthday",
       "identity", 0.9, value="birthday", template="{s}'s birthday is {v}."),
    _r("birthday_nth", rf"(?i:\b(?:my|mera)\s+(?P<age>\d{{2}})(?:st|nd|rd|th)\s+birthday\s+(?:is\s+on|is|hai|on)?)\s*{_DAY_MONTH}",
       "birthday", "identity", 0.85, value="birthday", template="{s}'s birthday is {v}."),
    _r("birthday_is", rf"(?i:\b(?:my|mera)\s+(?:b'?day|birthday)\s+(?:is\s+on|is|hai|on)?)\s*{_DAY_MONTH}", "birthday",
       "identity", 0.85, value="birthday", template="{s}'s birthday is {v}."),
    _r("job_hoon", rf"{ORG}\s+(?i:mein|me|main)\s+{ROLE}(?:\s+(?i:hoon|hu|hun|ki\s+job|ka\s+offer))?\b", "job", "identity", 0.8,
       value="role", template="{s} works as {v}."),
    _r("job_en", rf"(?i:\bi\s+work\s+as|\bi'?m\s+(?:working\s+as\s+)?(?:a|an)|\bi\s+am\s+(?:working\s+as\s+)?(?:a|an))\s+{ROLE}(?:\s+(?i:at|in|with|for)\s+{ORG})?",
       "job", "identity", 0.85, value="role", template="{s} works as {v}."),
    _r("work_at", rf"(?i:\bi\s+(?:currently\s+)?work\s+(?:at|for|in)|\bi'?m\s+working\s+(?:at|for)|\bi\s+am\s+working\s+(?:at|for))\s+{ORG}",
       "employer", "work", 0.8, value="org", template="{s} works at {v}."),
    _r("joining_as", rf"(?i:\b(?:joining|joined|join\s+kar\s+raha\s+hoon)\s+(?:the\s+)?(?:[\w\-]+\s+){{0,3}}?(?:team\s+)?as\s+(?:a|an))\s+{ROLE}",
       "job", "identity", 0.75, value="role", template="{s} works as {v}."),
    # ---- preference --------------------------------------------------------------------------
    _r("fav_typed", rf"(?i:\b(?:my|mera|meri)\s+(?:all[- ]time\s+)?(?:favou?rite|fav)\s+){_FAV_KIND}"
       rf"(?i:\s+is|\s+has\s+to\s+be|\s+hai)?\s+{PHRASE}", "favourite", "preference", 0.9, value="phrase",
       template="{s}'s favourite {t} is {v}."),
    _r("is_my_fav_typed", rf"^{PHRASE}?(?i:\s+is\s+(?:definitely\s+|easily\s+|still\s+)?my\s+(?:all[- ]time\s+)?(?:favou?rite|fav)\s+){_FAV_KIND}\b",
       "favourite", "preference", 0.9, value="phrase", template="{s}'s favourite {t} is {v}."),
    _r("is_my_fav", rf"^{PHRASE}?(?i:\s+(?:is|are)\s+(?:definitely\s+|easily\s+|still\s+)?my\s+(?:all[- ]time\s+|absolute\s+|total\s+)?(?:favou?rite|fav)(?:\s+thing)?)\s*(?:[,.!]|$|(?i:nothing|ever|forever|always|hands down))",
       "favourite", "preference", 0.85, value="phrase", template="{s}'s favourite is {v}."),
    _r("weakness", rf"^{PHRASE}?(?i:\s+(?:is|are)\s+(?:honestly\s+|totally\s+|definitely\s+)?my\s+(?:biggest\s+|big\s+)?(?:weakness|guilty\s+pleasure|jam|comfort\s+food))\b",
       "favourite", "preference", 0.8, value="phrase", template="{s} loves {v}."),
    _r("more_my_thing", rf"^{PHRASE}?(?i:\s+(?:is|are)\s+(?:more|really|totally)\s+my\s+thing)\b", "favourite", "preference", 0.7,
       value="phrase", template="{s} loves {v}."),
    _r("kuch_bhi", rf"^{PHRASE}?(?i:\s+ke\s+liye\s+(?:toh\s+|to\s+)?(?:main|mai)\s+kuch\s+bhi\s+kar\s+(?:sakta|sakti)\s+(?:hoon|hu|hun))",
       "favourite", "preference", 0.75, value="phrase", template="{s} loves {v}."),
    _r("fav_hinglish", rf"^{PHRASE}?(?i:\s+(?:mera|meri)\s+(?:all[- ]time\s+)?(?:favou?rite|fav)\s+(?:\w+\s+)?(?:hai|he))\b",
       "favourite", "preference", 0.8, value="phrase", template="{s}'s favourite is {v}."),
    _r("veg", r"(?i:\b(?:being|i'?m|i\s+am|am|turned|went|became|now|main|ab)\s+(?:a\s+)?(?:fully\s+|pure\s+|strictly\s+|completely\s+|totally\s+|full\s+)?)(?<!non-)(?<!non )vegetarian\b",
       "diet", "preference", 0.8, value="const", const="vegetarian", template="{s} is vegetarian."),
    _r("veg_hinglish", r"(?i:\b(?:main|mai)\s+(?:ab\s+)?(?:pure\s+|pura\s+)?(?:veg|vegetarian)\s+(?:ho\s+gaya|hoon|hu|ban\s+gaya))\b",
       "diet", "preference", 0.8, value="const", const="vegetarian", template="{s} is vegetarian."),
    # not bounded to an occasion ("on Tuesdays", "during Navratri", "at home"): "at all", "in years" bound nothing
    _r("no_meat", r"(?i:\bi\s+(?:don'?t|do\s+not|no\s+longer|stopped|quit)\s+eat(?:ing)?\s+(?:meat|non[- ]?veg|chicken|fish))\b"
       r"(?!\s+(?:on|during|in|at|after|before|when|while|whenever|except|with|till|until)\s+(?!all\b|years?\b|ages\b))",
       "diet", "preference", 0.75, value="const", const="vegetarian", template="{s} is vegetarian.", allow_negation=True),
    _r("vegan", r"(?i:\b(?:being|i'?m|i\s+am|turned|went|became)\s+(?:a\s+)?(?:fully\s+|strictly\s+)?vegan)\b",
       "diet", "preference", 0.8, value="const", const="vegan", template="{s} is vegan."),
    _r("nonveg", r"(?i:\b(?:i'?m|i\s+am|main)\s+(?:a\s+)?(?:proper\s+|hardcore\s+|total\s+)?non[- ]?veg(?:etarian)?\b|\bnon[- ]?veg(?:etarian)?\b[^.!?\n]{0,25}\b(?:is\s+sacred|zindabad|for\s+life|forever)\b|\bi\s+(?:love|eat)\s+(?:meat|non[- ]?veg))",
       "diet", "preference", 0.65, value="const", const="non-vegetarian", template="{s} eats meat (non-vegetarian)."),
    # ---- relationships -----------------------------------------------------------------------
    _r("my_sibling", rf"(?i:\b(?:my|meri|mera)\s+){REL_ADJ}(?P<rel>(?i:sister|brother|behen|bahen|didi|bhaiya))\b,?\s+{NAME}",
       "sibling", "relationship", 0.9, template="{v} is {s}'s {a}{r}."),
    # "X is my sister's husband", "X is my wife's sister": a relative of a relative (NOT_THEIRS)
    _r("is_my_sibling", rf"^{NAME}\s+(?i:is|has\s+been)\s+(?i:my)\s+{REL_ADJ}(?P<rel>(?i:sister|brother))\b{NOT_THEIRS}", "sibling",
       "relationship", 0.9, template="{v} is {s}'s {a}{r}."),
    _r("sibling_hai", rf"^{NAME}\s+(?i:meri|mera)\s+{REL_ADJ}(?P<rel>(?i:behen|bahen|sister|bhai|brother))\s+(?i:hai|he)\b", "sibling",
       "relationship", 0.85, template="{v} is {s}'s {a}{r}."),
    _r("best_friend_is", rf"^{NAME}\s+(?i:is|has\s+been|'s)\s+(?i:my|mera|meri)\s+(?i:best\s+(?:friend|buddy|pal)|bff)\b{NOT_THEIRS}", "best_friend",
       "relationship", 0.9, template="{v} is {s}'s best friend."),
    _r("my_best_friend", rf"(?i:\b(?:my|mera|meri)\s+(?:best\s+(?:friend|buddy|pal)|bff)),?\s+{NAME}", "best_friend", "relationship", 0.85,
       template="{v} is {s}'s best friend."),
    _r("best_friend_hai", rf"^{NAME}\s+(?i:mera|meri)\s+(?i:best\s+friend|bff)\s+(?i:hai|he)\b", "best_friend", "relationship", 0.85,
       template="{v} is {s}'s best friend."),
    _r("my_friend", rf"(?i:\b(?:my|mera|meri)\s+(?:close\s+|old\s+|good\s+)?friend),?\s+{NAME}", "friend", "relationship", 0.7,
       template="{v} is {s}'s friend."),
    _r("my_partner", rf"(?i:\b(?:my|meri|mera)\s+{_PARTNER}),?\s+{NAME}", "partner", "relationship", 0.85,
       template="{v} is {s}'s partner."),
    _r("is_my_partner", rf"^{NAME}\s+(?i:is|has\s+been)\s+(?i:my|meri|mera)\s+(?i:{_PARTNER})\b{NOT_THEIRS}", "partner", "relationship", 0.85,
       template="{v} is {s}'s partner."),
    _r("dating_named", rf"(?i:\bi'?m\s+(?:now\s+)?(?:dating|seeing)|\bi\s+am\s+(?:now\s+)?(?:dating|seeing)|\bi'?m\s+in\s+a\s+relationship\s+with)\s+{NAME}",
       "partner", "relationship", 0.85, template="{v} is {s}'s partner."),
    _r("dating_someone", rf"(?i:\bi'?m\s+(?:now\s+)?(?:dating|seeing)\s+(?:someone|somebody)|\bi\s+am\s+(?:now\s+)?(?:dating|seeing)\s+(?:someone|somebody)|\bi'?m\s+in\s+a\s+relationship)"
       rf"[^\n]*?(?i:\b(?:her|his|their)\s+name\s+is)\s+{NAME}", "partner", "relationship", 0.85,
       template="{v} is {s}'s partner.", scope="message"),
    _r("dating_and_i", rf"^{NAME}\s+(?i:and\s+i\s+(?:are|have\s+been)\s+(?:dating|together|seeing\s+each\s+other))\b", "partner",
       "relationship", 0.85, template="{v} is {s}'s partner."),
    _r("broke_up", rf"^{NAME}\s+(?i:and\s+i\s+(?:broke\s+up|split\s+up|separated|are\s+over))\b",
       "ex_partner", "relationship", 0.85, template="{s} and {v} broke up."),
    _r("broke_up_with", rf"(?i:\bi\s+(?:just\s+)?broke\s+up\s+with)\s+{NAME}",
       "ex_partner", "relationship", 0.85, template="{s} and {v} broke up."),
    _r("pet_adopted", rf"(?i:\b(?:we|i)\s+(?:just\s+|finally\s+)?(?:adopted|got|brought\s+home|rescued)\s+(?:a|an|our|my)\s+)(?P<kind>[\w\s\-]{{0,25}}?)(?P<animal>(?i:puppy|pup|dog|kitten|cat|doggo))\b"
       rf"[^\n]*?(?i:\b(?:his|her|its|their)\s+name\s+is|\bnamed|\bcalled)\s+{NAME}", "pet", "relationship", 0.85,
       template="{s} has a {k} named {v}.", scope="message"),
    _r("my_pet", rf"(?i:\b(?:my|our|mera|meri)\s+(?P<animal>dog|puppy|cat|kitten|pet|doggo))\s+{NAME}", "pet", "relationship", 0.8,
       template="{s} has a {k} named {v}."),
    # ---- events ------------------------------------------------------------------------------
    _r("moved_to_ev", rf"{_MOVED_TO}\s+{NAME}",
       "moved", "event", 0.8, value="place", template="{s} moved to {v}."),
    _r("shift_ev", rf"{NAME}\s+(?i:shift\s+(?:ho\s+gay[aie]|ho\s+gaye|kar\s+(?:liya|gaya|gaye)|hua|ho\s+raha\s+hoon|kar\s+raha\s+hoon)\b)",
       "moved", "event", 0.8, value="place", template="{s} moved to {v}."),
    _r("trip", rf"^{NAME}\s+(?i:trip|vacation|holiday)\b(?!\s+(?i:cancel|cancelled|canceled|off|nahi|postponed))(?=\s*(?i:final|booked|confirmed|planned|done|is\s+on|pakka|ho\s+gaya|:|!))",
       "trip", "event", 0.75, value="place", template="{s} took a trip to {v}."),
    _r("years_last_day", rf"(?i:\byears?\s+at|\bmonths?\s+at|\btime\s+at)\s+{ORG}[^\n]*?(?i:\blast\s+day\b)",
       "left_job", "event", 0.8, value="org", template="{s} left {v}.", scope="message"),
    _r("last_day_at", rf"(?i:\blast\s+day\s+at)\s+{ORG}", "left_job", "event", 0.8, value="org", template="{s} left {v}."),
    _r("first_day", rf"(?i:\bfirst\s+day\s+at)\s+{ORG}", "started_job", "event", 0.8, value="org", template="{s} started at {v}."),
    # a first day at a job whose company the message does not name ("Yes, first day, Senior Planning
    # Engineer on the airport package"): consolidation names it from the offer the user had before
    _r("first_day_unnamed", rf"(?i:(?:\bfirst\s+day\b(?!\s+(?:at|of|in|back|out|off|tomorrow)\b)(?=[^\n]*?\b(?:{ROLE_NOUN}|new\s+(?:job|role|office|company|team)|joining)\b)"
       r"|\bfirst\s+day\s+at\s+(?:the\s+|my\s+)?new\s+(?:job|office|company|workplace)\b|\bi\s+joined\s+today\b"
       r"|\b(?:office|job|naukri|company)\s+(?:ka|me|mein)\s+pehla\s+din\b|\bpehla\s+din\s+(?:office|job)\b)(?![^\n]*?\b(?:tomorrow|kal\s+se|next\s+week)\b))",
       "started_unnamed_job", "event", 0.7, value="const", const="a new job", template="{s} started a new job.", scope="message"),
    _r("took_offer", rf"(?i:\b(?:took|accepted|taking|accepting)\s+(?:the|their)\s+){ORG}\s+(?i:offer)\b", "offer", "other", 0.65,
       value="org", template="{s} has an offer from {v}."),
    _r("joined_org", rf"(?i:\bi\s+(?:just\s+|finally\s+)?joined|\bi'?ve\s+joined|\bi\s+have\s+joined)\s+{ORG}\b(?!\s+(?i:group|chat|call|meeting))",
       "started_job", "event", 0.7, value="org", template="{s} started at {v}."),
    _r("completed", r"(?i:\b(?:finished|completed|ran|did|cleared|passed)\s+my\s+)(?P<v>(?i:first\s+)[^\n.!?,]{2,40}?|[^\n.!?,]{0,30}?(?i:marathon|half\s+marathon|10k|5k|race|trek|triathlon|course|degree|thesis|certification|exam|ultra))(?=\s*(?i:today|yesterday|this\s+morning|[.!?,]|$))",
       "completed", "event", 0.85, value="phrase", template="{s} completed {v}."),
    _r("engaged_and_i", rf"^{NAME}\s+(?i:and\s+i\s+(?:are|got)\s+engaged)\b", "engaged", "event", 0.9,
       template="{s} got engaged to {v}."),
    _r("engaged_to", rf"(?i:\bi'?m\s+engaged\s+to|\bi\s+am\s+engaged\s+to|\bi\s+got\s+engaged\s+to|\bgot\s+engaged\s+to)\s+{NAME}", "engaged",
       "event", 0.9, template="{s} got engaged to {v}."),
    _r("we_engaged", r"(?i:\bwe\s*(?:'re|are|got|just\s+got)\s+engaged|\bi\s+(?:just\s+)?got\s+engaged|\b(?:meri|humari)\s+(?:engagement|sagai)\s+ho\s+gayi)\b(?!\s+to)",
       "engaged", "event", 0.85, value="const", const="engaged", template="{s} got engaged."),
    # ---- goals -------------------------------------------------------------------------------
    _r("goal_is", rf"(?i:(?:\bmy\s+(?:new\s+year(?:'s)?\s+)?(?:goal|resolution|aim|dream)|\bnew\s+year(?:'s)?\s+(?:goal|resolution)|^(?:goal|resolution))(?:\s+(?:this|for\s+this|for\s+the\s+next|for\s+next|for)\s+[\w\s]{{0,20}}?(?:year|years|month|months))?(?:\s+is\s+to|\s+is|\s*:|\s+hai)\s+)(?:to\s+)?{PHRASE}",
       "goal", "goal", 0.85, value="phrase", template="{s}'s goal: {v}."),
    _r("want_learn", r"(?i:\bi\s+(?:really\s+)?(?:want|wanna|plan|hope)\s+to\s+)(?P<v>(?i:learn|become|master|study)\s+[^\n]{1,60})", "goal", "goal", 0.75,
       value="phrase", template="{s}'s goal: {v}."),
    _r("seekhna", r"(?i:\b(?:mujhe|main)\s+)(?P<v>[^\n]{1,40}?)(?i:\s+seekhn[ai]\s+(?:hai|chahta|chahti))", "goal", "goal", 0.75,
       value="phrase", template="{s}'s goal: learn {v}."),
    _r("saving_for", rf"(?i:\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+saving\s+(?:up\s+)?for\s+)(?:a\s+|an\s+|my\s+|our\s+)?{PHRASE}", "goal", "goal", 0.8,
       value="phrase", template="{s}'s goal: save for {v}."),
    _r("training_for", rf"^(?i:(?:i'?m\s+|i\s+am\s+)?training\s+for\s+)(?:a\s+|an\s+|my\s+|the\s+)?{PHRASE}", "goal", "goal", 0.7, value="phrase",
       template="{s}'s goal: {v}."),
]

# Cheap keyword gates (searched case-insensitively on the whole message) so most messages skip most rules.
_TRIGGERS = {
    "name_is": r"name|naam", "intro": r"i'?m|i am|this is|myself", "live_in": r"live|living|based|settled",
    "rehta": r"reh", "moved_past": r"moved|shifted|relocated", "shift_ho_gaya": r"shift", "found_home": r"mil gay",
    "living_here": r"here|yahan", "grew_up": r"grew|born|raised|from|home ?town", "is_home": r"home",
    "se_hoon": r" se h", "birthday_turn": r"turn", "birthday_nth": r"birthday", "birthday_is": r"birthday|b'?day",
    "job_hoon": ROLE_NOUN, "job_en": ROLE_NOUN, "work_at": r"work", "joining_as": r" as ",
    "fav_typed": r"fav", "is_my_fav_typed": r"fav", "is_my_fav": r"fav", "fav_hinglish": r"fav",
    "weakness": r"weakness|guilty|jam|comfort", "more_my_thing": r"my thing", "kuch_bhi": r"kuch bhi",
    "veg": r"vegetarian", "veg_hinglish": r"veg", "no_meat": r"eat", "vegan": r"vegan", "nonveg": r"non.?veg|meat",
    "my_sibling": r"sister|brother|behen|bahen|didi|bhaiya", "is_my_sibling": r"sister|brother",
    "sibling_hai": r"sister|brother|behen|bahen|bhai", "best_friend_is": r"best|bff", "my_best_friend": r"best|bff",
    "best_friend_hai": r"best|bff", "my_friend": r"friend", "my_partner": r"girl|boy|partner|wife|husband|fianc|gf|bf",
    "is_my_partner": r"girl|boy|partner|wife|husband|fianc|gf|bf", "dating_named": r"dating|seeing|relationship",
    "dating_someone": r"dating|seeing|relationship", "dating_and_i": r"dating|together|seeing",
    "broke_up": r"broke|split|separated|over", "broke_up_with": r"broke", "pet_adopted": r"dog|pup|cat|kitten",
    "my_pet": r"dog|pup|cat|kitten|pet", "moved_to_ev": r"moved|shifted|relocated",
    "shift_ev": r"shift", "trip": r"trip|vacation|holiday",
    "years_last_day": r"last day", "last_day_at": r"last day", "first_day": r"first day", "joined_org": r"joined",
    "first_day_unnamed": r"first day|joined today|pehla din", "took_offer": r"offer",
    "completed": r"finished|completed|ran|did|cleared|passed", "engaged_and_i": r"engaged", "engaged_to": r"engaged",
    "we_engaged": r"engage|sagai", "goal_is": r"goal|resolution|aim|dream", "want_learn": r"learn|become|master|study",
    "seekhna": r"seekh", "saving_for": r"saving", "training_for": r"training",
}
GATES = {name: re.compile(pat.replace("'?", "['’]?"), re.I) for name, pat in _TRIGGERS.items()}
assert set(GATES) == {r.name for r in RULES}, set(GATES) ^ {r.name for r in RULES}

QUESTION_START = re.compile(r"^(?i:kya|kyun|kab|kahan|kaise|should|would|could|do|does|did|are|is|will|can|shall|have)\b")
HYPOTHETICAL = re.compile(r"(?i:\b(?:if|agar|kash|kaash|unless|suppose|supposing|imagine|pretend|wish|would|might|maybe|perhaps|"
                          r"could|should|hypothetically|jab\s+bhi|what\s+if|in\s+case|thinking\s+of|thinking\s+about|"
                          r"considering|planning\s+to\s+move|dream(?:ing)?\s+of)\b)")
NEGATION = re.compile(r"(?i:\b(?:not|never|no|don'?t|doesn'?t|didn'?t|isn'?t|wasn'?t|aren'?t|haven'?t|hasn'?t|won'?t|can'?t|"
                      r"cannot|no\s+longer|nahi|nahin|nai|mat|na)\b|n['’]t\b|\banymore\b|\bany\s+more\b|\bab\s+nahi\b|\bformer(?:ly)?\b|"
                      r"\bused\s+to\b|\bex[- ])")

# Sibling words -> relation, and the age words in front of them -> younger/elder.
SIBLINGS = {"sister": "sister", "sis": "sister", "behen": "sister", "bahen": "sister", "didi": "sister",
            "brother": "brother", "bhai": "brother", "bhaiya": "brother"}
SIBLING_AGE = {"chhoti": "younger", "chhota": "younger", "choti": "younger", "chota": "younger",
               "badi": "elder", "bada": "elder", "older": "elder", "little": "younger", "big": "elder",
               "baby": "younger"}
# A favourite's stated kind -> the predicate suffix it files under (favourite_food, favourite_music, ...).
FAVOURITE_KINDS = {"dish": "food", "cuisine": "food", "snack": "food", "dessert": "food", "film": "movie",
                   "singer": "music", "band": "music", "artist": "music", "musician": "music", "song": "music",
                   "game": "sport"}
