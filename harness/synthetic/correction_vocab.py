"""Word tables for the facts that change or are corrected later (`harness.synthetic.corrections`).

Kept apart from `vocab` so that the default corpus, which never draws from them, cannot change when
they do. The code names occur nowhere else in the generator, so every setting's subject is unique to
its two sessions.
"""

from __future__ import annotations

from dataclasses import dataclass

# Each code name names one service; none occurs in any other table of the generator.
CODENAMES: tuple[str, ...] = (
    "bramble",
    "quokka",
    "marlin",
    "juniper",
    "osprey",
    "tamarind",
    "kestrel",
    "saffron",
    "wombat",
    "cobalt",
    "lichen",
    "pelican",
    "sorrel",
    "ibis",
    "fennel",
    "tapir",
    "garnet",
    "heron",
    "basalt",
    "yarrow",
    "alder",
    "puffin",
    "nettle",
    "quartz",
    "otter",
    "larch",
    "thistle",
    "bittern",
    "caracal",
    "dunlin",
    "ermine",
    "gannet",
    "hornbill",
    "jacana",
    "kudu",
    "loris",
    "nightjar",
    "oriole",
    "plover",
    "mango",
)

SERVICE_KINDS: tuple[str, ...] = (
    "relay",
    "exporter",
    "sidecar",
    "gateway",
    "worker",
    "proxy",
    "scheduler",
    "collector",
)


@dataclass(frozen=True, kw_only=True)
class Aspect:
    """One setting of a service: how it is stated, how it is asked about, and its possible values."""

    name: str
    statement: str  # "{subject}" and "{value}" are filled in
    question: str  # "{subject}" is filled in
    values: tuple[str, ...]


ASPECTS: tuple[Aspect, ...] = (
    Aspect(
        name="port",
        statement="The {subject} listens on port {value}.",
        question="Which port does the {subject} listen on?",
        values=("7311", "7393", "8461", "8847", "9127", "9355", "6581", "6619"),
    ),
    Aspect(
        name="version pin",
        statement="The {subject} is pinned to version {value}.",
        question="Which version is the {subject} pinned to?",
        values=("3.2.1", "3.4.0", "4.0.2", "2.9.7", "5.1.3", "4.6.0"),
    ),
    Aspect(
        name="owner",
        statement="The {subject} is owned by {value}.",
        question="Who owns the {subject}?",
        values=(
            "Priya's platform team",
            "Tomasz on the data team",
            "Ayodele's payments squad",
            "Mirela from infrastructure",
            "the SRE rotation led by Kenji",
            "Fatima's integrations group",
        ),
    ),
    Aspect(
        name="region",
        statement="The {subject} runs in {value}.",
        question="Which region does the {subject} run in?",
        values=("eu-west-1", "us-east-2", "ap-southeast-1", "eu-central-1", "us-west-2"),
    ),
    Aspect(
        name="schedule",
        statement="The {subject} runs every night at {value}.",
        question="At what time does the {subject} run each night?",
        values=("01:40 UTC", "02:15 UTC", "03:30 UTC", "04:05 UTC", "23:50 UTC"),
    ),
    Aspect(
        name="replica count",
        statement="The {subject} runs with {value} replicas.",
        question="How many replicas does the {subject} run with?",
        values=("three", "five", "seven", "nine", "twelve"),
    ),
    Aspect(
        name="connection timeout",
        statement="The {subject} uses a connection timeout of {value}.",
        question="What connection timeout does the {subject} use?",
        values=("15 seconds", "45 seconds", "90 seconds", "2 minutes", "250 milliseconds"),
    ),
)

# Why a person says an earlier statement was wrong (the old one was never true).
CORRECTION_REASONS: tuple[str, ...] = (
    "it was misread from the old compose file",
    "that number came from the retired staging box",
    "the runbook it was copied from was out of date",
    "it was a typo in the ticket",
    "it was guessed from a log line of another service",
    "the wiki page it came from describes the previous setup",
)

# Why a setting changed (the old one was true until then).
CHANGE_REASONS: tuple[str, ...] = (
    "the platform team reassigned it this week",
    "we moved it after the security review",
    "ownership and config were reshuffled in the reorg",
    "the cluster migration forced it",
    "the vendor upgrade required it",
    "capacity planning for the quarter changed it",
)
