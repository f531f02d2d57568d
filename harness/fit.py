"""Fitting under pre-registration: fit each fitted arm at `protocol register`, verify at `bench run`.

A protocol's ``[[fits]]`` entry names a fitted arm's training corpus, its sealed training rosters and the
seed (HARNESS.md, Fitting). Registration calls `fit_all`: for each entry it checks the training corpus
and rosters against the hashes the entry declares, refuses a fit that could see the test (`leaks`: a
training question with a test question's qid or normalised text, or a training session that is also a
test session unless ``shared_sessions = true``), imports the training corpus, fits the arm through the
registry and writes the artifact ``arms/fitted/<arm>-<sha12>.json``: canonical JSON holding the model,
its features, the training qids, the corpus manifest, the roster seals, the embedder and the library
versions. No clock goes in, so fitting twice writes the same bytes. The lock records each artifact's
path and sha256.

A run calls `check_fits` (artifact present, hash as locked, made for the protocol's current entry, no
leak) and `models`, which hands each fitted arm the model its artifact holds.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import tempfile
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from arms.base import Query
from arms.fitting import Example
from arms.registry import fit as fit_arm
from arms.spec import parse_spec
from engine import __version__ as engine_version
from engine.chunking import BASE_CHUNKING
from engine.embed import Embedder
from engine.memory import Memory
from engine.scope import Scope
from harness import freeze
from harness.arm_memories import reads_sentences
from harness.corpus_db import CorpusMissingError, materialise, open_memory
from harness.protocol.arm_embedder import arm_canonical, split_arm
from harness.protocol.model import FitSpec, Protocol
from harness.roster import Question, load_questions
from harness.seal import KEY_FILE, canonical_json_bytes, load_sealed_key, verify_sealed
from harness.settles import apply_settles, load_settles

__all__ = [
    "ARTIFACT_DIR",
    "FORMAT",
    "Artifact",
    "FitCheck",
    "FitRefusedError",
    "TrainingRoster",
    "check_fits",
    "fit_all",
    "fit_bytes",
    "fit_one",
    "leak_free_inputs",
    "leaks",
    "load_json",
    "locked_bytes",
    "normalise",
    "open_training",
    "training_rosters",
    "versions",
    "write_artifact",
]

ARTIFACT_DIR = Path("arms") / "fitted"
FORMAT = 1
_LIBRARIES = ("numpy", "scikit-learn", "scipy")
_WORD = re.compile(r"\w+")


class FitRefusedError(RuntimeError):
    """A fit that must not be made or used: hashes differ, the test leaks into training, or no model."""


@dataclass(frozen=True, kw_only=True)
class Artifact:
    """A written artifact: the arm it fits, where it is (relative to the root) and its sha256."""

    arm: str
    path: str
    sha256: str

    def to_dict(self) -> dict[str, str]:
        """What the lock records per fitted arm."""
        return {"path": self.path, "sha256": self.sha256}


def normalise(text: str) -> str:
    """A question's text for comparing training and test: NFKC, case-folded, words only."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def fit_sha256(fit: FitSpec) -> str:
    """The hash of a [[fits]] entry as written (what an artifact is bound to)."""
    return hashlib.sha256(canonical_json_bytes(fit.to_dict())).hexdigest()


def leaks(protocol: Protocol, fit: FitSpec, *, test_corpus: Path, train_corpus: Path) -> list[str]:
    """Every way `fit`'s training data could see the test: shared qids, texts or sessions."""
    test = {ref.name: load_questions(protocol.roster_dir(ref.name)) for ref in protocol.rosters}
    train = {ref.name: load_questions(fit.roster_dir(ref, protocol.root)) for ref in fit.rosters}
    out: list[str] = []
    test_qids = {q.qid: name for name, qs in test.items() for q in qs}
    test_texts = {normalise(q.text): (name, q.qid) for name, qs in test.items() for q in qs}
    same_qid = [
        f"{name}/{q.qid} (test roster {test_qids[q.qid]})"
        for name, qs in train.items()
        for q in qs
        if q.qid in test_qids
    ]
    if same_qid:
        out.append(_listed("training questions share a qid with a test question", same_qid))
    same_text = [
        f"{name}/{q.qid} = {test_texts[normalise(q.text)][0]}/{test_texts[normalise(q.text)][1]}"
        for name, qs in train.items()
        for q in qs
        if normalise(q.text) in test_texts
    ]
    if same_text:
        out.append(_listed("training questions ask a test question's text", same_text))
    if not fit.shared_sessions:
        shared = sorted(
            set(freeze.scan(train_corpus).sessions) & set(freeze.scan(test_corpus).sessions)
        )
        if shared:
            out.append(
                _listed(
                    f"the training corpus {train_corpus} shares sessions with the test corpus "
                    f"{test_corpus} (write shared_sessions = true in the entry only if that is meant)",
                    shared,
                )
            )
    return [f"{fit.label}: {line}" for line in out]


def _listed(what: str, items: Sequence[str]) -> str:
    shown = ", ".join(items[:5])
    more = f" and {len(items) - 5} more" if len(items) > 5 else ""
    return f"{len(items)} {what}: {shown}{more}"


@dataclass(frozen=True, kw_only=True)
class TrainingRoster:
    """A sealed training roster: its name, folder, unit and where its key is."""

    name: str
    folder: Path
    unit: Literal["session", "message"]
    key: Path

    @classmethod
    def of(cls, folder: Path, name: str | None = None, key: Path | None = None) -> TrainingRoster:
        """A sealed folder as a training roster, its unit read from the key (checked by its seal)."""
        key_path = key or folder / KEY_FILE
        unit = load_sealed_key(key_path, sealed_dir=folder).unit
        return cls(name=name or folder.name, folder=folder, unit=unit, key=key_path)


def examples(rosters: Sequence[TrainingRoster], *, now: datetime, k: int) -> tuple[Example, ...]:
    """The training rosters as arm examples (qids prefixed by roster), negative items left out.

    Queries are asked as a run asks them: the question's scope, `now` (the training corpus cutoff),
    depth `k`.
    """
    out: list[Example] = []
    for roster in rosters:
        key = load_sealed_key(roster.key, sealed_dir=roster.folder)
        for q in load_questions(roster.folder):
            gold = key.gold[q.qid]
            if not gold.relevant:
                continue
            out.append(
                Example(
                    qid=f"{roster.name}/{q.qid}",
                    query=Query(text=q.text, scope=_scope(q), now=now, k=k),
                    unit=roster.unit,
                    relevant=gold.relevant,
                )
            )
    return tuple(out)


def _scope(question: Question) -> Scope:
    return Scope.everywhere() if question.scope == "*" else Scope.of(question.scope)


def check_inputs(protocol: Protocol, fit: FitSpec, *, progress: bool = False) -> tuple[Path, str]:
    """The training corpus folder and manifest, after checking it and the rosters' seals.

    Raises:
        FitRefusedError: the corpus manifest or a roster seal is not the one the entry declares.
    """
    corpus_dir = materialise(fit.corpus, protocol.root, protocol.path, progress=progress)
    manifest = freeze.manifest(corpus_dir).sha256
    problems: list[str] = []
    if manifest != fit.corpus.manifest_sha256:
        problems.append(
            f"Expected sha256 of corpus manifest ({corpus_dir}) to be {fit.corpus.manifest_sha256} "
            f"(declared in {protocol.path}, {fit.label}) but got {manifest}"
        )
    for ref in fit.rosters:
        folder = fit.roster_dir(ref, protocol.root)
        seal = verify_sealed(folder).seal
        if seal != ref.seal:
            problems.append(
                f"Expected sha256 of {folder / 'SEAL.sha256'} to be {ref.seal} (declared in "
                f"{protocol.path}, {fit.label}) but got {seal}"
            )
    if problems:
        raise FitRefusedError("; ".join(problems))
    return corpus_dir, manifest


def leak_free_inputs(
    protocol: Protocol, fit: FitSpec, *, test_corpus: Path, progress: bool = False
) -> tuple[Path, str]:
    """`check_inputs`, then refuse a training set that leaks the test (`leaks`): the training corpus
    folder and manifest every fit starts from.

    Raises:
        FitRefusedError: the inputs are not the declared ones, or they leak the test.
    """
    corpus_dir, manifest = check_inputs(protocol, fit, progress=progress)
    found = leaks(protocol, fit, test_corpus=test_corpus, train_corpus=corpus_dir)
    if found:
        raise FitRefusedError("refusing to fit: " + "; ".join(found))
    return corpus_dir, manifest


def fit_one(
    protocol: Protocol,
    fit: FitSpec,
    embedder: Embedder,
    *,
    test_corpus: Path,
    cache: Path | None = None,
    progress: bool = False,
) -> Artifact:
    """Fit one [[fits]] entry and write its artifact under the protocol's root (see module doc).

    Raises:
        FitRefusedError: the training inputs are not the declared ones, or they leak the test.
        arms.fitting.FitError: the arm cannot be fitted on these examples.
    """
    corpus_dir, manifest = leak_free_inputs(
        protocol, fit, test_corpus=test_corpus, progress=progress
    )
    rosters = training_rosters(protocol, fit)
    data = fit_bytes(
        fit.arm,
        corpus_dir,
        rosters,
        seed=fit.seed,
        now=fit.corpus.cutoff,
        k=protocol.metrics.k,
        exclude=fit.corpus.exclude,
        embedder=embedder,
        bound_to=fit_sha256(fit),
        cache=cache,
        progress=progress,
        manifest=manifest,
        chunking=fit.corpus.chunking,
    )
    return write_artifact(protocol.root, parse_spec(split_arm(fit.arm).spec).name, fit.arm, data)


def write_artifact(root: Path, stem: str, arm: str, data: bytes) -> Artifact:
    """Write `data` as ``arms/fitted/<stem>-<sha12>.json`` under `root` (once: the name holds the
    hash, so an existing file has these very bytes) and return it as the artifact of `arm`."""
    sha = hashlib.sha256(data).hexdigest()
    relative = ARTIFACT_DIR / f"{stem}-{sha[:12]}.json"
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.write_bytes(data)
    return Artifact(arm=arm, path=relative.as_posix(), sha256=sha)


def open_training(
    corpus_dir: Path,
    manifest: str,
    *,
    now: datetime,
    exclude: Sequence[str],
    embedder: Embedder,
    cache: Path,
    progress: bool = False,
    sentences: bool = False,
    chunking: int = BASE_CHUNKING,
) -> tuple[Memory, Path, set[str]]:
    """Import a training corpus as `bench run` imports its test corpus (chunked under `chunking`,
    the version its protocol entry names), less the sessions `exclude` flags and with what a person
    settled applied before anything is read: (memory, its database, the excluded sessions)."""
    report = freeze.scan(corpus_dir, cutoff=now)
    excluded = report.flagged(tuple(f for f in exclude if f != "roster_leak"))
    memory, db_path = open_memory(
        cache,
        manifest,
        corpus_dir,
        [corpus_dir / f for f in report.files_excluding(excluded)],
        excluded,
        embedder,
        progress=progress,
        sentences=sentences,
        chunking=chunking,
    )
    try:
        settles = load_settles(corpus_dir)
        if settles is not None:
            apply_settles(memory, settles, excluded=excluded)
    except BaseException:
        memory.close()
        raise
    return memory, db_path, excluded


def training_rosters(protocol: Protocol, fit: FitSpec) -> list[TrainingRoster]:
    """The sealed training rosters of [[fits]] or [[encoders]] entry `fit`, keys beside them."""
    return [
        TrainingRoster(
            name=ref.name,
            folder=fit.roster_dir(ref, protocol.root),
            unit=ref.unit,
            key=fit.roster_dir(ref, protocol.root) / KEY_FILE,
        )
        for ref in fit.rosters
    ]


def fit_bytes(
    arm: str,
    corpus_dir: Path,
    rosters: Sequence[TrainingRoster],
    *,
    seed: int,
    now: datetime,
    k: int,
    exclude: Sequence[str],
    embedder: Embedder,
    bound_to: str | None,
    cache: Path | None = None,
    progress: bool = False,
    manifest: str | None = None,
    chunking: int = BASE_CHUNKING,
) -> bytes:
    """Import `corpus_dir` (less the sessions `exclude` flags, chunked under `chunking`), fit `arm`
    on `rosters`, return the artifact's canonical bytes. `bound_to` is the [[fits]] entry's hash
    (None: an exploratory fit).

    Raises:
        arms.fitting.FitError: the arm cannot be fitted on these examples.
    """
    manifest = manifest or freeze.manifest(corpus_dir).sha256
    train = examples(rosters, now=now, k=k)
    with tempfile.TemporaryDirectory(prefix="recallbench-fit-") as tmp:
        memory, _, excluded = open_training(
            corpus_dir,
            manifest,
            now=now,
            exclude=exclude,
            embedder=embedder,
            cache=cache or Path(tmp),
            progress=progress,
            sentences=reads_sentences([arm]),
            chunking=chunking,
        )
        try:
            fitted = fit_arm(split_arm(arm).spec, memory, train, seed)
        finally:
            memory.close()
    body = {
        "format": FORMAT,
        "arm": arm_canonical(arm),
        "fit_sha256": bound_to,
        "seed": seed,
        "features": list(fitted.features),
        "model": dict(fitted.model),
        "counts": dict(sorted(fitted.counts.items())),
        "training": {
            "corpus_manifest_sha256": manifest,
            "excluded_sessions": sorted(excluded),
            "rosters": {r.name: verify_sealed(r.folder, r.key).seal for r in rosters},
            "qids": [e.qid for e in train],
        },
        "embedder": embedder.id,
        "versions": versions(),
    }
    return canonical_json_bytes(body)


def fit_all(
    protocol: Protocol,
    embedder: Embedder,
    *,
    test_corpus: Path,
    cache: Path | None = None,
    progress: bool = False,
    on_fit: Callable[[Artifact], None] | None = None,
) -> dict[str, Artifact]:
    """Fit every [[fits]] entry over `embedder`; arm spec -> artifact. (`protocol register` calls
    `harness.cross_fit.fit_protocol`, which also fine-tunes encoders and fits arms that name one.)"""
    out: dict[str, Artifact] = {}
    for fit in protocol.fits:
        artifact = fit_one(
            protocol, fit, embedder, test_corpus=test_corpus, cache=cache, progress=progress
        )
        out[fit.arm] = artifact
        if on_fit is not None:
            on_fit(artifact)
    return out


def versions(libraries: Sequence[str] = _LIBRARIES) -> dict[str, str]:
    """The Python, engine and library versions an artifact records."""
    out = {"python": platform.python_version(), "recallbench-engine": engine_version}
    for lib in libraries:
        try:
            out[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            out[lib] = "absent"
    return out


@dataclass(frozen=True, kw_only=True)
class FitCheck:
    """What `check_fits` found: mismatches a deviation may override, leaks that never run, and the
    model each artifact holds (fitted arm, full canonical spec -> model), read once, from the bytes
    that were hashed."""

    problems: tuple[str, ...]
    leaks: tuple[str, ...]
    models: Mapping[str, Any]


def check_fits(
    protocol: Protocol, locked: Mapping[str, Mapping[str, str]], *, test_corpus: Path
) -> FitCheck:
    """Check the protocol's fitted arms before a run, and read each model from the bytes checked.

    Mismatches (a fit not locked, an artifact missing, changed or made for another entry) name the
    file and both hashes; a deviation may override them. Leaks never run.
    """
    problems: list[str] = []
    found: list[str] = []
    checked: dict[str, Any] = {}
    for fit in protocol.fits:
        record = locked.get(fit.arm)
        read = locked_bytes(protocol.root, record, kind="fitted", owner=fit.arm)
        if isinstance(read, str):
            problems.append(read)
            continue
        assert record is not None  # locked_bytes answers a problem for a missing record
        data, actual = read
        body = _load(data, record["path"])
        # Read from the bytes just hashed; a changed artifact runs only under a declared deviation.
        checked[arm_canonical(fit.arm)] = body["model"]
        if actual != record["sha256"]:
            problems.append(
                f"Expected sha256 of {record['path']} to be {record['sha256']} but got {actual}; "
                "the fitted artifact changed after registration"
            )
            continue
        bound = body.get("fit_sha256")
        if bound != fit_sha256(fit):
            problems.append(
                f"Expected {record['path']} to be fitted for the [[fits]] entry with sha256 "
                f"{fit_sha256(fit)} but it was fitted for {bound}; the entry changed after fitting"
            )
        try:
            # A synthetic training corpus is generated again from its seed (a fresh clone has none).
            train_corpus = materialise(fit.corpus, protocol.root, protocol.path)
        except CorpusMissingError as exc:
            problems.append(f"training corpus of {fit.arm}: {exc}; the leak check needs it")
            continue
        found.extend(leaks(protocol, fit, test_corpus=test_corpus, train_corpus=train_corpus))
    return FitCheck(problems=tuple(problems), leaks=tuple(found), models=checked)


def locked_bytes(
    root: Path, record: Mapping[str, str] | None, *, kind: str, owner: str
) -> tuple[bytes, str] | str:
    """The bytes of the `kind` artifact ("fitted", "encoder") the lock records for `owner`, and
    their sha256; or the problem when the lock records none or the file is gone."""
    if record is None:
        return (
            f"No {kind} artifact for {owner} in the lock: it was added after registration; "
            "register a new protocol"
        )
    path = root / record["path"]
    if not path.is_file():
        return (
            f"Missing {kind} artifact {record['path']} (sha256 {record['sha256']}) for {owner}; "
            "restore it from version control"
        )
    data = path.read_bytes()
    return data, hashlib.sha256(data).hexdigest()


def load_json(data: bytes, where: str, kind: str) -> Any:
    """An artifact's JSON.

    Raises:
        FitRefusedError: the bytes are not JSON (the message names the `kind` artifact `where`).
    """
    try:
        return json.loads(data)
    except ValueError as exc:
        msg = f"{kind} artifact {where} is not JSON: {exc}"
        raise FitRefusedError(msg) from exc


def _load(data: bytes, where: str) -> dict[str, Any]:
    body = load_json(data, where, "fitted")
    if not isinstance(body, dict) or not isinstance(body.get("model"), dict):
        msg = f"fitted artifact {where} holds no model; restore it from version control"
        raise FitRefusedError(msg)
    return body
