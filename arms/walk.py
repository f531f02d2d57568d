"""The `walk` arm: the reinstatement walk as benchmarked (ARMS.md, "walk"), known failure included.

On exact-key look-ups the chunk that contains the query verbatim is the answer, and this walk's echo
demotion and provenance rerank push it down. That is replicated on purpose; a key-aware walk is a separate,
named arm, never a silent change here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arms.base import Hit, Query
from arms.pools import ordered
from arms.rerank import rerank
from arms.spec import check_float, check_int
from engine.api import ChunkRecord, ReadAPI, Scored
from engine.scope import Scope

VIA_SEED = "seed"
VIA_VECTOR = "vector"
VIA_BLEND = "blend"
VIA_GRAPH = "graph"
VIA_EPISODE = "episode"


@dataclass(frozen=True, kw_only=True)
class WalkParams:
    """Constants of ARMS.md's walk.

    Hop 1 fetches `hop_factor · k` neighbours; `seeds` of them start walks. The blend vector is
    `normalize(blend_q · q + (1 − blend_q) · vector(seed))`, searched for `blend_k` neighbours. Graph hits
    are scored `graph_boost ×` their cosine, at most `graph_cap` per seed, over `files_per_seed` files and
    `sessions_per_file` sessions per file; the episode hit is scored `episode_boost ×` its cosine. Echoes
    (query of at least `echo_min_len` characters found verbatim in the chunk) lose `echo_penalty`.

    A walk needs at least one seed, file and session (0 would be a walk that never starts); the one
    switch for each hop is its own count: `blend_k=0` turns the blend hop off, `graph_cap=0` the graph hop.
    """

    seeds: int = 3
    blend_q: float = 0.65
    graph_boost: float = 1.10
    graph_cap: int = 6
    files_per_seed: int = 4
    sessions_per_file: int = 12
    min_score: float = 0.20
    echo_penalty: float = 0.35
    echo_min_len: int = 15
    blend_k: int = 5
    episode_boost: float = 1.10
    hop_factor: int = 2

    def __post_init__(self) -> None:
        check_int("walk", "seeds", self.seeds, minimum=1)
        check_float("walk", "blend_q", self.blend_q, low=0.0, high=1.0)
        check_float("walk", "graph_boost", self.graph_boost, low=0.0)
        check_int("walk", "graph_cap", self.graph_cap, minimum=0)
        check_int("walk", "files_per_seed", self.files_per_seed, minimum=1)
        check_int("walk", "sessions_per_file", self.sessions_per_file, minimum=1)
        check_float("walk", "min_score", self.min_score, low=-1.0, high=1.0)
        check_float("walk", "echo_penalty", self.echo_penalty, low=0.0)
        check_int("walk", "echo_min_len", self.echo_min_len, minimum=1)
        check_int("walk", "blend_k", self.blend_k, minimum=0)
        check_float("walk", "episode_boost", self.episode_boost, low=0.0)
        check_int("walk", "hop_factor", self.hop_factor, minimum=1)


class WalkArm:
    """Hop 1, seeds, blend / graph / episode hops per seed, then echo penalty and `provenance` rerank.

    Returned hits keep their *raw* pool score (before the echo penalty and rerank), so the list order, not
    the score, is the ranking. `via`: "seed" for a hop-1 hit that started a walk, "vector" for any other
    hop-1 hit, then "blend", "graph", "episode"; a chunk found by several channels keeps the channel of its
    highest score (the first one on a tie, in the order hop 1, then per seed blend, graph, episode).
    """

    name = "walk"

    def __init__(self, memory: ReadAPI, params: WalkParams | None = None) -> None:
        self.memory = memory
        self.params = params if params is not None else WalkParams()

    def search(self, query: Query) -> list[Hit]:
        """The top k of the walk's pool after fusion."""
        p = self.params
        q = self.memory.embed_query(query.text)
        hits = ordered(self.memory.nearest(q, query.scope, p.hop_factor * query.k, p.min_score))
        records = self._records({h.chunk_id for h in hits}, {}, query.scope)
        hits = [h for h in hits if h.chunk_id in records]
        seeds = self.seeds(hits, records, query.text)
        seed_ids = {s.chunk_id for s in seeds}
        pool: dict[str, tuple[float, str]] = {}
        for h in hits:
            _offer(pool, h.chunk_id, h.score, VIA_SEED if h.chunk_id in seed_ids else VIA_VECTOR)
        best_cache: dict[str, Scored | None] = {}
        for seed in seeds:
            session = records[seed.chunk_id].session_id
            for cid, score in self._blend(q, seed.chunk_id, query.scope):
                _offer(pool, cid, score, VIA_BLEND)
            for cid, score in self._graph(q, session, query.scope, best_cache):
                _offer(pool, cid, score, VIA_GRAPH)
            for cid, score in self._episode(q, session, query.scope, best_cache):
                _offer(pool, cid, score, VIA_EPISODE)
        records = self._records(set(pool), records, query.scope)
        return self._fuse(pool, records, query)

    def is_echo(self, text: str, query_text: str) -> bool:
        """The query is long enough and appears verbatim (case-insensitively) in the chunk."""
        if len(query_text) < self.params.echo_min_len:
            return False
        return query_text.lower() in text.lower()

    def seeds(
        self, hits: list[Scored], records: dict[str, ChunkRecord], query_text: str
    ) -> list[Scored]:
        """The first `seeds` hits in score order, non-echo hits first, echoes only to fill."""
        plain = [h for h in hits if not self.is_echo(records[h.chunk_id].text, query_text)]
        echoes = [h for h in hits if self.is_echo(records[h.chunk_id].text, query_text)]
        return (plain + echoes)[: self.params.seeds]

    def blend_vector(
        self, q: NDArray[np.float32], seed_vector: NDArray[np.float32]
    ) -> NDArray[np.float32] | None:
        """`normalize(blend_q · q + (1 − blend_q) · seed)`, or None when the blend is the zero vector."""
        w = self.params.blend_q
        mixed = w * q.astype(np.float64) + (1.0 - w) * seed_vector.astype(np.float64)
        norm = float(np.linalg.norm(mixed))
        if norm == 0.0 or not np.isfinite(norm):
            return None
        return (mixed / norm).astype(np.float32)

    def _blend(self, q: NDArray[np.float32], seed_id: str, scope: Scope) -> list[tuple[str, float]]:
        seed_vector = self.memory.vector(seed_id)
        if seed_vector is None or self.params.blend_k == 0:
            return []
        bv = self.blend_vector(q, seed_vector)
        if bv is None:
            return []
        found = self.memory.nearest(bv, scope, self.params.blend_k, self.params.min_score)
        return [(s.chunk_id, s.score) for s in ordered(found)]

    def _graph(
        self,
        q: NDArray[np.float32],
        session: str,
        scope: Scope,
        cache: dict[str, Scored | None],
    ) -> list[tuple[str, float]]:
        p = self.params
        found: dict[str, float] = {}
        for path in self.memory.files_for_session(session, scope, p.files_per_seed):
            others = self.memory.sessions_for_file(
                path, scope, p.sessions_per_file, exclude=session
            )
            for other in others:
                if other == session:
                    continue
                best = self._best(q, other, scope, cache)
                if best is not None:
                    score = best.score * p.graph_boost
                    found[best.chunk_id] = max(found.get(best.chunk_id, score), score)
        return sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[: p.graph_cap]

    def _episode(
        self,
        q: NDArray[np.float32],
        session: str,
        scope: Scope,
        cache: dict[str, Scored | None],
    ) -> list[tuple[str, float]]:
        previous = self.memory.previous_session(session, scope)
        if previous is None:
            return []
        best = self._best(q, previous, scope, cache)
        if best is None:
            return []
        return [(best.chunk_id, best.score * self.params.episode_boost)]

    def _best(
        self,
        q: NDArray[np.float32],
        session: str,
        scope: Scope,
        cache: dict[str, Scored | None],
    ) -> Scored | None:
        """`best_in_session`, asked once per session per search (seeds often share neighbours)."""
        if session not in cache:
            cache[session] = self.memory.best_in_session(q, session, scope)
        return cache[session]

    def _records(
        self, ids: Iterable[str], known: dict[str, ChunkRecord], scope: Scope
    ) -> dict[str, ChunkRecord]:
        missing = sorted(set(ids) - set(known))
        out = dict(known)
        out.update({r.id: r for r in self.memory.chunks(missing, scope)})
        return out

    def _fuse(
        self, pool: dict[str, tuple[float, str]], records: dict[str, ChunkRecord], query: Query
    ) -> list[Hit]:
        """Sort, subtract the echo penalty, rerank with `provenance`, truncate; hits keep raw scores."""
        raw = {cid: score for cid, (score, _) in pool.items()}
        candidates: list[tuple[ChunkRecord, float, str]] = []
        for cid, (score, via) in sorted(pool.items(), key=lambda kv: (-kv[1][0], kv[0])):
            rec = records.get(cid)
            if rec is None:
                continue
            penalised = (
                score - self.params.echo_penalty if self.is_echo(rec.text, query.text) else score
            )
            candidates.append((rec, penalised, via))
        ranked = rerank(candidates, "provenance")[: query.k]
        return [Hit(chunk_id=r.record.id, score=raw[r.record.id], via=r.via) for r in ranked]


def _offer(pool: dict[str, tuple[float, str]], chunk_id: str, score: float, via: str) -> None:
    """Keep the maximum score per chunk and the channel that gave it (the first on a tie)."""
    current = pool.get(chunk_id)
    if current is None or score > current[0]:
        pool[chunk_id] = (score, via)
