"""End to end: a two-arm protocol on a fixture corpus, and every refusal the runner owes the user."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from arms.base import Query
from arms.registry import build
from engine.embed import HashEmbedder
from harness import freeze, runner
from harness.metrics import mean_over_roster
from harness.protocol.lock import register
from harness.results import ResultsError, summary_schema, validate_summary
from harness.runner import RunOptions, RunRefusedError, run
from harness.seal import seal_roster
from tests.engine.fixtures_transcripts import simple_session, write_jsonl

A = "/home/dev/alpha"
B = "/home/dev/beta"
NOW = datetime(2026, 6, 1, tzinfo=UTC)

TOPICS = [
    (
        "retry",
        "Why does the retry test flake on CI?",
        "The retry loop used a wall clock; we inject a fake clock now.",
    ),
    (
        "cache",
        "Why is the cache warmup slow?",
        "Cache warmup read every shard serially; it is parallel now.",
    ),
    (
        "parser",
        "How do we parse the legacy config?",
        "The legacy config parser accepts INI sections via configparser.",
    ),
    (
        "deploy",
        "How do we deploy the worker?",
        "The worker deploys with a blue green switch behind the proxy.",
    ),
]


def sid(n: int) -> str:
    return f"44444444-0000-4000-8000-{n:012d}"


def build_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a fixture corpus, a sealed roster and a registered two-arm protocol."""
    root = tmp_path / "repo"
    (root / "protocols").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    corpus = root / "corpus"
    for i, (_, prompt, answer) in enumerate(TOPICS):
        lines = simple_session(prompt, session_id=sid(i), cwd=A, answer=answer, prefix=f"s{i}-")
        write_jsonl(corpus / "projects" / "-home-dev-alpha" / f"{sid(i)}.jsonl", lines)
    beta = simple_session(
        "Rotate the beta signing key",
        session_id=sid(9),
        cwd=B,
        answer="Rotated the beta signing key.",
        prefix="b-",
    )
    write_jsonl(corpus / "projects" / "-home-dev-beta" / f"{sid(9)}.jsonl", beta)
    questions: list[dict[str, Any]] = [
        {
            "qid": f"q{i}",
            "text": answer.split(";")[0],
            "scope": [A],
            "category": "recall",
            "tags": {"topic": topic},
            "gold": {"relevant": {sid(i): 1}, "forbidden": [], "control": None},
        }
        for i, (topic, _, answer) in enumerate(TOPICS)
    ]
    questions += [
        {
            "qid": "neg1",
            "text": "beta signing key rotation",
            "scope": [A],
            "category": "negative",
            "tags": {},
            "gold": {"relevant": {}, "forbidden": [sid(9)], "control": "neg1-control"},
        },
        {
            "qid": "neg1-control",
            "text": "beta signing key rotation",
            "scope": [B],
            "category": "control",
            "tags": {},
            "gold": {"relevant": {sid(9): 1}, "forbidden": [], "control": None},
        },
    ]
    draft = root / "rosters" / "fixture.json"
    draft.parent.mkdir()
    draft.write_text(
        json.dumps(
            {"name": "fixture", "unit": "session", "description": "", "questions": questions}
        )
    )
    info = seal_roster(draft, root / "sealed" / "fixture")
    manifest = freeze.manifest(corpus).sha256
    protocol = root / "protocols" / "two.toml"
    protocol.write_text(PROTOCOL.format(manifest=manifest, seal=info.seal), encoding="utf-8")
    register(
        protocol, manifest_sha256=manifest, seals={"fixture": info.seal}, now=NOW, git_commit=None
    )
    return root, protocol


PROTOCOL = """\
id = "two"
title = "Fusion against lexical search on a fixture"
hypothesis = "rrf finds the answering session at least as often as fts."
registered = 2026-06-01
embedder = "hash-256-v1"
arms = ["fts", "rrf", "none"]

[corpus]
source = "claude-projects"
path = "corpus"
manifest_sha256 = "{manifest}"
cutoff = 2026-06-01T00:00:00Z
exclude = ["self_transcript", "after_cutoff", "roster_leak"]

[[rosters]]
name = "fixture"
path = "sealed/fixture"
seal = "{seal}"
unit = "session"
[rosters.subsets]
recall = 'category == "recall"'

[metrics]
primary = "recall@5"
secondary = ["mrr", "hit@1"]
k = 10

[[gates]]
id = "F"
roster = "fixture"
subset = "recall"
metric = "recall@5"
treatment = "rrf"
baseline = "fts"
test = "bootstrap"
margin = 0.0
[gates.readings]
pass = "Fusion beats lexical search here."
fail = "Lexical search beats fusion here."
null = "No detectable difference on this fixture."

[[gates]]
id = "S"
kind = "negative"
roster = "fixture"
metric = "leak@5"
treatment = "rrf"
[gates.readings]
pass = "No cross-project leak and every control found."
fail = "Fusion leaked across projects."
null = "Not used."
vacuous = "A control missed: the scope test proves nothing."

[[gates]]
id = "V"
kind = "negative"
roster = "fixture"
metric = "leak@5"
treatment = "none"
[gates.readings]
pass = "No memory never leaks."
fail = "Impossible."
null = "Not used."
vacuous = "No memory finds no control either: this negative test proves nothing."

[stats]
seed = 7
resamples = 1000
confidence = 0.95

[ship]
default = "rrf"
[[ship.rules]]
arm = "fts"
when = {{ F = "FAIL" }}

[reporting]
commitments = ["exact counts"]
"""


def options(root: Path, **kw: Any) -> RunOptions:
    return RunOptions(embedder="hash", cache_dir=root / "cache", clock=lambda: NOW, **kw)


def test_two_arm_protocol_runs_end_to_end_and_writes_a_valid_results_folder(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    result = run(protocol, options(root))
    d = result.directory
    assert d.parent == root / "results" / "two"
    for name in (
        "summary.json",
        "per_query.csv",
        "qrels.trec",
        "report.md",
        "forest.png",
        "runs/00-fts.trec",
        "runs/01-rrf.trec",
    ):
        assert (d / name).is_file(), name
    summary = json.loads((d / "summary.json").read_text())
    validate_summary(summary)  # the shipped schema accepts what the runner wrote
    assert summary["deviations"] == []
    assert [a["spec"] for a in summary["arms"]] == ["fts", "rrf", "none"]
    assert all(a["latency_ms"]["n"] == 6 for a in summary["arms"])  # every sealed question, per arm
    gates = {g["id"]: g for g in summary["gates"]}
    assert gates["S"]["verdict"] == "PASS"  # zero leaks, the control found the beta session
    assert gates["S"]["counts"]["controls_hit"] == 1
    assert gates["F"]["verdict"] in {"PASS", "FAIL", "NULL"}
    assert summary["shipped_arm"] == ("fts" if gates["F"]["verdict"] == "FAIL" else "rrf")
    report = (d / "report.md").read_text()
    gate_section = report.index("## Gates")
    assert report.index("Gate F  ") > gate_section
    assert "Gate S  PASS  rrf  leak@5" in report
    assert "No cross-project leak and every control found." in report
    assert report.index("## Gates") < report.index("## fixture")  # gates first, then tables
    # Tables name arms by short label; the legend maps each label to its canonical spec.
    canonical = {a["spec"]: a["canonical"] for a in summary["arms"]}
    assert f"| `rrf` | `{canonical['rrf']}` |" in report
    assert canonical["rrf"] != "rrf"  # positive control: the legend says more than the label
    assert " | rrf vs fts | recall@5 [recall] | " in report
    assert "\n| `fts` | " in report[report.index("## fixture") :]
    assert f"| `{canonical['rrf']}` | 0" not in report


def test_results_are_never_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, protocol = build_repo(tmp_path)
    first = run(protocol, options(root)).directory
    second = run(protocol, options(root)).directory
    assert first != second  # positive control: a second run gets its own folder
    before = (first / "summary.json").read_bytes()
    from harness import report

    monkeypatch.setattr(report, "run_id", lambda started_at, summary: first.name)
    with pytest.raises(ResultsError, match="append-only"):
        run(protocol, options(root))
    assert (first / "summary.json").read_bytes() == before


def test_modified_protocol_is_refused_naming_the_file_and_both_hashes(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    text = protocol.read_text()
    protocol.write_text(text.replace("resamples = 1000", "resamples = 2000"))
    with pytest.raises(RunRefusedError) as err:
        run(protocol, options(root))
    message = str(err.value)
    assert "two.toml" in message
    assert message.count("sha256") >= 1
    # positive control: restoring the bytes lets it run
    protocol.write_text(text)
    assert run(protocol, options(root)).directory.is_dir()


def test_roster_with_one_byte_changed_is_refused_naming_the_file(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    questions = root / "sealed" / "fixture" / "questions.json"
    data = questions.read_bytes()
    questions.write_bytes(data.replace(b"retry loop", b"retry lOop", 1))
    with pytest.raises(RunRefusedError, match=r"questions\.json"):
        run(protocol, options(root))


def test_changed_corpus_is_refused(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    extra = root / "corpus" / "projects" / "-home-dev-alpha" / f"{sid(7)}.jsonl"
    write_jsonl(extra, simple_session("an extra session", session_id=sid(7), cwd=A, prefix="x-"))
    with pytest.raises(RunRefusedError, match="manifest"):
        run(protocol, options(root))


def test_unregistered_protocol_is_refused(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    protocol.with_name("two.lock.json").unlink()
    with pytest.raises(RunRefusedError, match="No lock"):
        run(protocol, options(root))


def test_deviation_is_recorded_before_any_number(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    protocol.write_text(protocol.read_text().replace("resamples = 1000", "resamples = 2000"))
    result = run(protocol, options(root, deviation="resampling raised after a reviewer asked"))
    summary = json.loads((result.directory / "summary.json").read_text())
    assert next(iter(summary)) == "schema"
    assert summary["deviations"][0]["reason"] == "resampling raised after a reviewer asked"
    assert summary["deviations"][0]["problems"]
    report = (result.directory / "report.md").read_text()
    assert report.index("## Deviations") < report.index("## Gates")


def test_negative_gate_with_a_missed_control_is_vacuous(tmp_path: Path) -> None:
    root, protocol = build_repo(tmp_path)
    verdicts = {g.id: g for g in run(protocol, options(root)).gates}
    # `none` leaks nothing but also misses the control: VACUOUS, never PASS
    assert verdicts["V"].verdict == "VACUOUS"
    assert verdicts["V"].counts["leaks"] == 0
    assert (
        verdicts["V"].reading
        == "No memory finds no control either: this negative test proves nothing."
    )
    # positive control: the same gate on rrf, whose control hits, is PASS
    assert verdicts["S"].verdict == "PASS"


def test_summary_schema_refuses_a_missing_gate_reading() -> None:
    schema = summary_schema()
    assert "reading" in schema["properties"]["gates"]["items"]["required"]
    with pytest.raises(ResultsError, match="schema"):
        validate_summary({"schema": "recallbench.summary/1"})


def test_hash_embedder_used_in_runner_tests_is_deterministic() -> None:
    a, b = HashEmbedder(32).embed(["x y"]), HashEmbedder(32).embed(["x y"])
    assert (a == b).all()


def test_runner_means_are_mean_over_roster_with_an_unanswered_question_scoring_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, protocol = build_repo(tmp_path)
    failing_text = TOPICS[0][2].split(";")[0]  # q0's text

    def build_failing(spec: str, memory: Any) -> Any:
        arm = build(spec, memory)

        class FailsOnce:
            def search(self, query: Query) -> list[Any]:
                if query.text == failing_text:
                    raise RuntimeError("this arm cannot answer q0")
                return arm.search(query)

        return FailsOnce()

    monkeypatch.setattr(runner, "build", build_failing)
    result = run(protocol, options(root))
    summary = json.loads((result.directory / "summary.json").read_text())
    assert all(
        a["error_items"] == {"fixture/q0": "RuntimeError: this arm cannot answer q0"}
        for a in summary["arms"]
    )
    per_query: dict[tuple[str, str], dict[str, float]] = {}
    with (result.directory / "per_query.csv").open() as fh:
        for row in csv.DictReader(fh):
            per_query.setdefault((row["arm"], row["metric"]), {})[row["qid"]] = float(row["value"])
    rows = {(r["arm"], r["subset"]): r for r in summary["aggregates"]}
    recall_qids = ["q0", "q1", "q2", "q3"]  # subset "recall"; the unanswered q0 is one of them
    for arm in ("fts", "rrf"):
        scores = per_query[(arm, "recall@5")]
        assert scores["q0"] == 0.0  # answered nothing: scored 0, never dropped
        expected = mean_over_roster({q: scores[q] for q in recall_qids}, recall_qids)
        assert rows[(arm, "recall")]["metrics"]["recall@5"]["mean"] == expected
        assert expected == pytest.approx(0.75)  # q1..q3 found, q0 failed
        # A question with no score at all averages as 0 too (the rule, not a missing row, decides).
        assert mean_over_roster({q: scores[q] for q in recall_qids[1:]}, recall_qids) == expected


def test_the_run_is_stamped_with_the_time_it_began_not_when_its_arms_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, protocol = build_repo(tmp_path)
    events: list[str] = []
    real_run_arm = runner.run_arm

    def counting_run_arm(*args: Any, **kwargs: Any) -> Any:
        events.append("arm")
        return real_run_arm(*args, **kwargs)

    ticks = iter([NOW, NOW.replace(hour=NOW.hour + 1), NOW.replace(hour=NOW.hour + 2)])

    def clock() -> datetime:
        events.append("clock")
        return next(ticks)

    monkeypatch.setattr(runner, "run_arm", counting_run_arm)
    result = run(protocol, RunOptions(embedder="hash", cache_dir=root / "cache", clock=clock))
    assert events[0] == "clock"  # read before the first arm asked anything
    assert events.count("arm") == 3  # fts, rrf, none: the arms did run (control)
    summary = json.loads((result.directory / "summary.json").read_text())
    assert summary["started_at"] == NOW.isoformat(timespec="seconds")
