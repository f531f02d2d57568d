"""TREC run and qrels files: exact bytes, round trips and format errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.trec import TrecFormatError, read_qrels, read_run, write_qrels, write_run

# Deliberately unsorted qids; q1 holds a score tie that must keep the given order.
RUN = {
    "q2": [("d3", 2.5), ("d1", 1.0)],
    "q1": [("d2", 0.75), ("d9", 0.5), ("d4", 0.5)],
}
RUN_TEXT = (
    "q1 Q0 d2 1 0.75 rrf\n"
    "q1 Q0 d9 2 0.5 rrf\n"
    "q1 Q0 d4 3 0.5 rrf\n"
    "q2 Q0 d3 1 2.5 rrf\n"
    "q2 Q0 d1 2 1.0 rrf\n"
)
QRELS = {"q2": {"s9": 1}, "q1": {"s5": 2, "s1": 1}}
QRELS_TEXT = "q1 0 s1 1\nq1 0 s5 2\nq2 0 s9 1\n"


def test_run_file_has_sorted_qids_one_based_ranks_in_the_given_order(tmp_path: Path) -> None:
    path = tmp_path / "rrf.trec"
    write_run(path, RUN, tag="rrf")
    assert path.read_bytes() == RUN_TEXT.encode()


def test_run_round_trips_with_its_order_and_tag(tmp_path: Path) -> None:
    path = tmp_path / "rrf.trec"
    write_run(path, RUN, tag="rrf")
    run, tag = read_run(path)
    assert run == {"q1": RUN["q1"], "q2": RUN["q2"]}
    assert list(run) == ["q1", "q2"]
    assert tag == "rrf"


def test_qrels_file_has_sorted_qids_and_doc_ids_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "qrels.trec"
    write_qrels(path, QRELS)
    assert path.read_text(encoding="utf-8") == QRELS_TEXT
    assert read_qrels(path) == {"q1": {"s1": 1, "s5": 2}, "q2": {"s9": 1}}


def test_reader_orders_a_run_by_its_rank_column(tmp_path: Path) -> None:
    path = tmp_path / "shuffled.trec"
    path.write_text("q1 Q0 b 2 0.5 t\n\nq1 Q0 a 1 0.9 t\nq0 Q0 z 1 3 t\n", encoding="utf-8")
    run, tag = read_run(path)
    assert run == {"q0": [("z", 3.0)], "q1": [("a", 0.9), ("b", 0.5)]}
    assert tag == "t"


def test_writer_rejects_a_score_above_the_one_ranked_before_it(tmp_path: Path) -> None:
    path = tmp_path / "bad.trec"
    with pytest.raises(TrecFormatError, match=r"query q1 rank 2 .*never increase"):
        write_run(path, {"q1": [("a", 0.5), ("b", 0.6)]}, tag="t")
    assert not path.exists()
    write_run(path, {"q1": [("a", 0.6), ("b", 0.5)]}, tag="t")  # control: decreasing is fine
    assert path.read_text(encoding="utf-8") == "q1 Q0 a 1 0.6 t\nq1 Q0 b 2 0.5 t\n"


@pytest.mark.parametrize(
    ("run", "tag", "message"),
    [
        ({"q 1": [("a", 1.0)]}, "t", "qid"),
        ({"q1": [("a b", 1.0)]}, "t", "doc id"),
        ({"q1": [("a", 1.0)]}, "my tag", "run tag"),
        ({"q1": [("a", 1.0)]}, "", "run tag"),
        ({"q1": [("a", 1.0), ("a", 0.5)]}, "t", "twice"),
        ({"q1": [("a", float("nan"))]}, "t", "non-finite"),
    ],
)
def test_writer_rejects_what_trec_tools_cannot_read(
    tmp_path: Path, run: dict[str, list[tuple[str, float]]], tag: str, message: str
) -> None:
    with pytest.raises(TrecFormatError, match=message):
        write_run(tmp_path / "x.trec", run, tag=tag)


def test_qrels_writer_rejects_a_non_integer_grade(tmp_path: Path) -> None:
    with pytest.raises(TrecFormatError, match="grade must be an int"):
        write_qrels(tmp_path / "q.trec", {"q1": {"a": 1.5}})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 Q0 a 1 0.5\n", "6 fields"),
        ("q1 Q0 a one 0.5 t\n", "rank must be an integer"),
        ("q1 Q0 a 1 high t\n", "score must be a number"),
        ("q1 Q0 a 1 nan t\n", "score must be finite"),
        ("q1 Q0 a 1 0.5 t\nq1 Q0 b 1 0.4 t\n", "repeats rank 1"),
        ("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.4 u\n", "exactly one tag"),
        ("", "exactly one tag"),
    ],
)
def test_run_reader_names_the_file_and_line_of_a_bad_record(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.trec"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TrecFormatError, match=message) as caught:
        read_run(path)
    assert str(path) in str(caught.value)


def test_qrels_reader_rejects_bad_lines_and_duplicate_judgements(tmp_path: Path) -> None:
    path = tmp_path / "qrels.trec"
    path.write_text("q1 0 a 1\nq1 0 a 2\n", encoding="utf-8")
    with pytest.raises(TrecFormatError, match=r"qrels.trec:2: query q1 judges doc id 'a' twice"):
        read_qrels(path)
    path.write_text("q1 0 a\n", encoding="utf-8")
    with pytest.raises(TrecFormatError, match="4 fields"):
        read_qrels(path)
    path.write_text("q1 0 a 1\nq1 0 b 2\n", encoding="utf-8")
    assert read_qrels(path) == {"q1": {"a": 1, "b": 2}}
