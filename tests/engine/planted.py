"""One planted credential: the shape every planted corpus (`test_secrets_corpus`, `planted_v5`) uses."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Planted:
    label: str  # the credential kind as a person counts it (a provider, or a shape)
    kind: str  # the `[redacted:<kind>]` it must become
    text: str  # the credential in its usual surroundings
    cores: tuple[str, ...]  # parts of the credential that must not survive anywhere


def planted(label: str, kind: str, text: str, core: str) -> Planted:
    """A credential with one core (the later versions' planted corpora)."""
    return Planted(label=label, kind=kind, text=text, cores=(core,))
