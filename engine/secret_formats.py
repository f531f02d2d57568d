"""The credential formats that sanitizer version 4 added, as data: for each kind, its forms.

A form is (head, prefix, tail): a regex, a literal, a regex. Every match of a form holds its prefix, so
the prefixes are version 4's trigger texts (`engine.sanitize.VERSION_TRIGGERS`): a corpus that holds
none of them reads under version 4 exactly as under version 3. Standard library only, so that the
sanitizer names the triggers without importing detect-secrets; `engine.secrets` builds the rules.
"""

from __future__ import annotations

# The sanitizer version these formats came with.
SINCE_VERSION = 4
ALNUM = "[A-Za-z0-9]"
Form = tuple[str, str, str]


def _forms(*prefixes: str, tail: str, head: str = "") -> tuple[Form, ...]:
    return tuple((head, prefix, tail) for prefix in prefixes)


_DOPPLER_KEY = f"{ALNUM}{{40,44}}"
# `docker login -u me -p PASS` (`--password PASS` is an assignment in every version): the value only.
_LOGIN_PASSWORD = (
    r"""[^\n|;&]*?[ \t]-p(?:[ \t]+|=)?"""
    r"""(?:'(?P<q>[^'\n]+)'|"(?P<d>[^"\n]+)"|(?P<t>[^\s'"]\S*))"""
)

VERSION_4_FORMS: dict[str, tuple[Form, ...]] = {
    "groq_key": _forms("gsk_", tail=f"{ALNUM}{{48,}}"),
    "replicate_token": _forms("r8_", tail=f"{ALNUM}{{37}}"),
    "xai_key": _forms("xai-", tail=f"{ALNUM}{{60,}}"),
    "perplexity_key": _forms("pplx-", tail=f"{ALNUM}{{40,}}"),
    "fireworks_key": _forms("fw_", tail=f"{ALNUM}{{24}}(?!{ALNUM})"),
    "langsmith_key": _forms("lsv2_pt_", "lsv2_sk_", tail="[a-f0-9]{32}_[a-f0-9]{10}"),
    "docker_token": _forms("dckr_pat_", "dckr_oat_", tail=r"[A-Za-z0-9_\-]{20,}"),
    "tailscale_key": _forms("tskey-", tail=r"[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]{20,}"),
    "atlassian_token": _forms("ATATT3", tail=r"[A-Za-z0-9_\-=]{50,}"),
    "bitbucket_token": _forms("ATBB", tail=f"{ALNUM}{{28,}}"),
    "grafana_token": (
        *_forms("glsa_", tail=f"{ALNUM}{{32}}_[A-Fa-f0-9]{{8}}"),
        *_forms("glc_", tail="[A-Za-z0-9+/]{32,}={0,2}"),
    ),
    "sentry_token": (
        *_forms("sntrys_eyJ", tail=r"[A-Za-z0-9+/=_\-]{40,}"),
        *_forms("sntryu_", tail="[a-f0-9]{64}"),
    ),
    "planetscale_token": _forms(
        "pscale_tkn_", "pscale_pw_", "pscale_oauth_", tail=r"[A-Za-z0-9_\-.]{32,64}"
    ),
    "fly_token": _forms("fm1_", "fm2_", "fm1r_", "fm1a_", tail="[A-Za-z0-9+/]{40,}={0,2}"),
    "figma_token": _forms("figd_", tail=r"[A-Za-z0-9_\-]{40,}"),
    "pulumi_token": _forms("pul-", tail="[a-f0-9]{40}"),
    "newrelic_key": (
        *_forms("NRAK-", tail="[A-Z0-9]{27}"),
        *_forms("NRJS-", tail="[a-f0-9]{19}"),
        *_forms("NRII-", tail=r"[A-Za-z0-9_\-]{32}"),
    ),
    "notion_token": (
        *_forms("ntn_", tail=f"{ALNUM}{{40,}}"),
        *_forms("secret_", tail=f"{ALNUM}{{43}}(?!{ALNUM})"),
    ),
    "buildkite_token": _forms("bkua_", tail="[a-f0-9]{40}"),
    "terraform_token": _forms(".atlasv1.", head=f"{ALNUM}{{14}}", tail=r"[A-Za-z0-9_\-=]{60,}"),
    "onepassword_token": _forms("ops_eyJ", tail="[A-Za-z0-9+/]{60,}={0,2}"),
    "heroku_key": _forms("HRKU-", tail=r"[A-Za-z0-9_\-]{40,}"),
    "doppler_token": (
        *_forms("dp.st.", tail=rf"(?:[A-Za-z0-9_\-]{{1,40}}\.)?{_DOPPLER_KEY}"),
        *_forms("dp.pt.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit.", tail=_DOPPLER_KEY),
    ),
    "registry_password": tuple(
        ("", f"{tool} login", _LOGIN_PASSWORD)
        for tool in ("docker", "podman", "nerdctl", "buildah", "skopeo", "helm registry")
    ),
    "discord_webhook": _forms(
        "discord", tail=r"(?:app)?\.com/api/webhooks/\d{5,30}/(?P<t>[A-Za-z0-9_\-]{60,})"
    ),
}
VERSION_4_KINDS = tuple(VERSION_4_FORMS)
# The texts without which no version 4 rule can match.
VERSION_4_TRIGGERS = tuple(
    dict.fromkeys(prefix for forms in VERSION_4_FORMS.values() for _, prefix, _ in forms)
)
