"""Facts about the user from chat text: rule-based claims, consolidated into a bitemporal fact table.

- `schema`: the claim and fact row shapes, the predicate classes (single-valued, timeless, endings)
- `rules`: the English and Hinglish patterns ("I live in X", "X mein rehta hoon", "my younger
  sister X", "X is my weakness", "my goal this year is to X", ...) and their keyword gates
- `values`: a value cut from captured text; when two values are the same thing said more or less precisely
- `extraction`: messages -> `fact_claims` (questions, hypotheticals and negations skipped)
- `consolidation`: claims -> `facts` with valid_from/valid_to/superseded_by, and `facts_as_of`
"""
