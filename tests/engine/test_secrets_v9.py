"""Sanitizer version 9: what a command that prints a stored secret printed (a secret store's read, a
file decrypted to the terminal, a credentials file printed), and `htpasswd`'s options in several
groups; their trigger texts keep a corpus without any of them under its older version."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from engine.sanitize import SANITIZE_VERSION, VERSION_TRIGGERS, redact, redact_output, sanitize
from engine.secret_formats import (
    LATEST_VERSION,
    RULE_KINDS,
    RULE_TRIGGERS,
    VERSION_9_TRIGGERS,
    kinds_after,
    kinds_found_after,
    triggers,
)
from engine.secret_formats_v9 import OUTPUT_KINDS, VERSION_9_FORMS
from engine.secrets import KINDS
from engine.transcript_files import StreamState
from engine.transcripts import parse_bytes
from tests.engine.fixtures_transcripts import (
    assistant_lines,
    encode,
    tool_result_line,
    tool_use_block,
    user_line,
)
from tests.engine.planted import READ_LATER, Planted
from tests.engine.planted_v9 import PLANTED_V9
from tests.engine.test_secrets_corpus import PLANTED
from tests.engine.test_secrets_v4 import assert_prefixed, assert_reads_under, version

TAVILY = "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"  # a version 8 format


def test_every_version_9_kind_is_planted_and_its_prefixes_are_triggers() -> None:
    assert sorted({p.kind for p in PLANTED_V9}) == sorted(VERSION_9_FORMS)
    assert OUTPUT_KINDS == (
        "secret_store_output",
        "decrypted_output",
        "generated_secret",
        "credential_file",
    )
    assert tuple(VERSION_9_FORMS) == OUTPUT_KINDS
    assert len(VERSION_9_TRIGGERS) == 66  # the forms' 65 prefixes and RULE_TRIGGERS' one
    assert VERSION_9_TRIGGERS[-1:] == RULE_TRIGGERS[9] == ("htpasswd",)
    assert kinds_after(8) == (*OUTPUT_KINDS, *kinds_after(9))
    assert (
        kinds_found_after(8)
        == (*OUTPUT_KINDS, *kinds_after(9), *RULE_KINDS[9])
        == (*OUTPUT_KINDS, *kinds_after(9), "htpasswd_password")
    )
    assert LATEST_VERSION == int(SANITIZE_VERSION) == 11
    assert [t for v, t in VERSION_TRIGGERS if v == "9"] == list(VERSION_9_TRIGGERS)
    assert_prefixed(VERSION_9_FORMS, VERSION_9_TRIGGERS)


def test_the_triggers_an_older_version_shares_are_those_its_planted_texts_name() -> None:
    older = {t for v in range(4, 9) for t in triggers(v)}
    # a version 9 trigger inside an older one, or the same: a corpus holding it reads under 9
    assert sorted((t, o) for t in VERSION_9_TRIGGERS for o in older if t in o) == [
        (".pgpass", ".pgpass"),
        ("doppler secrets", "doppler secrets set"),
        ("htpasswd", "htpasswd"),
    ]
    # an older trigger inside a version 9 one: a corpus holding it reads under 9 all the same
    assert [(o, t) for o in older for t in VERSION_9_TRIGGERS if o in t and o != t] == [
        ("secret_", "get_random_secret_key")
    ]
    # so exactly the older planted texts holding one read under version 9 (`READ_LATER`)
    held = {p.label for p in PLANTED if p.kind not in VERSION_9_FORMS and version(p.text) == "9"}
    assert (
        held
        == {label for label, later in READ_LATER.items() if later == "9"}
        == {"htpasswd-file", "htpasswd-stdout", "doppler-secrets-set", "pgpass"}
    )


def test_the_readme_counts_the_kinds_the_sanitizer_names() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert f"removes secrets ({len(KINDS)} kinds:" in readme
    assert len(KINDS) == 222  # the kinds `[redacted:<kind>]` may name


@pytest.mark.parametrize("planted", PLANTED_V9, ids=lambda p: p.label)
def test_a_corpus_holding_a_version_9_credential_reads_under_version_9(planted: Planted) -> None:
    assert redact(TAVILY)[0] == "[redacted:tavily_key]"  # the older one is version 8's
    assert_reads_under(planted, VERSION_9_FORMS, TAVILY, ("8", "9"))


def bash_result(command: str, body: str) -> str:
    """A Bash call's result as the memory stores it: its header, then what it printed."""
    return f"[Bash result: {command}]\n{body}"


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("op read 'op://Private/GitHub/token' --no-newline", "secret_store_output"),
        ("op item get db --fields password --reveal", "secret_store_output"),
        ("op item get db --format json", "secret_store_output"),
        ("op inject -i config.tpl", "secret_store_output"),
        ("bw get item github.com | jq .login", "secret_store_output"),
        ("pass generate web/site 20", "secret_store_output"),
        ("gopass show -o work/db", "secret_store_output"),
        ("vault kv get -field=password secret/app", "secret_store_output"),
        ("cd infra && vault read database/creds/readonly", "secret_store_output"),
        ("gcloud --project prod secrets versions access 3 --secret=$NAME", "secret_store_output"),
        ("aws ssm get-parameters-by-path --path /prod --with-decryption", "secret_store_output"),
        ("aws ecr get-login-password --region us-east-1", "secret_store_output"),
        ("aws configure get aws_secret_access_key --profile prod", "secret_store_output"),
        (
            "az keyvault secret show --vault-name kv1 --name Db --query value -o tsv",
            "secret_store_output",
        ),
        ("oc get secret/app -ojson", "secret_store_output"),
        ("security find-internet-password -s api.example.io -a me -g", "secret_store_output"),
        ("secret-tool lookup service db user app", "secret_store_output"),
        ("doppler secrets", "secret_store_output"),
        ("heroku config:get SIGNING_KEY -a orders", "secret_store_output"),
        ("railway variables", "secret_store_output"),
        ("netlify env:get API_SECRET", "secret_store_output"),
        ("pulumi stack output --show-secrets", "secret_store_output"),
        ("pulumi config get dbPassword", "secret_store_output"),
        ("terraform output -raw db_password", "secret_store_output"),
        ("sudo -u deploy env | grep -v PATH; printenv GITHUB_TOKEN", "secret_store_output"),
        ("sops --decrypt --extract '[\"db\"]' secrets.yaml", "decrypted_output"),
        ("ansible-vault view group_vars/all/vault.yml", "decrypted_output"),
        ("age -d -i key.txt secrets.age", "decrypted_output"),
        ("bundle exec rake secret", "generated_secret"),
        ("bin/rails secret", "generated_secret"),
        ("pwgen -s 24 1", "generated_secret"),
        ("wg genkey", "generated_secret"),
        (
            "python -c 'from django.core.management.utils import get_random_secret_key as g; "
            "print(g())'",
            "generated_secret",
        ),
        ("sudo cat /root/.pgpass", "credential_file"),
        ("cd /srv/app && head -5 _netrc", "credential_file"),
        ("sudo cat /etc/ppp/chap-secrets", "credential_file"),
        ("az storage account keys list -g rg -n orders", "secret_store_output"),
        ("az acr credential show -n ordersacr", "secret_store_output"),
        ("python3 -m keyring get orders-db deploy", "secret_store_output"),
        ("keepassxc-cli show -s ops.kdbx orders/db", "secret_store_output"),
        ("lpass show --all orders-db", "secret_store_output"),
        ("chamber export orders --format dotenv", "secret_store_output"),
        ("berglas access sm://ops/orders-db", "secret_store_output"),
        ("infisical secrets --env=prod", "secret_store_output"),
        ("dotenvx get DB_PASSWORD -f .env.production", "secret_store_output"),
        ("conjur variable get -i prod/db/password", "secret_store_output"),
        (
            "aws kms decrypt --ciphertext-blob fileb://c.bin --query Plaintext",
            "secret_store_output",
        ),
        ("cat /var/run/secrets/db_password", "credential_file"),
    ],
)
def test_more_forms_of_the_version_9_kinds_are_redacted(command: str, kind: str) -> None:
    body = "machine db.internal\n  password Qm7xK2pLw9Rt4vNz"
    assert redact(bash_result(command, body)) == (
        bash_result(command, f"[redacted:{kind}]"),
        Counter({f"redacted:{kind}": 1}),
    )
    assert redact_output(bash_result(command, body))[0] == bash_result(
        command, f"[redacted:{kind}]"
    )


_STORE, _DECRYPTED, _GENERATED, _FILE = OUTPUT_KINDS


@pytest.mark.parametrize(
    ("command", "reader", "kind"),
    [
        # the same store, a command that prints no secret
        ("op item get db", "op item get db --reveal", _STORE),
        ("op inject -i config.tpl -o config.yml", "op inject -i config.tpl", _STORE),
        ("bw list items --search github", "bw get password github", _STORE),
        ("pass show -c work/db", "pass show work/db", _STORE),
        ("vault kv list secret/", "vault kv get secret/app", _STORE),
        (
            "aws ssm get-parameter --name /prod/region",
            "aws ssm get-parameter --with-decryption",
            _STORE,
        ),
        (
            "aws secretsmanager list-secrets",
            "aws secretsmanager get-secret-value --secret-id $ID",
            _STORE,
        ),
        ("kubectl get secrets", "kubectl get secrets -o yaml", _STORE),
        ("kubectl get secret db -o name", "kubectl get secret db -o yaml", _STORE),
        ("security find-generic-password -s gh", "security find-generic-password -s gh -w", _STORE),
        ("doppler secrets --only-names", "doppler secrets", _STORE),
        ("printenv HOME", "printenv API_TOKEN", _STORE),
        ("terraform output -raw bucket_name", "terraform output -raw db_password", _STORE),
        ("sops -d secrets.enc.yaml --output secrets.yaml", "sops -d secrets.enc.yaml", _DECRYPTED),
        ("gpg --decrypt -o out.txt in.gpg", "gpg --decrypt in.gpg", _DECRYPTED),
        ("ls -l ~/.netrc", "cat ~/.netrc", _FILE),
        ("wg genkey | tee private.key | wg pubkey", "wg genkey", _GENERATED),
        (
            "keepassxc-cli show ops.kdbx orders/db",
            "keepassxc-cli show -s ops.kdbx orders/db",
            _STORE,
        ),
        ("ls /run/secrets/", "cat /run/secrets/db_password", _FILE),
        ("mix phx.routes", "mix phx.gen.secret", _GENERATED),
        # the command's name inside an argument: not where a command starts
        ("grep -rn 'op read' scripts/", "x=1; op read op://ops/db/pw", _STORE),
        ("echo 'run vault kv get first'", "echo first && vault kv get secret/app", _STORE),
        ("git log --grep 'heroku config'", "git log -1 | heroku config", _STORE),
    ],
)
def test_a_command_that_prints_no_secret_keeps_its_output(
    command: str, reader: str, kind: str
) -> None:
    body = "Keys\n----\norders-3f2a9c1"
    assert redact(bash_result(command, body)) == (bash_result(command, body), Counter())
    # positive control: the same output under a command that reads a secret is redacted
    assert redact(bash_result(reader, body))[0] == bash_result(reader, f"[redacted:{kind}]")


def test_the_body_ends_at_the_next_result_and_a_header_must_start_its_line() -> None:
    text = (
        "[Bash result: op read op://ops/db/pw]\nQm7xK2pLw9Rt4vNz\n"
        "[Grep result: TODO]\nsrc/a.py:3: TODO keep me\n"
        "[Bash result: vault kv get secret/app]\napi Hk4nWz8rKx2m\n[tool result]\nkept too"
    )
    assert redact(text)[0] == (
        "[Bash result: op read op://ops/db/pw]\n[redacted:secret_store_output]\n"
        "[Grep result: TODO]\nsrc/a.py:3: TODO keep me\n"
        "[Bash result: vault kv get secret/app]\n[redacted:secret_store_output]\n[tool result]\nkept too"
    )
    quoted = "the log said [Bash result: op read op://ops/db/pw]\nQm7xK2pLw9Rt4vNz"
    assert redact(quoted) == (quoted, Counter())  # not a header: it does not start its line
    assert redact("\n" + quoted.split(" said ")[1])[0] == (
        "\n[Bash result: op read op://ops/db/pw]\n[redacted:secret_store_output]"
    )


def test_an_output_already_redacted_is_not_found_again() -> None:
    once, counts = redact(
        bash_result("op read op://ops/gh", "ghp_Pl4ntGhpT0k3nA1b2C3d4E5f6G7h8I9j0K1l2")
    )
    # a token rule found the whole body first: its kind stands, and nothing is left to redact
    assert once == bash_result("op read op://ops/gh", "[redacted:github_token]")
    assert counts == Counter({"redacted:github_token": 1})
    assert redact(once) == (once, Counter())
    stored = (
        bash_result("vault read db/creds/ro", "[redacted:secret_store_output]") + "\nnext message"
    )
    assert redact(stored) == (stored, Counter())
    # control: a body that only starts with another rule's redaction is still redacted whole
    mixed = bash_result("vault read db/creds/ro", "[redacted:env_secret] more\npassword Qm7xK2pLw9")
    assert redact(mixed)[0] == bash_result(
        "vault read db/creds/ro", "[redacted:secret_store_output]"
    )


def sanitized(
    command: str, output: str, prompt: str | None = "what is the orders password?"
) -> tuple[list[str], Counter[str]]:
    """The stored texts of `prompt` (if any), one Bash call of `command` and its result `output`,
    through the import's steps (parsed, then sanitized), and what was scrubbed."""
    lines = [
        *([user_line(prompt, uuid="u1")] if prompt is not None else []),
        *assistant_lines(
            [tool_use_block("t1", "Bash", {"command": command})],
            message_id="m1",
            uuids=["a1"],
            parent="u1" if prompt is not None else None,
        ),
        tool_result_line("t1", output, uuid="r1", parent="a1"),
    ]
    state = StreamState()
    parsed = parse_bytes(b"".join(encode(line) + b"\n" for line in lines), state=state)
    counts: Counter[str] = Counter()
    return [m.text for m in sanitize(parsed.messages, state, counts)], counts


def test_an_import_redacts_the_output_below_the_header_it_renders() -> None:
    texts, counts = sanitized("op read op://ops/orders/password", "Qm7xK2pLw9Rt4vNz")
    assert texts == [
        "what is the orders password?",
        "[Bash: op read op://ops/orders/password]",
        "[Bash result: op read op://ops/orders/password]\n[redacted:secret_store_output]",
    ]
    assert counts == Counter({"redacted:secret_store_output": 1})
    # control: the same output of a command that reads no secret is stored as it is
    texts, counts = sanitized("op vault list", "Qm7xK2pLw9Rt4vNz")
    assert texts[2] == "[Bash result: op vault list]\nQm7xK2pLw9Rt4vNz"
    assert counts == Counter()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the options in several groups: version 5's form took `-c` for the file and redacted the user
        (
            "htpasswd -b -c /etc/nginx/.htpasswd admin Qm7xK2pLw9",
            "htpasswd -b -c /etc/nginx/.htpasswd admin [redacted:htpasswd_password]",
        ),
        (
            "htpasswd -c -b f admin Qm7xK2pLw9",
            "htpasswd -c -b f admin [redacted:htpasswd_password]",
        ),
        (
            "htpasswd -B -C 10 -b f admin Qm7xK2pLw9",
            "htpasswd -B -C 10 -b f admin [redacted:htpasswd_password]",
        ),
        ("htpasswd -n -b admin Qm7xK2pLw9", "htpasswd -n -b admin [redacted:htpasswd_password]"),
        # one group, as version 5 read it
        ("htpasswd -cb f admin Qm7xK2pLw9", "htpasswd -cb f admin [redacted:htpasswd_password]"),
        # no `-b`: htpasswd asks; a variable; no password on the line
        ("htpasswd -c -B f admin", "htpasswd -c -B f admin"),
        ("htpasswd -b -c f admin $PASS", "htpasswd -b -c f admin $PASS"),
        ("htpasswd -b -c f admin", "htpasswd -b -c f admin"),
    ],
)
def test_htpasswd_reads_its_options_in_any_groups(text: str, expected: str) -> None:
    assert version(text) == "9"  # `htpasswd` is version 9's trigger for this change
    assert redact(text)[0] == expected
