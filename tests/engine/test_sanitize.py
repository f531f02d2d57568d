"""Sanitizing rules (TRANSCRIPTS.md, "Sanitizing"), on fixtures written by the tests."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from engine.markers import CONTEXT_CLOSE, CONTEXT_OPEN, OWN_TOOL_PREFIX, SELF_PROMPT_MARKER
from engine.model import Author, CleanMessage, Message, TextBlock, ToolUse
from engine.sanitize import is_self_prompt, redact, sanitize, scrub_context, scrub_private
from engine.transcript_files import StreamState
from engine.transcripts import ParseResult, parse_file
from tests.engine.fixtures_transcripts import (
    SESSION,
    append_jsonl,
    assistant_lines,
    simple_session,
    text_block,
    tool_result_line,
    tool_use_block,
    tool_use_line,
    user_line,
    write_jsonl,
)

GIT_HASH = "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"
OWN_SEARCH = f"{OWN_TOOL_PREFIX}search_memory"
OTHER_SEARCH = "mcp__othermem__search_memory"


def _parse(tmp_path: Path, lines: list[dict[str, object]], state: StreamState) -> ParseResult:
    return parse_file(write_jsonl(tmp_path / f"{SESSION}.jsonl", lines), state=state)


def _run(tmp_path: Path, lines: list[dict[str, object]]) -> tuple[list[CleanMessage], Counter[str]]:
    state = StreamState()
    counts: Counter[str] = Counter()
    return sanitize(_parse(tmp_path, lines, state).messages, state, counts), counts


def _user(text: str, uuid: str = "u1") -> Message:
    return Message(
        uuid=uuid,
        session_id=SESSION,
        parent_uuid=None,
        kind="user",
        blocks=[TextBlock(text=text)],
        timestamp="2026-03-01T10:00:00.000Z",
    )


def _flag(state: StreamState) -> bool | None:
    """Read the flag through a call, so the type checker does not keep an earlier narrowing."""
    return state.self_transcript


# --- rule 1: our own MCP calls ----------------------------------------------------------------------------


def test_own_mcp_calls_and_results_bound_by_id_are_dropped_while_another_servers_same_tool_survives(
    tmp_path: Path,
) -> None:
    lines = [
        user_line("What did we decide about offsets?", uuid="u1"),
        *assistant_lines(
            [
                tool_use_block("t_own", OWN_SEARCH, {"query": "offsets"}),
                tool_use_block("t_other", OTHER_SEARCH, {"query": "offsets"}),
            ],
            message_id="msg_1",
            uuids=["a1", "a2"],
            parent="u1",
        ),
        tool_result_line("t_own", "recalled: offsets are bytes", uuid="r1", parent="a1"),
        tool_result_line("t_other", "other server says hi", uuid="r2", parent="a2"),
        tool_use_line("t_own2", OWN_SEARCH, {"query": "x"}, message_id="msg_2", uuid="a3"),
    ]
    state = StreamState()
    counts: Counter[str] = Counter()

    clean = sanitize(_parse(tmp_path, lines, state).messages, state, counts)

    assert [(c.uuid, c.text) for c in clean] == [
        ("u1", "What did we decide about offsets?"),
        ("a1", f"[Tool: {OTHER_SEARCH}]"),
        ("r2", f"[{OTHER_SEARCH} result]\nother server says hi"),
    ]
    assert not any("recalled" in c.text for c in clean)
    assert state.suppressed_tool_ids == {"t_own", "t_own2"}
    assert counts == Counter({"own_mcp_call": 2, "own_mcp_result": 1})


def test_own_result_arriving_in_a_later_import_is_dropped_through_the_saved_state(
    tmp_path: Path,
) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [tool_use_line("t_own", OWN_SEARCH, {"query": "q"}, message_id="msg_1", uuid="a1")],
    )
    state = StreamState()
    counts: Counter[str] = Counter()
    first = parse_file(path, state=state)
    assert sanitize(first.messages, state, counts) == []
    saved = state.to_json()

    append_jsonl(
        path,
        [
            tool_result_line("t_own", "memory hit", uuid="r1", parent="a1"),
            tool_result_line("t_never_seen", "kept output", uuid="r2", parent="a1"),
        ],
    )
    restored = StreamState.from_json(saved)
    second = parse_file(path, start=first.end_offset, state=restored)
    clean = sanitize(second.messages, restored, counts)

    assert [(c.uuid, c.text) for c in clean] == [("r2", "[tool result]\nkept output")]
    assert counts == Counter({"own_mcp_call": 1, "own_mcp_result": 1})


# --- rule 2: injected context -----------------------------------------------------------------------------


def test_injected_context_is_scrubbed_from_user_messages_but_kept_in_assistant_quotes(
    tmp_path: Path,
) -> None:
    injected = f"{CONTEXT_OPEN}\nEarlier: offsets are bytes.\n{CONTEXT_CLOSE}"
    lines = [
        user_line(f"{injected}\nWhy is the import slow?", uuid="u1"),
        *assistant_lines(
            [text_block(f"Our hooks wrap context in {CONTEXT_OPEN} tags.")],
            message_id="msg_1",
            uuids=["a1"],
            parent="u1",
        ),
        user_line(f"Only context: {CONTEXT_OPEN} rest is unclosed", uuid="u2", parent="a1"),
        user_line(injected, uuid="u3", parent="u2"),
    ]

    clean, counts = _run(tmp_path, lines)

    assert [(c.uuid, c.text) for c in clean] == [
        ("u1", "Why is the import slow?"),
        ("a1", f"Our hooks wrap context in {CONTEXT_OPEN} tags."),
        ("u2", "Only context:"),
    ]
    assert counts == Counter({"injected_context": 3, "empty_after_sanitize": 1})


def test_scrub_context_removes_every_block_and_an_unclosed_one_to_the_end() -> None:
    text = f"a {CONTEXT_OPEN}x{CONTEXT_CLOSE} b {CONTEXT_OPEN}y{CONTEXT_CLOSE} c {CONTEXT_OPEN} z"

    assert scrub_context(text) == ("a  b  c ", 3)
    assert scrub_context("no markers here") == ("no markers here", 0)


# --- rule 3: private --------------------------------------------------------------------------------------


def test_private_spans_become_a_mark_and_an_unclosed_one_redacts_to_the_end(
    tmp_path: Path,
) -> None:
    lines = [
        user_line("my pin is <private>4921</private>, and <private>more</private> ok", uuid="u1"),
        user_line("keep this <private> but not this\nnor this", uuid="u2", parent="u1"),
    ]

    clean, counts = _run(tmp_path, lines)

    assert [c.text for c in clean] == [
        "my pin is [private], and [private] ok",
        "keep this [private]",
    ]
    assert counts == Counter({"private": 3})
    assert scrub_private("no tags") == ("no tags", 0)


# --- rule 4: credentials ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("secret_text", "expected", "kind"),
    [
        (
            "key sk-ant-api03-Ab12Cd34Ef56Gh78Ij90KlMnOp here",
            "key [redacted:anthropic_key] here",
            "anthropic_key",
        ),
        (
            "key sk-proj-4f9A2b7C1d8E3f6G5h0J9k here",
            "key [redacted:openai_key] here",
            "openai_key",
        ),
        ("id AKIAIOSFODNN7EXAMPLE here", "id [redacted:aws_key] here", "aws_key"),
        (
            "tok ghp_0123456789abcdefghijABCDEFGHIJ012345 here",
            "tok [redacted:github_token] here",
            "github_token",
        ),
        (
            "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop here",
            "pat [redacted:github_token] here",
            "github_token",
        ),
        (
            "slack xoxb-1234567890-abcdefghij here",
            "slack [redacted:slack_token] here",
            "slack_token",
        ),
        (
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc123",
            "Authorization: Bearer [redacted:bearer]",
            "bearer",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nafter",
            "[redacted:private_key]\nafter",
            "private_key",
        ),
        (
            "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA (cut off)",
            "before\n[redacted:private_key]",
            "private_key",
        ),
        (
            "db postgres://admin:hunter2@db.internal:5432/app",
            "db postgres://admin:[redacted:url_password]@db.internal:5432/app",
            "url_password",
        ),
        ("DB_PASSWORD=hunter2", "DB_PASSWORD=[redacted:env_secret]", "env_secret"),
        (
            "export STRIPE_SECRET = 'abc def'\nNEXT=1",
            "export STRIPE_SECRET = '[redacted:env_secret]'\nNEXT=1",
            "env_secret",
        ),
        ("  API_KEY=xyz123", "  API_KEY=[redacted:env_secret]", "env_secret"),
        ("TOKEN=abc", "TOKEN=[redacted:env_secret]", "env_secret"),
        (
            "run GITHUB_TOKEN=abc123 ./deploy.sh",
            "run GITHUB_TOKEN=[redacted:env_secret] ./deploy.sh",
            "env_secret",
        ),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG",
            "aws_secret_access_key = [redacted:env_secret]",
            "env_secret",
        ),
    ],
)
def test_each_credential_kind_is_redacted_and_counted(
    secret_text: str, expected: str, kind: str
) -> None:
    text, counts = redact(secret_text)

    assert text == expected
    assert counts == Counter({f"redacted:{kind}": 1})


def test_git_hashes_and_ordinary_words_survive_redaction() -> None:
    prose = (
        f"commit {GIT_HASH} fixed it\n"
        "the bearer token lives in the keychain; Bearer authentication is used\n"
        "a task-runner-configuration-file-name and the sk-learn docs\n"
        "MAX_TOKENS=4096\nTOKENIZERS_PARALLELISM=false\n"
        'API_KEY = os.environ["API_KEY"]\nTOKEN=$GITHUB_TOKEN\n'
        "password reset flow; see https://example.com:8080/path?a=b@c\n"
        "git@github.com:org/repo.git"
    )

    text, counts = redact(prose)

    assert text == prose
    assert counts == Counter()
    # Positive control: the same text with one real key in it is redacted.
    leaked, leak_counts = redact(prose + "\nOPENAI_API_KEY=sk-4f9A2b7C1d8E3f6G5h0J9k2L")
    assert leaked.endswith("OPENAI_API_KEY=[redacted:openai_key]")
    assert GIT_HASH in leaked
    assert leak_counts == Counter({"redacted:openai_key": 1})


def test_secrets_are_redacted_before_markers_and_results_are_cut(tmp_path: Path) -> None:
    token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
    command = "echo " + "word " * 20 + f"&& curl -H 'Authorization: Bearer {token}' https://api.x"
    lines = [
        tool_use_line("t1", "Bash", {"command": command}, message_id="msg_1", uuid="a1"),
        tool_result_line("t1", "x" * 3990 + f" {token}", uuid="r1", parent="a1"),
        tool_use_line(
            "t2", "Bash", {"command": f"gh auth login {token}"}, message_id="m2", uuid="a2"
        ),
    ]
    state = StreamState()
    counts: Counter[str] = Counter()
    parsed = _parse(tmp_path, lines, state)
    # Parsing alone records the raw command; sanitizing rewrites it before the state is persisted.
    assert state.tool_commands["t2"] == f"gh auth login {token}"

    clean = sanitize(parsed.messages, state, counts)

    # 105 characters of echo, then "&& curl -H" ends at 115; the next word would be cut at 120.
    assert clean[0].text == "[Bash: echo " + "word " * 20 + "&& curl -H…]"
    # The key is redacted first (" [redacted:github_token]"), then the body is cut at 4000 = 3990 + 10.
    assert clean[1].text.endswith("\n" + "x" * 3990 + " [redacted […]")
    assert clean[2].text == "[Bash: gh auth login [redacted:github_token]]"
    assert state.tool_commands["t2"] == "gh auth login [redacted:github_token]"
    assert not any("ghp_0123" in c.text for c in clean)
    assert "ghp_0123" not in state.to_json()
    assert counts == Counter({"redacted:bearer": 1, "redacted:github_token": 2})


def test_credentials_in_a_message_are_redacted_and_counted_per_kind(tmp_path: Path) -> None:
    lines = [
        user_line(
            f"deploy with AKIAIOSFODNN7EXAMPLE and postgres://me:pw1@h/db then tag {GIT_HASH}",
            uuid="u1",
        )
    ]

    clean, counts = _run(tmp_path, lines)

    assert clean[0].text == (
        "deploy with [redacted:aws_key] and postgres://me:[redacted:url_password]@h/db "
        f"then tag {GIT_HASH}"
    )
    assert counts == Counter({"redacted:aws_key": 1, "redacted:url_password": 1})


# --- rule 5: self-transcripts -----------------------------------------------------------------------------


def test_a_stream_started_by_our_own_prompt_is_flagged_and_yields_nothing(tmp_path: Path) -> None:
    self_state = StreamState()
    self_counts: Counter[str] = Counter()
    self_lines = simple_session(prompt=f"{SELF_PROMPT_MARKER}\nExtract decisions from: ...")
    self_parsed = parse_file(write_jsonl(tmp_path / "self.jsonl", self_lines), state=self_state)

    normal_state = StreamState()
    normal_counts: Counter[str] = Counter()
    normal_parsed = parse_file(
        write_jsonl(tmp_path / "n.jsonl", simple_session()), state=normal_state
    )

    assert sanitize(self_parsed.messages, self_state, self_counts) == []
    assert self_state.self_transcript is True
    assert self_counts == Counter({"self_transcript_message": 4})
    assert self_state.tool_commands == {}
    # Control: the same session with a person's prompt keeps all four messages.
    normal = sanitize(normal_parsed.messages, normal_state, normal_counts)
    assert [c.ordinal for c in normal] == [0, 1, 2, 3]
    assert normal_state.self_transcript is False
    assert normal_counts == Counter()


def test_self_transcript_decision_skips_command_wrappers_and_holds_for_later_imports() -> None:
    state = StreamState()
    counts: Counter[str] = Counter()
    wrapper = _user("<command-name>/clear</command-name>", "c1")

    first = sanitize([wrapper], state, counts)
    assert _flag(state) is None
    assert [c.uuid for c in first] == ["c1"]

    second = sanitize([_user(f"  {SELF_PROMPT_MARKER} summarise", "u1")], state, counts)
    third = sanitize([_user("a later ordinary line", "u2")], state, counts)

    assert second == []
    assert third == []
    assert _flag(state) is True
    assert counts == Counter({"self_transcript_message": 2})
    assert is_self_prompt(f"\n{SELF_PROMPT_MARKER} x") is True
    assert is_self_prompt(f"please explain {SELF_PROMPT_MARKER}") is False


# --- output -----------------------------------------------------------------------------------------------


def test_clean_messages_carry_author_timestamp_and_ordinals_continuing_across_calls() -> None:
    state = StreamState(next_ordinal=5)
    counts: Counter[str] = Counter()
    tool = Message(
        uuid="a1",
        session_id=SESSION,
        parent_uuid="u1",
        kind="assistant",
        blocks=[ToolUse(id="t1", name="Read", input={"file_path": "/p/a/b.py"})],
        timestamp=None,
    )
    messages = [_user("hello"), tool]

    clean = sanitize(messages, state, counts)

    assert clean == [
        CleanMessage(
            uuid="u1",
            session_id=SESSION,
            author=Author.USER,
            text="hello",
            timestamp="2026-03-01T10:00:00.000Z",
            ordinal=5,
        ),
        CleanMessage(
            uuid="a1",
            session_id=SESSION,
            author=Author.ASSISTANT,
            text="[Read: a/b.py]",
            timestamp=None,
            ordinal=6,
        ),
    ]
    assert state.next_ordinal == 7
    assert state.tool_commands == {"t1": "a/b.py"}


def test_sanitize_leaves_the_parsed_messages_unchanged() -> None:
    original = _user(f"{CONTEXT_OPEN}ctx{CONTEXT_CLOSE}question")
    own = Message(
        uuid="a1",
        session_id=SESSION,
        parent_uuid=None,
        kind="assistant",
        blocks=[
            TextBlock(text="asking memory"),
            ToolUse(id="t1", name=OWN_SEARCH, input={"query": "q"}),
        ],
        timestamp=None,
    )

    clean = sanitize([original, own], StreamState(), Counter())

    assert [c.text for c in clean] == ["question", "asking memory"]
    assert original.blocks == [TextBlock(text=f"{CONTEXT_OPEN}ctx{CONTEXT_CLOSE}question")]
    assert len(own.blocks) == 2
