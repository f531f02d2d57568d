"""`generate`: plan, assemble and write the whole corpus tree, its draft rosters and `planted.json`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from engine.markers import CONTEXT_OPEN, OWN_TOOL_PREFIX, SELF_PROMPT_MARKER
from harness.synthetic import corrections
from harness.synthetic.config import (
    CREDENTIAL_KINDS,
    GeneratedCorpus,
    SyntheticConfig,
    SyntheticError,
)
from harness.synthetic.lines import MODERN, OLDER, StreamFile
from harness.synthetic.plan import Plan
from harness.synthetic.planner import build_plan
from harness.synthetic.session import Built, Episode, assemble, write_session

GENERATOR_VERSION = "recallbench-synthetic/1"
ROSTER_NAMES = ("receipts", "decisions", "multihop", "temporal", "negatives")


def encode_cwd(cwd: str) -> str:
    """Claude Code's project folder name: every non-alphanumeric character becomes `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def dumps_line(line: dict[str, Any]) -> str:
    """One JSONL line exactly as the generator writes it."""
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def _write_jsonl(path: Path, stream: StreamFile) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(dumps_line(line) + "\n" for line in stream.lines)
    path.write_bytes(text.encode("utf-8"))
    return len(stream.lines)


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def _check_out_dir(out_dir: Path) -> None:
    if out_dir.exists():
        if not out_dir.is_dir():
            msg = (
                f"out_dir {out_dir} exists and is not a directory; pass an empty or missing folder"
            )
            raise SyntheticError(msg)
        if any(out_dir.iterdir()):
            msg = f"out_dir {out_dir} is not empty; the generator never overwrites, pass an empty or missing folder"
            raise SyntheticError(msg)


def _build_all(plan: Plan) -> list[Built]:
    """Assemble every session; originals of near-duplicate pairs go before their failed attempts."""
    built: dict[int, Built] = {}
    raw: dict[int, list[Episode]] = {}
    later: list[int] = []
    for s in plan.sessions:
        if s.role == "attempt":
            later.append(s.index)
            continue
        episodes = assemble(plan, s, None)
        built[s.index] = write_session(plan, s, episodes)
        raw[s.index] = built[s.index].raw
    for index in later:
        s = plan.sessions[index]
        if s.attempt_commit is None:
            msg = f"near-duplicate session {s.sid} has no commit attempt planned"
            raise SyntheticError(msg)
        original = plan.commits[s.attempt_commit].session
        built[index] = write_session(plan, s, assemble(plan, s, raw[original]))
    return [built[i] for i in range(len(plan.sessions))]


def _planted(plan: Plan, built: list[Built], files: list[str]) -> dict[str, Any]:
    """The `planted.json` record; its keys keep this order, since the file's bytes are locked.

    The corrected and changed facts are recorded last, and only when the corpus has them.
    """
    record: dict[str, Any] = {
        **_provenance(plan.config),
        **_project_records(plan),
        **_planted_facts(plan),
        **_scaffolding_counts(plan),
        **_file_counts(plan, built, files),
        "decision_overlap": {
            "mean": round(plan.decision_overlap, 6),
            "max": round(plan.decision_overlap_max, 6),
        },
        "estimates": {
            "rendered_chars": sum(b.rendered_chars for b in built),
            "chunks_900": sum(b.chunks for b in built),
        },
        "counting": (
            "Counts are of planted occurrences in message content (text blocks, tool_use inputs, "
            "tool_result content), not of the toolUseResult mirror. Context blocks sit in user prompts; "
            "sentinel quotes in assistant text; private spans and credentials once each."
        ),
    }
    if plan.config.corrections_on:
        record["settings"] = corrections.planted_record(plan)
        record["settles_file"] = corrections.SETTLES_FILE
    return record


def _provenance(config: SyntheticConfig) -> dict[str, Any]:
    """Which generator and knobs wrote the corpus, and the markers the sanitizer keys on."""
    return {
        "generator": GENERATOR_VERSION,
        "seed": config.seed,
        "config": config.to_dict(),
        "markers": {
            "own_tool_prefix": OWN_TOOL_PREFIX,
            "context_open": CONTEXT_OPEN,
            "self_prompt_marker": SELF_PROMPT_MARKER,
        },
    }


def _project_records(plan: Plan) -> dict[str, Any]:
    """Each project's folder and sessions, and how many sessions each transcript format has."""
    sessions = plan.sessions
    return {
        "projects": [
            {
                "cwd": p.cwd,
                "encoded": encode_cwd(p.cwd),
                "slug": p.slug,
                "language": p.language,
                "sessions": [s.sid for s in sessions if s.project == i],
            }
            for i, p in enumerate(plan.profiles)
        ],
        "sessions_by_project": {
            p.cwd: sum(1 for s in sessions if s.project == i) for i, p in enumerate(plan.profiles)
        },
        "formats": {
            MODERN.version: sum(1 for s in sessions if s.fmt is MODERN),
            OLDER.version: sum(1 for s in sessions if s.fmt is OLDER),
        },
    }


def _planted_facts(plan: Plan) -> dict[str, Any]:
    """Dedicated sessions, commits and their distractors, temporal chains and multi-hop pairs."""
    sessions = plan.sessions
    return {
        "self_transcripts": [s.sid for s in sessions if s.role == "self"],
        "echo_sessions": {s.sid: [qid for qid, _ in s.echo] for s in sessions if s.role == "echo"},
        "near_duplicates": [
            {
                "attempt": sessions[c.attempt_session].sid,
                "original": sessions[c.session].sid,
                "short_hash": c.short,
            }
            for c in plan.commits
            if c.attempt_session is not None
        ],
        "citations": [
            {
                "session": sessions[c.session].sid,
                "short_hash": c.commit.short,
                "author": sessions[c.commit.session].sid,
            }
            for c in plan.citations
        ],
        "commits": len(plan.commits),
        "temporal_chains": [
            {
                "qid": plan.chain_qids[i],
                "aspect": ch.aspect,
                "component": ch.component.name,
                "sessions": [sessions[k].sid for k in ch.sessions],
                "options": list(ch.options),
            }
            for i, ch in enumerate(plan.chains)
        ],
        "multihop_pairs": [
            {
                "qid": plan.hop_qids[i],
                "a_session": sessions[h.a_session].sid,
                "b_session": sessions[h.b_session].sid,
                "file": h.file,
                "ident": h.ident,
                "value": h.new,
            }
            for i, h in enumerate(plan.hops)
        ],
    }


def _scaffolding_counts(plan: Plan) -> dict[str, Any]:
    """What the sanitizer must strip or keep: context blocks, quotes, MCP calls, private spans, secrets."""
    sessions = plan.sessions
    own_by_tool: dict[str, int] = {}
    for s in sessions:
        for tool in s.own_mcp:
            own_by_tool[OWN_TOOL_PREFIX + tool] = own_by_tool.get(OWN_TOOL_PREFIX + tool, 0) + 1
    credentials = dict.fromkeys(CREDENTIAL_KINDS, 0)
    for s in sessions:
        for kind, _ in s.credentials:
            credentials[kind] += 1
    return {
        "context_blocks": sum(s.context_blocks for s in sessions),
        "context_block_sessions": {s.sid: s.context_blocks for s in sessions if s.context_blocks},
        "assistant_sentinel_quotes": sum(s.sentinel for s in sessions),
        "own_mcp": {
            "calls": sum(len(s.own_mcp) for s in sessions),
            "results": sum(len(s.own_mcp) for s in sessions),
            "by_tool": dict(sorted(own_by_tool.items())),
        },
        "other_mcp": {
            "calls": sum(s.other_mcp for s in sessions),
            "results": sum(s.other_mcp for s in sessions),
            "tool": "mcp__othermem__search_memory",
        },
        "private_spans": {
            "closed": sum(s.private_closed for s in sessions),
            "unclosed": sum(s.private_unclosed for s in sessions),
        },
        "credentials": credentials,
    }


def _file_counts(plan: Plan, built: list[Built], files: list[str]) -> dict[str, Any]:
    """Subagent files per format and the files a reader should find (`files` lacks planted.json)."""
    subagents = {MODERN.version: 0, OLDER.version: 0}
    for s, b in zip(plan.sessions, built, strict=True):
        subagents[s.fmt.version] += len(b.subfiles)
    return {
        "subagent_files": subagents,
        "expected_files": {
            "sessions": len(plan.sessions),
            "subagents": sum(subagents.values()),
            "jsonl": len(plan.sessions) + sum(subagents.values()),
            "rosters": len(plan.rosters),
            "total": len(files) + 1,
        },
    }


# SyntheticConfig is frozen, so one shared default instance is safe.
def generate(out_dir: Path, config: SyntheticConfig = SyntheticConfig()) -> GeneratedCorpus:  # noqa: B008
    """Write the synthetic corpus for `config` into `out_dir` (missing or empty).

    Layout: `projects/<encoded cwd>/<session>.jsonl`, subagents under `<session>/subagents/` (2.x)
    or as `agent-<id>.jsonl` beside the session (1.0.x); `rosters/<name>.json`; `planted.json`; with
    corrected or changed facts also `settles.json` and `rosters/corrections.json`.
    The bytes depend only on `config`.

    Raises:
        SyntheticError: `out_dir` is not empty, or the config cannot be satisfied.
    """
    out_dir = Path(out_dir)
    _check_out_dir(out_dir)
    plan = build_plan(config)
    built = _build_all(plan)
    projects_dir = out_dir / "projects"
    files: list[str] = []
    lines = 0
    subagent_files = 0
    for s, b in zip(plan.sessions, built, strict=True):
        folder = projects_dir / encode_cwd(plan.cwd(s.project))
        lines += _write_jsonl(folder / f"{s.sid}.jsonl", b.main)
        files.append((folder / f"{s.sid}.jsonl").relative_to(out_dir).as_posix())
        for sub in b.subfiles:
            if s.fmt.modern:
                path = folder / s.sid / "subagents" / f"agent-{sub.agent_id}.jsonl"
            else:
                path = folder / f"agent-{sub.agent_id}.jsonl"
            lines += _write_jsonl(path, sub)
            files.append(path.relative_to(out_dir).as_posix())
            subagent_files += 1
    if config.corrections_on:
        roster, settles = corrections.outputs(plan, [b.main for b in built])
        plan.rosters[corrections.ROSTER_NAME] = roster
        _write_json(out_dir / corrections.SETTLES_FILE, settles)
        files.append(corrections.SETTLES_FILE)
    roster_paths: dict[str, Path] = {}
    for name in plan.rosters:
        path = out_dir / "rosters" / f"{name}.json"
        _write_json(path, plan.rosters[name])
        roster_paths[name] = path
        files.append(path.relative_to(out_dir).as_posix())
    planted_path = out_dir / "planted.json"
    _write_json(planted_path, _planted(plan, built, files))
    files.append(planted_path.relative_to(out_dir).as_posix())
    return GeneratedCorpus(
        root=out_dir,
        projects_dir=projects_dir,
        rosters=roster_paths,
        planted_path=planted_path,
        files=tuple(sorted(files)),
        session_files=len(plan.sessions),
        subagent_files=subagent_files,
        lines=lines,
        questions={name: len(r["questions"]) for name, r in plan.rosters.items()},
        decision_overlap=plan.decision_overlap,
        rendered_chars=sum(b.rendered_chars for b in built),
        estimated_chunks=sum(b.chunks for b in built),
        project_cwds=tuple(p.cwd for p in plan.profiles),
    )
