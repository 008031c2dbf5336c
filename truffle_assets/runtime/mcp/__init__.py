"""The memory as an MCP server (the official `mcp` SDK): the tool catalog's MCP tools and the profile
and facts as resources, over stdio (`truffle mcp`, `stdio`) and streamable HTTP (`/mcp` in `truffle
serve`, `http`). `server` builds it, `calllog` records each call like a chat turn, `forget` holds
the opt-in forget's dry-run-then-confirm steps."""
