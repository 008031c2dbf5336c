"""WhatsApp export parsing: no Dagster, no database; plain functions over files and text."""

from truffle_assets.parsing.parser import Entry, ParseResult, parse_export, parse_file, parse_text
from truffle_assets.parsing.source import ExportError, ExportText, read_export

__all__ = ["Entry", "ExportError", "ExportText", "ParseResult", "parse_export", "parse_file", "parse_text", "read_export"]
