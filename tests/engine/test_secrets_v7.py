"""Sanitizer version 7: passwords and tokens given to database shells, package registries, remote
management tools and secret stores; their trigger texts keep a corpus without any of them under its
older version."""

from __future__ import annotations

import pytest

from engine.sanitize import SANITIZE_VERSION, VERSION_TRIGGERS, redact
from engine.secret_formats import (
    LATEST_VERSION,
    VERSION_6_TRIGGERS,
    VERSION_7_TRIGGERS,
    kinds_after,
)
from engine.secret_formats_v7 import VERSION_7_FORMS
from tests.engine.planted import READ_LATER, Planted
from tests.engine.planted_v7 import PLANTED_V7
from tests.engine.test_secrets_v4 import assert_kept_beside, assert_prefixed, assert_reads_under

NETLIFY = "nfp_Pl4ntN3tl1fyQw8Er6Ty4Ui2Op0As9Df7Gh5Jk"  # a version 6 format


def test_every_version_7_kind_is_planted_and_its_prefixes_are_triggers() -> None:
    assert sorted({p.kind for p in PLANTED_V7}) == sorted(VERSION_7_FORMS)
    assert len(VERSION_7_FORMS) == 32
    assert kinds_after(6) == (*VERSION_7_FORMS, *kinds_after(7))
    assert LATEST_VERSION == int(SANITIZE_VERSION) == 11
    assert [t for v, t in VERSION_TRIGGERS if v == "7"] == list(VERSION_7_TRIGGERS)
    assert set(VERSION_6_TRIGGERS).isdisjoint(VERSION_7_TRIGGERS)
    assert_prefixed(VERSION_7_FORMS, VERSION_7_TRIGGERS)


@pytest.mark.parametrize("planted", PLANTED_V7, ids=lambda p: p.label)
def test_a_corpus_holding_a_version_7_credential_reads_under_version_7(planted: Planted) -> None:
    assert_reads_under(planted, VERSION_7_FORMS, NETLIFY, ("6", READ_LATER.get(planted.label, "7")))


@pytest.mark.parametrize(
    "text",
    [
        "run cargo login first, then cargo publish; nuget setapikey is how the key is stored",
        # a shell operator, a redirection or an option where the value would be: the tool asks
        "cargo login && cargo publish; cargo login 2>/dev/null; bw unlock --passwordenv BW_PW",
        "bw unlock | tee session.txt; bw login --apikey; ngrok config add-authtoken --help",
        # a variable or a placeholder
        "cargo login $CARGO_TOKEN; nuget setapikey <key>; consul acl set-agent-token agent ${TOKEN}",
        "`cqlsh -u cassandra -p PASSWORD`, `twine upload -p …`, `http -a user:PASS`, `ipmitool -P PW`",
        "127.0.0.1:6379> AUTH PASSWORD",
        # a masked value, or none on the line
        "snmpwalk -v3 -u monitor -A *** -X *** switch.internal; snmpwalk -v2c -c public switch.internal",
        "aws ssm put-parameter --name v --value 1.4.2 --type String; aws ssm put-parameter --name k "
        "--type SecureString --value file://key.pem",
        "http -a admin https://api.internal (HTTPie prompts for the password)",
        "mosquitto_passwd -c /etc/mosquitto/passwd sensor; ipmitool -I lanplus -H h -U admin -E power status",
        "xfreerdp /u:me /v:win.internal (it prompts for /p:)",
        # prose and other commands that share a word
        "AUTH header missing\nthe server replied to AUTH TLS with 234",
        'AUTH = "v2"\nAUTH : x9',
        "cypher-shell -a neo4j://graph:7687 -u neo4j; curl -a -o x https://h",
        "doppler secrets set NODE_ENV production; az keyvault secret set --vault-name v --name n --file f",
        "bundle config set --local path vendor/bundle; bundle config mirror.https://rubygems.org https://m.internal",
        "echo done | gcloud secrets list; echo x | docker secret create --help",
        "echo hi | gh secret set --help; echo done | wrangler secret put; cat key.txt | gh secret set KEY",
        "poetry config http-basic.private --unset; composer config http-basic.example.org",
        "neo4j-admin dbms set-initial-password --require-password-change",
        "expo login -u me -p --non-interactive",
        # documentation that elides the value, and code that names the setting
        "`twine upload -p pypi-…` uploads with a PyPI token; so does `cargo login cio…`",
        """"sonar_login": _forms("sonar.login=", head="(?:-D)?"), http -a me:`pw`""",
    ],
)
def test_text_that_only_looks_like_a_version_7_credential_is_kept(text: str) -> None:
    assert_kept_beside(text, NETLIFY, "netlify_token")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cargo login x9Y!", "cargo login [redacted:cargo_token]"),
        ("https -a me:Pl4nt7Https GET https://h", "https -a me:[redacted:httpie_password] GET https://h"),
        (
            "snmpget -v3 -u m -A Pl4nt7A -X Pl4nt7X h",
            "snmpget -v3 -u m -A [redacted:snmp_passphrase] -X [redacted:snmp_passphrase] h",
        ),
        (
            "snmpgetnext -v2c h x && snmpget -v3 -A Pl4nt7Get h",
            "snmpgetnext -v2c h x && snmpget -v3 -A [redacted:snmp_passphrase] h",
        ),
        ("rdesktop -u me -p Pl4nt7Rdp h", "rdesktop -u me -p [redacted:rdp_password] h"),
        ("AUTH Pl4nt7Only", "AUTH [redacted:redis_auth]"),
        ("yarn config set npmAuthToken Pl4nt7Yarn", "yarn config set npmAuthToken [redacted:npm_auth_setting]"),
        ("dotnet nuget push x.nupkg -k Pl4nt7Push -s src", "dotnet nuget push x.nupkg -k [redacted:nuget_password] -s src"),
        ("composer config --global http-basic.repo.acme.io me Pl4nt7Comp", "composer config --global http-basic.repo.acme.io me [redacted:http_basic_password]"),
        ("bw login me@acme.io Pl4nt7Bw --raw", "bw login me@acme.io [redacted:bitwarden_password] --raw"),
        ("printf Pl4nt7Dock | docker secret create db_pw -", "printf [redacted:piped_secret] | docker secret create db_pw -"),
        ("ovsx create-namespace acme -p Pl4nt7Ovsx", "ovsx create-namespace acme -p [redacted:marketplace_token]"),
        ("echo Pl4nt7Wr | npx wrangler secret put API_KEY", "echo [redacted:piped_secret] | npx wrangler secret put API_KEY"),
        ("echo -n Pl4nt7Vc | vercel env add STRIPE_KEY production", "echo -n [redacted:piped_secret] | vercel env add STRIPE_KEY production"),
        ("echo 'Pl4nt7 Gh'|gh secret set TOKEN --repo a/b", "echo '[redacted:piped_secret]'|gh secret set TOKEN --repo a/b"),
    ],
)  # fmt: skip
def test_more_forms_of_the_version_7_kinds_are_redacted(text: str, expected: str) -> None:
    assert redact(text)[0] == expected
