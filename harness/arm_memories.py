"""A run over more than one embedder: each extra embedder a protocol pins, built and checked, and one
`Memory` per embedder over the same corpus database.

A protocol lists extra embedder ids (``embedders = ["minilm-l6-v2-int8"]``) and names one after an
arm's spec (``vector(pool=20)@minilm-l6-v2-int8``, `harness.protocol.arm_embedder`). Each extra is
built from the registry name that reports its id (`harness.protocol.embedder.name_for`) and checked
like the pinned one: a run refuses one no registered embedder reports, or whose embedder reports
another id, naming both ids. The corpus is imported once; each embedder then embeds the chunk texts it
has no vector for (vectors are keyed by embedder id and content hash, so one database holds them all)
and gets its own `Memory`, whose vector reads use that embedder's vectors and index files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from arms.registry import resolve
from engine.embed import Embedder, UnknownEmbedderError, get_embedder
from engine.memory import Memory
from harness.protocol.arm_embedder import split_arm
from harness.protocol.embedder import known_ids_text, name_for
from harness.protocol.model import Protocol

__all__ = ["extra_embedders", "memory_for", "open_extra_memories", "reads_sentences"]


def reads_sentences(arms: Iterable[str]) -> bool:
    """Whether any arm entry (``spec`` or ``spec@embedder``) reads sentence vectors
    (`sentences=True`): a benchmark embeds the person's sentences only then."""
    return any(dict(resolve(split_arm(arm).spec).params).get("sentences") is True for arm in arms)


def extra_embedders(protocol: Protocol) -> tuple[dict[str, Embedder], list[str]]:
    """Extra embedder id -> its embedder (building one loads no model), and the problems found.

    A problem names the protocol, the pinned id and what this run would use instead (or that nothing
    reports the id); the caller refuses the run.
    """
    built: dict[str, Embedder] = {}
    problems: list[str] = []
    for pinned in protocol.embedders:
        name = name_for(pinned)
        if name is None:
            problems.append(
                f"embedders: {protocol.path} pins extra embedder {pinned}, which no registered "
                f"embedder reports (known: {known_ids_text()})"
            )
            continue
        try:
            embedder = get_embedder(name)
        except UnknownEmbedderError as exc:
            problems.append(f"embedders: {protocol.path} pins extra embedder {pinned}: {exc}")
            continue
        if embedder.id != pinned:
            problems.append(
                f"embedders: {protocol.path} pins extra embedder {pinned} but this run would use "
                f"{embedder.id} (embedder {name!r})"
            )
            continue
        built[pinned] = embedder
    return built, problems


def open_extra_memories(
    db_path: Path,
    embedders: Mapping[str, Embedder],
    *,
    progress: bool = False,
    sentences: bool = True,
) -> dict[str, Memory]:
    """One `Memory` per extra embedder over the imported database at `db_path`, each with every
    chunk text embedded (only the texts it has no vector for yet; with `sentences`, the person's
    sentences too) and its index built."""
    memories: dict[str, Memory] = {}
    for embedder_id, embedder in embedders.items():
        if progress:
            print(f"embedding the corpus with extra embedder {embedder_id}")
        memory = Memory(db_path, embedder, lexical_index="sync")
        memory.embed_pending(progress=progress, sentences=sentences)
        memories[embedder_id] = memory
    for memory in memories.values():
        memory.ensure_index()
    return memories


def memory_for(arm: str, primary: Memory, extras: Mapping[str, Memory]) -> Memory:
    """The memory arm entry `arm` runs over: its named embedder's, else the primary one."""
    named = split_arm(arm).embedder
    if named is None:
        return primary
    if named not in extras:  # the protocol loader refuses an arm naming an unlisted embedder
        msg = f"arm {arm!r} names embedder {named}, but the run built only {sorted(extras)}"
        raise KeyError(msg)
    return extras[named]
