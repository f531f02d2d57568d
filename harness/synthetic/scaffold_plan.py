"""Placing the scaffolding the sanitizer must handle, session by session.

Own and foreign MCP calls, injected context, private spans, credentials, subagents, self-transcript
excerpts and echoed roster questions.
"""

from __future__ import annotations

import random
import string

from harness.synthetic.config import CREDENTIAL_KINDS, SyntheticError, derive_rng
from harness.synthetic.lines import MODERN, OLDER, token
from harness.synthetic.plan import Plan, snippets_before


def credential(kind: str, rng: random.Random) -> str:
    """A fake but format-valid credential of `kind`."""
    if kind == "anthropic_key":
        return "sk-ant-api03-" + token(rng, 93, string.ascii_letters + string.digits + "-_") + "AA"
    if kind == "aws_access_key":
        return "AKIA" + token(rng, 16, string.ascii_uppercase + "234567")
    if kind == "github_token":
        return "ghp_" + token(rng, 36)
    if kind == "url_password":
        return (
            f"postgres://{rng.choice(('app_rw', 'svc_jobs', 'reporting'))}:{token(rng, 18)}@"
            f"{rng.choice(('db.staging.internal', '10.0.4.12', 'pg-staging.acme.dev'))}:5432/"
            f"{rng.choice(('jobs', 'ledger', 'app'))}"
        )
    if kind == "env_secret":
        return "SECRET_KEY=" + token(rng, 48, "0123456789abcdef")
    if kind == "private_key":
        label = rng.choice(("RSA PRIVATE KEY", "OPENSSH PRIVATE KEY"))
        body = [token(rng, 64, string.ascii_letters + string.digits + "+/") for _ in range(6)]
        body.append(token(rng, 24, string.ascii_letters + string.digits + "+/") + "==")
        return "\n".join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----"])
    msg = f"unknown credential kind {kind!r}; choose one of {list(CREDENTIAL_KINDS)}"
    raise SyntheticError(msg)


def plan_scaffolding(plan: Plan) -> None:
    """MCP calls, context blocks, sentinel quotes, private spans, credentials and subagents."""
    config = plan.config
    rng = derive_rng(config.seed, "scaffolding")
    work = [s.index for s in plan.sessions if s.role == "work"]
    for _ in range(config.own_mcp_calls):
        tool = "search_memory" if rng.random() < 0.75 else "get_chunk"
        plan.sessions[rng.choice(work)].own_mcp.append(tool)
    for _ in range(config.other_mcp_calls):
        plan.sessions[rng.choice(work)].other_mcp += 1
    for _ in range(config.context_blocks):
        open_ = [i for i in work if plan.sessions[i].context_blocks < 2] or work
        plan.sessions[rng.choice(open_)].context_blocks += 1
    for _ in range(config.sentinel_quotes):
        plan.sessions[rng.choice(work)].sentinel += 1
    for _ in range(config.private_closed):
        plan.sessions[rng.choice(work)].private_closed += 1
    for _ in range(config.private_unclosed):
        plan.sessions[rng.choice(work)].private_unclosed += 1
    for kind in CREDENTIAL_KINDS:
        for _ in range(config.credentials_per_kind):
            plan.sessions[rng.choice(work)].credentials.append((kind, credential(kind, rng)))
    formats = {MODERN.version: False, OLDER.version: False}
    for i in work:
        s = plan.sessions[i]
        if rng.random() < config.subagent_share:
            s.subagent = True
            formats[s.fmt.version] = True
    if config.subagent_share > 0:
        for version, seen in sorted(formats.items()):
            if not seen:
                first = next((i for i in work if plan.sessions[i].fmt.version == version), None)
                if first is not None:
                    plan.sessions[first].subagent = True


def plan_self(plan: Plan) -> None:
    """The transcript excerpt each self-transcript session asks to have facts extracted from."""
    rng = derive_rng(plan.config.seed, "self")
    for s in plan.sessions:
        if s.role != "self":
            continue
        lines = snippets_before(plan, s.index, 3, rng)
        s.self_excerpt = "\n".join(f"assistant: {x}" for x in lines)


def plan_echoes(plan: Plan) -> None:
    """The roster questions each echo session quotes (drawn after the rosters exist)."""
    rng = derive_rng(plan.config.seed, "echoes")
    for s in plan.sessions:
        if s.role != "echo":
            continue
        cwd = plan.cwd(s.project)
        pool = [
            (q["qid"], q["text"])
            for name in ("receipts", "decisions", "multihop", "temporal")
            for q in plan.rosters[name]["questions"]
            if q["scope"] == [cwd]
        ]
        s.echo = rng.sample(pool, min(plan.config.echo_questions, len(pool)))
