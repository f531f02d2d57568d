"""What a person or the model is shown of a file read leaves out the Read tool's line numbers
(`recallbench.present.one_line`); the stored text, `show` and `get_memory` keep them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from recallbench.cli import main
from recallbench.present import one_line, snippet
from tests.engine.fixtures_transcripts import (
    CWD,
    SESSION,
    tool_result_line,
    tool_use_line,
    user_line,
    write_jsonl,
)
from tests.recallbench.test_hooks import run, sample

# How Claude Code's Read tool returns lines 9 to 12 of a file: the number right-aligned in six
# columns, then `→`, then the line.
READ = (
    "     9→class Walrus:\n    10→    def run(self):\n    11→        return self.tusks * 2\n    12→"
)


def test_one_line_leaves_out_the_read_tools_line_numbers() -> None:
    stored = "[Read result: src/walrus.py]\n" + READ
    assert (
        one_line(stored)
        == "[Read result: src/walrus.py] class Walrus: def run(self): return self.tusks * 2"
    )
    # collapsed, the numbers cost 14 of 93 characters: "9→", "10→ ", "11→ " and " 12→"
    flat = " ".join(stored.split())
    assert flat == (
        "[Read result: src/walrus.py] 9→class Walrus: 10→ def run(self): 11→ return self.tusks * 2 12→"
    )
    assert (len(flat), len(one_line(stored))) == (93, 79)
    # only at the start of a line: an arrow in prose, or a number that is not followed by one, stays
    assert one_line("the queue went 1→2 workers\n3 → 4 shards") == (
        "the queue went 1→2 workers 3 → 4 shards"
    )
    assert snippet(stored, "tusks", 40) == "…self.tusks * 2"


def test_search_and_the_prompt_hook_show_a_read_without_its_numbers_and_show_keeps_them(
    home: Path, tmp_path: Path
) -> None:
    write_jsonl(
        tmp_path / "t" / f"{SESSION}.jsonl",
        [
            user_line("How does the walrus run?", uuid="u1"),
            tool_use_line(
                "t1",
                "Read",
                {"file_path": "/repo/src/walrus.py"},
                message_id="m1",
                uuid="a1",
                parent="u1",
            ),
            tool_result_line("t1", READ, uuid="r1", parent="a1"),
        ],
    )
    runner = CliRunner()
    assert runner.invoke(main, ["import", "--no-embed", str(tmp_path / "t")]).exit_code == 0
    found = runner.invoke(
        main, ["search", "walrus tusks", "--arm", "fts", "--all-projects", "--json"]
    )
    (hit,) = [h for h in json.loads(found.stdout)["hits"] if "tusks" in h["text"]]
    assert "    10→    def run(self):" in hit["text"]  # --json gives the stored text whole
    plain = runner.invoke(main, ["search", "walrus tusks", "--arm", "fts", "--all-projects"])
    assert "def run(self): return self.tusks * 2" in plain.stdout
    assert "→" not in plain.stdout
    shown = runner.invoke(main, ["show", hit["chunk_id"], "--all-projects"])
    assert "    11→        return self.tusks * 2" in shown.stdout
    prompt = sample("user_prompt_submit", prompt="how many tusks does the walrus run with", cwd=CWD)
    injected = run("UserPromptSubmit", json.dumps(prompt)).stdout
    assert "def run(self): return self.tusks * 2" in injected
    assert "→" not in injected
