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


# Older versions' planted texts that also hold a later version's trigger, by label, and that version:
# a corpus holding one reads under it (version 9 reads `htpasswd`'s options anew, and what `doppler
# secrets` and a printed `.pgpass` show; version 10 what `bw unlock` prints).
READ_LATER: dict[str, str] = {
    "htpasswd-file": "9",
    "htpasswd-stdout": "9",
    "doppler-secrets-set": "9",
    "pgpass": "9",
    "bitwarden": "10",
}
