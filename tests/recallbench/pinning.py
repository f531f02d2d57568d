"""Pin a copied protocol template to the embedder the tests run with (hash, set by conftest).

The templates in protocols/ pin the embedder a user serves with (minilm-l6-v2); `bench run` refuses
any other, so a test that instantiates a template and runs it on the hash embedder pins its copy.
"""

from __future__ import annotations

import re
from pathlib import Path

TEST_EMBEDDER = "hash-256-v1"
_LINE = re.compile(r"^embedder\s*=.*\n", re.MULTILINE)


def pin_embedder(template_copy: Path, embedder_id: str = TEST_EMBEDDER) -> None:
    """Set the copy's top-level `embedder` line to `embedder_id` (added at the top when missing)."""
    text = _LINE.sub("", template_copy.read_text(encoding="utf-8"), count=1)
    template_copy.write_text(f'embedder = "{embedder_id}"\n{text}', encoding="utf-8")
