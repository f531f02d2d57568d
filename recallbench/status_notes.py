"""What `recallbench status` adds to the memory's counts: the arm that answers, the settles in force,
whether Claude Code runs recallbench's hooks and when an import last stored anything, other embedders'
vectors, the index's state, what an import under an older sanitizer or parser left,
and the projects no worktree can join."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from engine.api import Settlement
from engine.audit import AGENT_PREFIX
from engine.checks import is_int
from engine.git_repo import checkout_of
from engine.parser_versions import COMPACTION_INSTRUCTIONS_LEAD, PARSER_VERSION
from engine.scope import Resolution
from engine.secret_formats import EXAMPLES, FORMS_BY_VERSION, LATEST_VERSION, kinds_after
from recallbench import config
from recallbench.hook_settings import SettingsError, load_settings, our_events, settings_path
from recallbench.hooks import EVENTS
from recallbench.present import counted, minute


def other_vectors(db: Path, embedder: str) -> dict[str, int]:
    """The bytes each embedder other than `embedder` (the one in use) holds: vectors that this
    process does not read (`recallbench vectors`)."""
    from engine.held_vectors import held_vectors

    return {h.embedder: h.total_bytes for h in held_vectors(db) if h.embedder != embedder}


def index_note(info: dict[str, object]) -> str:
    """Why a missing or stale vector index is no trouble, for the `index:` line."""
    from engine.vectors import EXACT_THRESHOLD

    vectors, state = info["vectors"], info["index"]
    if state not in ("missing", "stale") or not is_int(vectors) or vectors == 0:
        return ""
    if vectors <= EXACT_THRESHOLD:
        return f" (not needed: up to {EXACT_THRESHOLD} vectors are scanned exactly)"
    # the index is built lazily: `import` stores vectors, the first vector search builds the index
    return " (the first search by meaning builds it from the stored vectors)"


def gone_transcripts(db: Path) -> int:
    """How many of the transcript files the memory records are no longer on disk (Claude Code
    deletes them after its cleanupPeriodDays, 30 by default)."""
    from engine.health import recorded_transcripts

    return sum(1 for path in recorded_transcripts(db) if not path.exists())


def files_note(info: dict[str, object]) -> str:
    """What the `files:` line adds when recorded transcripts are gone, "" when none is."""
    gone = int(str(info["files_gone"]))
    if not gone:
        return ""
    return (
        f" ({gone} no longer on disk: this memory holds the only copy of what "
        f"{'it' if gone == 1 else 'they'} said; back it up, and rebuild with --keep-missing)"
    )


def forget_notes(info: dict[str, object]) -> list[str]:
    """What `forget` keeps out of every import: what was written before its horizon, the strings the
    person redacted."""
    notes = []
    if info["forgotten_before"]:
        notes.append(
            f"forgotten before: {info['forgotten_before']} (`recallbench forget --before`): "
            "lines written earlier are not imported"
        )
    if info["redacted_strings"]:
        notes.append(
            f"redacted strings: {info['redacted_strings']} (`recallbench forget --redact`), kept out "
            "of every import as [redacted:forgotten]"
        )
    return notes


def stale_notes(info: dict[str, object]) -> list[str]:
    """What imports under an older sanitizer left that the running one removes, and the fix."""
    notes = []
    if notices := int(str(info["stale_read_notices"])):
        notes.append(
            f"Claude Code's file-read notice, imported before sanitizer version 3 removed it: in "
            f"{counted(notices, 'chunk')}; `recallbench rebuild` imports every transcript again "
            "without it"
        )
    if credentials := stale_credentials_note(info["sanitize_version"], info["credentials_version"]):
        notes.append(credentials)
    if parse := stale_parse_note(info):
        notes.append(parse)
    if cut := int(str(info["cut_words"])):
        begin = "begins" if cut == 1 else "begin"
        notes.append(
            f"{counted(cut, 'chunk')} {begin} inside a word that the chunker before version 2 cut "
            "in two, and a search for that word finds neither half: `recallbench rebuild` imports "
            "every transcript again and splits long messages where a word ends"
        )
    return notes


def stale_credentials_note(held: object, redacted: object) -> str | None:
    """For a memory whose text has not been through the newest sanitizer's credential rules (`held`:
    the version it was imported under, None before version 3; `redacted`: its `credentials_version`),
    the credential formats later versions began to redact, and the fix."""
    # none: imported before version 3, so before every version that added formats
    version = int(redacted) if isinstance(redacted, str) else 0
    if version >= LATEST_VERSION:
        return None
    if isinstance(redacted, str) and redacted != held:
        under = f"redacted in place under sanitizer version {redacted} (`forget --credentials`)"
    elif isinstance(held, str):
        under = f"imported under sanitizer version {held}"
    else:
        under = "imported under a sanitizer before version 3"
    later = [v for v in FORMS_BY_VERSION if v > version]
    versions = (
        f"version {later[0]}"
        if len(later) == 1
        else f"versions {', '.join(map(str, later[:-1]))} and {later[-1]}"
    )
    examples = ", ".join(EXAMPLES[v] for v in later)
    added = len(kinds_after(version))
    return (
        f"{under}, before {versions} began to redact "
        f"{added} more credential format{'' if added == 1 else 's'} ({examples}, …): "
        "`recallbench doctor` checks whether any is in the memory, `recallbench forget "
        "--credentials` redacts them in place"
    )


def stale_parse_note(info: dict[str, object]) -> str | None:
    """What an import by an older parser left that the running one does not store, and the fix;
    None when the memory holds none of it."""
    stale = info["stale_parse"]
    if not isinstance(stale, dict):
        return None
    found = {
        "control": f"{counted(int(stale['control']), 'chunk')} holding terminal control sequences",
        "compaction": f"{counted(int(stale['compaction']), 'chunk')} of the instructions Claude "
        f"Code hands its compaction agent (from {counted(int(stale['compactions']), 'compaction')})",
        "undated": f"{counted(int(stale['undated']), 'message')} stamped with a timestamp that is "
        "not a time",
    }
    held = [text for key, text in found.items() if stale[key]]
    if not held:
        return None
    version = info["parser_version"]
    under = f"parser version {version}" if isinstance(version, str) else "a parser before version 4"
    note = (
        f"imported by {under} (this one is version {PARSER_VERSION}), which left "
        f"{', '.join(held)}: `recallbench rebuild` imports every transcript again without them"
    )
    # The instructions can also go in place, so a memory whose transcripts are gone loses them too.
    if stale["compaction"]:
        note += (
            "; the instructions also go in place, transcripts or not, with `recallbench forget "
            f'--match "{COMPACTION_INSTRUCTIONS_LEAD}"`'
        )
    return note


def unrecorded(db: Path) -> list[str]:
    """The projects whose folder is gone and whose place in git no import read (`projects list`)."""
    from engine.projects import project_infos

    return [i.project for i in project_infos(db) if i.unrecorded]


def unrecorded_note(gone: list[str], here: Resolution) -> str | None:
    """With `scope.worktrees` on, in a folder of a git working tree that holds no sessions and
    joined no other worktree (a fresh worktree that sees nothing): how many projects no worktree can
    join (`gone`: `unrecorded`), and the command that ties one to its repository; else None."""
    if not config.read_settings().scope_worktrees or here.joined or here.project is not None:
        return None
    if checkout_of(here.directory) is None:
        return None
    if not gone:
        return None
    return (
        f"no worktree joins {counted(len(gone), 'project')} whose folder was gone when it was "
        "imported (no record of its git repository): `recallbench projects` lists them, `recallbench "
        "projects join PROJECT --worktree-of FOLDER` ties one to this repository"
    )


def arm_info() -> dict[str, object]:
    """The arm `search`, `serve` and the hooks use: the shipped one (with its run), else `rrf`."""
    try:
        ship = config.shipped()
    except (OSError, ValueError) as exc:
        return {"spec": "rrf", "shipped": False, "error": f"{config.config_file()}: {exc}"}
    if ship is None or not isinstance(ship.get("arm"), str):
        return {"spec": "rrf", "shipped": False}
    return {
        "spec": ship["arm"],
        "shipped": True,
        "protocol_id": ship.get("protocol_id"),
        "run_id": ship.get("run_id"),
        "no_memory": config.no_memory(ship["arm"]),
    }


def arm_line(info: dict[str, object]) -> str:
    """`status`'s line for `arm_info`."""
    if "error" in info:
        return f"arm: rrf (the settings cannot be read: {info['error']})"
    if not info["shipped"]:
        return (
            "arm: rrf (nothing shipped: the default; `recallbench ship RESULTS_DIR` ships the arm a "
            "benchmark run's rule chose)"
        )
    line = f"arm: {info['spec']} (shipped from {info['protocol_id']} run {info['run_id']})"
    if info["no_memory"]:
        line += ": no memory, so searches find nothing until another run is shipped"
    return line


def settles_info(settles: list[Settlement]) -> dict[str, int]:
    """How many settles are in force, and how many of those an agent made (`flag_memory`)."""
    active = [s for s in settles if s.active]
    return {
        "active": len(active),
        "by_agent": sum(1 for s in active if s.actor.startswith(AGENT_PREFIX)),
    }


def settles_line(info: dict[str, int]) -> str:
    """`status`'s line for `settles_info`: an agent's flags are named, for the person to review."""
    line = f"corrections: {info['active']} in force"
    if info["by_agent"]:
        line += (
            f", {info['by_agent']} of them made by an agent (flag_memory), which can hide a "
            "memory: `recallbench corrections --pending` lists them, `recallbench correct --undo ID` "
            "takes one back"
        )
    return line


@dataclass(frozen=True)
class HookFile:
    """One Claude Code settings file `status` reads: its scope, path, the events it runs one of
    recallbench's hooks on (in `hooks.EVENTS` order), and why it could not be read (or None)."""

    scope: Literal["user", "project"]
    path: str
    events: tuple[str, ...]
    error: str | None

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "events": list(self.events)}


def hooks_info(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[HookFile]:
    """Claude Code's user settings and this folder's project settings (`hook_settings.settings_path`),
    as `HookFile`s."""
    out: list[HookFile] = []
    scopes: tuple[Literal["user", "project"], ...] = ("user", "project")
    for scope in scopes:
        path = settings_path(scope, env=env, cwd=cwd)
        try:
            ours, error = set(our_events(load_settings(path))), None
        except SettingsError as exc:
            ours, error = set(), str(exc)
        events = tuple(e for e in EVENTS if e in ours)
        out.append(HookFile(scope=scope, path=str(path), events=events, error=error))
    return out


def hooks_line(files: list[HookFile]) -> str:
    """`status`'s line for `hooks_info`: where the hooks run, which are missing, or that none do (so
    the memory changes only when the person imports)."""
    unread = "".join(f"; cannot read {f.path}: {f.error}" for f in files if f.error)
    found = [f for f in files if f.events]
    if not found:
        where = " or ".join(f.path for f in files)
        return (
            f"hooks: none in {where}, so the memory changes only when you run `recallbench import` "
            f"(`recallbench hooks install` imports as you work){unread}"
        )
    where = "; ".join(f"{', '.join(f.events)} in {f.path}" for f in found)
    missing = [e for e in EVENTS if not any(e in f.events for f in found)]
    lack = f"; not {', '.join(missing)} (`recallbench hooks install` adds them)" if missing else ""
    return f"hooks: {where}{lack}{unread}"


def imported_line(info: Mapping[str, object]) -> str:
    """`status`'s line for when an import last stored new lines and the newest session it holds."""
    if info.get("last_import") is None:
        return "imported: nothing yet"
    return (
        f"imported: last stored new lines {minute(info['last_import'])} UTC; the newest session "
        f"ended {minute(info.get('newest_session'))} UTC"
    )
