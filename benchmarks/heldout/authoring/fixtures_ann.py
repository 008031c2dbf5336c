# Facts people state about themselves in the real third-party fixtures, read by hand, file by file.
# (file, line, speaker, category, attribute, value, kind, explicit, strength, context_line, note)
# kind: attribute (a lasting trait or state) | event (something the speaker did or that happened to them)
# explicit: False when the message only makes sense with the line named in context_line.
# strength: clear | borderline (a reasonable annotator might leave it out; score it separately).
FAM = "rodrigogs__whats-reader/examples/chats/android-group-chat/WhatsApp Chat with Family Group 👨‍👩‍👧‍👦.txt"
ALICE_A = "rodrigogs__whats-reader/examples/chats/android-private-chat/WhatsApp Chat with Alice.txt"
ALICE_I = "rodrigogs__whats-reader/examples/chats/ios-private-chat/_chat.txt"
IOS_GROUP = "rodrigogs__whats-reader/examples/chats/ios-group-chat/_chat.txt"
POKEMON = "lucasrodes__whatstk/chats/whatsapp/pokemon.txt"
M4 = "mlomb__chat-analytics/tests/samples/whatsapp/4A_11M.txt"
M4Z = "mlomb__chat-analytics/tests/samples/whatsapp/4A_11M.zip"
LC = "langchain-ai__langchain-community/libs/community/tests/unit_tests/chat_loaders/data/whatsapp_chat.txt"
RWA = "JBGruber__rwhatsapp/inst/extdata/sample.txt"
RWAZ = "JBGruber__rwhatsapp/inst/extdata/sample.zip"
PUS = "Pustur__whatsapp-chat-parser/samples/short-chat.txt"

FACTS = []
for f in (M4, M4Z):
    FACTS += [
        (f, 9, "Bob", "identity", "name", "Bob", "attribute", True, "clear", None, "introduces himself"),
        (f, 11, "Mallory", "identity", "name", "Mallory", "attribute", True, "clear", None, "introduces herself"),
        (f, 13, "Mallory", "identity", "name", "Mallory (restated)", "attribute", True, "clear", None, "restates line 11"),
    ]
FACTS += [
    (POKEMON, 10, "Ash Ketchum", "hobbies", "hobby", "stopped capturing Pokemon", "attribute", True, "clear", None, "a change: he quit"),
    (POKEMON, 11, "Misty", "hobbies", "hobby", "stopped capturing Pokemon (had enough)", "attribute", False, "borderline", 10, "agrees with Ash's line 10"),
    (POKEMON, 12, "Brock", "hobbies", "hobby", "still playing Pokemon, stuck at the first gym", "attribute", True, "clear", None, None),
    (POKEMON, 16, "Raichu", "identity", "species", "evolved (from Pikachu into Raichu)", "event", False, "borderline", 15, "answers Ash's question on line 15"),
    (POKEMON, 18, "Meowth", "travel", "trip", "was on holiday in Sinnoh", "event", True, "clear", None, None),
    (POKEMON, 19, "Prof. Oak", "projects", "project", "created a smart Pokeball", "event", False, "borderline", 9, "passive voice; his own offer on line 9 makes it his"),
    (FAM, 8, "Sarah", "travel", "trip", "went on a trip the week before 1 Dec 2024", "event", True, "clear", None, None),
    (FAM, 11, "Sarah", "travel", "trip", "the trip was to the coastal trail", "event", False, "clear", 10, "answers Mike's question on line 10"),
    (FAM, 42, "Sarah", "hobbies", "activity", "went hiking on 4 Dec 2024", "event", True, "clear", None, None),
]
for f in (ALICE_A, ALICE_I):
    FACTS += [
        (f, 4, "Alice", "work", "work_event", "just finished a big project at work", "event", True, "clear", None, "also implies she has a job"),
        (f, 16, "Alice", "home", "home_type", "lives in an apartment with a balcony (sunrise view)", "attribute", True, "clear", None, "line 13 mentions 'my balcony'"),
        (f, 20, "Bob", "work", "employment", "has coworkers (is employed)", "attribute", True, "borderline", None, "only implied by 'my coworker'"),
        (f, 25, "Alice", "possessions", "phone", "got a new phone the day before (2 Dec 2024)", "event", False, "clear", 24, "answers Bob's question on line 24"),
        (f, 27, "Alice", "possessions", "phone", "the phone is the latest model", "attribute", False, "clear", 26, "answers Bob's question on line 26"),
    ]
FACTS += [
    (IOS_GROUP, 21, "Jake", "events", "find", "found an old camera like his grandpa's at an antique shop", "event", True, "clear", None, None),
    (IOS_GROUP, 39, "Jake", "work", "employment", "goes to work (is employed)", "attribute", True, "borderline", None, "only implied by 'Off to work'"),
    (LC, 2, "Dr. Feather", "events", "sighting", "spotted a rare Hyacinth Macaw in the Amazon Rainforest (14 Aug 2023)", "event", True, "clear", None, None),
    (LC, 9, "Dr. Feather", "work", "research", "researches parrot communication (sound and colour)", "attribute", False, "clear", 7, "the topic is in Jungle Jane's question on line 7"),
    (LC, 11, "Dr. Feather", "work", "writing", "is writing a paper on it (will send a draft)", "attribute", False, "borderline", 10, "'your paper' is Jungle Jane's word on line 10"),
]
for f in (RWA, RWAZ):
    FACTS += [
        (f, 5, "Test", "preferences", "likes", "enjoys doing text analysis with R", "attribute", True, "borderline", None, "phrased as a rhetorical question"),
        (f, 7, "Johannes Gruber", "preferences", "likes", "enjoys doing text analysis with R", "attribute", False, "borderline", 5, "agrees with line 5"),
    ]
FACTS += [
    (PUS, 4, "TestBot", "identity", "kind", "is a test account", "attribute", True, "borderline", None, "a test fixture talking about itself"),
]

# Per-file notes for files with no facts (why not), keyed by a path prefix or exact path.
NO_FACT_NOTES = {
    "joweich__chat-miner/": "lorem ipsum only",
    "lucasrodes__whatstk/chats/whatsapp/lorem": "lorem ipsum only (every word is from the lorem vocabulary)",
    "starkdmi__whats_json/": "one scripted test chat in many locales: greetings, media placeholders, deleted messages, a shared venue and a location pin, file names; nobody states anything about themself",
    "rodrigogs__whats-reader/examples/parser-tests/": "format probes: greetings, 'I'm fine'-type replies, placeholders, a shop's marketing text",
    "langchain-ai__langchain-community/libs/community/tests/examples/": "format probes: greetings and placeholders",
    "langchain-ai__langchain-community/libs/community/tests/integration_tests/": "format probes: greetings and placeholders",
    "emmaakachukwu__whatsapp-chat-parser-rb/": "messages only describe themselves ('This is an Android message')",
    "mlomb__chat-analytics/tests/samples/whatsapp/2A_5M.txt": "greetings and a placeholder",
}
# Lines read and deliberately not annotated (the judgement calls), for the record.
EXCLUDED = [
    (ALICE_A, 3, "Bob", "a passing mood ('I'm doing great'), not a lasting fact"),
    (ALICE_A, 36, "Alice", "logistics ('I just arrived')"),
    (ALICE_A, 9, "Bob", "a recommendation about a cafe, not about himself"),
    (FAM, 19, "Dad", "shares a video of 'our last vacation': no statement about himself beyond it"),
    (FAM, 22, "Dad", "reacts to Mike's joke (line 21) about him falling in a pool; the fall is Mike's claim"),
    (FAM, 26, "Dad", "an RSVP ('I'm in!')"),
    (IOS_GROUP, 27, "Mom", "logistics ('10 minutes away')"),
    (IOS_GROUP, 10, "Mom", "comments on a vacation photo, no statement about herself"),
    (RWA, 4, "Johannes Gruber", "a caption under a photo ('Fruit bread with cheddar'): what the photo shows, not a stated fact"),
    (PUS, 3, "Sample User", "describes the message itself ('This is a test message')"),
    (POKEMON, 14, "Raichu", "an RSVP ('I am in!')"),
    (POKEMON, 9, "Prof. Oak", "an offer phrased as a question"),
    ("rodrigogs__whats-reader/examples/parser-tests/french-format-test.txt", 2, "Sophie Dubois", "a passing mood ('Je vais bien')"),
    ("rodrigogs__whats-reader/examples/parser-tests/german-format-test.txt", 2, "Jane Smith", "a passing mood ('Mir geht es gut')"),
]
