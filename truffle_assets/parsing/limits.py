"""How big an export and one message may be: the one place that says so (benchmarks and tests craft
inputs at these edges by importing them).

MAX_EXPORT_BYTES bounds a chat's text as stored: a .txt file's size, or a zip member's inflated size
(as its header declares it, and as counted while it inflates). A larger export is refused from its
size alone, with an error naming the file, its size and the limit, before any of it is read.

MAX_MESSAGE_CHARS bounds one entry's text. WhatsApp itself caps a message at 65,536 characters, so a
longer entry is damage or a misread export, and copying it through every stage would only cost
memory: its text is kept up to the limit and ends with TRUNCATION_MARK; its lines stay its header
and continuation lines, and the parse reports it by file and line range (ParseResult.truncated).
"""

MAX_EXPORT_BYTES = 512 * 1024 * 1024
MAX_MESSAGE_CHARS = 256 * 1024  # characters (code points), four times WhatsApp's own cap
TRUNCATION_MARK = f" [… truncated by Truffle: message over {MAX_MESSAGE_CHARS:,} characters]"
MAX_ZIP_RATIO = 100  # WhatsApp text compresses ~5-10x; 100x+ is a bomb
