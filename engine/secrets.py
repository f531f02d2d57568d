"""Where the credentials in a text are: spans found by detect-secrets' rules, ours, and keyed assignments.

The sanitizer (`engine.sanitize.redact`) replaces every span this module finds before anything is chunked
or stored. The rules come from three places, tried in this order of precedence:

1. **detect-secrets** (Yelp, https://github.com/Yelp/detect-secrets, Apache-2.0, pinned at 1.5.0 in
   pyproject.toml). It is a maintained rule set, used in pre-commit hooks across many projects, and its
   plugins are plain compiled regular expressions we can run on a string. We use the `denylist` of these
   plugins: AWSKey, Artifactory, AzureStorageKey, BasicAuth, Cloudant, DiscordBotToken, GitHubToken,
   GitLabToken, IbmCloudIam, IbmCosHmac, JwtToken (with its own `is_formally_valid` check), Mailchimp, Npm,
   OpenAI, PrivateKey (its headers; a block is redacted to its END line), PypiToken, SendGrid, Slack,
   Softlayer, SquareOAuth, Stripe, TelegramBotToken and TwilioKey. Its keyword list seeds the assignment
   rule (`engine.secret_keys`) and its base64 Shannon entropy measures assigned values. We never call
   `analyze_line` or scan a file: those read the package's global settings and may call a provider's
   verification endpoint over the network. Not used: IPPublicDetector (an address is no credential), and
   the free-standing high-entropy string plugins, which would redact every commit hash and sha256.
2. **Formats detect-secrets 1.5.0 does not know** (`_EXTRA_TOKENS`): Anthropic `sk-ant-`, OpenAI
   `sk-proj-`/`sk-…`, GitHub `github_pat_`, Google `AIza…`/`ya29.`/`GOCSPX-`, Hugging Face `hf_`, Stripe
   test and webhook keys, npm `npm_`, Slack app tokens, Mailgun, DigitalOcean, Shopify, Databricks,
   Vault, age, Linear, Postman, Supabase, Azure AD client secrets; and structures: PEM blocks, passwords
   in URLs (also ones containing `/`), `Bearer`/`Basic` credentials, `Authorization:` headers, `curl -u
   user:pass`, `mysql -p…`/`sshpass -p`, `.netrc` lines. Sanitizer version 4 added 25 formats, each
   built from its literal prefixes, which are the version's trigger texts (`engine.secret_formats`:
   Groq, Replicate, xAI, Perplexity, Fireworks, LangSmith, Docker, Tailscale, Atlassian, Bitbucket,
   Grafana, Sentry, PlanetScale, Fly.io, Figma, Pulumi, New Relic, Notion, Buildkite, Terraform Cloud,
   1Password, Heroku, Doppler, a registry login's `-p`, Discord webhooks); version 5 added 34 more the
   same way: RubyGems, Clojars, Contentful, Dynatrace, EasyPost, Flutterwave, Mapbox, Prefect, ReadMe,
   Brevo, Shippo, Square, Hugging Face organisations, Typeform, Frame.io, Alibaba, Adobe, Linear OAuth,
   Okta's `SSWS`; passwords given on a command line (`aws configure set`, `keytool`, `redis-cli`,
   `az`/`oc`/`cf login`, `smbclient -U`, `htpasswd -b`, `SSHPASS=`, `gh secret set --body`,
   `ssh-keygen -N`, `ConvertTo-SecureString`) or piped into one (`echo PASS | sudo -S`,
   `--password-stdin`, `--with-token`); `auth=(user, PASS)`, ODBC `Pwd=`; literals set into the
   environment under a secret's name (`os.environ[…] = …`, `setenv(…)`); XML `<password>`. Versions 6
   to 8 added more of both (`engine.secret_formats_v7`, `engine.secret_formats_v8`); version 9 the
   output of a call that prints a stored secret, below its tool result's header (`op read`, `vault kv
   get`, `cat ~/.netrc`: `engine.secret_formats_v9`; `find_outputs` finds those alone), and version 10
   that of a call that prints a tool's own session or API token (`heroku auth:token`, `bw unlock`:
   `engine.secret_formats_v10`).
3. **Keyed assignments** (`engine.secret_keys`): a value assigned to a name that names a secret.

A token match is widened to the whole token it sits in, so a 99-character Stripe key whose rule reads 24
characters is redacted whole. Text is scanned in a view where the escapes `\\n`, `\\r` and `\\t` read as
whitespace (same length, so offsets hold): a secret echoed inside JSON-escaped output (`"…\\nPASSWORD=x\\n…"`)
is found like one on its own line. Overlapping spans are merged; the earliest (then longest, then
highest-precedence) rule names the merged span's kind.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from engine.render import opened_markers
from engine.secret_formats import COMMAND_PASSWORDS, FORMS, KIND_VERSION, RUN_FORMS
from engine.secret_formats_v11 import TOOL_OUTPUT_KINDS
from engine.secret_keys import assignments, looks_random, names_secret
from engine.secret_values import FORM_VALID, has_digit, has_letter_and_digit, literal

DETECT_SECRETS_VERSION = "1.5.0"  # the pin in pyproject.toml; SANITIZE_VERSION moves with it


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One credential: `text[start:end]` is to be replaced; `kind` names it in `[redacted:<kind>]`."""

    start: int
    end: int
    kind: str

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            msg = f"a finding needs 0 <= start < end, got start={self.start} end={self.end}"
            raise ValueError(msg)


def find_secrets(text: str) -> list[Finding]:
    """Every credential in `text`: non-overlapping findings sorted by start."""
    return _find(text, _DETECTORS, opened=True)


def find_outputs(text: str) -> list[Finding]:
    """The bodies of tool results in `text` (rendered: header, then body) whose call printed a stored
    secret or a tool's own token (`engine.secret_formats_v9`, `_v10`), as `find_secrets` finds them
    among the rest."""
    if "[" not in text:
        return []
    return _find(text, tuple(d for d in _DETECTORS if d[0] in _OUTPUTS), opened=False)


def _find(text: str, detectors: Iterable[tuple[str, _Spans]], *, opened: bool) -> list[Finding]:
    """What `detectors` find in `text`'s scanned view, merged (`_merged`). Stored text holds each tool
    call's command in a marker and a result header (`[Bash: vault login s.x]`): the detectors see its
    argument on a line of its own, as the import saw the command (versions 9 and 10's, which read a header,
    see it as it is), so that `doctor` and `forget --credentials` find there what a fresh import
    redacts (`opened`: some of `detectors` read that view). Redacting twice is redacting once:
    `[redacted:lftp_password]` holds no `user:password`."""
    if not text:
        return []
    view = _ESCAPES.sub(_blank_escape, text)
    marked = opened_markers(text, view) if opened else view
    found = [
        (start, end, rank, kind)
        for rank, (kind, spans) in enumerate(detectors)
        for start, end in spans(view if kind in _OUTPUTS else marked)
    ]
    if "[redacted:" in text:  # one that starts inside a redaction starts after it
        past = {i: m.end() for m in _REDACTED.finditer(text) for i in range(m.start() + 1, m.end())}
        found = [(past.get(start, start), end, rank, kind) for start, end, rank, kind in found]
    return _merged(f for f in found if f[0] < f[1])


def _merged(spans: Iterable[tuple[int, int, int, str]]) -> list[Finding]:
    """Findings `(start, end, rank, kind)` made non-overlapping, sorted by start: one that starts
    inside another is part of it (the longer, then the lower rank, keeps its kind)."""
    found = sorted(spans, key=lambda f: (f[0], -f[1], f[2]))
    merged: list[Finding] = []
    for start, end, _, kind in found:
        if merged and start < merged[-1].end:
            last = merged[-1]
            if end > last.end:
                merged[-1] = Finding(start=last.start, end=end, kind=last.kind)
            continue
        merged.append(Finding(start=start, end=end, kind=kind))
    return merged


# ---------------------------------------------------------------------------------------------------------
# The scanned view, token widening
# ---------------------------------------------------------------------------------------------------------

_ESCAPES = re.compile(r"\\+[nrt]")
_REDACTED = re.compile(r"\[redacted:[a-z0-9_]+\]")
_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_BASE64_CHARS = _TOKEN_CHARS + "+/="
_JWT_CHARS = _BASE64_CHARS + "."


def _blank_escape(match: re.Match[str]) -> str:
    """`\\n` -> ` \\n` (same length): the escape ends a line in the view, as it does once decoded."""
    width = len(match.group(0))
    return " " * width if match.group(0).endswith("t") else " " * (width - 1) + "\n"


def _widen(view: str, start: int, end: int, chars: str) -> tuple[int, int]:
    """Grow `[start, end)` over neighbouring `chars`, so that no part of the token is left behind."""
    while start > 0 and view[start - 1] in chars:
        start -= 1
    while end < len(view) and view[end] in chars:
        end += 1
    return start, end


# ---------------------------------------------------------------------------------------------------------
# detect-secrets' regex plugins and our token formats
# ---------------------------------------------------------------------------------------------------------

_Spans = Callable[[str], Iterable[tuple[int, int]]]


@dataclass(frozen=True, kw_only=True)
class _TokenRule:
    """Compiled patterns of one kind; the secret is the union of a match's groups (or all of it)."""

    patterns: tuple[re.Pattern[str], ...]
    chars: str = _TOKEN_CHARS  # what a match widens over
    valid: Callable[[str], bool] | None = None  # a check on the matched text
    # A literal each pattern's every match holds (one per pattern), or none: a text without it is
    # not scanned by that pattern (`in` is far quicker than a regex pass).
    needles: tuple[str, ...] = ()
    # For patterns that read, after a head, a run of characters that are not stops and then what
    # they look for (a password after a command's option, a JWT's dot): each one's head as a pattern,
    # and the stops as characters or as a pattern (`_matches`).
    heads: tuple[re.Pattern[str], ...] = ()
    stops: str | re.Pattern[str] = ""

    def spans(self, view: str) -> Iterator[tuple[int, int]]:
        for i, pattern in enumerate(self.patterns):
            if self.needles and self.needles[i] not in view:
                continue
            head = self.heads[i] if self.heads else None
            covered = (0, 0)  # the last span yielded: a match inside it widens to inside it
            for match in _matches(pattern, view, head, self.stops):
                # a value set under a name (a `key` group) counts only when the name names a secret
                if "key" in match.re.groupindex and not names_secret(match.group("key")):
                    continue
                start, end = _secret_part(match)
                if covered[0] <= start and end <= covered[1]:
                    continue  # one run of 8,000 keys: widened once, not 8,000 times
                if start >= end or (self.valid is not None and not self.valid(view[start:end])):
                    continue
                covered = _widen(view, start, end, self.chars)
                yield covered


def _matches(
    pattern: re.Pattern[str],
    view: str,
    head: re.Pattern[str] | None,
    stops: str | re.Pattern[str],
) -> Iterator[re.Match[str]]:
    """`pattern.finditer(view)`; with a `head`, for a pattern that is the head, then a run of
    characters that are not stops (the characters in `stops`, or what a `stops` pattern matches),
    then what it looks for, the same matches in linear time.

    finditer tries every head, and one after which nothing is found reads to the end of its run: on a
    line that names a command thousands of times that is quadratic (`"keytool -a b " * 20000`, 260 KB,
    took 41 s). A later head that ends before the same stop reads a part of that run and fails too, so
    it is passed over. Where `head` has a group named `run`, only the heads it matches are such
    (`mysql`'s, beside `sshpass`'s); the others are tried as finditer tries them.
    """
    if head is None:
        yield from pattern.finditer(view)
        return
    stop = stops if isinstance(stops, re.Pattern) else re.compile(f"[{re.escape(stops)}]")
    grouped = "run" in head.groupindex
    pos, dead_until = 0, -1
    while (found := head.search(view, pos)) is not None:
        start = found.start()
        run = not grouped or found.group("run") is not None
        dead = run and found.end() <= dead_until
        match = None if dead else pattern.match(view, start)
        if match is None:
            if run and not dead:  # nothing after it in its run: nor after the next heads
                after = stop.search(view, found.end())
                dead_until = len(view) if after is None else after.start()
            pos = start + 1
            continue
        yield match
        pos = max(match.end(), start + 1)


def _secret_part(match: re.Match[str]) -> tuple[int, int]:
    """The groups' union when the pattern has groups (they hold the secret; a `key` or `quote` group
    holds the name it is set under), else the match less its delimiters (Artifactory's patterns
    include the space or quote around the token)."""
    named = match.re.groupindex
    around = {named[n] for n in ("key", "quote") if n in named}
    groups = [i for i in range(1, (match.re.groups or 0) + 1) if i not in around]
    spans = [match.span(i) for i in groups if match.group(i)]
    if spans:
        return min(s for s, _ in spans), max(e for _, e in spans)
    start, end = match.span()
    text = match.group(0)
    lead = len(text) - len(text.lstrip(' \t\n=:"'))
    trail = len(text) - len(text.rstrip(' \t\n"'))
    return start + lead, end - trail


def _jwt(token: str) -> bool:
    return bool(JwtTokenDetector.is_formally_valid(token))


def _plugin(
    plugin: type[RegexBasedDetector],
    *,
    chars: str = _TOKEN_CHARS,
    valid: Callable[[str], bool] | None = None,
    needles: tuple[str, ...] = (),
    heads: tuple[str, ...] = (),
    stops: str | re.Pattern[str] = "",
) -> _TokenRule:
    """A rule from one detect-secrets plugin's compiled `denylist` (`needles`, `heads` (as literals)
    and `stops`: as for `_TokenRule`)."""
    # Every plugin sets `denylist` as a class attribute (the base class only declares a property).
    patterns: tuple[re.Pattern[str], ...] = tuple(vars(plugin)["denylist"])
    if needles and (
        len(needles) != len(patterns)
        or not all(n in p.pattern.replace("\\", "") for n, p in zip(needles, patterns, strict=True))
    ):
        msg = f"{plugin.__name__}: each needle must be a literal of its pattern, one per pattern"
        raise ValueError(msg)
    return _TokenRule(
        patterns=patterns,
        chars=chars,
        valid=valid,
        needles=needles,
        heads=_rx(*map(re.escape, heads)),
        stops=stops,
    )


def _rx(*patterns: str, flags: int = 0) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, flags) for p in patterns)


# Our token formats; `(?<![\w-])` keeps a key from starting inside a longer word.
_B = r"(?<![A-Za-z0-9_\-])"
_EXTRA_TOKENS: dict[str, _TokenRule] = {
    "anthropic_key": _TokenRule(patterns=_rx(rf"{_B}sk-ant-[A-Za-z0-9_\-]{{20,}}")),
    "openai_key": _TokenRule(
        patterns=_rx(rf"{_B}sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{{20,}}"),
        valid=has_letter_and_digit,
    ),
    "github_token": _TokenRule(
        patterns=_rx(rf"{_B}github_pat_[A-Za-z0-9_]{{22,}}", rf"{_B}gh[pousr]_[A-Za-z0-9]{{30,}}")
    ),
    "google_api_key": _TokenRule(patterns=_rx(rf"{_B}AIza[0-9A-Za-z_\-]{{35}}")),
    "google_oauth": _TokenRule(
        patterns=_rx(rf"{_B}ya29\.[0-9A-Za-z_\-]{{20,}}", rf"{_B}GOCSPX-[0-9A-Za-z_\-]{{20,}}"),
        chars=_TOKEN_CHARS + ".",
    ),
    "huggingface_token": _TokenRule(patterns=_rx(rf"{_B}hf_[A-Za-z0-9]{{30,}}")),
    "stripe_key": _TokenRule(
        patterns=_rx(
            rf"{_B}[rs]k_(?:live|test)_[0-9A-Za-z]{{10,}}", rf"{_B}whsec_[A-Za-z0-9]{{24,}}"
        )
    ),
    "npm_token": _TokenRule(patterns=_rx(rf"{_B}npm_[A-Za-z0-9]{{36}}")),
    "slack_token": _TokenRule(
        patterns=_rx(
            rf"{_B}xox[abposr]-[A-Za-z0-9\-]{{10,}}", rf"{_B}xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"
        ),
        valid=has_digit,
    ),
    "mailgun_key": _TokenRule(patterns=_rx(rf"{_B}key-[0-9a-f]{{32}}")),
    "digitalocean_token": _TokenRule(patterns=_rx(rf"{_B}do[opr]_v1_[a-f0-9]{{64}}")),
    "shopify_token": _TokenRule(patterns=_rx(rf"{_B}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{{32}}")),
    "databricks_token": _TokenRule(patterns=_rx(rf"{_B}dapi[a-f0-9]{{32}}")),
    "vault_token": _TokenRule(patterns=_rx(rf"{_B}hv[sb]\.[A-Za-z0-9_\-]{{24,}}")),
    "age_secret_key": _TokenRule(patterns=_rx(r"AGE-SECRET-KEY-1[0-9A-Z]{58}")),
    "linear_key": _TokenRule(patterns=_rx(rf"{_B}lin_api_[A-Za-z0-9]{{40}}")),
    "postman_key": _TokenRule(patterns=_rx(rf"{_B}PMAK-[a-f0-9]{{24}}-[a-f0-9]{{34}}")),
    "supabase_token": _TokenRule(patterns=_rx(rf"{_B}sbp_[a-f0-9]{{40}}")),
    "azure_client_secret": _TokenRule(
        patterns=_rx(rf"{_B}[A-Za-z0-9_~.]{{3}}\dQ~[A-Za-z0-9_~.\-]{{31,34}}"),
        chars=_TOKEN_CHARS + "~.",
    ),
}


def _prefixed(kind: str) -> _TokenRule:
    """The rule of one format of a later version (`engine.secret_formats`): each form's head, its
    literal prefix, its tail; the prefixes are the rule's needles, so a text without one is not
    scanned."""
    forms = FORMS[kind]
    patterns = _rx(*(f"{_B}{head}{re.escape(prefix)}{tail}" for head, prefix, tail in forms))
    stops = RUN_FORMS.get(kind, "")
    return _TokenRule(
        patterns=patterns,
        chars=_FORM_CHARS.get(kind, _TOKEN_CHARS),
        valid=FORM_VALID.get(kind),
        needles=tuple(prefix for _, prefix, _ in forms),
        heads=_rx(*(f"{_B}{re.escape(prefix)}{_word_end(tail)}" for _, prefix, tail in forms))
        if stops
        else (),
        stops=stops,
    )


# How a tail may start by ending the command's name (`sqlcmd\b`, `mongo\w*\b`, `xfreerdp\d?\b`):
# each reads one way only.
_WORD_ENDS = (r"\w*\b", r"\d?\b", r"\b")


def _word_end(tail: str) -> str:
    """The start of `tail` that ends the command's name, as part of its head: a prefix inside a longer
    name (`ldapsearch` in `ldapsearchx`) is then no head, and cannot pass over a later one in its run."""
    return next((end for end in _WORD_ENDS if tail.startswith(end)), "")


# What such a match widens over, where not `_TOKEN_CHARS` ("" for a password on a command line, which
# is exactly its group), and the check on its text, if any.
_FORM_CHARS = {
    "atlassian_token": _TOKEN_CHARS + "=",
    "grafana_token": _BASE64_CHARS,
    "sentry_token": _BASE64_CHARS,
    "planetscale_token": _TOKEN_CHARS + ".",
    "fly_token": _BASE64_CHARS,
    "terraform_token": _TOKEN_CHARS + ".=",
    "onepassword_token": _BASE64_CHARS,
    "doppler_token": _TOKEN_CHARS + ".",
    "dynatrace_token": _TOKEN_CHARS + ".",
    "mapbox_token": _TOKEN_CHARS + ".",
    "typeform_token": _TOKEN_CHARS + ".=",
    "frameio_token": _TOKEN_CHARS + "=",
    "jfrog_token": _BASE64_CHARS,
    **dict.fromkeys(COMMAND_PASSWORDS, ""),
    **dict.fromkeys(TOOL_OUTPUT_KINDS, ""),
}
_FORM_TOKENS = {kind: _prefixed(kind) for kind in FORMS}

_NOT_JWT_RUN = re.compile(r"[^A-Za-z0-9\-_=]")
_NOT_OPENAI_RUN = re.compile(r"[^A-Za-z0-9\-_]")
_PLUGIN_TOKENS: dict[str, _TokenRule] = {
    "aws_key": _plugin(AWSKeyDetector, chars=_BASE64_CHARS),
    "azure_storage_key": _plugin(AzureStorageKeyDetector, chars=_BASE64_CHARS),
    # these two read a run of token characters after `eyJ` and `sk-` (`_matches`)
    "jwt": _plugin(
        JwtTokenDetector, chars=_JWT_CHARS, valid=_jwt, heads=("eyJ",), stops=_NOT_JWT_RUN
    ),
    "github_token": _plugin(GitHubTokenDetector),
    "gitlab_token": _plugin(GitLabTokenDetector),
    "slack_token": _plugin(SlackDetector, chars=_TOKEN_CHARS + "/"),
    "stripe_key": _plugin(StripeDetector),
    "openai_key": _plugin(
        OpenAIDetector, needles=("T3BlbkFJ",), heads=("sk-",), stops=_NOT_OPENAI_RUN
    ),
    # its `//.+/:_authToken=` reads every `//` of a line to its end: only where the literal is
    "npm_token": _plugin(NpmDetector, needles=("/:_authToken=",)),
    "pypi_token": _plugin(PypiTokenDetector),
    "sendgrid_key": _plugin(SendGridDetector, chars=_TOKEN_CHARS + "."),
    "twilio_key": _plugin(TwilioKeyDetector, valid=has_digit),
    "mailchimp_key": _plugin(MailchimpDetector),
    "discord_token": _plugin(DiscordBotTokenDetector, chars=_TOKEN_CHARS + "."),
    "telegram_token": _plugin(TelegramBotTokenDetector, chars=_TOKEN_CHARS + ":"),
    "square_oauth": _plugin(SquareOAuthDetector),
    "artifactory_token": _plugin(ArtifactoryDetector, valid=has_digit),
    "url_password": _plugin(BasicAuthDetector, chars=""),
}
# detect-secrets' keyword-shaped plugins (a provider's name, a key word, a value): they rank after our
# assignment rule, so a Django `SECRET_KEY=<48 hex>` is an `env_secret`, not an IBM COS key.
_PLUGIN_ASSIGNMENTS: dict[str, _TokenRule] = {
    "cloudant_credential": _plugin(CloudantDetector),
    "ibm_cloud_iam_key": _plugin(IbmCloudIamDetector),
    "ibm_cos_hmac": _plugin(IbmCosHmacDetector),
    "softlayer_key": _plugin(SoftlayerDetector),
}


# ---------------------------------------------------------------------------------------------------------
# Structures: private key blocks, URL passwords, authorization headers, command-line passwords
# ---------------------------------------------------------------------------------------------------------

# detect-secrets' private key headers, framed by the PEM dashes so that prose naming a header is not a key;
# plus any other `-----BEGIN … PRIVATE KEY-----` (ENCRYPTED, …) and PuTTY key files.
_KEY_HEADERS = (
    *(
        re.compile(rf"-----{p.pattern}-----")
        for p in PrivateKeyDetector.denylist
        if p.pattern.startswith("BEGIN")
    ),
    re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
)
_KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_PUTTY = re.compile(r"PuTTY-User-Key-File-\d+:")
_PUTTY_END = re.compile(r"Private-MAC:[ \t]*\S+")


def _private_keys(view: str) -> Iterator[tuple[int, int]]:
    """A whole key block, header to END line; an unclosed block to the end of the text."""
    for headers, end_marker in ((_KEY_HEADERS, _KEY_END), ((_PUTTY,), _PUTTY_END)):
        for header in headers:
            end_at = -1  # where the END line of the last block starts (the text's end: unclosed)
            for match in header.finditer(view):
                if match.end() <= end_at:
                    continue  # a header inside that block: its block ends where that one does
                end = end_marker.search(view, match.end())
                end_at = len(view) if end is None else end.start()
                yield match.start(), len(view) if end is None else end.end()


# `scheme://user:password@host`; the password may hold `/` and `@`, unlike detect-secrets' BasicAuth rule
# (it ends at the `@` that a host follows). A port
# followed by a path (`https://host:8080/a?b=c@d`) is not a password.
_URL_PASSWORD = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/@\"']*:(?P<pw>[^\s\"'<>]+?)"
    r"@[A-Za-z0-9.\-\[\]]+(?::\d+)?(?=[/?#\s\"'<>]|$)"
)
# Where `_URL_PASSWORD` starts, and what ends the run its password is read from (`_matches`).
_URL_HEAD = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/@\"']*:")
_NOT_PASSWORD_RUN = re.compile(r"[\s\"'<>]")
_PORT = re.compile(r"^\d+(?:/|$)")
_BEARER = re.compile(r"(?:\b[Bb]earer|\bBEARER)\s+(?P<t>[A-Za-z0-9\-._~+/]{16,}=*)")
_BASIC = re.compile(r"\b(?:[Bb]asic|BASIC)\s+(?P<t>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
_AUTHORIZATION = re.compile(
    r"(?i:\b(?:proxy-)?authorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?i:bearer|basic|token|bot|digest|apikey|sso-key)[ \t]+)?(?P<t>[^\s\"',;]+)"
)
_CURL_USER = re.compile(
    r"(?<!\S)(?:-u|--user|--proxy-user)[ \t=]+[\"']?[^\s:\"']+:(?P<t>[^\s\"']+)"
)
_PASSWORD_COMMAND = re.compile(
    r"\b(?:mysql\w*|mariadb\w*)\b[^\n]*?(?<=\s)-p(?P<t>[^\s\"']\S*|\"[^\"\n]+\"|'[^'\n]+')"
    r"|\bsshpass[ \t]+-p[ \t]*(?P<s>\S+)"
)
# Where `_PASSWORD_COMMAND` can start: `mysql`'s is followed by a run to the end of the line (`_matches`).
_MYSQL_WORD = re.compile(r"\b(?:mysql\w*|mariadb\w*)\b")
_PASSWORD_COMMAND_HEAD = re.compile(rf"(?P<run>{_MYSQL_WORD.pattern})|\bsshpass\b")
_NETRC = re.compile(r"\blogin[ \t]+\S+[ \t]+password[ \t]+(?P<t>\S+)")


def _group_spans(
    pattern: re.Pattern[str],
    check: Callable[[str], bool],
    head: re.Pattern[str] | None = None,
    stops: str | re.Pattern[str] = "",
    keep: Callable[[re.Match[str], str], bool] = lambda match, value: True,
) -> _Spans:
    """The span of the one named group that matched, when `check` accepts its text and `keep` the
    match with it (`head` and `stops`: as for `_matches`)."""

    def spans(view: str) -> Iterator[tuple[int, int]]:
        for match in _matches(pattern, view, head, stops):
            name = next(n for n, v in match.groupdict().items() if v is not None)
            value = match.group(name)
            if check(value) and keep(match, value):
                start, end = match.span(name)
                if value[:1] in "\"'":
                    start, end = start + 1, end - 1  # `-p"pa ss"`: keep the quotes
                yield start, end

    return spans


def _own_option(match: re.Match[str], value: str) -> bool:
    """A `-pVALUE` after a shell operator is another command's option (`mysql db < x.sql && patch -p1`,
    `; cp -pr`, `| tar -pxf`) unless it is as long as a password (6 characters or more: a `;` inside
    `-e "use db; select 1" -pS3cret` is SQL's): within the last `mysql` command before it any value
    counts (`mysql -h db | tee x; mysql -pS3c2`)."""
    if match.group("t") is None:
        return True  # sshpass
    before = match.string[match.start() : match.start("t")]
    return len(value) >= 6 or not _last_command_has_operator(before)


def _last_command_has_operator(text: str) -> bool:
    """Whether a shell operator follows the last `mysql` (or `mariadb`) word of `text`, or `text`'s start
    when it holds none."""
    heads = list(_MYSQL_WORD.finditer(text))
    return _SHELL_OPERATOR.search(text, heads[-1].end() if heads else 0) is not None


_SHELL_OPERATOR = re.compile(r"[|;&]")


def _url_password(value: str) -> bool:
    return not _PORT.match(value) and not value.startswith(("[redacted:", "$", "{"))


def _basic_credentials(value: str) -> bool:
    """`Basic <base64>` is a credential when it decodes to `user:password`."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _authorization(value: str) -> bool:
    return literal(value) and looks_random(value)


_DETECTORS: tuple[tuple[str, _Spans], ...] = (
    ("private_key", _private_keys),
    ("bearer", _group_spans(_BEARER, has_digit)),
    ("basic_auth", _group_spans(_BASIC, _basic_credentials)),
    *((kind, rule.spans) for kind, rule in _EXTRA_TOKENS.items()),
    *((kind, rule.spans) for kind, rule in _FORM_TOKENS.items() if KIND_VERSION[kind] < 7),
    *((kind, rule.spans) for kind, rule in _PLUGIN_TOKENS.items()),
    ("authorization", _group_spans(_AUTHORIZATION, _authorization)),
    ("url_password", _group_spans(_URL_PASSWORD, _url_password, _URL_HEAD, _NOT_PASSWORD_RUN)),
    ("user_password", _group_spans(_CURL_USER, literal)),
    (
        "command_password",
        _group_spans(_PASSWORD_COMMAND, literal, _PASSWORD_COMMAND_HEAD, "\n", _own_option),
    ),
    ("netrc_password", _group_spans(_NETRC, literal)),
    ("env_secret", assignments),
    *((kind, rule.spans) for kind, rule in _PLUGIN_ASSIGNMENTS.items()),
    # last: a value version 7's commands take that an earlier rule finds too keeps that rule's kind
    # (`twine upload -p pypi-…` is a PyPI token)
    *((kind, rule.spans) for kind, rule in _FORM_TOKENS.items() if KIND_VERSION[kind] >= 7),
)

_OUTPUTS = frozenset(TOOL_OUTPUT_KINDS)

# Every kind a finding may carry, for documentation and tests.
KINDS = tuple(dict.fromkeys(kind for kind, _ in _DETECTORS))
