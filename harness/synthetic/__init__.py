"""Deterministic synthetic Claude Code corpus with gold rosters (the project's default benchmark data).

`generate(out_dir, SyntheticConfig())` writes a `projects/<encoded cwd>/` transcript tree in the 2.x and
1.0.x line formats, five draft rosters (receipts, decisions, multihop, temporal, negatives) and
`planted.json`, the record of everything planted for the sanitizer and the contamination scan.
"""

from harness.synthetic.config import (
    CREDENTIAL_KINDS,
    GeneratedCorpus,
    SyntheticConfig,
    SyntheticError,
)
from harness.synthetic.generate import ROSTER_NAMES, encode_cwd, generate
from harness.synthetic.rosters import jaccard

__all__ = [
    "CREDENTIAL_KINDS",
    "ROSTER_NAMES",
    "GeneratedCorpus",
    "SyntheticConfig",
    "SyntheticError",
    "encode_cwd",
    "generate",
    "jaccard",
]
