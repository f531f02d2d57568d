"""A benchmark corpus on disk and in a database: generated when synthetic, imported once, cached.

Shared by `bench run` (the test corpus) and by fitting at registration (a fitted arm's training corpus),
so both read a corpus the same way: the same generator for a synthetic corpus, the same importer, the
same cache keyed by the manifest and the excluded sessions.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from pathlib import Path

from engine.chunking import BASE_CHUNKING
from engine.embed import Embedder
from engine.memory import Memory
from harness.protocol.model import Corpus
from harness.synthetic import SyntheticConfig, generate

__all__ = ["CorpusMissingError", "materialise", "open_memory"]


class CorpusMissingError(RuntimeError):
    """The corpus folder does not exist and cannot be generated."""


def materialise(corpus: Corpus, root: Path, declared_in: Path, *, progress: bool = False) -> Path:
    """The corpus folder; a synthetic corpus is generated there from its seed when missing.

    Raises:
        CorpusMissingError: the folder does not exist (and the corpus is not synthetic).
    """
    path = corpus.resolve(root)
    if corpus.source == "synthetic" and not path.exists():
        seed, size = corpus.seed, corpus.size
        if seed is None or size is None:  # the protocol loader already refuses this
            msg = "a synthetic corpus needs seed and size"
            raise CorpusMissingError(msg)
        if progress:
            print(f"generating synthetic corpus (seed {seed}, {size} sessions) into {path}")
        config = SyntheticConfig(
            seed=seed,
            sessions=size,
            corrected_facts=corpus.corrected_facts,
            changed_facts=corpus.changed_facts,
        )
        if corpus.decisions is not None:
            config = dataclasses.replace(config, decisions=corpus.decisions)
        generate(path, config)
    if not path.exists():
        msg = f"corpus folder {path} (from {declared_in}) does not exist"
        raise CorpusMissingError(msg)
    return path


def open_memory(
    cache: Path,
    manifest_sha256: str,
    corpus_dir: Path,
    files: Iterable[Path],
    excluded: Iterable[str],
    embedder: Embedder,
    *,
    progress: bool = False,
    sentences: bool = True,
    chunking: int = BASE_CHUNKING,
) -> tuple[Memory, Path]:
    """Import `files` of `corpus_dir` (the corpus less its pre-declared exclusions) into a cached
    database.

    The database is keyed by the manifest, the exclusions and where the corpus folder is, so a second
    run re-imports nothing and re-embeds nothing (vectors are keyed by content hash). The location is
    part of the key because the store files a transcript under its resolved path: the same corpus
    imported from a second folder into one database would be stored twice, and every arm would see
    each chunk twice. `sentences`: also embed the sentences of the person's chunk texts (what arms
    with `sentences=True` read); a later call with it fills in what an earlier one without it skipped.
    `chunking`: the version the protocol chunks its corpus under (`engine.chunking`), also in the key.
    """
    excl_hash = hashlib.sha256("\n".join(sorted(excluded)).encode()).hexdigest()[:8]
    where = hashlib.sha256(str(Path(corpus_dir).resolve()).encode()).hexdigest()[:8]
    # chunked under version 1, the database keeps the name it had before chunking had versions
    split = "" if chunking == BASE_CHUNKING else f"-c{chunking}"
    db_path = cache / "bench" / f"{manifest_sha256[:16]}-{excl_hash}-{where}{split}.db"
    # A benchmark asks many queries of a frozen corpus: FTS5 answers from an in-memory snapshot.
    memory = Memory(db_path, embedder, lexical_index="sync")
    paths = list(files)
    if paths:
        # Chunk ids from paths below the corpus folder: the same corpus ranks the same wherever it is.
        memory.import_paths(
            paths,
            embed=True,
            progress=progress,
            stream_root=Path(corpus_dir),
            sentences=sentences,
            chunking=chunking,
        )
    memory.ensure_index()
    return memory, db_path
