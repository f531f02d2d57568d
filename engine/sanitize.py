"""Clean parsed messages before anything is stored (TRANSCRIPTS.md, "Sanitizing").

Rules, in order, each counted per kind in the caller's `Counter`:

1. This project's own MCP tool calls (`OWN_TOOL_PREFIX`) are dropped and their ids remembered in
   `state.suppressed_tool_ids`; a tool result bound to a remembered id is dropped too. Binding is by id,
   so an identically named tool of another server survives. Counts: `own_mcp_call`, `own_mcp_result`.
2. Our injected context blocks (`CONTEXT_OPEN` … `CONTEXT_CLOSE`, unclosed: to the end) are removed from
   the text of **user** messages only, so an assistant quoting the sentinel is kept. Count:
   `injected_context`. Claude Code's notice that it appends to every file a Read returns (a
   `<system-reminder>` that starts with `READ_NOTICE_LEAD`) is removed from the end of a tool result
   only, so a file or a message that quotes it is kept. Count: `read_notice` (version 3).
3. `<private>…</private>` becomes `[private]`; an unclosed `<private>` redacts to the end of the text.
   Count: `private`.
4. Credentials become `[redacted:<kind>]` (`engine.secrets`: detect-secrets' plugins, our token formats,
   and values assigned to names that name a secret). Counts: `redacted:<kind>`. Then the strings the
   memory's person redacted (`recallbench forget --redact`, `engine.redacted_sql`) become
   `[redacted:forgotten]`. Count: `redacted:forgotten`.
5. A stream whose first real user message starts with `SELF_PROMPT_MARKER` is one of this project's own
   non-interactive runs: it is flagged (`state.self_transcript = True`) and yields nothing. It is decided
   before rules 1-4 run, so a flagged stream counts only `self_transcript_message`.

Steps 3 and 4 run on each block's raw text before any truncation (marker argument, tool result cap), so
a cut can never leave half a secret behind.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING

from engine.markers import (
    CONTEXT_CLOSE,
    CONTEXT_OPEN,
    OWN_TOOL_PREFIX,
    READ_NOTICE_LEAD,
    SELF_PROMPT_MARKER,
)
from engine.model import Block, CleanMessage, Message, TextBlock, ToolResult, ToolUse
from engine.redacted_sql import KIND as FORGOTTEN_KIND
from engine.redacted_sql import NONE as NO_REDACTIONS
from engine.redacted_sql import Redactions
from engine.render import (
    is_command_wrapper,
    marker_arg,
    message_author,
    render_block,
    tool_marker,
)
from engine.secret_formats import FORMS_BY_VERSION, triggers
from engine.transcript_files import StreamState

if TYPE_CHECKING:  # detect-secrets loads with it: the sanitizer imports it only to redact
    from engine.secrets import Finding

# Bump when the same messages would sanitize to different text; corpus manifests record it. A bump
# names, in VERSION_TRIGGERS, the text without which its rules change nothing.
SANITIZE_VERSION = "11"

# The version each later rule came with, and the texts a transcript must hold for that rule to change
# anything (any one of a version's texts). A corpus none of whose lines holds one reads under that
# version exactly as under the one before, so its manifest records the older version and every lock
# made on it stays valid. Version 3: Claude Code's file-read notice. Version 4: credential formats
# with a literal prefix (`engine.secret_formats.VERSION_4_TRIGGERS`: Groq, xAI, Docker, Sentry, Doppler, …).
# Version 5: more of them, and passwords on a command line (`VERSION_5_TRIGGERS`: RubyGems, Dynatrace,
# Square, Okta, `aws configure set`, `keytool`, `redis-cli`, …). Version 6: passwords given to database,
# directory, archive and queue tools or set in SQL and configuration (`VERSION_6_TRIGGERS`: `PASSWORD '`,
# `mongo`, `sqlcmd`, ` -P`, `requirepass`, …) and a few more provider prefixes. Version 7: passwords and
# tokens given to database shells, package registries, remote-management tools and secret stores
# (`VERSION_7_TRIGGERS`: `cqlsh`, `twine upload`, `cargo login`, `http-basic.`, `http -a `, `ipmitool`, …).
# Version 8: more database shells, registry clients, publishers, cloud, signing, keychain and Windows
# tools, values fed through a here-string, `printf '%s'` or a `.pgpass` line, passwords in
# configuration files and code, session cookies, 15 more providers' tokens, and `mysql`'s rule narrowed
# (`VERSION_8_TRIGGERS`: `mysqladmin`, `isql`, `crane auth login`, `jarsigner`, `net user `, `<<<`,
# `printf`, `.pgpass`, `rootpw`, `Cookie:`, `tvly-`, `mysql`, …). Version 9: what a command that prints
# a stored secret printed, below its result's header (`VERSION_9_TRIGGERS`: `op read`, `vault kv get`,
# `get-secret-value`, `get secret`, `sops -d`, `.netrc`, …). Version 10: what a tool printed when asked
# for its own session or API token (`VERSION_10_TRIGGERS`: `op signin`, `bw unlock`, `heroku auth:token`,
# `fly auth token`, …). Version 11: what `echo` printed of a variable named for a secret
# (`VERSION_11_TRIGGERS`: `echo $`, `echo "$`, `echo -n $`, …).
BASE_SANITIZE_VERSION = "2"
VERSION_TRIGGERS: tuple[tuple[str, str], ...] = (
    ("3", READ_NOTICE_LEAD),
    *((str(version), prefix) for version in FORMS_BY_VERSION for prefix in triggers(version)),
)

PRIVATE_OPEN = "<private>"
PRIVATE_CLOSE = "</private>"
PRIVATE_MARK = "[private]"


def sanitize(
    messages: Sequence[Message],
    state: StreamState,
    counts: Counter[str],
    forgotten: Redactions = NO_REDACTIONS,
) -> list[CleanMessage]:
    """Apply every sanitizing rule and render what survives to `CleanMessage`s; `forgotten`: the
    strings the memory's person redacted (`engine.redacted_sql`), redacted after the credentials.

    Ordinals continue from `state.next_ordinal`. Messages whose text is empty afterwards are dropped
    (counted `empty_after_sanitize`). `messages` are not modified; `state` is.
    """
    _decide_self_transcript(messages, state)
    if state.self_transcript:
        if messages:
            counts["self_transcript_message"] += len(messages)
        # Nothing of a self-transcript is rendered, so its raw tool inputs must not be kept either.
        state.tool_commands.clear()
        state.tool_names.clear()
        return []
    clean: list[CleanMessage] = []
    for msg in messages:
        kept = _drop_own_mcp(msg, state, counts)
        if kept is None:
            continue
        if kept.kind == "user":
            kept = _scrub_user_context(kept, counts)
            kept = _drop_read_notice(kept, counts)
        text = _clean_text(kept, state, counts, forgotten)
        if not text:
            counts["empty_after_sanitize"] += 1
            continue
        clean.append(
            CleanMessage(
                uuid=kept.uuid,
                session_id=kept.session_id,
                author=message_author(kept),
                text=text,
                timestamp=kept.timestamp,
                ordinal=state.next_ordinal,
            )
        )
        state.next_ordinal += 1
    return clean


def is_self_prompt(text: str) -> bool:
    """True when `text` is a prompt from one of this project's own non-interactive runs."""
    return text.lstrip().startswith(SELF_PROMPT_MARKER)


def scrub_context(text: str) -> tuple[str, int]:
    """Remove every `CONTEXT_OPEN … CONTEXT_CLOSE` block (unclosed: to the end); return the count."""
    removed = 0
    while True:
        start = text.find(CONTEXT_OPEN)
        if start == -1:
            return text, removed
        end = text.find(CONTEXT_CLOSE, start + len(CONTEXT_OPEN))
        tail = "" if end == -1 else text[end + len(CONTEXT_CLOSE) :]
        text = text[:start] + tail
        removed += 1


def drop_read_notice(text: str) -> tuple[str, bool]:
    """`text` without Claude Code's file-read notice at its end (and the blank lines before it)."""
    match = _READ_NOTICE.search(text) if READ_NOTICE_LEAD in text else None
    if match is None:
        return text, False
    return text[: match.start()].rstrip(), True


class VersionScan:
    """The sanitizer version a corpus's raw lines are read under (`feed` every line of every file).

    It is the newest version whose trigger text (`VERSION_TRIGGERS`) some line holds, and
    `BASE_SANITIZE_VERSION` when none does. The text is looked for in each line as written, and
    again with its `\\u`, `\\/` and `\\"` escapes read, the only ways JSON can spell the trigger
    texts' characters otherwise (none holds `\\`): a rule cannot fire on a corpus whose version is
    older than the rule's.
    """

    def __init__(self) -> None:
        self._found: set[str] = set()

    def feed(self, line: bytes) -> None:
        decoded: str | None = None  # read once per line, for the leads not found as written
        for version, lead in VERSION_TRIGGERS:
            if version in self._found:
                continue
            if any(spelled in line for spelled in _spellings(lead)):
                self._found.add(version)
                continue
            if decoded is None:
                decoded = _decoded(line)
            if lead in decoded:
                self._found.add(version)

    @property
    def version(self) -> str:
        return max(self._found, key=int, default=BASE_SANITIZE_VERSION)


@cache
def _spellings(lead: str) -> tuple[bytes, ...]:
    """`lead`'s bytes as a JSON line writes them without a `\\u` or `\\/` escape: as they are, and,
    for a lead holding `"`, with it as `\\"` (worked out once per lead, not once per line)."""
    plain = lead.encode()
    return (plain, lead.replace('"', '\\"').encode()) if '"' in lead else (plain,)


def _decoded(line: bytes) -> str:
    """`line` as text with every `\\uXXXX` read as its character, every `\\/` as `/` (version 6's
    `1//0`, `/pass:`) and every `\\"` as `"` (version 11's `echo "$`), even where the backslash is
    itself escaped, so a lead found in it errs towards yes; "" for a line without a `\\u` or `\\/`,
    whose leads `_spellings` already looked for. Reading `\\"` finds no lead without a `"` that the
    other escapes alone would not: it removes only a backslash before a quote, and no lead holds a
    backslash."""
    if b"\\u" not in line and b"\\/" not in line:
        return ""
    text = line.decode("utf-8", errors="replace").replace("\\/", "/").replace('\\"', '"')
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def scrub_private(text: str) -> tuple[str, int]:
    """`<private>…</private>` -> `[private]`; an unclosed `<private>` redacts to the end."""
    text, closed = _PRIVATE_CLOSED.subn(PRIVATE_MARK, text)
    match = _PRIVATE_OPEN_RE.search(text)
    if match is None:
        return text, closed
    return text[: match.start()] + PRIVATE_MARK, closed + 1


def redact(text: str) -> tuple[str, Counter[str]]:
    """Replace every credential `engine.secrets.find_secrets` finds with `[redacted:<kind>]`.

    The counter is keyed `redacted:<kind>`, one per replaced span. A URL password keeps its user and
    host (`scheme://user:[redacted:url_password]@host`); an assignment keeps its name
    (`"password": "[redacted:env_secret]"`). Plain hex such as a git commit hash, UUIDs and sha256
    digests match no rule.
    """
    # Imported here: detect-secrets' plugins take a sixth of a second to import, and a process that
    # only reads (a one-shot `recallbench search`) never redacts.
    from engine.secrets import find_secrets

    return _replaced(text, find_secrets(text))


def redact_output(piece: str) -> tuple[str, Counter[str]]:
    """A tool result as rendered (header, then body) with its body replaced by
    `[redacted:<kind>]` when its call printed a stored secret (`engine.secret_formats_v9`: `op read`,
    `vault kv get`, `cat ~/.netrc`, …). `redact` runs on a body without its header, so the import
    applies this to each rendered result; on stored text, `redact` finds the same."""
    from engine.secrets import find_outputs

    return _replaced(piece, find_outputs(piece))


def _replaced(text: str, findings: Sequence[Finding]) -> tuple[str, Counter[str]]:
    """`text` with each finding replaced by `[redacted:<kind>]`, and how many of each kind."""
    counts: Counter[str] = Counter()
    pieces: list[str] = []
    last = 0
    for finding in findings:
        pieces.append(text[last : finding.start])
        pieces.append(f"[redacted:{finding.kind}]")
        counts[f"redacted:{finding.kind}"] += 1
        last = finding.end
    if not pieces:
        return text, counts
    pieces.append(text[last:])
    return "".join(pieces), counts


def redact_paths(
    paths: Sequence[str], counts: Counter[str], forgotten: Redactions = NO_REDACTIONS
) -> list[str]:
    """File paths (of recorded edits) with any credential, and any string the person redacted, in
    them redacted; counted like `redact`."""
    clean: list[str] = []
    for path in paths:
        text, redacted = redact(path)
        counts.update(redacted)
        text, said = forgotten.apply(text)
        if said:
            counts[FORGOTTEN_KIND] += said
        clean.append(text)
    return clean


# ---------------------------------------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------------------------------------


def _decide_self_transcript(messages: Sequence[Message], state: StreamState) -> None:
    """Flag the stream at its first real user message (typed text, not a command wrapper)."""
    if state.self_transcript is not None:
        return
    for msg in messages:
        if msg.kind != "user" or msg.is_meta:
            continue
        for block in msg.blocks:
            if not isinstance(block, TextBlock):
                continue
            text, _ = scrub_context(block.text)
            if not text.strip() or is_command_wrapper(text):
                continue
            state.self_transcript = is_self_prompt(text)
            return


def _drop_own_mcp(msg: Message, state: StreamState, counts: Counter[str]) -> Message | None:
    """Rule 1: drop our own tool calls and the results bound to their ids; None if nothing is left."""
    blocks: list[Block] = []
    for block in msg.blocks:
        if isinstance(block, ToolUse) and block.name.startswith(OWN_TOOL_PREFIX):
            state.suppressed_tool_ids.add(block.id)
            state.tool_commands.pop(block.id, None)
            counts["own_mcp_call"] += 1
        elif isinstance(block, ToolResult) and block.tool_use_id in state.suppressed_tool_ids:
            counts["own_mcp_result"] += 1
        else:
            blocks.append(block)
    if len(blocks) == len(msg.blocks):
        return msg
    return replace(msg, blocks=blocks) if blocks else None


def _scrub_user_context(msg: Message, counts: Counter[str]) -> Message:
    """Rule 2: remove injected context from a user message's text blocks (tool results untouched)."""
    blocks: list[Block] = []
    changed = False
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            text, removed = scrub_context(block.text)
            if removed:
                counts["injected_context"] += removed
                changed = True
                text = text.strip()
                if text:
                    blocks.append(TextBlock(text=text))
                continue
        blocks.append(block)
    return replace(msg, blocks=blocks) if changed else msg


def _drop_read_notice(msg: Message, counts: Counter[str]) -> Message:
    """Claude Code's file-read notice off the end of each tool result (text blocks untouched)."""
    blocks: list[Block] = []
    changed = False
    for block in msg.blocks:
        if isinstance(block, ToolResult):
            content, dropped = drop_read_notice(block.content)
            if dropped:
                counts["read_notice"] += 1
                changed = True
                blocks.append(replace(block, content=content))
                continue
        blocks.append(block)
    return replace(msg, blocks=blocks) if changed else msg


def _clean_text(
    msg: Message, state: StreamState, counts: Counter[str], forgotten: Redactions
) -> str:
    """Rules 3 and 4 on each block's raw text, then the block rendered (markers, capped results)."""

    def clean(raw: str) -> str:
        text, private = scrub_private(raw)
        if private:
            counts["private"] += private
        text, redacted = redact(text)
        counts.update(redacted)
        text, said = forgotten.apply(text)
        if said:
            counts[FORGOTTEN_KIND] += said
        return text

    pieces: list[str] = []
    for block in msg.blocks:
        if isinstance(block, ToolUse):
            clean_arg = marker_arg(block, clean)
            if clean_arg is not None:
                # Result headers read the argument from the state, which is persisted: keep it clean.
                state.tool_commands[block.id] = clean_arg
            piece = tool_marker(block.name, clean_arg)
        else:
            piece = render_block(block, state, clean)
            if isinstance(block, ToolResult):
                piece, outputs = redact_output(piece)
                counts.update(outputs)
        if piece.strip():
            pieces.append(piece)
    return "\n".join(pieces).strip()


# ---------------------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------------------

_PRIVATE_CLOSED = re.compile(
    re.escape(PRIVATE_OPEN) + r".*?" + re.escape(PRIVATE_CLOSE), re.S | re.I
)
_PRIVATE_OPEN_RE = re.compile(re.escape(PRIVATE_OPEN), re.I)
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
# The notice as Claude Code appends it: the last thing in the result, its body one short paragraph.
_READ_NOTICE = re.compile(
    r"<system-reminder>\s*" + re.escape(READ_NOTICE_LEAD) + r"[^<]{0,1000}</system-reminder>\s*\Z"
)
