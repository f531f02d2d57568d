"""`search_memory` leaves out what the running Claude Code session already has in context.

The MCP server learns the session's id from Claude Code (`recallbench.mcp_server.SESSION_ENV`). The
rule is the prompt hook's (`recallbench.running_session.not_in_context`): the session's own chunks are
left out unless a compaction took one of their lines out of the context, and so are other sessions'
chunks whose every line it holds (a resumed or forked session's copy). The compactions are read from
the session's main transcript where its last import found it. Without a session id nothing is left
out. A hit whose words another hit shown, or one in context, holds is left out too
(`recallbench.same_text`). An answer left short by the rules is asked for again with as many more
hits (at most twice), so what is in context costs no result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from arms.base import Arm, Hit, Query
from engine.api import ChunkRecord
from engine.scope import Scope
from recallbench.same_text import Shown, fill, outside_context


class ContextReader(Protocol):
    """The reads the rule needs; `engine.memory.Memory` provides them."""

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]: ...
    def held_messages(self, session_id: str, uuids: Sequence[str]) -> set[str] | None: ...
    def main_transcript(self, session_id: str) -> Path | None: ...


def search_outside_context(
    arm: Arm, reader: ContextReader, query: Query, session_id: str | None
) -> tuple[list[Hit], Shown]:
    """The arm's hits for `query` and what the answer shows of them: at most `query.k` records, in
    the arm's order, less what the running session has in context (nothing is left out for that when
    `session_id` is None) and with each text once (`recallbench.same_text`)."""
    payload: dict[str, str] = {}
    if session_id is not None:
        path = reader.main_transcript(session_id)
        payload = {"session_id": session_id, "transcript_path": "" if path is None else str(path)}
    return fill(
        lambda k: arm.search(dataclasses.replace(query, k=k)),
        lambda hits: reader.chunks([h.chunk_id for h in hits], query.scope),
        lambda records: outside_context(records, reader, payload),
        query.k,
    )
