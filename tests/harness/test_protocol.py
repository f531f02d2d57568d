"""Protocol schema validation, canonical hashing, registration, amendments and verification."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from importlib import resources
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from harness.protocol.load import canonical_sha256, load_protocol, raw_sha256
from harness.protocol.lock import amend, load_lock, lock_path, register, verify
from harness.protocol.model import ProtocolError

MANIFEST = "a" * 64
SEAL_RECEIPTS = "b" * 64
SEAL_NEG = "c" * 64
NOW = dt.datetime(2025, 2, 1, 12, 0, tzinfo=dt.UTC)

PROTOCOL = f"""\
# Gate M of the published benchmark, re-run.
id = "receipts-2025"
title = "Does the walk beat fusion on receipt look-up?"
hypothesis = "walk(hops=2) finds the authoring session more often than rrf."
registered = 2025-01-15
embedder = "hash-256-v1"
arms = ["rrf(pool=20,rrf_k=60)", "walk(hops=2)", "vector(pool=20)"]

[corpus]
source = "synthetic"
seed = 7
size = 200
path = "data/synthetic"
manifest_sha256 = "{MANIFEST}"
cutoff = 2025-01-01T00:00:00Z
exclude = ["self_transcript", "after_cutoff"]

[[rosters]]
name = "receipts"
path = "sealed/receipts"
seal = "{SEAL_RECEIPTS}"
unit = "session"
[rosters.subsets]
multi = 'hop == "multi"'

[[rosters]]
name = "negatives"
path = "sealed/negatives"
seal = "{SEAL_NEG}"
unit = "session"

[metrics]
primary = "recall@5"
secondary = ["mrr", "ndcg@10"]
k = 10

[[gates]]
id = "M"
roster = "receipts"
metric = "recall@5"
treatment = "walk(hops=2)"
baseline = "rrf(pool=20,rrf_k=60)"
test = "bootstrap"
confidence = 0.95
margin = 0.0
[gates.readings]
pass = "The walk finds authoring sessions that fusion misses."
fail = "The walk is worse than fusion; ship fusion."
null = "No detectable difference at this n."

[[gates]]
id = "N"
kind = "negative"
roster = "negatives"
metric = "leak@5"
treatment = "rrf(pool=20,rrf_k=60)"
[gates.readings]
pass = "No cross-project leak, and every control was found."
fail = "Fusion leaks memories across projects."
null = "Not used for negative gates."
vacuous = "A control was missed: the leak test could not have failed."

[stats]
seed = 0
resamples = 10000
confidence = 0.95

[ship]
default = "rrf(pool=20,rrf_k=60)"
[[ship.rules]]
arm = "walk(hops=2)"
when = {{ M = "PASS", N = "PASS" }}

[reporting]
commitments = ["exact counts", "null results with equal prominence", "no post-hoc exclusion"]
"""

SEALS = {"receipts": SEAL_RECEIPTS, "negatives": SEAL_NEG}


def _write(tmp_path: Path, text: str = PROTOCOL) -> Path:
    folder = tmp_path / "protocols"
    folder.mkdir(exist_ok=True)
    path = folder / "receipts.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ProtocolError) as err:
        load_protocol(_write(tmp_path, text))
    return str(err.value)


def test_shipped_schema_is_valid_draft_2020_12() -> None:
    text = resources.files("harness").joinpath("schemas/protocol.schema.json").read_text("utf-8")
    schema = json.loads(text)

    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False


def test_valid_protocol_loads_into_typed_values(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    protocol = load_protocol(_write(tmp_path))

    assert protocol.id == "receipts-2025"
    assert protocol.registered == dt.date(2025, 1, 15)
    assert protocol.corpus.cutoff == dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    assert protocol.corpus.exclude == ("self_transcript", "after_cutoff")
    assert protocol.root == tmp_path.resolve()
    assert protocol.corpus_path == tmp_path.resolve() / "data" / "synthetic"
    assert protocol.roster_dir("receipts") == tmp_path.resolve() / "sealed" / "receipts"
    assert protocol.roster("receipts").subsets == {"multi": 'hop == "multi"'}
    gate_m, gate_n = protocol.gates
    assert (gate_m.test, gate_m.confidence, gate_m.kind, gate_m.direction) == (
        "bootstrap",
        0.95,
        "superiority",
        "greater",
    )
    assert gate_m.readings.for_verdict("FAIL") == "The walk is worse than fusion; ship fusion."
    assert gate_n.kind == "negative"
    assert gate_n.baseline is None
    assert gate_n.readings.for_verdict("VACUOUS").startswith("A control was missed")
    assert protocol.ship.rules[0].when == {"M": ("PASS",), "N": ("PASS",)}
    assert protocol.stats.resamples == 10_000
    assert protocol.metrics.all == ("recall@5", "mrr", "ndcg@10")
    assert protocol.sha256 == canonical_sha256(protocol.path)
    assert protocol.raw_sha256 == hashlib.sha256(PROTOCOL.encode()).hexdigest()


@pytest.mark.parametrize("reading", ["pass", "fail", "null"])
def test_each_missing_reading_is_refused_with_its_json_path(tmp_path: Path, reading: str) -> None:
    lines = PROTOCOL.splitlines(keepends=True)
    # Drop the first gate's line for this reading (gate M comes first).
    index = next(i for i, line in enumerate(lines) if line.startswith(f"{reading} = "))
    message = _error(tmp_path, "".join(lines[:index] + lines[index + 1 :]))

    assert f"$.gates[0].readings: '{reading}' is a required property" in message
    assert load_protocol(_write(tmp_path)).gates[0].readings.null


def test_negative_gate_needs_a_vacuous_reading_and_no_baseline(tmp_path: Path) -> None:
    no_vacuous = PROTOCOL.replace(
        'vacuous = "A control was missed: the leak test could not have failed."\n', ""
    )
    assert "$.gates[1].readings: 'vacuous' is a required property" in _error(tmp_path, no_vacuous)

    with_baseline = PROTOCOL.replace(
        'metric = "leak@5"\n', 'metric = "leak@5"\nbaseline = "walk(hops=2)"\n'
    )
    assert "$.gates[1].baseline: is not allowed here" in _error(tmp_path, with_baseline)
    assert load_protocol(_write(tmp_path)).gates[1].readings.vacuous is not None


def test_schema_refuses_unknown_fields_bad_hashes_and_test_specific_knobs(tmp_path: Path) -> None:
    assert "Additional properties are not allowed ('autor' was unexpected)" in _error(
        tmp_path, 'autor = "me"\n' + PROTOCOL
    )
    assert "$.corpus.manifest_sha256: 'abc' does not match" in _error(
        tmp_path, PROTOCOL.replace(MANIFEST, "abc")
    )
    sign_without_alpha = PROTOCOL.replace(
        'test = "bootstrap"\nconfidence = 0.95\n', 'test = "sign"\n'
    )
    assert "$.gates[0]: 'alpha' is a required property" in _error(tmp_path, sign_without_alpha)
    alpha_on_bootstrap = PROTOCOL.replace("confidence = 0.95\nmargin", "alpha = 0.05\nmargin")
    assert "$.gates[0].alpha: is not allowed here" in _error(tmp_path, alpha_on_bootstrap)
    assert "$.metrics.primary: 'Recall@5' does not match" in _error(
        tmp_path, PROTOCOL.replace('primary = "recall@5"', 'primary = "Recall@5"')
    )


def test_cross_references_are_checked_after_the_schema(tmp_path: Path) -> None:
    unknown_arm = PROTOCOL.replace('treatment = "walk(hops=2)"', 'treatment = "walk(hops=3)"')
    assert "treatment 'walk(hops=3)' is not in arms" in _error(tmp_path, unknown_arm)
    unknown_subset = PROTOCOL.replace(
        'metric = "recall@5"\ntreatment', 'metric = "recall@5"\nsubset = "single"\ntreatment'
    )
    assert "subset 'single' is not declared for roster receipts" in _error(tmp_path, unknown_subset)
    evil_subset = PROTOCOL.replace("""multi = 'hop == "multi"'""", "multi = \"__import__('os')\"")
    assert "$.rosters[0].subsets.multi: Subset expression" in _error(tmp_path, evil_subset)
    too_deep = PROTOCOL.replace('secondary = ["mrr", "ndcg@10"]', 'secondary = ["mrr", "ndcg@20"]')
    assert "metric ndcg@20 needs depth 20 but metrics.k = 10" in _error(tmp_path, too_deep)
    vacuous_superiority = PROTOCOL.replace('M = "PASS", N = "PASS"', 'M = "VACUOUS"')
    assert "gate M is a superiority gate and can never be VACUOUS" in _error(
        tmp_path, vacuous_superiority
    )
    naive_cutoff = PROTOCOL.replace("cutoff = 2025-01-01T00:00:00Z", "cutoff = 2025-01-01T00:00:00")
    assert "corpus.cutoff must carry a UTC offset" in _error(tmp_path, naive_cutoff)


def test_canonical_hash_ignores_whitespace_comments_and_key_order_but_not_values(
    tmp_path: Path,
) -> None:
    original = canonical_sha256(_write(tmp_path))
    original_raw = raw_sha256(_write(tmp_path))

    reformatted = (
        "# a new comment\n"
        + PROTOCOL.replace(" = ", "   =   ").replace("\n[", "\n\n\n[")
        + "\n# trailing comment\n"
    )
    assert canonical_sha256(_write(tmp_path, reformatted)) == original
    assert raw_sha256(_write(tmp_path, reformatted)) != original_raw
    reordered = PROTOCOL.replace("seed = 7\nsize = 200\n", "size = 200\nseed = 7\n")
    assert canonical_sha256(_write(tmp_path, reordered)) == original

    edited = PROTOCOL.replace("margin = 0.0", "margin = 0.05")
    assert canonical_sha256(_write(tmp_path, edited)) != original
    reworded = PROTOCOL.replace("No detectable difference at this n.", "No detectable difference.")
    assert canonical_sha256(_write(tmp_path, reworded)) != original


def test_register_writes_a_lock_beside_the_protocol(tmp_path: Path) -> None:
    path = _write(tmp_path)

    lock = register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit="abc1234")

    target = tmp_path / "protocols" / "receipts.lock.json"
    assert lock_path(path) == target
    data = json.loads(target.read_text())
    assert data["protocol"] == "receipts.toml"
    assert data["protocol_id"] == "receipts-2025"
    assert data["protocol_sha256"] == canonical_sha256(path)
    assert data["protocol_raw_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert data["seals"] == SEALS
    assert data["corpus_manifest_sha256"] == MANIFEST
    assert data["registered_at"] == "2025-02-01T12:00:00+00:00"
    assert data["git_commit"] == "abc1234"
    assert data["amendments"] == []
    assert load_lock(path) == lock
    assert verify(path, manifest_sha256=MANIFEST, seals=SEALS) == []


def test_register_refuses_a_second_registration_and_undeclared_hashes(tmp_path: Path) -> None:
    path = _write(tmp_path)
    with pytest.raises(
        ProtocolError, match=r"Expected sha256 of corpus manifest .* to be a{64} .* but got d{64}"
    ):
        register(path, manifest_sha256="d" * 64, seals=SEALS, now=NOW, git_commit=None)
    with pytest.raises(ProtocolError, match=r"SEAL\.sha256 to be b{64} .* but got e{64}"):
        register(
            path,
            manifest_sha256=MANIFEST,
            seals={**SEALS, "receipts": "e" * 64},
            now=NOW,
            git_commit=None,
        )
    assert not lock_path(path).exists()

    register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit=None)
    with pytest.raises(
        ProtocolError, match=r"Refusing to re-register .*receipts\.lock\.json already exists"
    ):
        register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit=None)


def test_verify_names_a_modified_protocol_and_both_hashes(tmp_path: Path) -> None:
    path = _write(tmp_path)
    register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit=None)
    registered = canonical_sha256(path)

    _write(tmp_path, "# reformatted only\n" + PROTOCOL.replace(" = ", " =  "))
    assert verify(path, manifest_sha256=MANIFEST, seals=SEALS) == []

    _write(tmp_path, PROTOCOL.replace("margin = 0.0", "margin = 0.1"))
    mismatches = verify(path, manifest_sha256=MANIFEST, seals=SEALS)

    assert [m.thing for m in mismatches] == ["protocol"]
    assert mismatches[0].message.startswith(
        f"Expected sha256 of {path} to be {registered} but got {canonical_sha256(path)}"
    )


def test_verify_names_a_changed_seal_and_a_changed_manifest(tmp_path: Path) -> None:
    path = _write(tmp_path)
    register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit=None)

    mismatches = verify(path, manifest_sha256="f" * 64, seals={**SEALS, "negatives": "0" * 64})

    assert [m.thing for m in mismatches] == ["seal", "manifest"]
    assert mismatches[0].message.startswith(
        f"Expected sha256 of roster negatives (SEAL.sha256) to be {SEAL_NEG} but got {'0' * 64}"
    )
    assert mismatches[1].message.startswith(
        f"Expected sha256 of corpus manifest to be {MANIFEST} but got {'f' * 64}"
    )
    assert verify(path, manifest_sha256=MANIFEST, seals=SEALS) == []


def test_verify_of_an_unregistered_protocol_says_there_is_no_lock(tmp_path: Path) -> None:
    path = _write(tmp_path)

    mismatches = verify(path, manifest_sha256=MANIFEST, seals=SEALS)

    assert [m.thing for m in mismatches] == ["lock"]
    assert mismatches[0].message.startswith(f"No lock at {lock_path(path)}")
    register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit=None)
    assert verify(path, manifest_sha256=MANIFEST, seals=SEALS) == []


def test_amendment_before_the_first_run_is_appended_and_then_verifies(tmp_path: Path) -> None:
    path = _write(tmp_path)
    register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit=None)
    _write(tmp_path, PROTOCOL.replace("margin = 0.0", "margin = 0.02"))
    later = NOW + dt.timedelta(days=1)

    lock = amend(path, later, "margin agreed with reviewers", False)

    assert len(lock.amendments) == 1
    entry = json.loads(lock_path(path).read_text())["amendments"][0]
    assert entry["sha256"] == canonical_sha256(path)
    assert entry["time"] == "2025-02-02T12:00:00+00:00"
    assert entry["reason"] == "margin agreed with reviewers"
    assert lock.protocol_sha256 != lock.current_sha256
    assert verify(path, manifest_sha256=MANIFEST, seals=SEALS) == []

    with pytest.raises(ProtocolError, match=r"Nothing to amend"):
        amend(path, later, "again", False)


def test_amendment_after_a_run_is_refused_as_a_deviation(tmp_path: Path) -> None:
    path = _write(tmp_path)
    register(path, manifest_sha256=MANIFEST, seals=SEALS, now=NOW, git_commit=None)
    _write(tmp_path, PROTOCOL.replace("margin = 0.0", "margin = 0.02"))
    before = lock_path(path).read_bytes()

    with pytest.raises(
        ProtocolError, match=r"a run of protocol receipts-2025 already exists.*--deviation"
    ):
        amend(path, NOW, "too late", True)

    assert lock_path(path).read_bytes() == before
    assert [m.thing for m in verify(path, manifest_sha256=MANIFEST, seals=SEALS)] == ["protocol"]


def test_amending_an_unregistered_protocol_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path)
    with pytest.raises(
        ProtocolError, match=r"No lock at .*receipts\.lock\.json; register the protocol"
    ):
        amend(path, NOW, "why", False)
