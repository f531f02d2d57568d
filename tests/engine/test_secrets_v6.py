"""Sanitizer version 6: passwords given to database, directory, archive, queue and Wi-Fi tools or set
in SQL and configuration, and more provider prefixes; their trigger texts keep a corpus without any of
them under its older version."""

from __future__ import annotations

import pytest

from engine.sanitize import SANITIZE_VERSION, VERSION_TRIGGERS, VersionScan, redact
from engine.secret_formats import (
    LATEST_VERSION,
    VERSION_5_TRIGGERS,
    VERSION_6_FORMS,
    VERSION_6_TRIGGERS,
    kinds_after,
)
from tests.engine.planted import Planted
from tests.engine.planted_v6 import PLANTED_V6
from tests.engine.test_secrets_v4 import assert_kept_beside, assert_prefixed, assert_reads_under

RUBYGEMS = "rubygems_c0ffee9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c"  # a version 5 format
NETLIFY = "nfp_Pl4ntN3tl1fyQw8Er6Ty4Ui2Op0As9Df7Gh5Jk"  # a version 6 format


def test_every_version_6_kind_is_planted_and_its_prefixes_are_triggers() -> None:
    assert sorted({p.kind for p in PLANTED_V6}) == sorted(VERSION_6_FORMS)
    assert len(VERSION_6_FORMS) == 25
    assert kinds_after(5) == (*VERSION_6_FORMS, *kinds_after(6))
    assert LATEST_VERSION == int(SANITIZE_VERSION) == 11
    assert [t for v, t in VERSION_TRIGGERS if v == "6"] == list(VERSION_6_TRIGGERS)
    assert set(VERSION_5_TRIGGERS).isdisjoint(VERSION_6_TRIGGERS)
    assert_prefixed(VERSION_6_FORMS, VERSION_6_TRIGGERS)


@pytest.mark.parametrize("planted", PLANTED_V6, ids=lambda p: p.label)
def test_a_corpus_holding_a_version_6_credential_reads_under_version_6(planted: Planted) -> None:
    assert_reads_under(planted, VERSION_6_FORMS, RUBYGEMS, ("5", "6"))


def test_a_trigger_written_with_escaped_slashes_is_found() -> None:
    # `cmdkey /add:srv /pass:PW` as a JSON writer that escapes `/` spells it
    scan = VersionScan()
    scan.feed(b'{"content": "cmdkey \\/add:srv \\/pass:Pl4ntCmdK3yPw"}')
    assert scan.version == "6"
    plain = VersionScan()  # control: the same line without the trigger
    plain.feed(b'{"content": "cmdkey \\/add:srv \\/user:me"}')
    assert plain.version == "2"


@pytest.mark.parametrize(
    "text",
    [
        "Load and return a dynamic library identified by 'name'.",  # prose, in lower case
        "the Password 'field' is required; see password 'rules' below",
        "ALTER USER app WITH PASSWORD NULL; CREATE USER app WITH PASSWORD $1",
        "mongosh -u admin -p --authenticationDatabase admin",  # mongosh asks for it
        "mongodump --uri $MONGO_URI -p $MONGO_PW",
        "sqlcmd -S db -E -Q 'SELECT 1'",  # Windows authentication: no password
        "sqlplus / as sysdba; sqlplus -L app@db",
        "ldapsearch -x -W -D cn=admin,dc=example -b dc=example",  # -W asks for it
        "zip -r backup.zip dir; unzip -o x.zip -d out; 7z a out.7z dir",
        "openssl enc -aes-256-cbc -pbkdf2 -in f -out f.enc -pass env:ENC_PW",
        "echo hello | chpasswd --help; cat users.txt | sudo chpasswd",
        "# requirepass foobared is how redis.conf shows it; set requirepass in prose",
        "use rabbitmqctl add_user to create one; run vault login first",
        "net use \\\\fileserver\\share * /user:CORP\\deploy",  # `*` asks for it
        "mc alias set local http://localhost:9000 $MINIO_USER $MINIO_PASSWORD",
        '<add key="LogLevel" value="Debug" /> <add key="PasswordMinLength" value="12" />',
        "netlify env:set NODE_VERSION 20; setx PATH C:\\tools",
        "nfp_ is Netlify's prefix, rnd_ Render's; phx_new generates a Phoenix app",
        "v1.0-beta shipped; EAACEdEose0cBA is the documented prefix",
        "wpa_passphrase Home $WIFI_PW; nmcli dev wifi connect Home --ask",
        # documentation: a password's place, written as a name in capitals, `…` or nothing
        "`sqlcmd -S db -U sa -P PASSWORD` and `mongosh -u admin -p DB_PASS`",
        "`ALTER USER app WITH PASSWORD '…'`, `lftp -u user,PASS host`, `zip -P PASS a.zip`",
        "`cmdkey /add:srv /pass:`, `psk=`, `net use \\\\srv\\share PASS /user:me`",
        # code that holds the statement's words: a `"` is no password's
        """*_forms("PASSWORD '", "IDENTIFIED BY '", tail=_SQL_QUOTED)""",
    ],
)
def test_text_that_only_looks_like_a_version_6_credential_is_kept(text: str) -> None:
    assert_kept_beside(text, NETLIFY, "netlify_token")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "CREATE ROLE app LOGIN PASSWORD 'Pl4nt9Role' VALID UNTIL 'infinity';",
            "CREATE ROLE app LOGIN PASSWORD '[redacted:sql_password]' VALID UNTIL 'infinity';",
        ),
        (
            "alter user app with encrypted password 'Pl4nt9Enc';",
            "alter user app with encrypted password '[redacted:sql_password]';",
        ),
        (
            "SET PASSWORD FOR 'app'@'%' = PASSWORD('Pl4nt9Old');",
            "SET PASSWORD FOR 'app'@'%' = PASSWORD('[redacted:sql_password]');",
        ),
        ("bcp -P Pl4nt9Bcp", "bcp -P [redacted:sqlserver_password]"),
        ("unzip -o -P Pl4nt9Unz x.zip", "unzip -o -P [redacted:archive_password] x.zip"),
        ("7za x -pPl4nt9Sev a.7z", "7za x -p[redacted:archive_password] a.7z"),
        ("redis-cli CONFIG SET masterauth Pl4nt9Mst", "redis-cli CONFIG SET masterauth [redacted:redis_config_password]"),
        ("echo Pl4nt9Std | passwd --stdin app", "echo [redacted:passwd_stdin] | passwd --stdin app"),
        ("net use Z: \\\\fs\\share Pl4nt9Net /user:me", "net use Z: \\\\fs\\share [redacted:windows_password] /user:me"),
        ("setx API_TOKEN Pl4nt9Setx", "setx API_TOKEN [redacted:keyed_setting]"),
    ],
)  # fmt: skip
def test_more_forms_of_the_version_6_kinds_are_redacted(text: str, expected: str) -> None:
    assert redact(text)[0] == expected
