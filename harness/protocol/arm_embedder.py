"""An arm entry that names the embedder it ranks by: ``vector(min_score=0.2,pool=20)@minilm-l6-v2-int8``.

A protocol pins one embedder (``embedder = "minilm-l6-v2"``) and every arm runs over its vectors. A
protocol that compares embedders also lists the extra ids it uses (``embedders = [...]``) and names
one of them after an arm's spec, following ``@``. The whole entry, suffix included, is the arm's name
everywhere a protocol or its results name an arm (gates, ship rules, per-query scores, TREC runs), so
``vector(...)`` and ``vector(...)@minilm-l6-v2-int8`` are two arms; an entry without a suffix runs over
the pinned embedder, exactly as before extra embedders existed.

The suffix follows the spec's closing parenthesis (or a bare arm name) and is an embedder id, which
holds no ``)``, quote or ``@``: a spec whose quoted value contains ``@`` ends with ``)`` and is never
read as one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arms.registry import full_canonical

__all__ = ["ArmEntry", "arm_canonical", "split_arm"]

SEPARATOR = "@"
_SUFFIX = re.compile(
    r"^(?P<spec>[A-Za-z_][A-Za-z0-9_]*(?:\(.*\))?)@(?P<id>[A-Za-z0-9][A-Za-z0-9._-]*)$"
)


@dataclass(frozen=True, kw_only=True)
class ArmEntry:
    """One entry of a protocol's ``arms``: the arm spec and the embedder id it names (None: the pin)."""

    spec: str
    embedder: str | None = None

    @property
    def entry(self) -> str:
        """The entry as written in the protocol."""
        return self.spec if self.embedder is None else f"{self.spec}{SEPARATOR}{self.embedder}"


def split_arm(entry: str) -> ArmEntry:
    """``rrf(pool=20)@minilm-l6-v2-int8`` -> spec ``rrf(pool=20)``, embedder ``minilm-l6-v2-int8``;
    an entry without a suffix is all spec (embedder None)."""
    match = _SUFFIX.match(entry)
    if match is None:
        return ArmEntry(spec=entry)
    return ArmEntry(spec=match.group("spec"), embedder=match.group("id"))


def arm_canonical(entry: str) -> str:
    """The arm's full canonical spec, followed by ``@<embedder id>`` when the entry names one.

    Raises:
        arms.registry.RegistryError, arms.spec.SpecError: the spec names no registered arm or is
            malformed.
    """
    arm = split_arm(entry)
    canonical = full_canonical(arm.spec)
    return canonical if arm.embedder is None else f"{canonical}{SEPARATOR}{arm.embedder}"
