"""Metadata helpers shared by every stage."""

import base64

import dagster as dg


def png_md(png: bytes, alt: str) -> dg.MetadataValue:
    """A PNG inlined as a markdown image: the Dagster UI shows it in the materialization's metadata."""
    return dg.MetadataValue.md(f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode()})")
