"""Cross-fitting an arm over a fine-tuned encoder, and the order in which registration fits.

A fitted arm that ranks by a fine-tuned encoder (``ltr(...)@minilm-l6-v2-tuned``) must not learn from
the encoder's vectors of its own training questions: the encoder was tuned to rank exactly those
evidence turns first, so their cosines are better than any test question's will be, and a reranker
fitted on them learns to trust the vector channel more than it earns on new conversations. So the
arm is cross-fitted: the training questions' projects (LoCoMo: conversations) are dealt, sorted, into
`CROSS_FOLDS` folds; for each fold an encoder is fine-tuned, with the entry's spec and seed, on the
encoder's training pairs of the other folds' projects only; the fold's questions are read through a
memory whose vectors (corpus and queries) come from that fold encoder; and one model is fitted on all
folds' candidates (`arms.registry.fit_parts`). At run time the arm ranks by the encoder fitted on
every pair, as registered. The artifact records each fold's projects, pair count and weights' sha256.

`fit_protocol` is what `protocol register` calls: the encoders first, then every `[[fits]]` entry,
over the pinned embedder, an extra embedder, or cross-fitted over an encoder.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arms.fitting import Example, Fitted, Part
from arms.registry import fit_parts
from arms.spec import parse_spec
from engine.embed import Embedder
from engine.memory import Memory
from engine.tuned_embed import TunedEmbedder
from harness.arm_memories import reads_sentences
from harness.fit import (
    FORMAT,
    Artifact,
    FitRefusedError,
    check_inputs,
    examples,
    fit_one,
    fit_sha256,
    leak_free_inputs,
    open_training,
    training_rosters,
    versions,
    write_artifact,
)
from harness.fit_encoder import fit_encoders, training_pairs_of
from harness.protocol.arm_embedder import arm_canonical, split_arm
from harness.protocol.model import EncoderFit, FitSpec, Protocol
from harness.seal import canonical_json_bytes, verify_sealed
from harness.tune import Pair, TuneParams, fit_encoder

__all__ = ["CROSS_FOLDS", "cross_fit_one", "fit_protocol", "folds_of"]

CROSS_FOLDS = 2


def project_of(example: Example) -> str:
    """The one project a training question is scoped to (its fold is that project's).

    Raises:
        FitRefusedError: the question is scoped to everywhere or to several projects.
    """
    scope = example.query.scope
    if scope.all_projects or len(scope.projects) != 1:
        where = "everywhere" if scope.all_projects else ", ".join(sorted(scope.projects))
        msg = (
            f"cross-fitting deals training questions into folds by project, but {example.qid} is "
            f"scoped to {where}; scope each training question to one project"
        )
        raise FitRefusedError(msg)
    (project,) = scope.projects
    return project


def folds_of(projects: Sequence[str], k: int = CROSS_FOLDS) -> list[tuple[str, ...]]:
    """`projects` sorted and dealt round-robin into min(k, n) folds (a, b, c, d, e -> ace, bd).

    Raises:
        FitRefusedError: fewer than two projects (nothing to hold out).
    """
    ordered = sorted(set(projects))
    if len(ordered) < 2:
        msg = (
            f"cross-fitting needs training questions in at least two projects, got {ordered}; "
            "train on more than one conversation or project"
        )
        raise FitRefusedError(msg)
    n = min(k, len(ordered))
    return [tuple(ordered[i::n]) for i in range(n)]


def _fold_memory(
    db_path: Path,
    held: Sequence[Pair],
    params: TuneParams,
    seed: int,
    arm: str,
    projects: Sequence[str],
    model_cache: Path | None,
    progress: bool,
) -> tuple[Memory, str]:
    """A fold's encoder, fine-tuned on `held` (the other folds' pairs), and a memory over the
    training database whose vectors, corpus and queries, are that encoder's."""
    if progress:
        print(f"cross-fit fold {', '.join(projects)}: fine-tuning on {len(held)} pairs")
    sha = fit_encoder(held, params, seed, cache=model_cache, progress=progress)
    memory = Memory(db_path, TunedEmbedder(sha, cache=model_cache), lexical_index="sync")
    try:
        memory.embed_pending(progress=progress, sentences=reads_sentences([arm]))
        memory.ensure_index()
    except BaseException:
        memory.close()
        raise
    return memory, sha


def cross_fit_one(
    protocol: Protocol,
    fit: FitSpec,
    enc: EncoderFit,
    embedder: Embedder,
    *,
    test_corpus: Path,
    cache: Path | None = None,
    model_cache: Path | None = None,
    progress: bool = False,
) -> Artifact:
    """Cross-fit [[fits]] entry `fit` (an arm ranking by encoder `enc`) and write its artifact.

    Raises:
        FitRefusedError: the inputs are not the declared ones, they leak the test, or the training
            questions cannot be dealt into folds.
        arms.registry.RegistryError: the arm cannot be fitted from parts.
    """
    corpus_dir, manifest = leak_free_inputs(
        protocol, fit, test_corpus=test_corpus, progress=progress
    )
    enc_dir, enc_manifest = check_inputs(protocol, enc, progress=progress)
    pairs, enc_examples = training_pairs_of(
        protocol, enc, embedder, enc_dir, cache=cache, manifest=enc_manifest
    )
    train = examples(training_rosters(protocol, fit), now=fit.corpus.cutoff, k=protocol.metrics.k)
    folds = folds_of([project_of(e) for e in train])
    pair_project = {e.qid: project_of(e) for e in enc_examples}
    params = TuneParams.from_spec(enc.tune)
    memories: list[Memory] = []
    with tempfile.TemporaryDirectory(prefix="recallbench-crossfit-") as tmp:
        base, db_path, excluded = open_training(
            corpus_dir,
            manifest,
            now=fit.corpus.cutoff,
            exclude=fit.corpus.exclude,
            embedder=embedder,
            cache=cache or Path(tmp),
            progress=progress,
            chunking=fit.corpus.chunking,
            sentences=reads_sentences([fit.arm]),
        )
        try:
            parts: list[Part] = []
            records: list[dict[str, object]] = []
            for projects in folds:
                held = [p for p in pairs if pair_project[p.qid] not in projects]
                memory, sha = _fold_memory(
                    db_path, held, params, enc.seed, fit.arm, projects, model_cache, progress
                )
                memories.append(memory)
                part = tuple(e for e in train if project_of(e) in projects)
                parts.append((memory, part))
                records.append(
                    {"projects": list(projects), "pairs": len(held), "examples": len(part)}
                    | {"weights_sha256": sha}
                )
            fitted = fit_parts(parse_spec(split_arm(fit.arm).spec), parts, fit.seed)
        finally:
            for memory in memories:
                memory.close()
            base.close()
    body = _body(protocol, fit, fitted, manifest, sorted(excluded), train)
    body["cross_fit"] = {"encoder": enc.name, "tune": params.canonical(), "folds": records}
    stem = parse_spec(split_arm(fit.arm).spec).name
    return write_artifact(protocol.root, stem, fit.arm, canonical_json_bytes(body))


def _body(
    protocol: Protocol,
    fit: FitSpec,
    fitted: Fitted,
    manifest: str,
    excluded: list[str],
    train: Sequence[Example],
) -> dict[str, Any]:
    """The artifact's fields that a plain fit's artifact has too (`harness.fit.fit_bytes`)."""
    return {
        "format": FORMAT,
        "arm": arm_canonical(fit.arm),
        "fit_sha256": fit_sha256(fit),
        "seed": fit.seed,
        "features": list(fitted.features),
        "model": dict(fitted.model),
        "counts": dict(sorted(fitted.counts.items())),
        "training": {
            "corpus_manifest_sha256": manifest,
            "excluded_sessions": excluded,
            "rosters": {
                r.name: verify_sealed(r.folder, r.key).seal for r in training_rosters(protocol, fit)
            },
            "qids": [e.qid for e in train],
        },
        "embedder": split_arm(fit.arm).embedder,
        "versions": versions(),
    }


def fit_protocol(
    protocol: Protocol,
    embedder: Embedder,
    *,
    test_corpus: Path,
    extras: Mapping[str, Embedder],
    cache: Path | None = None,
    model_cache: Path | None = None,
    progress: bool = False,
    on_fit: Callable[[str, Artifact], None] | None = None,
) -> tuple[dict[str, Artifact], dict[str, Artifact]]:
    """Fine-tune every encoder, then fit every [[fits]] entry: (arm -> artifact, encoder -> artifact).

    `on_fit` hears ``("encoder", artifact)`` and ``("arm", artifact)`` as each is written.
    """
    encoders, tuned = fit_encoders(
        protocol,
        embedder,
        test_corpus=test_corpus,
        cache=cache,
        model_cache=model_cache,
        progress=progress,
        on_fit=(lambda a: on_fit("encoder", a)) if on_fit is not None else None,
    )
    by_name = {e.name: e for e in protocol.encoders}
    fits: dict[str, Artifact] = {}
    for fit in protocol.fits:
        named = split_arm(fit.arm).embedder
        if named is not None and named in by_name and named in tuned:
            artifact = cross_fit_one(
                protocol,
                fit,
                by_name[named],
                embedder,
                test_corpus=test_corpus,
                cache=cache,
                model_cache=model_cache,
                progress=progress,
            )
        else:
            if named is not None and named not in extras:
                msg = f"{fit.label} ranks by embedder {named}, which this fit was not given"
                raise FitRefusedError(msg)
            over = embedder if named is None else extras[named]
            artifact = fit_one(
                protocol, fit, over, test_corpus=test_corpus, cache=cache, progress=progress
            )
        fits[fit.arm] = artifact
        if on_fit is not None:
            on_fit("arm", artifact)
    return fits, encoders
