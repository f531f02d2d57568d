"""`roster draft` and `roster review` as a person runs them: counts printed, decisions recorded, sealable.

The corpus is `tests.harness.draft_corpus` (eleven one-message sessions); the generator is the test
script `tests/harness/draft_generator.py`, never a model.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.roster import load_draft
from recallbench import roster_cli
from recallbench.cli import main
from tests.engine.fixtures_transcripts import user_line, write_jsonl
from tests.harness.draft_corpus import FILLER, generator_command, write_corpus


def _run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def _draft(tmp_path: Path, mode: str = "paraphrase", sample: int = 3) -> Path:
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "drafted.json"
    result = _run(
        "roster", "draft", "--generator", generator_command(mode), "--sample", str(sample),
        "--seed", "7", str(corpus), "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend a person sits at the terminal (CliRunner's stdin is not one)."""
    monkeypatch.setattr(roster_cli, "_stdin_is_terminal", lambda: True)


def _read_tsv(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh, delimiter="\t"))


def _side(draft: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(draft.with_name(f"{draft.stem}.passages.json").read_text())
    return data


def test_draft_prints_every_count_and_the_next_steps(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "drafted.json"
    result = _run(
        "roster", "draft", "--generator", generator_command("marked"), "--sample", "10",
        "--seed", "3", str(corpus), "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        "read 11 transcript files (0 failed): 11 chunks, 1 too short to ask about, 10 eligible"
        in (result.output)
    )
    assert "sampled 10 passages from 6 strata (project x age); asked the generator 10 times" in (
        result.output
    )
    assert "generator failures: exit_status 1, empty_output 1" in result.output
    assert "rare passage words): 1\n" in result.output
    assert "kept: 7" in result.output
    assert f"next: recallbench roster review {out}" in result.output
    assert len(load_draft(out).questions) == 7
    # an existing draft is not overwritten without --force (its review log would be lost)
    again = _run(
        "roster", "draft", "--generator", generator_command(), "--sample", "2", "--seed", "3",
        str(corpus), "--out", str(out),
    )  # fmt: skip
    assert again.exit_code != 0
    assert "already exists" in again.output
    assert len(load_draft(out).questions) == 7


def test_draft_fails_clearly_when_no_question_survives(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "none.json"
    result = _run(
        "roster", "draft", "--generator", generator_command("fail"), "--sample", "3", "--seed", "1",
        str(corpus), "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 1
    assert "generator failures: exit_status 3" in result.output
    assert "no question was kept" in result.output
    assert not out.exists()


def test_review_at_the_terminal_accepts_edits_and_drops(tmp_path: Path, terminal: None) -> None:
    draft = _draft(tmp_path)
    before = [q.text for q in load_draft(draft).questions]
    result = _run("roster", "review", str(draft), input="a\ne\nwhen did the cache go stale\nd\n")
    assert result.exit_code == 0, result.output
    assert "passage: " in result.output
    assert "project: /home/dev/" in result.output
    after = load_draft(draft)
    assert [q.qid for q in after.questions] == ["draft-0001", "draft-0002"]  # draft-0003 dropped
    assert after.questions[0].text == before[0]
    assert after.questions[1].text == "when did the cache go stale"
    log = _side(draft)["review"]
    assert isinstance(log, dict)
    assert log["draft-0001"]["action"] == "accept"
    assert "original" not in log["draft-0001"]
    assert log["draft-0002"]["action"] == "edit"
    assert log["draft-0002"]["original"] == before[1]
    assert log["draft-0003"]["action"] == "drop"
    assert (
        log["draft-0003"]["dropped"]["text"] == before[2]
    )  # the dropped question stays in the log
    assert log["draft-0003"]["dropped"]["gold"]["relevant"]
    assert all(isinstance(e["seconds"], float) and e["reviewed_at"] for e in log.values())
    # resume: nothing is asked again, unless --all (which asks the two that remain)
    assert "every question is reviewed already" in _run("roster", "review", str(draft)).output
    again = _run("roster", "review", "--all", str(draft), input="a\nq\n")
    assert again.exit_code == 0, again.output
    assert "[1/2] draft-0001" in again.output
    assert "[2/2]" in again.output
    # the sealed roster holds the edit and not the dropped question
    sealed = tmp_path / "sealed" / "drafted"
    assert _run("roster", "seal", str(draft), "--out", str(sealed)).exit_code == 0
    questions = json.loads((sealed / "questions.json").read_text())["questions"]
    assert [q["text"] for q in questions] == [before[0], "when did the cache go stale"]


def test_review_skip_and_quit_leave_questions_pending(tmp_path: Path, terminal: None) -> None:
    draft = _draft(tmp_path)
    result = _run("roster", "review", str(draft), input="s\nq\n")
    assert result.exit_code == 0, result.output
    assert "pending 3" in result.output
    assert _side(draft)["review"] == {}
    # positive control: an accept is recorded
    assert "accept 1, pending 2" in _run("roster", "review", str(draft), input="a\nq\n").output


def test_review_without_a_terminal_points_to_the_tsv_route(tmp_path: Path) -> None:
    draft = _draft(tmp_path)
    result = _run("roster", "review", str(draft), input="a\n")
    assert result.exit_code == 1
    assert "stdin is not one" in result.output
    assert "--export-tsv" in result.output
    assert _side(draft)["review"] == {}


def test_tsv_round_trip_records_accept_edit_and_drop(tmp_path: Path) -> None:
    draft = _draft(tmp_path)
    tsv = tmp_path / "review.tsv"
    exported = _run("roster", "review", str(draft), "--export-tsv", str(tsv))
    assert exported.exit_code == 0, exported.output
    rows = _read_tsv(tsv)
    assert rows[0] == ["qid", "action", "question", "passage", "project"]
    assert [r[0] for r in rows[1:]] == ["draft-0001", "draft-0002", "draft-0003"]
    assert all(r[1] == "" and r[3] and r[4].startswith("/home/dev/") for r in rows[1:])
    original = rows[2][2]
    rows[1][1] = "accept"
    rows[2][1], rows[2][2] = "accept", "where did the importer hang"  # changed text: an edit
    rows[3][1] = "drop"
    with tsv.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter="\t", lineterminator="\n").writerows(rows)
    imported = _run("roster", "review", str(draft), "--import-tsv", str(tsv))
    assert imported.exit_code == 0, imported.output
    assert "accept 1, drop 1, edit 1" in imported.output
    log = _side(draft)["review"]
    assert isinstance(log, dict)
    assert {q: e["action"] for q, e in log.items()} == {
        "draft-0001": "accept",
        "draft-0002": "edit",
        "draft-0003": "drop",
    }
    assert log["draft-0002"]["original"] == original
    assert log["draft-0002"]["via"] == "tsv"
    assert [q.text for q in load_draft(draft).questions][1] == "where did the importer hang"
    # resume: the export now holds nothing to review; --all exports the two left, with their actions
    assert (
        "wrote 0 questions" in _run("roster", "review", str(draft), "--export-tsv", str(tsv)).output
    )
    _run("roster", "review", str(draft), "--export-tsv", str(tsv), "--all")
    again = _read_tsv(tsv)
    assert [(r[0], r[1]) for r in again[1:]] == [("draft-0001", "accept"), ("draft-0002", "edit")]
    assert "unchanged 2" in _run("roster", "review", str(draft), "--import-tsv", str(tsv)).output
    assert _run("roster", "seal", str(draft), "--out", str(tmp_path / "s")).exit_code == 0


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (["draft-0002", "maybe", "q"], ":3: action 'maybe' for draft-0002"),
        (["draft-9999", "accept", "q"], ":3: 'draft-9999' is not a question"),
        (["draft-0001", "accept", "q"], ":3: draft-0001 appears a second time"),
        (["draft-0002", "edit", ""], ":3: the question of draft-0002 is empty"),
    ],
)
def test_a_bad_tsv_line_is_named_and_nothing_is_written(
    tmp_path: Path, row: list[str], message: str
) -> None:
    draft = _draft(tmp_path)
    before = draft.read_bytes()
    tsv = tmp_path / "bad.tsv"
    good = ["draft-0001", "drop", "whatever"]
    tsv.write_text("qid\taction\tquestion\n" + "\t".join(good) + "\n" + "\t".join(row) + "\n")
    result = _run("roster", "review", str(draft), "--import-tsv", str(tsv))
    assert result.exit_code == 1
    assert f"{tsv}{message}" in result.output
    assert draft.read_bytes() == before
    assert _side(draft)["review"] == {}
    # positive control: the good line alone applies
    tsv.write_text("qid\taction\tquestion\n" + "\t".join(good) + "\n")
    assert _run("roster", "review", str(draft), "--import-tsv", str(tsv)).exit_code == 0
    assert [q.qid for q in load_draft(draft).questions] == ["draft-0002", "draft-0003"]


def test_draft_and_review_help_show_the_generator_and_the_tsv_route() -> None:
    draft_help = " ".join(_run("roster", "draft", "--help").output.split())
    assert "claude -p --model haiku" in draft_help
    assert "no network call" in draft_help
    review_help = _run("roster", "review", "--help").output
    assert "--export-tsv" in review_help
    assert "--import-tsv" in review_help


def test_draft_says_when_questions_ask_about_the_only_session_of_their_project(
    tmp_path: Path,
) -> None:
    """alpha and beta hold several sessions each; gamma, added here, holds one. With every eligible
    passage sampled (11: the corpus's 10 and gamma's) and the paraphrasing generator, gamma's question
    is the one whose scope holds its gold session alone."""
    corpus = write_corpus(tmp_path / "corpus")
    gamma = "eeeeeeee-0000-4000-8000-000000000001"
    write_jsonl(
        corpus / f"{gamma}.jsonl",
        [
            user_line(
                "the narwhal compiler emitted twice\n" + FILLER,
                uuid="eeeeeeee-msg",
                session_id=gamma,
                cwd="/home/dev/gamma",
                timestamp="2026-02-15T10:00:00.000Z",
            )
        ],
    )
    args = ["roster", "draft", "--generator", generator_command(), "--sample", "11", "--seed", "7"]
    by_session = _run(*args, str(corpus), "--out", str(tmp_path / "s.json"))
    assert by_session.exit_code == 0, by_session.output
    kept = load_draft(tmp_path / "s.json").questions
    assert [q.scope for q in kept].count(("/home/dev/gamma",)) == 1  # gamma's question was kept
    assert (
        f"1 of {len(kept)} questions ask about the only session of their project (its scope holds "
        "no other), which every memory arm finds at the session unit; draft with --unit message"
    ) in by_session.output
    # control: at the message unit the gold is the passage, so nothing is advised
    by_message = _run(*args, "--unit", "message", str(corpus), "--out", str(tmp_path / "m.json"))
    assert by_message.exit_code == 0, by_message.output
    assert "--unit message" not in by_message.output
