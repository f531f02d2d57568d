"""Convert the LoCoMo benchmark into a Claude Code transcript tree and a message-level draft roster.

LoCoMo (Maharana, Lee, Tulyakov, Bansal, Barbieri and Fang, "Evaluating Very Long-Term Conversational
Memory of LLM Agents", ACL 2024) is ten long two-person conversations with 1,986 questions whose gold is
the dialogue turns (``D<session>:<turn>``) that hold the answer. Its licence is CC BY-NC 4.0: this
project ships the converter, never the data; the user passes the path of ``locomo10.json``.

What `convert` writes under ``out_dir``:

* ``projects/<encoded>/<session id>.jsonl`` -- one project per conversation (``cwd`` =
  ``/locomo/<sample_id>``), one Claude Code session per LoCoMo session, one message per turn. Import
  ``out_dir/projects`` (the roster and reports beside it are not transcripts).
* ``roster.json`` -- a draft roster (unit ``message``) for ``recallbench roster seal``.
* ``unresolved.json`` -- questions left out because none of their evidence names a turn, and questions
  kept although part of their evidence could not be used; nothing is dropped silently.
* ``conversion.json`` -- `LocomoReport.to_dict()`.

Turn -> message mapping: ``speaker_a``'s turns are ``user`` lines (a typed prompt, plain string content)
and ``speaker_b``'s are ``assistant`` lines (one text block, their own ``message.id``), so a session reads
like a Claude Code conversation. Both keep the speaker's name in the text (``"Caroline: ..."``) because
the questions name people, not roles; a shared image is appended as ``[image: <blip_caption>]``. The
name prefix also guarantees no message is empty, so every turn survives the importer.

Identifiers are uuid5 under a fixed namespace: a turn's uuid from ``<sample_id>/<dia_id>``, a session id
from ``<sample_id>/session_<n>``; converting the same file twice gives byte-identical output.
Timestamps come from ``session_<n>_date_time`` (``"1:56 pm on 8 May, 2023"``, read as UTC) and are
spaced one second per turn so that time order is file order.

Evidence cleaning (`clean_evidence`, `harness.locomo_evidence`) repairs the ids a question's evidence lists
and counts every repair.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

from engine.checks import is_int
from harness.locomo_evidence import CleanedEvidence, EvidenceProblem, clean_evidence

__all__ = [
    "CATEGORY_NAMES",
    "LOCOMO_NAMESPACE",
    "PROJECT_ROOT",
    "TRANSCRIPT_VERSION",
    "CleanedEvidence",
    "EvidenceProblem",
    "LocomoError",
    "LocomoReport",
    "clean_evidence",
    "convert",
    "encode_project",
    "parse_session_time",
    "project_cwd",
    "session_uuid",
    "turn_uuid",
]

# Fixed so that ids are identical across machines and versions; changing it changes every gold uuid.
LOCOMO_NAMESPACE = uuid.UUID("0b6e3c52-2f4e-5a7c-9d8e-4c1f0a9b7d31")
PROJECT_ROOT = "/locomo"
# The Claude Code release whose line shapes the converter writes (2.x: one content block per line).
TRANSCRIPT_VERSION = "2.1.74"
ASSISTANT_MODEL = "locomo-speaker"
ROSTER_NAME = "locomo"

CATEGORY_NAMES: Mapping[int, str] = MappingProxyType(
    {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
)

_SESSION_KEY = re.compile(r"^session_([0-9]+)$")
_TIME_FORMATS = (
    "%I:%M %p on %d %B, %Y",
    "%I:%M %p on %d %b, %Y",
    "%I:%M %p on %d %B %Y",
    "%I:%M %p on %d %b %Y",
    "%I:%M%p on %d %B, %Y",
)


class LocomoError(ValueError):
    """The LoCoMo file, the conversation filter or the output folder cannot be used."""


# ---------------------------------------------------------------------------------------------
# Public values


@dataclass(frozen=True, kw_only=True)
class LocomoReport:
    """What one conversion wrote, with every repair and every unusable evidence id accounted for."""

    source: str
    conversations: tuple[str, ...]
    sessions: int
    empty_sessions: int
    messages: int
    questions_total: int
    questions: int  # written to the roster
    categories: Mapping[str, int]  # category name -> questions written
    repairs: Mapping[str, int]  # repair kind -> count
    unresolved_ids: int  # well-formed evidence ids naming no turn
    junk_tokens: int
    unresolved: tuple[EvidenceProblem, ...]  # questions left out of the roster
    partial: tuple[EvidenceProblem, ...]  # questions kept with part of their evidence unusable
    anomalies: Mapping[str, int]  # data oddities worked around (duplicate turn ids, ...)

    def __post_init__(self) -> None:
        for name in ("categories", "repairs", "anomalies"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        if self.questions + len(self.unresolved) + self.anomalies.get("empty_question", 0) != (
            self.questions_total
        ):
            msg = (
                f"LocomoReport does not add up: {self.questions} written + {len(self.unresolved)} "
                f"unresolved + {self.anomalies.get('empty_question', 0)} empty != "
                f"{self.questions_total} questions read"
            )
            raise LocomoError(msg)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "conversations": list(self.conversations),
            "sessions": self.sessions,
            "empty_sessions": self.empty_sessions,
            "messages": self.messages,
            "questions_total": self.questions_total,
            "questions": self.questions,
            "categories": dict(sorted(self.categories.items())),
            "repairs": dict(sorted(self.repairs.items())),
            "unresolved_ids": self.unresolved_ids,
            "junk_tokens": self.junk_tokens,
            "unresolved": [p.to_dict() for p in self.unresolved],
            "partial": [p.to_dict() for p in self.partial],
            "anomalies": dict(sorted(self.anomalies.items())),
        }


# ---------------------------------------------------------------------------------------------
# Identifiers, names and times


def turn_uuid(sample_id: str, dia_id: str) -> str:
    """The message uuid of a turn: uuid5 of ``<sample_id>/<dia_id>``."""
    return str(uuid.uuid5(LOCOMO_NAMESPACE, f"{sample_id}/{dia_id}"))


def session_uuid(sample_id: str, number: int) -> str:
    """The Claude Code session id of LoCoMo session `number`: uuid5 of ``<sample_id>/session_<n>``."""
    return str(uuid.uuid5(LOCOMO_NAMESPACE, f"{sample_id}/session_{number}"))


def project_cwd(sample_id: str) -> str:
    """The project path (``cwd``) of a conversation."""
    return f"{PROJECT_ROOT}/{sample_id}"


def encode_project(cwd: str) -> str:
    """Claude Code's folder name for a cwd: every non-alphanumeric character becomes ``-``."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def parse_session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> an aware UTC datetime (LoCoMo gives no time zone).

    Raises:
        LocomoError: the text matches none of the accepted formats.
    """
    cleaned = " ".join(str(text).split())
    for fmt in _TIME_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    msg = (
        f"Cannot read LoCoMo session time {text!r}; expected e.g. '1:56 pm on 8 May, 2023' "
        f"(formats {list(_TIME_FORMATS)})"
    )
    raise LocomoError(msg)


def _iso(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


# ---------------------------------------------------------------------------------------------
# Conversion


@dataclass(frozen=True, kw_only=True)
class _Turn:
    dia_id: str
    uuid: str
    speaker: str
    text: str


@dataclass(frozen=True, kw_only=True)
class _Session:
    number: int
    session_id: str
    start: datetime
    turns: tuple[_Turn, ...]


@dataclass(kw_only=True)
class _Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[_Session] = field(default_factory=list)
    turn_ids: dict[str, str] = field(default_factory=dict)  # dia_id -> message uuid


def convert(
    path: Path, out_dir: Path, *, conversations: Sequence[str] | None = None
) -> LocomoReport:
    """Convert a LoCoMo JSON file into a transcript tree, a draft roster and reports under `out_dir`.

    Args:
        path: ``locomo10.json`` or a file of the same shape (a list of conversations).
        out_dir: an empty or missing folder; see the module docstring for what is written.
        conversations: sample ids to convert (``conv-26``, ...); None converts all, in file order.

    Raises:
        LocomoError: the file is unreadable or not LoCoMo-shaped, a requested conversation does not
            exist, `out_dir` is not empty, or no question has usable evidence.
    """
    path, out_dir = Path(path), Path(out_dir)
    raw = _selected(_read(path), path, conversations)
    _require_empty(out_dir)
    anomalies: Counter[str] = Counter()
    parsed = [_parse_conversation(item, path, anomalies) for item in raw]
    questions, problems, totals = _questions(raw, parsed, anomalies)
    if not questions:
        msg = (
            f"No question of {path} ({[c.sample_id for c in parsed]}) has evidence naming an "
            f"existing turn ({len(problems)} unresolved); check that this is a LoCoMo file"
        )
        raise LocomoError(msg)
    for conv in parsed:
        _write_conversation(out_dir, conv)
    _write_json(
        out_dir / "roster.json",
        {
            "name": ROSTER_NAME,
            "unit": "message",
            "description": (
                "LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) converted by harness.locomo: "
                "gold = the message uuids of each question's evidence turns; scope = its conversation."
            ),
            "questions": questions,
        },
    )
    unresolved = tuple(p for p in problems if p.dropped)
    partial = tuple(p for p in problems if not p.dropped)
    _write_json(
        out_dir / "unresolved.json",
        {
            "unresolved": [p.to_dict() for p in unresolved],
            "partial": [p.to_dict() for p in partial],
        },
    )
    report = LocomoReport(
        source=path.name,
        conversations=tuple(c.sample_id for c in parsed),
        sessions=sum(len(c.sessions) for c in parsed),
        empty_sessions=anomalies.pop("empty_session", 0),
        messages=sum(len(s.turns) for c in parsed for s in c.sessions),
        questions_total=totals["questions_total"],
        questions=len(questions),
        categories=Counter(str(q["category"]) for q in questions),
        repairs=totals["repairs"],
        unresolved_ids=totals["unresolved_ids"],
        junk_tokens=totals["junk_tokens"],
        unresolved=unresolved,
        partial=partial,
        anomalies=anomalies,
    )
    _write_json(out_dir / "conversion.json", report.to_dict())
    return report


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        msg = f"LoCoMo file {path} does not exist; pass the path of locomo10.json"
        raise LocomoError(msg) from err
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        msg = f"LoCoMo file {path} is not UTF-8 JSON: {err}"
        raise LocomoError(msg) from err
    if not isinstance(data, list) or not all(isinstance(c, dict) for c in data):
        msg = f"LoCoMo file {path} must hold a JSON list of conversation objects, got {type(data).__name__}"
        raise LocomoError(msg)
    for i, conv in enumerate(data):
        missing = [k for k in ("sample_id", "conversation", "qa") if k not in conv]
        if missing:
            msg = f"{path}: conversation [{i}] lacks {missing}; is this a LoCoMo file?"
            raise LocomoError(msg)
    ids = [str(c["sample_id"]) for c in data]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        msg = f"{path}: sample_id(s) {dupes} appear more than once; each conversation needs its own id"
        raise LocomoError(msg)
    return data


def _selected(
    data: list[dict[str, Any]], path: Path, wanted: Sequence[str] | None
) -> list[dict[str, Any]]:
    if wanted is None:
        return data
    if isinstance(wanted, str):
        wanted = [wanted]
    available = [str(c["sample_id"]) for c in data]
    unknown = [w for w in wanted if w not in available]
    if unknown:
        msg = f"Unknown conversation(s) {unknown} in {path}; choose from {available}"
        raise LocomoError(msg)
    if not wanted:
        msg = f"The conversation filter is empty; choose one or more of {available}"
        raise LocomoError(msg)
    keep = set(wanted)
    return [c for c in data if str(c["sample_id"]) in keep]


def _require_empty(out_dir: Path) -> None:
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        msg = (
            f"Output folder {out_dir} is not empty; convert into a new folder so that old sessions "
            "cannot mix with this conversion"
        )
        raise LocomoError(msg)


def _parse_conversation(
    item: Mapping[str, Any], path: Path, anomalies: Counter[str]
) -> _Conversation:
    sample_id = str(item["sample_id"])
    body = item["conversation"]
    if not isinstance(body, dict):
        msg = f"{path}: {sample_id}.conversation must be an object, got {type(body).__name__}"
        raise LocomoError(msg)
    conv = _Conversation(
        sample_id=sample_id,
        speaker_a=str(body.get("speaker_a", "")),
        speaker_b=str(body.get("speaker_b", "")),
    )
    numbers = sorted(int(m.group(1)) for k in body if (m := _SESSION_KEY.match(k)))
    for number in numbers:
        turns_raw = body[f"session_{number}"]
        if not isinstance(turns_raw, list) or not turns_raw:
            anomalies["empty_session"] += 1
            continue
        when = body.get(f"session_{number}_date_time")
        if when is None:
            msg = f"{path}: {sample_id} session_{number} has no session_{number}_date_time"
            raise LocomoError(msg)
        start = _session_time(when, f"{path}: {sample_id} session_{number}")
        turns = tuple(_turn(conv, number, i, t, anomalies) for i, t in enumerate(turns_raw))
        conv.sessions.append(
            _Session(
                number=number,
                session_id=session_uuid(sample_id, number),
                start=start,
                turns=turns,
            )
        )
    if not conv.sessions:
        msg = f"{path}: conversation {sample_id} has no session with turns"
        raise LocomoError(msg)
    return conv


def _session_time(text: object, where: str) -> datetime:
    try:
        return parse_session_time(str(text))
    except LocomoError as err:
        msg = f"{where}: {err}"
        raise LocomoError(msg) from err


def _turn(
    conv: _Conversation, number: int, index: int, raw: object, anomalies: Counter[str]
) -> _Turn:
    turn: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    if not isinstance(raw, dict):
        anomalies["turn_not_object"] += 1
    dia_id = turn.get("dia_id")
    if isinstance(dia_id, str) and dia_id.strip():
        canonical = clean_evidence([dia_id]).ids
        key = canonical[0] if len(canonical) == 1 else dia_id.strip()
        if key != dia_id:
            anomalies["turn_id_repaired"] += 1
    else:
        key = f"session_{number}#{index}"  # no id: unreachable as evidence, still a message
        anomalies["turn_without_id"] += 1
    uid_key = key
    if key in conv.turn_ids:
        # The first turn keeps the id (evidence resolves to it); later ones get a distinct uuid.
        anomalies["duplicate_turn_id"] += 1
        uid_key = f"{key}#{number}.{index}"
    uid = turn_uuid(conv.sample_id, uid_key)
    conv.turn_ids.setdefault(key, uid)
    speaker = str(turn.get("speaker") or "").strip() or "Unknown"
    if speaker not in (conv.speaker_a, conv.speaker_b):
        anomalies["unknown_speaker"] += 1  # written as a user line, its name kept in the text
    return _Turn(dia_id=key, uuid=uid, speaker=speaker, text=_turn_text(speaker, turn))


def _turn_text(speaker: str, turn: Mapping[str, Any]) -> str:
    text = str(turn.get("text") or "").strip()
    caption = turn.get("blip_caption")
    lines = [f"{speaker}: {text}".rstrip()]
    if isinstance(caption, str) and caption.strip():
        lines.append(f"[image: {caption.strip()}]")
    return "\n".join(lines)


def _questions(
    raw: Sequence[Mapping[str, Any]], parsed: Sequence[_Conversation], anomalies: Counter[str]
) -> tuple[list[dict[str, Any]], list[EvidenceProblem], dict[str, Any]]:
    questions: list[dict[str, Any]] = []
    problems: list[EvidenceProblem] = []
    repairs: Counter[str] = Counter()
    total = unresolved_ids = junk_tokens = 0
    for item, conv in zip(raw, parsed, strict=True):
        qa = item["qa"]
        if not isinstance(qa, list):
            msg = f"{conv.sample_id}.qa must be a list, got {type(qa).__name__}"
            raise LocomoError(msg)
        for index, entry in enumerate(qa):
            total += 1
            qid = f"{conv.sample_id}-q{index}"
            q: Mapping[str, Any] = entry if isinstance(entry, dict) else {}
            text = str(q.get("question") or "").strip()
            if not text:
                anomalies["empty_question"] += 1
                continue
            category = _category(q.get("category"))
            raw_evidence = q.get("evidence") or []
            if not isinstance(raw_evidence, list):
                raw_evidence = [raw_evidence]
            cleaned = clean_evidence(raw_evidence)
            repairs.update(cleaned.repairs)
            gold = [conv.turn_ids[i] for i in cleaned.ids if i in conv.turn_ids]
            unknown = tuple(i for i in cleaned.ids if i not in conv.turn_ids)
            unresolved_ids += len(unknown)
            junk_tokens += len(cleaned.junk)
            if unknown or cleaned.junk or not gold:
                problems.append(
                    EvidenceProblem(
                        qid=qid,
                        sample_id=conv.sample_id,
                        question=text,
                        category=category[1],
                        raw_evidence=tuple(
                            e if isinstance(e, str) else repr(e) for e in raw_evidence
                        ),
                        unknown_ids=unknown,
                        junk=cleaned.junk,
                        dropped=not gold,
                    )
                )
            if not gold:
                continue
            questions.append(
                {
                    "qid": qid,
                    "text": text,
                    "scope": [project_cwd(conv.sample_id)],
                    "category": category[1],
                    "tags": {"category_id": category[0], "category_name": category[1]},
                    "gold": {"relevant": dict.fromkeys(gold, 1), "forbidden": [], "control": None},
                }
            )
    totals: dict[str, Any] = {
        "questions_total": total,
        "repairs": repairs,
        "unresolved_ids": unresolved_ids,
        "junk_tokens": junk_tokens,
    }
    return questions, problems, totals


def _category(value: object) -> tuple[str, str]:
    """(category id, name) as strings; an unknown id keeps its number in the name."""
    if not (is_int(value) or isinstance(value, str)):
        return ("unknown", "unknown")
    text = str(value).strip()
    number = int(text) if text.isdigit() else None
    if number is not None and number in CATEGORY_NAMES:
        return (str(number), CATEGORY_NAMES[number])
    return (text, f"category-{text}")


# ---------------------------------------------------------------------------------------------
# Writing


def _write_conversation(out_dir: Path, conv: _Conversation) -> None:
    cwd = project_cwd(conv.sample_id)
    folder = out_dir / "projects" / encode_project(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    for session in conv.sessions:
        lines = _session_lines(conv, session, cwd)
        text = "".join(
            json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines
        )
        (folder / f"{session.session_id}.jsonl").write_bytes(text.encode("utf-8"))


def _session_lines(conv: _Conversation, session: _Session, cwd: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    for i, turn in enumerate(session.turns):
        as_assistant = turn.speaker == conv.speaker_b and conv.speaker_b != conv.speaker_a
        envelope: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session.session_id,
            "version": TRANSCRIPT_VERSION,
            "gitBranch": "",
            "type": "assistant" if as_assistant else "user",
        }
        if as_assistant:
            envelope["message"] = {
                "id": "msg_locomo_" + uuid.UUID(turn.uuid).hex[:24],
                "type": "message",
                "role": "assistant",
                "model": ASSISTANT_MODEL,
                "content": [{"type": "text", "text": turn.text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }
        else:
            envelope["message"] = {"role": "user", "content": turn.text}
        envelope["uuid"] = turn.uuid
        envelope["timestamp"] = _iso(session.start + timedelta(seconds=i))
        lines.append(envelope)
        parent = turn.uuid
    return lines


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
    path.write_bytes(text.encode("utf-8"))
