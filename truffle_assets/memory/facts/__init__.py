"""Facts about the user from chat text: claims read from a parse, consolidated into a bitemporal fact table.

- `lexicon`: the predicates (category, label, one-at-a-time or not) and the words that signal them
- `guards`: whose claim a clause is and whether it claims anything (negation, tense, hedges,
  suppositions, questions, quotations, reported speech)
- `spans`: values cut from the parse (noun phrases, names and places, roles, dates)
- `reader`: first-person clauses -> claims (spaCy dependency parse; Hinglish via `memory.gloss`)
- `rules`: the older pattern table, filling what the parse did not read
- `address`: kin address in one-to-one chats ("didi", "papa") -> sibling and parent claims
- `render`: fact text as a profile line ("Birthday: 14 August")
- `values`: comparing values (the same thing said more or less precisely, opposites, promotions)
- `extraction`: messages -> `fact_claims`
- `consolidation`: claims -> `facts` with valid_from/valid_to/superseded_by, and `facts_as_of`
"""
