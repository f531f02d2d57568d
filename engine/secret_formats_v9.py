"""The credential formats sanitizer version 9 added (`engine.secret_formats` holds every version's and
their triggers): what a command that prints a stored secret printed. A tool result's text starts with
the header naming its call (`engine.render.result_header`: `[Bash result: op read op://ops/db/pw]`);
when that call reads a secret store (1Password, Bitwarden, pass, Vault, the clouds' secret managers,
Kubernetes secrets, the macOS keychain, Doppler, Heroku's config, …), decrypts a file to the terminal
(sops, ansible-vault, gpg, age), generates a secret (`mix phx.gen.secret`, `wg genkey`), or prints a
credentials file (`.netrc`, `.pgpass`, PPP's `chap-secrets`), the whole body below the header is the
secret: `op read` prints the password alone, with nothing a token rule could key on. Standard library
only.

Each form is the header (at a line's start), the command where a command starts in it, and the body
up to the next tool result's header or the text's end (the group). The trigger texts are the commands'
names, in the tool call's line of the transcript: a corpus without any reads as under version 8.
"""

from __future__ import annotations

from engine.secret_form_parts import Form, forms

# A Bash result's header at a line's start.
_BASH_RESULT = r"(?<![^\n])\[Bash result: "
# What ends one command of a command line, and the characters of one of its words.
_STOPS = r";&|({`"
WORD = rf"[^\s{_STOPS}]"
# The wrappers a command may run under, with their options (those of `sudo` and `env` that take a
# value, with it), and a variable set for the command (`VAULT_ADDR=https://v:8200 vault kv get`). Each
# is read once, never given back, so a line of them costs its length.
_WRAPPERS = (
    r"(?>(?:"
    rf"sudo(?:[ \t]+(?:-[ugCDhprtU][ \t]+{WORD}+|-[A-Za-z]+|--[\w\-]+(?:={WORD}*)?))*[ \t]+"
    rf"|env(?:[ \t]+(?:-[uCS][ \t]+{WORD}+|-[A-Za-z]*|--[\w\-]+(?:={WORD}*)?))*[ \t]+"
    r"|(?:time|exec|command|nohup)(?:[ \t]+-[A-Za-z]+)*[ \t]+"
    rf"|[A-Za-z_]\w*={WORD}*[ \t]+"
    r")*)"
)
# Where a command starts in the header's command line: its start, or after a shell operator, `(`,
# `{` or a backtick (then spaces or a line continuation), past its wrappers.
COMMAND_AT = _BASH_RESULT + rf"(?:[^\n]*?[{_STOPS}][ \t\\]*)?" + _WRAPPERS
# The most characters of a header's command line after a command's name: `engine.render` cuts the
# command a header shows to `MARKER_ARG_CAP` (120) characters and `…`; a longer line is no header, and
# a line of repeated names costs its length times this, not its length squared.
_REST = r"[^\n]{0,200}"


def _after(command: str) -> str:
    """A head for a prefix that follows `command`'s name and its global options (`kubectl -n prod get
    secret`, `aws --region eu-west-1 ssm get-parameter`)."""
    return COMMAND_AT + rf"(?:{command})\b[^\n{_STOPS}]*?[ \t]"


# A line that is a tool result's header (`[Grep result: x]`, `[Read error: a/b.py]`, `[tool result]`).
_HEADER_LINE = r"\[(?:[\w.\-]+ (?:result|error)(?:: [^\n]*)?|tool (?:result|error))\](?:\n|\Z)"
# The body: every line up to the next header, or to the end (none when a header follows at once);
# after the rest of the header line.
_NOT_HEADER = r"(?!" + _HEADER_LINE + r")"
# A body holds a character that is not a space (a result with no output is rendered as its header
# alone; on stored text the next line may be another header, or a blank line and one).
_LINES = (
    rf"(?=(?:{_NOT_HEADER}[^\n]*\n)*?{_NOT_HEADER}[^\n]*\S)"
    rf"(?P<t>{_NOT_HEADER}[^\n]*(?:\n{_NOT_HEADER}[^\n]*)*)"
)
_BODY = _REST + r"\]\n" + _LINES
# What may follow the command's name: an argument, the header's end, or the next command.
_NAME_END = r"(?=[ \t\];&|)`…])"


def output(*, needs: str = "", unless: str = "") -> str:
    """The tail after a command's name: its arguments (holding `needs`, not holding `unless`, each a
    regex looked for in the rest of the command line), then the body it printed."""
    tail = _NAME_END
    if needs:
        tail += rf"(?={_REST}?[ \t](?:{needs}))"
    if unless:
        tail += rf"(?!{_REST}?[ \t](?:{unless}))"
    return tail + _BODY


# `printenv API_TOKEN`, `terraform output -raw db_password`: the named value, when the name names a
# secret (`engine.secrets` checks the `key` group).
_NAMED = r"(?:[ \t]+-[\w\-=]+)*[ \t]+(?:[\w\-]+\.)*(?P<key>[A-Za-z_]\w*)" + _NAME_END + _BODY
# Output written to a file instead of the terminal.
_TO_FILE = r"-o\b|--output\b|--out-file\b"
# The programs that print a file, and the path before the file's name (as `_REST`: at most 200
# characters, so that a line of repeated paths costs its length, not its length squared).
_PRINTERS = (
    rf"(?:cat|bat|less|more|head|tail|nl|xxd|strings)(?:[ \t]+-{WORD}+)*[ \t]+{WORD}{{0,200}}?"
)
_FILE_END = r"(?![\w.\-])"
# The files that hold credentials and nothing a rule of their lines could key on.
_CREDENTIAL_FILES = (".netrc", "_netrc", ".pgpass", "pgpass.conf", "chap-secrets", "pap-secrets")

VERSION_9_FORMS: dict[str, tuple[Form, ...]] = {
    # A secret store's read: the body is the secret, or a table or JSON of secrets.
    "secret_store_output": (
        # 1Password: `op read op://vault/item/field`, `op item get … --reveal` (or as JSON),
        # `op inject -i tpl` (the template filled in, to the terminal)
        *forms("op read", head=COMMAND_AT, tail=output()),
        *forms(
            "op item get",
            head=COMMAND_AT,
            tail=output(needs=r"--reveal\b|--otp\b|--format[ \t=]+json\b"),
        ),
        *forms("op inject", head=COMMAND_AT, tail=output(unless=_TO_FILE)),
        # Bitwarden: `bw get password|item|notes|totp NAME`
        *forms("bw get", head=COMMAND_AT, tail=r"[ \t]+(?:password|item|notes|totp)" + output()),
        # pass and gopass: `pass show NAME`, `pass generate NAME` (not to the clipboard)
        *forms(
            "pass show",
            "pass generate",
            "gopass show",
            head=COMMAND_AT,
            tail=output(unless=r"-c\b|--clip\b"),
        ),
        # Vault: `vault kv get [-field=F] PATH`, `vault read database/creds/ROLE`
        *forms("vault kv get", "vault read", head=COMMAND_AT, tail=output()),
        # Google Cloud: `gcloud secrets versions access latest --secret=NAME`
        *forms("secrets versions access", head=_after("gcloud"), tail=output()),
        # AWS: Secrets Manager, and SSM parameters decrypted
        *forms("get-secret-value", head=_after("aws"), tail=output()),
        *forms(
            "get-parameter",
            head=_after("aws"),
            tail=r"(?:s(?:-by-path)?)?" + output(needs=r"--with-decryption\b"),
        ),
        *forms("get-login-password", head=_after("aws"), tail=output()),
        # `aws configure get aws_secret_access_key`
        *forms("configure get", head=_after("aws"), tail=_NAMED),
        # Azure: Key Vault's `az keyvault secret show --name N --vault-name V`, a storage account's
        # keys, a container registry's passwords (each `"value"` in the JSON)
        *forms(
            "keyvault secret show",
            "storage account keys list",
            "acr credential show",
            head=_after("az"),
            tail=output(),
        ),
        # Kubernetes: `kubectl get secret NAME -o yaml|json|jsonpath=…` (not `-o name`)
        *forms(
            "get secret",
            head=_after("kubectl|oc|k"),
            tail=r"s?(?:/\S+)?"
            + output(
                needs=r"(?:-o[ \t]*|--output[ \t=]+)['\"]?"
                r"(?:yaml|json|jsonpath|go-template|template|custom-columns)"
            ),
        ),
        # macOS keychain: `security find-generic-password -s NAME -w` (`-g`: with the attributes)
        *forms(
            "find-generic-password",
            "find-internet-password",
            head=_after("security"),
            tail=output(needs=r"-[A-Za-z]*[wg]\b"),
        ),
        # GNOME keyring: `secret-tool lookup ATTR VALUE`
        *forms("secret-tool lookup", head=COMMAND_AT, tail=output()),
        # Doppler's `secrets` commands print values (not `--only-names`); Heroku's `config`,
        # `config:get`, `config:set`; Railway's `variables`; Netlify's `env:get`, `env:list`
        *forms("doppler secrets", head=COMMAND_AT, tail=output(unless=r"--only-names\b")),
        *forms("heroku config", head=COMMAND_AT, tail=r"(?::[a-z]+)?" + output()),
        *forms("railway variables", head=COMMAND_AT, tail=output()),
        *forms("env:get", "env:list", head=_after("netlify|ntl"), tail=output()),
        # Pulumi: anything `--show-secrets`, `pulumi config get NAME`
        *forms("--show-secrets", head=_after("pulumi"), tail=output()),
        *forms("config get", head=COMMAND_AT + r"pulumi[ \t]+", tail=_NAMED),
        # a value named for a secret: `printenv API_TOKEN`, `terraform output -raw db_password`
        *forms("printenv", "terraform output", "tofu output", head=COMMAND_AT, tail=_NAMED),
        # more stores' command lines: Python's `keyring get SERVICE USER`, LastPass' `lpass show`,
        # KeePassXC's `keepassxc-cli show` with its protected fields, `chamber read|export`,
        # `berglas access`, `infisical secrets|export`, `dotenvx get|decrypt`, `conjur variable get`
        *forms(
            "keyring get",
            head=COMMAND_AT + rf"(?:{WORD}*python[\d.]*[ \t]+-m[ \t]+)?",
            tail=output(),
        ),
        *forms(
            "keepassxc-cli show",
            head=COMMAND_AT,
            tail=output(
                needs=r"-s\b|--show-protected\b|(?:-a|--attributes)[ \t=]+['\"]?[Pp]assword"
            ),
        ),
        *forms(
            "lpass show",
            "chamber read",
            "chamber export",
            "berglas access",
            "infisical secrets",
            "infisical export",
            "dotenvx get",
            "dotenvx decrypt",
            "conjur variable get",
            head=COMMAND_AT,
            tail=output(),
        ),
        # a key management service's decryption: `aws kms decrypt …`, `gcloud kms decrypt …`
        *forms("kms decrypt", head=_after("aws|gcloud"), tail=output()),
    ),
    # A file decrypted to the terminal: `sops -d`, `ansible-vault view`, `gpg -d`, `age -d`.
    "decrypted_output": (
        *forms(
            "sops -d",
            "sops --decrypt",
            "sops decrypt",
            "gpg -d",
            "gpg --decrypt",
            "age -d",
            "age --decrypt",
            head=COMMAND_AT,
            tail=output(unless=_TO_FILE),
        ),
        *forms("ansible-vault view", "ansible-vault decrypt", head=COMMAND_AT, tail=output()),
    ),
    # A secret a command generates and prints: Phoenix's and Rails' `secret_key_base` (`mix
    # phx.gen.secret`, `bin/rails secret`, `rake secret`), Django's `get_random_secret_key()`,
    # `pwgen`'s passwords, a WireGuard private key (`wg genkey`, unless piped into `wg pubkey`).
    "generated_secret": (
        *forms("phx.gen.secret", head=COMMAND_AT + r"mix[ \t]+", tail=output()),
        *forms(
            "rails secret",
            "rake secret",
            head=COMMAND_AT + r"(?:bundle[ \t]+exec[ \t]+)?(?:bin/)?",
            tail=output(),
        ),
        *forms(
            "get_random_secret_key",
            head=COMMAND_AT
            + rf"(?:{WORD}*python[\d.]*|uv[ \t]+run|poetry[ \t]+run)\b[^\n]{{0,200}}?",
            tail=_BODY,
        ),
        *forms("pwgen", head=COMMAND_AT, tail=output()),
        *forms("wg genkey", head=COMMAND_AT, tail=output(unless=r"wg[ \t]+pubkey\b")),
    ),
    # A credentials file printed or read whole: `cat ~/.netrc`, the Read tool on `.pgpass`, PPP's
    # `/etc/ppp/chap-secrets` and `pap-secrets`; a secret Docker or Kubernetes mounts as a file
    # (`cat /run/secrets/db_password`; the Read tool's header shows a path's last two parts only).
    "credential_file": (
        *forms("/run/secrets/", head=COMMAND_AT + _PRINTERS, tail=rf"{WORD}{{1,200}}" + _BODY),
        *forms(
            *_CREDENTIAL_FILES,
            head=COMMAND_AT + _PRINTERS,
            tail=_FILE_END + _BODY,
        ),
        *forms(
            *_CREDENTIAL_FILES,
            head=r"(?<![^\n])\[Read result: (?:[^\n]*/)?",
            tail=r"\]\n" + _LINES,
        ),
    ),
}

# The kinds whose secret is a tool result's whole body (`engine.sanitize` applies them to each result as
# rendered, header and body).
OUTPUT_KINDS = tuple(VERSION_9_FORMS)
