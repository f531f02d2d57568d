"""Sanitizer version 5: more credential formats with a literal prefix, and passwords given to a command
on its command line; their trigger texts keep a corpus without any of them under its older version."""

from __future__ import annotations

import pytest

from engine.sanitize import VERSION_TRIGGERS, redact
from engine.secret_formats import (
    VERSION_4_TRIGGERS,
    VERSION_5_FORMS,
    VERSION_5_TRIGGERS,
    kinds_after,
)
from tests.engine.planted import READ_LATER
from tests.engine.planted_v5 import PLANTED_V5
from tests.engine.test_secrets_corpus import Planted
from tests.engine.test_secrets_v4 import (
    assert_kept_beside,
    assert_prefixed,
    assert_reads_under,
    version,
)

GROQ = "gsk_Pl4ntGr0qK3yQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qa"  # a version 4 format
RUBYGEMS = "rubygems_c0ffee9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c"  # a version 5 format


def test_every_version_5_kind_is_planted_and_its_prefixes_are_triggers() -> None:
    assert sorted({p.kind for p in PLANTED_V5}) == sorted(VERSION_5_FORMS)
    assert len(VERSION_5_FORMS) == 34
    assert kinds_after(4) == (*VERSION_5_FORMS, *kinds_after(5))
    assert len(kinds_after(3)) == 25 + 34 + len(kinds_after(5))
    assert [t for v, t in VERSION_TRIGGERS if v == "5"] == list(VERSION_5_TRIGGERS)
    assert set(VERSION_4_TRIGGERS).isdisjoint(VERSION_5_TRIGGERS)
    assert_prefixed(VERSION_5_FORMS, VERSION_5_TRIGGERS)


@pytest.mark.parametrize("planted", PLANTED_V5, ids=lambda p: p.label)
def test_a_corpus_holding_a_version_5_credential_reads_under_version_5(planted: Planted) -> None:
    assert_reads_under(planted, VERSION_5_FORMS, GROQ, ("4", READ_LATER.get(planted.label, "5")))


def test_a_version_5_credential_beside_a_version_4_one_reads_under_version_5() -> None:
    assert version(GROQ, RUBYGEMS) == "5"
    assert version(GROQ) == "4"
    text, counts = redact(f"{GROQ} and {RUBYGEMS}")
    assert text == "[redacted:groq_key] and [redacted:rubygems_key]"
    assert counts == {"redacted:groq_key": 1, "redacted:rubygems_key": 1}


@pytest.mark.parametrize(
    "text",
    [
        "keytool -list -keystore app.jks -storepass:env STOREPASS",  # a variable's name, not a password
        "keytool -genkeypair -alias app -keystore app.jks",  # keytool asks for it
        "redis-cli -a $REDIS_PASSWORD ping",
        "redis-cli --askpass -h cache.internal",
        "aws configure set region eu-west-1 --profile ci",
        "aws configure set aws_secret_access_key $AWS_SECRET --profile ci",
        "htpasswd -D /etc/nginx/.htpasswd admin",  # delete: no password on the line
        "htpasswd -c /etc/nginx/.htpasswd admin",  # htpasswd asks for it
        "oc login -u admin https://api.cluster.internal:6443",
        "az login --use-device-code",
        "smbclient -L //fs.internal -U guest% -N",
        'SSHPASS="$DEPLOY_PW" sshpass -e ssh deploy@build.internal',
        "LTAI is the prefix of an Alibaba key; LTAIKEYIDENTIFIERSONLY is a word",
        "the pnu_ prefix names a Prefect key, rubygems_version 3.4.10, tfp_ is Typeform's",
        "an Okta token goes after SSWS in the header; sk.eyJ starts a Mapbox secret",
        "dt0c01.TOKEN is the documented shape; CFPAT- and EZAK are prefixes",
        "os.environ['HOME'] = '/tmp'; monkeypatch.setenv('OTEL_ENABLED', 'false')",
        'if os.environ["DB_PASSWORD"] == expected: os.environ["DB_PASSWORD"] = password',
        'System.put_env("PASSWORD_MIN_LENGTH", "12") and d.setdefault("secret_name", "db")',
        "<passwordHint>your pet</passwordHint> <password>${env.NEXUS_PW}</password>",
        'gh secret set API_TOKEN --body "$TOKEN" && gh secret list',
        'echo "$SUDO_PW" | sudo -S ls; echo hello world | sudo -S tee /etc/motd',
        "cat token.txt | gh auth login --with-token; ssh-keygen -t ed25519 -N '' -f key",
        "ConvertTo-SecureString $env:DEPLOY_PW -AsPlainText -Force",
        "PWD=/home/dev/proj OLDPWD=/tmp; cd ~ && PWD=~/src make; pwd=./build",
        "requests.get(url, auth=(user, password)); HTTPBasicAuth('me', os.environ['PW'])",
    ],
)
def test_text_that_only_looks_like_a_version_5_credential_is_kept(text: str) -> None:
    assert_kept_beside(text, RUBYGEMS, "rubygems_key")
