"""`search_memory` leaves out what the running Claude Code session already has in context.

The MCP server learns the session's id from Claude Code (`recallbench.mcp_server.SESSION_ENV`). The
rule is the prompt hook's (`recallbench.running_session.not_in_context`): the session's own chunks are
left out unless a compaction took one of their lines out of the context, and so are other sessions'
chunks whose every line it holds (a resumed or forked session's copy). The compactions are read from
the session's main transcript where its last import found it. Without a session id nothing is left
out. An answer left short by the rule is asked for again with as many more hits (at most twice), so
what is in context costs no result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from arms.base import Arm, Hit, Query
from engine.api import ChunkRecord
from engine.scope import Scope
from recallbench.running_session import not_in_context

# The arm is asked again at most this many times for hits to replace those left out.
_RETRIES = 2


class ContextReader(Protocol):
    """The reads the rule needs; `engine.memory.Memory` provides them."""

    def chunks(self, ids: Sequence[str], scope: Scope) -> list[ChunkRecord]: ...
    def held_messages(self, session_id: str, uuids: Sequence[str]) -> set[str] | None: ...
    def main_transcript(self, session_id: str) -> Path | None: ...


def search_outside_context(
    arm: Arm, reader: ContextReader, query: Query, session_id: str | None
) -> tuple[list[Hit], list[ChunkRecord]]:
    """The arm's hits for `query` and the records of those not in the running session's context (all
    of them when `session_id` is None); at most `query.k` records, in the arm's order."""
    if session_id is None:
        hits = arm.search(query)
        return hits, reader.chunks([h.chunk_id for h in hits], query.scope)
    path = reader.main_transcript(session_id)
    payload = {"session_id": session_id, "transcript_path": "" if path is None else str(path)}
    k = query.k
    for _ in range(_RETRIES + 1):
        hits = arm.search(dataclasses.replace(query, k=k))
        records = reader.chunks([h.chunk_id for h in hits], query.scope)
        kept = not_in_context(records, reader, payload)
        if len(kept) >= query.k or len(hits) < k:
            break
        k += query.k - len(kept)
    order = {h.chunk_id: i for i, h in enumerate(hits)}
    kept = sorted(kept, key=lambda r: order.get(r.id, len(order)))[: query.k]
    return hits, kept
