"""Evaluation of a candidate model without the model: case suites, scorers, gate and reports.

`cases` builds the deterministic suites, `scoring` turns raw model outputs into points (the
Markdown rules live in `markdown`), `gate` decides promotion and `report` writes what a person
reads. The model runner only has to produce one output string per case and temperature.
"""
