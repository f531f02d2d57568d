"""Drafted questions: the corpus read as the importer stores it, seeded stratified sampling, the overlap
filter, generator failures, and a draft that validates as a roster.

The sampling tests use hand-made passages ``c0``..``c9`` whose projects and times mirror the corpus in
`tests.harness.draft_corpus` (see its table), so every allocation and pick is worked out below.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from harness.draft import (
    PROMPT,
    PROMPT_SHA256,
    DraftError,
    Generator,
    draft_roster,
    side_path,
)
from harness.draft_filter import DocFreq, content_words, overlap, terms
from harness.draft_sample import (
    MIN_PASSAGE_CHARS,
    Passage,
    SampleError,
    age_strata,
    allocate,
    read_corpus,
    sample_passages,
)
from harness.roster import load_draft
from tests.harness.draft_corpus import (
    ALPHA,
    BETA,
    SESSIONS,
    generator_command,
    message_uuid,
    session_id,
    text_of,
    write_corpus,
)

LONG = "x " * MIN_PASSAGE_CHARS


def _passage(cid: str, project: str, day: str | None, text: str = LONG) -> Passage:
    return Passage(
        chunk_id=cid,
        key=cid,
        session_id=f"session-{cid}",
        project=project,
        message_uuids=(f"m-{cid}",),
        text=text,
        timestamp=f"{day}T10:00:00Z" if day else None,
    )


# c0..c8 dated (ranks 0..8), c9 undated, c10 too short: the projects of draft_corpus's table.
PASSAGES = [
    _passage("c0", ALPHA, "2026-01-01"),
    _passage("c1", ALPHA, "2026-01-02"),
    _passage("c2", BETA, "2026-01-03"),
    _passage("c3", ALPHA, "2026-02-01"),
    _passage("c4", ALPHA, "2026-02-02"),
    _passage("c5", ALPHA, "2026-02-03"),
    _passage("c6", BETA, "2026-03-01"),
    _passage("c7", BETA, "2026-03-02"),
    _passage("c8", ALPHA, "2026-03-03"),
    _passage("c9", BETA, None),
    _passage("c10", ALPHA, "2026-01-15", text="tiny note"),
]


def test_age_terciles_split_the_dated_chunks_by_rank_and_keep_undated_apart() -> None:
    ages = age_strata(PASSAGES[:10])
    # rank i of 9 is in tercile 3*i//9: ranks 0-2 old, 3-5 middle, 6-8 recent
    assert [ages[f"c{i}"] for i in range(9)] == ["old"] * 3 + ["middle"] * 3 + ["recent"] * 3
    assert ages["c9"] == "undated"


def test_allocation_is_proportional_with_largest_remainders_and_ties_to_the_earlier_stratum() -> (
    None
):
    sizes = {
        (ALPHA, "old"): 2,
        (ALPHA, "middle"): 3,
        (ALPHA, "recent"): 1,
        (BETA, "old"): 1,
        (BETA, "recent"): 2,
        (BETA, "undated"): 1,
    }
    # N=4 of 10: shares 0.8 1.2 0.4 0.4 0.8 0.4 -> floors 0 1 0 0 0 0 (one given), three left over.
    # Remainders (4*size mod 10) 8 2 4 4 8 4: alpha|old and beta|recent (8), then the first 4 in
    # stratum order, alpha|recent; beta|old and beta|undated get none.
    assert allocate(sizes, 4) == {
        (ALPHA, "old"): 1,
        (ALPHA, "middle"): 1,
        (ALPHA, "recent"): 1,
        (BETA, "old"): 0,
        (BETA, "recent"): 1,
        (BETA, "undated"): 0,
    }
    assert allocate(sizes, 10) == sizes  # positive control: everything when N covers the corpus
    assert sum(allocate(sizes, 7).values()) == 7


def test_seeded_sample_takes_the_smallest_seeded_hashes_in_each_stratum() -> None:
    # Within a stratum, chunks are taken in order of sha256("<seed>:<key>"). Seed 7:
    #   alpha|old     c0 fc80c1d6, c1 4dd4e247            -> c1
    #   alpha|middle  c3 14863067, c4 972fd87d, c5 b392c827 -> c3
    #   alpha|recent  c8 (alone)                          -> c8
    #   beta|recent   c6 4eb9b64d, c7 dc42b66b            -> c6
    for cid, prefix in [("c0", "fc80c1d6"), ("c1", "4dd4e247"), ("c6", "4eb9b64d")]:
        assert hashlib.sha256(f"7:{cid}".encode()).hexdigest().startswith(prefix)
    sample = sample_passages(PASSAGES, 4, seed=7)
    assert [(p.chunk_id, age) for p, age in sample.picked] == [
        ("c1", "old"),
        ("c3", "middle"),
        ("c8", "recent"),
        ("c6", "recent"),
    ]
    assert sample.too_short == 1  # c10
    assert sample.eligible == 10
    assert sample.strata[f"{ALPHA} | middle"] == (3, 1)
    assert sample.strata[f"{BETA} | undated"] == (1, 0)
    # the same seed gives the same sample; seed 8 ranks c0 (6521da2c) before c1 (acdea148)
    assert sample_passages(PASSAGES, 4, seed=7) == sample
    assert [p.chunk_id for p, _ in sample_passages(PASSAGES, 4, seed=8).picked] == [
        "c0",
        "c3",
        "c8",
        "c6",
    ]


def test_sampling_refuses_an_empty_sample_and_a_corpus_of_short_chunks() -> None:
    with pytest.raises(SampleError, match="at least 1"):
        sample_passages(PASSAGES, 0, seed=1)
    with pytest.raises(SampleError, match="200 characters"):
        sample_passages(PASSAGES[10:], 1, seed=1)
    assert len(sample_passages(PASSAGES, 50, seed=1).picked) == 10  # every eligible chunk, no more


def test_the_sample_does_not_depend_on_where_the_corpus_folder_is(tmp_path: Path) -> None:
    here = read_corpus(write_corpus(tmp_path / "a"))
    there = read_corpus(write_corpus(tmp_path / "elsewhere" / "b"))
    # chunk ids hash the file's location, so they differ; the passage keys do not
    assert {p.chunk_id for p in here.passages}.isdisjoint(p.chunk_id for p in there.passages)
    assert [p.key for p in here.passages] == [p.key for p in there.passages]
    assert here.passages[0].key == f"{here.passages[0].session_id}#0"  # one chunk per session
    for seed in (1, 7):
        picked = [
            [
                (p.key, p.message_uuids, age)
                for p, age in sample_passages(c.passages, 5, seed).picked
            ]
            for c in (here, there)
        ]
        assert picked[0] == picked[1]
        assert len(picked[0]) == 5


def test_the_corpus_is_read_as_the_importer_stores_it(tmp_path: Path) -> None:
    corpus = read_corpus(write_corpus(tmp_path / "corpus"))
    assert corpus.files_seen == 11
    assert len(corpus.passages) == 11  # one chunk per one-message session
    by_session = {p.session_id: p for p in corpus.passages}
    s01 = by_session[session_id("s01")]
    assert s01.project == ALPHA
    assert s01.message_uuids == (message_uuid("s01"),)
    assert s01.timestamp == "2026-01-02T10:00:00.000Z"
    assert s01.text == text_of("s01")
    assert by_session[session_id("s09")].timestamp is None


def test_terms_follow_unicode61_and_stop_words_are_not_content() -> None:
    assert terms("Fix parse_file() in Lexical-Index.py!") == [
        "fix",
        "parse",
        "file",
        "in",
        "lexical",
        "index",
        "py",
    ]
    assert content_words("Where did we fix the parser?") == frozenset({"fix", "parser"})


def test_overlap_counts_copied_rare_passage_words_over_content_words() -> None:
    df = DocFreq.of(
        ["alpha beta gamma", "alpha beta", "alpha delta", "alpha beta epsilon"], rare_share=0.5
    )
    # N=4, rare in at most max(1, int(0.5*4)) = 2 chunks: gamma, delta, epsilon (1); beta (3) is not
    assert df.rare_limit == 2
    assert df.rare_words("alpha beta gamma") == frozenset({"gamma"})
    # content words {gamma, beta, zeta}; copied rare passage words {gamma}: 1/3
    found = overlap("where is gamma and beta and zeta", "alpha beta gamma", df)
    assert found.copied == ("gamma",)
    assert found.content == 3
    assert found.share == pytest.approx(1 / 3)
    assert overlap("where is beta", "alpha beta gamma", df).share == 0.0  # beta is common
    assert overlap("where and when", "alpha beta gamma", df).share == 0.0  # no content words


def test_draft_counts_failures_drops_copies_and_keeps_paraphrases(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    result = draft_roster(
        corpus, Generator(command=generator_command("marked")), sample=10, seed=3, name="mine"
    )
    counts = result.counts
    assert counts["chunks"] == 11
    assert counts["too_short"] == 1
    assert counts["eligible"] == 10
    assert counts["sampled"] == counts["asked"] == 10
    # s04 holds FAILME (exit 3), s06 EMPTYME (prints nothing)
    assert counts["generator_failures"] == {"exit_status": 1, "empty_output": 1}
    # s01's copied first line: content words copyme zorblax frobnicator broke quux loader, all found
    # in s01 only (df 1): overlap 6/6 > 0.25, dropped
    assert counts["dropped_by_filter"] == 1
    [dropped] = result.dropped
    assert dropped.passage.session_id == session_id("s01")
    assert dropped.overlap.share == 1.0
    assert len(dropped.overlap.copied) == 6
    # positive control: the seven paraphrases (talk, short, change, code, fixing: no passage word) stay
    assert counts["kept"] == 7
    assert all(q.overlap.share == 0.0 for q in result.questions)
    kept_sessions = {q.passage.session_id for q in result.questions}
    assert kept_sessions == {
        session_id(s) for s in ("s00", "s02", "s03", "s05", "s07", "s08", "s09")
    }
    reasons = {a.reason for _, _, a in result.failed}
    assert reasons == {"exit_status", "empty_output"}


def test_a_lenient_threshold_keeps_the_copy(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    gen = Generator(command=generator_command("copy"))
    strict = draft_roster(corpus, gen, sample=10, seed=3, name="mine", max_overlap=0.25)
    lenient = draft_roster(corpus, gen, sample=10, seed=3, name="mine", max_overlap=1.0)
    # a copied first line is all rare words (share 1.0) for every session: dropped at 0.25, never above 1
    assert strict.counts["kept"] == 0
    assert lenient.counts["kept"] == 10


def test_the_written_draft_validates_and_its_side_file_records_the_protocol(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    result = draft_roster(
        corpus,
        Generator(command=generator_command()),
        sample=4,
        seed=7,
        name="mine",
        unit="message",
    )
    draft_path, side = result.write(tmp_path / "rosters" / "mine.json")
    assert side == side_path(draft_path) == tmp_path / "rosters" / "mine.passages.json"
    draft = load_draft(draft_path)
    assert draft.unit == "message"
    assert [q.qid for q in draft.questions] == [
        "draft-0001",
        "draft-0002",
        "draft-0003",
        "draft-0004",
    ]
    first = draft.questions[0]
    assert first.category == "drafted"
    data = json.loads(side.read_text())
    passage = data["passages"]["draft-0001"]
    assert first.scope == (passage["project"],)
    assert dict(first.tags) == {"project": passage["project"], "age": passage["age"]}
    assert dict(draft.key["draft-0001"].relevant) == dict.fromkeys(passage["message_uuids"], 1)
    assert "chunk_id" not in json.dumps(json.loads(draft_path.read_text()))  # the answer stays out
    prov = data["provenance"]
    assert prov["instruction"] == PROMPT
    assert (
        prov["instruction_sha256"] == hashlib.sha256(PROMPT.encode()).hexdigest() == PROMPT_SHA256
    )
    assert (prov["seed"], prov["sample"], prov["unit"]) == (7, 4, "message")
    assert prov["generator"] == generator_command()
    assert len(prov["corpus_manifest_sha256"]) == 64
    assert prov["filter"] == {"max_overlap": 0.25, "rare_share": 0.02, "rare_limit": 1}
    assert data["review"] == {}


def test_session_gold_is_the_passage_session(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    result = draft_roster(
        corpus, Generator(command=generator_command()), sample=2, seed=7, name="m"
    )
    for q in result.questions:
        entry = q.to_question("session")
        assert entry["gold"]["relevant"] == {q.passage.session_id: 1}
        assert q.passage.session_id in {session_id(s) for s in SESSIONS}


def test_a_generator_that_times_out_is_a_skip_not_a_crash() -> None:
    slow = Generator(command=f'{sys.executable} -c "import time; time.sleep(30)"', timeout=0.3)
    answer = slow.ask("a passage")
    assert (answer.question, answer.reason) == (None, "timeout")
    # positive control: the same passage with a generator that answers
    assert Generator(command=generator_command()).ask("a passage").question is not None


def test_a_generator_that_cannot_be_found_or_split_is_refused_up_front() -> None:
    with pytest.raises(DraftError, match="not found"):
        Generator(command="no-such-generator-xyz -p")
    with pytest.raises(DraftError, match="quotes"):
        Generator(command='claude -p "unclosed')
    with pytest.raises(DraftError, match="empty"):
        Generator(command="   ")
    assert Generator(command=generator_command()).command  # positive control


def test_the_prompt_is_marked_so_a_generator_session_is_never_imported() -> None:
    assert PROMPT.startswith("[recallbench:self]\n")
    assert PROMPT.count("{passage}") == 1
