"""`python -m perf --work-dir DIR` a second time: the prompt-hook measure starts from an empty corpus
folder and home, as the synthetic generator (which never overwrites) needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from perf import hooks


class GeneratorCalledError(Exception):
    """Raised by the stand-in generator once it has seen the folder it was given."""


def test_a_kept_work_dir_is_cleared_before_the_hook_corpus_is_generated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale_corpus = tmp_path / "hook-corpus" / "projects"
    stale_corpus.mkdir(parents=True)
    (stale_corpus / "old.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "hook-home").mkdir()
    (tmp_path / "hook-home" / "memory.db").write_bytes(b"old")
    kept = tmp_path / "keep-me"  # control: the rest of the work folder stays
    kept.mkdir()
    seen: list[bool] = []

    def generate(out: Path, _config: object) -> object:
        seen.append(out.exists())
        raise GeneratorCalledError

    monkeypatch.setattr(hooks, "generate", generate)
    with pytest.raises(GeneratorCalledError):
        hooks.measure_hook_latency(tmp_path, seed=7, embedder="hash")
    assert seen == [False]
    assert not (tmp_path / "hook-home").exists()
    assert kept.is_dir()
