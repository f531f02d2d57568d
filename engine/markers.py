"""Fixed markers this project writes into Claude Code sessions, so the importer can recognise its own echoes.

Everything recallbench injects into a session is wrapped in these sentinels; the sanitizer removes exactly
that and nothing else. Changing a value here breaks the scrub of transcripts written by older versions.
"""

# MCP tools of our own server appear as `mcp__<OWN_SERVER>__<tool>` in tool_use blocks.
OWN_SERVER = "recallbench"
OWN_TOOL_PREFIX = f"mcp__{OWN_SERVER}__"

# Context injected by our hooks (SessionStart brief, UserPromptSubmit hits).
CONTEXT_OPEN = "<recallbench-context>"
CONTEXT_CLOSE = "</recallbench-context>"

# First line of every prompt that a non-interactive run of this project sends to a model (hooks that call a
# model, extraction prompts). A session whose first user message starts with it is a self-transcript.
SELF_PROMPT_MARKER = "[recallbench:self]"

# And one that Claude Code writes: the opening words of the `<system-reminder>` it appends to every file its
# Read tool returns (engine.sanitize drops that notice from the end of a tool result, version 3).
READ_NOTICE_LEAD = "Whenever you read a file, you should consider whether it"
