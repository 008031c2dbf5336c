"""The memory build, stage by stage, without Dagster: `rosetta` (text streams), `episodes` and
`salience`, `summaries` (tiers A/B/C, roll-ups), `facts` (claims → consolidated facts), `profile`,
and `tables` (the DuckDB schemas these stages write). The assets in `defs/memory/` call them."""
