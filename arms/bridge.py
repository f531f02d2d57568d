"""The `bridge` arm: rrf, plus a hop through the files a question's code identifier touched.

"In the module that holds `hoist_overdue_remnants`, what is the batch size set to?" names a code
identifier, and the answer sits in another session than the identifier: what joins them is the file
both sessions edited. rrf only finds chunks that share the question's words or meaning. `bridge` adds
a third ranked list to rrf's two:

1. the question's keys: spans in backticks, else words shaped like code identifiers (snake_case with
   an underscore, or camelCase), at most `max_keys`, in the order they appear;
2. seeds: the best `seeds` lexical hits of each key alone; the files each seed's session edited
   (`files_for_session`, the `files_per_seed` most edited);
3. for each such file (at most `max_files`, in seed order): the lexical hits of the question without
   its keys plus the file's name (`span_ops.rs`), kept only when their session edited that file
   (`sessions_for_file`, the `sessions_per_file` most recent);
4. the bridged hits, best lexical score first (ties by chunk id), enter the reciprocal rank fusion as a
   third channel weighted `bridge_w`: score(c) = Σ w_channel / (rrf_k + rank).

Without a key the bridge is empty and the answer is rrf's, hit for hit.

A paraphrased question (`vector_w`, `cover`): when the best lexical hit holds fewer than `cover` of the
question's distinct terms (`arms.ltr_features.query_terms`, case-folded, whole tokens), the words did not carry
the question and the vector list is weighted `vector_w` instead of 1. A question asked in the memory's
own words (a receipt, a named component) keeps rrf's equal weights. The defaults (`cover` 0) never
reweight, and the spec names the two only when set.

A question about the present state (`recency_w`): when the question holds a temporal cue (`TEMPORAL_CUE`:
"current", "now", "latest", "finally", "as things stand", ...), the `pool` best fused candidates are ranked
by time, newest first (the chunk's start, else its session's; undated last; ties by chunk id), and that
list joins the fusion weighted `recency_w`: among answers about the same thing, the latest revision is
what "what do we use now?" asks for. 0 (the default) turns it off and the spec names it only when set.

The walk arm hops through files from vector seeds for every question; this arm hops only from verbatim
identifiers, and keeps rrf's ranking otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from arms import pools
from arms.base import Hit, Query
from arms.decay import record_time
from arms.ltr_features import has_term, query_terms
from arms.pools import ordered
from arms.spec import OMIT_DEFAULT, check_bool, check_float, check_int
from engine.api import ReadAPI, Scored
from engine.scope import Scope

BRIDGE_VIA = "bridge"
# Words that ask for the present state of something (`recency_w`), matched case-insensitively as words.
TEMPORAL_CUE = re.compile(
    r"\b(?:current|currently|now|nowadays|latest|final|finally|as things stand|these days|still"
    r"|today|at the moment|most recent|anymore|any more)\b",
    re.IGNORECASE,
)
_BACKTICK = re.compile(r"`([^`\n]+)`")
# snake_case with an underscore between word characters, or camelCase (a lower letter then an upper).
_IDENTIFIER = re.compile(r"\b(?:[A-Za-z0-9]+_[A-Za-z0-9_]*[A-Za-z0-9]|[a-z]+[A-Z][A-Za-z0-9]*)\b")


@dataclass(frozen=True, kw_only=True)
class HopParams:
    """The file hop's own parameters, shared by `bridge` and `ltrb`: `bridge_w`: the weight of the
    bridged list in the fusion; `max_keys`: identifiers taken from the question; `seeds`: lexical hits
    kept per key; `files_per_seed`: files taken from each seed's session; `max_files`: files bridged in
    all; `sessions_per_file`: sessions that edited a file counted as editing it; `stem`: the lexical
    reads use the Porter-stemmed index."""

    bridge_w: float = 2.0
    max_keys: int = 3
    seeds: int = 3
    files_per_seed: int = 1
    max_files: int = 4
    sessions_per_file: int = 50
    stem: bool = field(default=False, metadata={OMIT_DEFAULT: True})

    def check_hop(self, arm: str) -> None:
        """Refuse out-of-range hop parameters, naming `arm`."""
        check_float(arm, "bridge_w", self.bridge_w, low=0.0, high=10.0)
        for name in ("max_keys", "seeds", "files_per_seed", "max_files", "sessions_per_file"):
            check_int(arm, name, getattr(self, name), minimum=1)
        check_bool(arm, "stem", self.stem)


@dataclass(frozen=True, kw_only=True)
class BridgeParams(HopParams):
    """`pool`, `rrf_k`, `min_score`, `sentences`: rrf's (hits per channel, RRF constant, vector
    cosine floor, sentence rescoring); the rest is the hop's (`HopParams`)."""

    pool: int = 20
    rrf_k: int = 60
    min_score: float = 0.20
    sentences: bool = field(default=False, metadata={OMIT_DEFAULT: True})
    # The vector list's weight for a paraphrased question, and the term share below which the best
    # lexical hit marks one (module docstring); cover 0 turns it off.
    vector_w: float = field(default=1.0, metadata={OMIT_DEFAULT: True})
    cover: float = field(default=0.0, metadata={OMIT_DEFAULT: True})
    # The weight of the candidates' newest-first list for a question with a temporal cue (0: off).
    recency_w: float = field(default=0.0, metadata={OMIT_DEFAULT: True})

    def __post_init__(self) -> None:
        check_bool("bridge", "sentences", self.sentences)
        check_float("bridge", "vector_w", self.vector_w, low=0.0, high=10.0)
        check_float("bridge", "cover", self.cover, low=0.0, high=1.0)
        check_float("bridge", "recency_w", self.recency_w, low=0.0, high=10.0)
        check_int("bridge", "pool", self.pool, minimum=1)
        check_int("bridge", "rrf_k", self.rrf_k, minimum=1)
        check_float("bridge", "min_score", self.min_score, low=-1.0, high=1.0)
        self.check_hop("bridge")


def keys_of(text: str, limit: int) -> list[str]:
    """The question's code identifiers: backticked spans (a trailing `()` dropped), else words shaped
    like identifiers; first occurrence kept, in order, at most `limit`."""
    found = [span.strip().removesuffix("()").strip() for span in _BACKTICK.findall(text)]
    if not any(found):
        found = _IDENTIFIER.findall(text)
    keys: list[str] = []
    for key in found:
        if key and key not in keys:
            keys.append(key)
    return keys[:limit]


def without_keys(text: str, keys: Sequence[str]) -> str:
    """The question with its backticked spans and its keys taken out."""
    rest = _BACKTICK.sub(" ", text)
    for key in keys:
        rest = rest.replace(key, " ")
    return " ".join(rest.split())


class BridgeArm:
    """rrf's vector and lexical lists fused with a file-bridged lexical list (module docstring)."""

    name = "bridge"

    def __init__(self, memory: ReadAPI, params: BridgeParams | None = None) -> None:
        self.memory = memory
        self.params = params if params is not None else BridgeParams()

    def search(self, query: Query) -> list[Hit]:
        """The top k chunks by fused score, ties by chunk id."""
        p = self.params
        vector_pool = pools.vector_pool(
            self.memory,
            self.memory.embed_query(query.text),
            query.scope,
            p.pool,
            p.min_score,
            sentences=p.sentences,
        )
        lexical_pool = self.memory.lexical(query.text, query.scope, p.pool, stem=p.stem)
        bridged, files = self.bridge(query.text, query.scope)
        fused: dict[str, float] = {}
        channels: dict[str, list[str]] = {}
        lists = (
            ("vector", self.vector_weight(query.text, lexical_pool, query.scope), vector_pool),
            ("fts", 1.0, lexical_pool),
            ("bridge", p.bridge_w, bridged),
        )
        for channel, weight, pool in lists:
            for rank, scored in enumerate(ordered(pool)[: p.pool], start=1):
                fused[scored.chunk_id] = fused.get(scored.chunk_id, 0.0) + weight / (p.rrf_k + rank)
                channels.setdefault(scored.chunk_id, []).append(channel)
        if p.recency_w > 0.0 and TEMPORAL_CUE.search(query.text):
            for rank, cid in enumerate(self.newest_first(fused, query.scope), start=1):
                fused[cid] += p.recency_w / (p.rrf_k + rank)
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[: query.k]
        return [
            Hit(
                chunk_id=cid, score=score, via=bridge_via(_rrf_label(channels[cid]), files.get(cid))
            )
            for cid, score in ranked
        ]

    def newest_first(self, fused: dict[str, float], scope: Scope) -> list[str]:
        """The `pool` best fused candidates (ties by id), newest first: by the chunk's start, else its
        session's; undated ones last; ties by chunk id."""
        best = sorted(fused, key=lambda cid: (-fused[cid], cid))[: self.params.pool]
        times = {r.id: record_time(r) for r in self.memory.chunks(best, scope)}
        dated = sorted((-t.timestamp(), cid) for cid, t in times.items() if t is not None)
        return [cid for _, cid in dated] + sorted(cid for cid, t in times.items() if t is None)

    def vector_weight(self, text: str, lexical_pool: Sequence[Scored], scope: Scope) -> float:
        """`vector_w` when the best lexical hit holds fewer than `cover` of the question's distinct
        terms (none found counts as 0), else 1; always 1 when `cover` is 0 or the question has no term."""
        p = self.params
        if p.cover <= 0.0:
            return 1.0
        terms = query_terms(text)
        if not terms:
            return 1.0
        best = ordered(lexical_pool)[:1]
        records = self.memory.chunks([best[0].chunk_id], scope) if best else []
        folded = records[0].text.casefold() if records else ""
        share = sum(has_term(folded, term) for term in terms) / len(terms)
        return p.vector_w if share < p.cover else 1.0

    def bridge(self, text: str, scope: Scope) -> tuple[list[Scored], dict[str, str]]:
        """(the bridged hits, best first; the file name each came through)."""
        p = self.params
        keys = keys_of(text, p.max_keys)
        if not keys:
            return [], {}
        seed_ids: list[str] = []
        for key in keys:
            for scored in ordered(self.memory.lexical(key, scope, p.seeds, stem=p.stem))[: p.seeds]:
                if scored.chunk_id not in seed_ids:
                    seed_ids.append(scored.chunk_id)
        files: list[str] = []
        for record in self.memory.chunks(seed_ids, scope):
            for path in self.memory.files_for_session(record.session_id, scope, p.files_per_seed):
                if path not in files:
                    files.append(path)
        rest = without_keys(text, keys)
        best: dict[str, tuple[float, str]] = {}
        for path in files[: p.max_files]:
            name = PurePosixPath(path).name
            editors = set(self.memory.sessions_for_file(path, scope, p.sessions_per_file))
            hits = self.memory.lexical(f"{rest} {name}", scope, p.pool, stem=p.stem)
            sessions = {
                r.id: r.session_id for r in self.memory.chunks([h.chunk_id for h in hits], scope)
            }
            for scored in hits:
                if (
                    sessions.get(scored.chunk_id) in editors
                    and scored.score > best.get(scored.chunk_id, (float("-inf"), ""))[0]
                ):
                    best[scored.chunk_id] = (scored.score, name)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))
        return (
            [Scored(chunk_id=cid, score=score) for cid, (score, _) in ranked],
            {cid: name for cid, (_, name) in ranked},
        )


def _rrf_label(channels: Sequence[str]) -> str:
    """`rrf (fts+vector)` as rrf says it, for the channels other than the bridge ("" if none)."""
    plain = sorted(c for c in channels if c != "bridge")
    return f"rrf ({'+'.join(plain)})" if plain else ""


def bridge_via(label: str, file_name: str | None) -> str:
    """`label` (how the other lists found the chunk), with `+ bridge (span_ops.rs)` when the bridge
    found it too; `bridge (span_ops.rs)` alone when only the bridge did."""
    if file_name is None:
        return label
    bridged = f"bridge ({file_name})"
    return f"{label} + {bridged}" if label else bridged
