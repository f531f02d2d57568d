"""`SyntheticConfig` (every knob of the generator) and `GeneratedCorpus` (what a run wrote)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.checks import is_int
from harness.synthetic.vocab import (
    DECISION_CHOICES,
    HOP_ADJECTIVES,
    HOP_NOUNS,
    HOP_VERBS,
    INCIDENT_TRIGGERS,
    PROFILES,
    TEMPORAL_ASPECTS,
)

CREDENTIAL_KINDS: tuple[str, ...] = (
    "anthropic_key",
    "aws_access_key",
    "github_token",
    "url_password",
    "env_secret",
    "private_key",
)


class SyntheticError(ValueError):
    """The generator was asked for something it cannot produce."""


def derive_rng(seed: int, *labels: object) -> random.Random:
    """A generator seeded from (seed, labels) through sha256, independent of call order."""
    key = "\x1f".join([str(seed), *(str(x) for x in labels)]).encode("utf-8")
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


@dataclass(frozen=True, kw_only=True)
class SyntheticConfig:
    """Every knob of the synthetic corpus; the defaults are the project's benchmark corpus.

    Counts are exact: each planted feature is written exactly that many times and recorded in
    `planted.json`. `sessions` counts every top-level session file, including self-transcripts,
    echo sessions and the failed-attempt halves of near-duplicate pairs.
    """

    seed: int = 1234
    projects: int = 4
    sessions: int = 240
    commits: int = 170
    citations: int = 12
    near_duplicates: int = 6
    decisions: int = 64
    temporal_topics: int = 32
    multihop_pairs: int = 44
    negatives: int = 22
    self_transcripts: int = 5
    echo_sessions: int = 4
    echo_questions: int = 2
    own_mcp_calls: int = 30
    other_mcp_calls: int = 10
    context_blocks: int = 40
    sentinel_quotes: int = 2
    private_closed: int = 12
    private_unclosed: int = 4
    credentials_per_kind: int = 3
    subagent_share: float = 0.15
    older_share: float = 0.3
    min_chars: int = 17000
    max_chars: int = 26000
    epoch: str = "2026-01-05T09:00:00Z"
    min_gap_minutes: int = 40
    max_gap_minutes: int = 420
    # Off by default: facts corrected later and facts that changed later, two added sessions each
    # (`harness.synthetic.corrections`). At 0 they are left out of `to_dict`, so a corpus without them
    # is the same, byte for byte, as before they existed.
    corrected_facts: int = 0
    changed_facts: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if is_int(value) and value < 0:
                msg = f"SyntheticConfig.{f.name} must be >= 0, got {value}"
                raise SyntheticError(msg)
        if not 1 <= self.projects <= len(PROFILES):
            msg = f"SyntheticConfig.projects must be between 1 and {len(PROFILES)}, got {self.projects}"
            raise SyntheticError(msg)
        dedicated = self.self_transcripts + self.echo_sessions + self.near_duplicates
        if self.sessions < dedicated + 2 * self.projects:
            msg = (
                f"SyntheticConfig.sessions={self.sessions} leaves too few work sessions: "
                f"{dedicated} are dedicated (self-transcripts, echoes, failed attempts) and each of the "
                f"{self.projects} projects needs at least 2 more; raise sessions or lower those counts"
            )
            raise SyntheticError(msg)
        if self.negatives and self.projects < 2:
            msg = f"negatives need at least 2 projects (scope A, forbidden session in B), got projects={self.projects}"
            raise SyntheticError(msg)
        if self.negatives > len(INCIDENT_TRIGGERS):
            msg = f"negatives must be <= {len(INCIDENT_TRIGGERS)} (one unique incident each), got {self.negatives}"
            raise SyntheticError(msg)
        if self.decisions > len(DECISION_CHOICES) * self.projects:
            msg = (
                f"decisions must be <= {len(DECISION_CHOICES)} per project (choices are unique per "
                f"project), got {self.decisions} for {self.projects} projects"
            )
            raise SyntheticError(msg)
        if self.temporal_topics > len(TEMPORAL_ASPECTS) * 2 * self.projects:
            msg = f"temporal_topics must be <= {len(TEMPORAL_ASPECTS) * 2} per project, got {self.temporal_topics}"
            raise SyntheticError(msg)
        if self.multihop_pairs > len(HOP_VERBS) * len(HOP_ADJECTIVES) * len(HOP_NOUNS) // 4:
            msg = (
                f"multihop_pairs must be <= {len(HOP_VERBS) * len(HOP_ADJECTIVES) * len(HOP_NOUNS) // 4} "
                f"(unique identifiers), got {self.multihop_pairs}"
            )
            raise SyntheticError(msg)
        if self.near_duplicates > self.commits:
            msg = f"near_duplicates ({self.near_duplicates}) need one commit each, but commits={self.commits}"
            raise SyntheticError(msg)
        if self.citations > self.commits:
            msg = f"citations ({self.citations}) cite commits, but commits={self.commits}"
            raise SyntheticError(msg)
        if not 0.0 <= self.subagent_share <= 1.0 or not 0.0 <= self.older_share <= 1.0:
            msg = f"shares must be within [0, 1], got subagent_share={self.subagent_share}, older_share={self.older_share}"
            raise SyntheticError(msg)
        if self.min_chars > self.max_chars:
            msg = f"min_chars ({self.min_chars}) must be <= max_chars ({self.max_chars})"
            raise SyntheticError(msg)
        if self.min_gap_minutes > self.max_gap_minutes or self.min_gap_minutes < 1:
            msg = f"need 1 <= min_gap_minutes <= max_gap_minutes, got {self.min_gap_minutes}, {self.max_gap_minutes}"
            raise SyntheticError(msg)
        self.epoch_datetime()  # validates the format

    def epoch_datetime(self) -> datetime:
        """The fixed start of the timeline."""
        try:
            moment = datetime.strptime(self.epoch, "%Y-%m-%dT%H:%M:%SZ")
        except ValueError as err:
            msg = f"SyntheticConfig.epoch must look like 2026-01-05T09:00:00Z, got {self.epoch!r}"
            raise SyntheticError(msg) from err
        return moment.replace(tzinfo=UTC)

    def to_dict(self) -> dict[str, Any]:
        """Every knob by name, in declaration order (recorded in planted.json); the corrections knobs
        only when the corrections are on."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if not self.corrections_on:
            del out["corrected_facts"], out["changed_facts"]
        return out

    @property
    def corrections_on(self) -> bool:
        """Whether the corpus plants corrected or changed facts (and writes their settles)."""
        return self.corrected_facts + self.changed_facts > 0

    @classmethod
    def small(cls, seed: int = 1234) -> SyntheticConfig:
        """A two-project, twenty-session corpus with every feature present, for fast tests."""
        return cls(
            seed=seed,
            projects=2,
            sessions=20,
            commits=8,
            citations=2,
            near_duplicates=1,
            decisions=4,
            temporal_topics=2,
            multihop_pairs=3,
            negatives=2,
            self_transcripts=1,
            echo_sessions=1,
            echo_questions=2,
            own_mcp_calls=3,
            other_mcp_calls=2,
            context_blocks=3,
            sentinel_quotes=1,
            private_closed=2,
            private_unclosed=1,
            credentials_per_kind=1,
            min_chars=3000,
            max_chars=6000,
        )


@dataclass(frozen=True, kw_only=True)
class GeneratedCorpus:
    """What `generate` wrote, with paths and counts."""

    root: Path
    projects_dir: Path
    rosters: Mapping[str, Path]
    planted_path: Path
    files: tuple[str, ...]  # every written file, relative to root, posix, sorted
    session_files: int
    subagent_files: int
    lines: int
    questions: Mapping[str, int]
    decision_overlap: float  # mean content-word Jaccard, decisions roster question vs decision text
    rendered_chars: int  # estimate of importable text (text blocks, tool markers, capped results)
    estimated_chunks: (
        int  # estimate of ~900-character chunks after sanitizing (self-transcripts out)
    )
    project_cwds: tuple[str, ...] = field(default_factory=tuple)
