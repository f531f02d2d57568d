"""The planted facts: each one is written into exactly the sessions named here and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass

from harness.synthetic.correction_vocab import Aspect
from harness.synthetic.vocab import Component


@dataclass(frozen=True, kw_only=True)
class CommitFact:
    """A `git commit` whose result (and a later `git log`/`rev-parse`) carries the hash."""

    project: int
    session: int
    component: Component
    verb: tuple[str, str, str, str]  # imperative, past, gerund, conventional type
    obj: str
    qual: str
    message: str
    full_hash: str
    heredoc: bool
    attempt_session: int | None = None  # a near-duplicate session whose commit attempt failed

    @property
    def short(self) -> str:
        return self.full_hash[:7]


@dataclass(frozen=True, kw_only=True)
class DecisionFact:
    """A standalone decision stated once, asked about by paraphrase."""

    project: int
    session: int
    component: Component
    choice: tuple[str, str]  # canonical, paraphrase
    alternative: str
    reason: tuple[str, str]
    verb: str

    @property
    def text(self) -> str:
        """The canonical decision sentence as it appears in the session."""
        return f"Decision for the {self.component.name}: we'll {self.verb} {self.choice[0]} {self.reason[0]}."


@dataclass(frozen=True, kw_only=True)
class ChainFact:
    """A decision revised over several sessions; the last one holds the current answer."""

    project: int
    aspect: str
    component: Component
    options: tuple[str, ...]  # one per session, in time order
    sessions: tuple[int, ...]
    reasons: tuple[str, ...]  # why each revision happened (len = sessions - 1)


@dataclass(frozen=True, kw_only=True)
class HopFact:
    """Session A defines `ident` in a dedicated file; later session B tunes a parameter there."""

    project: int
    ident: str
    file: str  # relative path, edited only by A and B
    component: Component
    purpose: str
    param: tuple[str, str, tuple[int, ...], str]
    old: int
    new: int
    a_session: int
    b_session: int


@dataclass(frozen=True, kw_only=True)
class IncidentFact:
    """An incident in project `project`, used as a cross-project negative for `scope_project`."""

    project: int
    scope_project: int
    session: int
    component: Component
    error: str
    trigger: str


@dataclass(frozen=True, kw_only=True)
class CitationFact:
    """A later session that mentions a commit hash in prose without being its author."""

    commit: CommitFact
    session: int


@dataclass(frozen=True, kw_only=True)
class SettingFact:
    """A setting stated in session `first` and replaced in session `second` (indices into the plan)."""

    project: int
    kind: str  # corrected | changed
    subject: str  # e.g. "bramble relay"
    aspect: Aspect
    old: str
    new: str
    reason: str
    first: int
    second: int

    def old_text(self) -> str:
        """The message of session A that states the old value."""
        return self.aspect.statement.format(subject=self.subject, value=self.old)

    def new_text(self) -> str:
        """The message of session B that replaces it (the person's words)."""
        said = self.aspect.statement.format(subject=self.subject, value=self.new)
        if self.kind == "corrected":
            return (
                f"Correction to what was noted earlier about the {self.subject}: {self.old} was wrong, "
                f"{self.reason}. {said}"
            )
        return f"Heads-up, the {self.subject} changed today ({self.reason}): {said[:1].lower()}{said[1:]}"

    def question(self) -> str:
        """What the roster asks; a changed fact is asked about as it stands now."""
        text = self.aspect.question.format(subject=self.subject)
        return text if self.kind == "corrected" else f"{text[:-1]} now?"
