"""Sanitizer version 8: passwords given to more database shells, registry clients, publishers, cloud,
signing, keychain and Windows tools, values fed to a command through a here-string, `printf '%s'` or a
`.pgpass` line, passwords in configuration files and code (wp-config, Gradle, LDAP, keepalived, SQL,
Django), session cookies and OpenVPN static keys; their trigger texts keep a corpus without any of
them under its older version."""

from __future__ import annotations

import pytest

from engine.sanitize import SANITIZE_VERSION, VERSION_TRIGGERS, redact
from engine.secret_formats import (
    FORMS_BY_VERSION,
    LATEST_VERSION,
    RULE_TRIGGERS,
    VERSION_8_TRIGGERS,
    kinds_after,
    triggers,
)
from engine.secret_formats_v8 import VERSION_8_FORMS
from tests.engine.planted import READ_LATER, Planted
from tests.engine.planted_v8 import PLANTED_V8
from tests.engine.test_secrets_v4 import (
    assert_kept_beside,
    assert_prefixed,
    assert_reads_under,
    version,
)

NETLIFY = "nfp_Pl4ntN3tl1fyQw8Er6Ty4Ui2Op0As9Df7Gh5Jk"  # a version 6 format
CARGO = "cargo login cio9Qw8Er6Ty4Ui2Op0As"  # a version 7 format


def test_every_version_8_kind_is_planted_and_its_prefixes_are_triggers() -> None:
    assert sorted({p.kind for p in PLANTED_V8}) == sorted(VERSION_8_FORMS)
    assert len(VERSION_8_FORMS) == 56
    assert len(VERSION_8_TRIGGERS) == 108  # the forms' 106 prefixes and RULE_TRIGGERS' two
    assert VERSION_8_TRIGGERS[-2:] == RULE_TRIGGERS[8] == ("mysql", "mariadb")
    assert kinds_after(7) == (*VERSION_8_FORMS, *kinds_after(8))
    assert LATEST_VERSION == int(SANITIZE_VERSION) == 11
    assert [t for v, t in VERSION_TRIGGERS if v == "8"] == list(VERSION_8_TRIGGERS)
    for older in range(4, 8):
        assert set(triggers(older)).isdisjoint(VERSION_8_TRIGGERS), older
    assert FORMS_BY_VERSION[8] is VERSION_8_FORMS
    assert_prefixed(VERSION_8_FORMS, VERSION_8_TRIGGERS)


@pytest.mark.parametrize("planted", PLANTED_V8, ids=lambda p: p.label)
def test_a_corpus_holding_a_version_8_credential_reads_under_version_8(planted: Planted) -> None:
    assert redact(CARGO)[0] == "cargo login [redacted:cargo_token]"  # the older one is version 7's
    assert_reads_under(planted, VERSION_8_FORMS, CARGO, ("7", READ_LATER.get(planted.label, "8")))


@pytest.mark.parametrize(
    "text",
    [
        # no command that reads a secret after the pipe or before the here-string
        "printf '%s\\n' \"$line\" | sort; printf '%s' hello | wc -c; cat <<< hello; grep x <<< y",
        # a name that names no secret, and bash's `set -x`
        "set -x\nset -x PATH $HOME/bin $PATH; setenv EDITOR vim",
        # no password there, a plain word where it would be, `*` (it asks), an option
        "run net user to list the accounts; net user bob *; net user admin /active:yes",
        "db2 connect to sample user db2inst1 using the password; echo done | az devops login",
        "mysqladmin -u root -p status; unrar x -p -y backup.rar; rclone obscure -",
        "jarsigner -verify app.jar; signtool sign /a /fd SHA256 app.exe; certutil -hashfile x SHA256",
        "rclone config create remote s3 provider AWS env_auth true; mc admin user add myminio",
        "uv publish --publish-url https://test.pypi.org/legacy/; kubeadm token create --print-join-command",
        # a variable, or a reference to where the password is kept
        'security unlock-keychain -p "$KEYCHAIN_PASSWORD" build.keychain; supabase db push -p $DB_PW',
        'docker login -u me --password-stdin <<< "$TOKEN"; podman pull --creds $USER:$PASS quay.io/x',
        "echo $PGHOST:5432:*:$PGUSER:$PGPASSWORD >> ~/.pgpass; cloudflared service install $TUNNEL",
        "xcrun altool --upload-app -u me -p @keychain:AC_PASSWORD; kubeadm join h:6443 --token $T",
        # a shell operator or a redirection where the value would be
        "tsql -S db -U sa -P && echo ok; hdbsql -u SYSTEM -p 2>/dev/null",
        # settings that read the password from elsewhere, a hash, a name that names no secret
        "storePassword System.getenv('STORE_PW'); keyPassword \"${keyPw}\"; user.set_password(pw)",
        "rootpw {SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\nthe bindpw option; define( 'WP_DEBUG', 'true' );",
        # cookies that hold no session, or a value too short to be a session id
        "Cookie: theme=dark; lang=en\nSet-Cookie: sid=1; Path=/\nthe Set-Cookie: header sets it",
        "SET PASSWORD FOR app = PASSWORD($1); -----BEGIN OpenVPN Static key V1----- is its header",
        # provider prefixes without a token of the provider's length and shape
        "e2b_sandbox_timeout; squ_ is SonarQube's user-token prefix; xoxe-1-short; tvly-dev-key",
        "napi_version = 8; jina_reader; pcsk_abcd_short; csk-cache-dir; AKCp is JFrog's key prefix",
        "CCIPAT_x_y; vercel_blob_rw_ prefix; glffct-short; e2b_0123456789abcdef (16 hex digits)",
        # prose that names an option: a function word where the value would be
        "isql takes -P for the password; jarsigner -storepass is the keystore's; pscp -pw to pass it",
        # nothing echoed into passwd but a variable, or another command of that name
        'echo "$PW\\n$PW" | passwd; echo done | passwd-check; echo $PW | sudo passwd bob',
        # curl with no user and no password (it negotiates), or a variable
        "curl --negotiate -u : https://intranet; curl -u :$API_TOKEN https://api",
    ],
)
def test_text_that_only_looks_like_a_version_8_credential_is_kept(text: str) -> None:
    assert_kept_beside(text, NETLIFY, "netlify_token")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tsql -S db -U sa -P Pl4nt8Tsql", "tsql -S db -U sa -P [redacted:sybase_password]"),
        ("mysqlsh root:Pl4nt8Sh@localhost", "mysqlsh root:[redacted:mysqlsh_password]@localhost"),
        ("podman pull --creds=me:Pl4nt8Pod quay.io/x", "podman pull --creds=me:[redacted:registry_creds] quay.io/x"),
        ("skopeo copy --dest-creds 'me:Pl4nt8Dst' a b", "skopeo copy --dest-creds 'me:[redacted:registry_creds]' a b"),
        ("hatch publish -u __token__ -a Pl4nt8Hatch", "hatch publish -u __token__ -a [redacted:publish_password]"),
        ("pdm publish -P Pl4nt8Pdm", "pdm publish -P [redacted:publish_password]"),
        ("doctl auth init -t dop9Pl4nt8", "doctl auth init -t [redacted:cli_login_token]"),
        ("b2 account authorize 0012ab K001Pl4nt8", "b2 account authorize 0012ab [redacted:b2_application_key]"),
        ("security import cert.p12 -k k -P Pl4nt8Imp", "security import cert.p12 -k k -P [redacted:keychain_command_password]"),
        ("signtool sign /f c.pfx /p Pl4nt8Sign app.exe", "signtool sign /f c.pfx /p [redacted:signing_password] app.exe"),
        ("psexec \\\\h -u admin -p Pl4nt8Ps cmd", "psexec \\\\h -u admin -p [redacted:windows_command_password] cmd"),
        ("winrs -r:h -u:admin -p:Pl4nt8Wr cmd", "winrs -r:h -u:admin -p:[redacted:windows_command_password] cmd"),
        ("schtasks /create /tn x /ru me /rp Pl4nt8St /tr c", "schtasks /create /tn x /ru me /rp [redacted:windows_command_password] /tr c"),
        ("drush upwd admin 'Pl4nt8 Dr'", "drush upwd admin '[redacted:drush_password]'"),
        ("setenv DB_PASSWORD Pl4nt8Csh", "setenv DB_PASSWORD [redacted:shell_set_secret]"),
        ("chpasswd <<< 'bob:Pl4nt8Ch'", "chpasswd <<< '[redacted:here_string_secret]'"),
        ("printf %s Pl4nt8Pf | sudo -S apt update", "printf %s [redacted:printf_piped_secret] | sudo -S apt update"),
        ("printf '%s' Pl4nt8Wr | npx wrangler secret put KEY", "printf '%s' [redacted:printf_piped_secret] | npx wrangler secret put KEY"),
        ('echo "*:*:*:app:Pl4nt8Pg" > $HOME/.pgpass', 'echo "*:*:*:app:[redacted:pgpass_password]" > $HOME/.pgpass'),
        ("bindpw\tPl4nt8Bind", "bindpw\t[redacted:config_password]"),
        ("  olcRootPW: Pl4nt8Olc", "  olcRootPW: [redacted:config_password]"),
        ("    auth_pass 8Pl4nt", "    auth_pass [redacted:config_password]"),
        ("keyPassword \"Pl4nt8Key\"", "keyPassword \"[redacted:gradle_signing_password]\""),
        ("u.set_password('Pl4nt8Dj')", "u.set_password('[redacted:django_password]')"),
        ("set password for 'a'@'%' = 'Pl4nt8Sp';", "set password for 'a'@'%' = '[redacted:sql_set_password]';"),
        ("define('AUTH_KEY', 'Pl4nt8 Salt!')", "define('AUTH_KEY', '[redacted:php_define_secret]')"),
        ("Cookie: sid=1; sessionid=Pl4nt8Sess; a=b", "Cookie: sid=1; sessionid=[redacted:session_cookie]; a=b"),
        (
            "Cookie: sessionid=Pl4nt8One; theme=dark; remember_me=Pl4nt8Two; sid=Pl4nt8Three; jwt=Pl4nt8Four",
            "Cookie: sessionid=[redacted:session_cookie]; theme=dark; remember_me=[redacted:session_cookie]; "
            "sid=[redacted:session_cookie]; jwt=Pl4nt8Four",
        ),
        ("Set-Cookie: auth_token=Pl4nt8Auth; Path=/", "Set-Cookie: auth_token=[redacted:session_cookie]; Path=/"),
        ("curl --cookie \"session=Pl4nt8Curl\" h", "curl --cookie \"session=[redacted:session_cookie]\" h"),
        (
            "-----BEGIN OpenVPN Static key V1-----\n0a1b2c3d\n4e5f6a7b",
            "-----BEGIN OpenVPN Static key V1-----\n[redacted:openvpn_static_key]",
        ),
        # a value an earlier version's rule finds keeps that rule's kind
        (f"set -gx NETLIFY_AUTH_TOKEN {NETLIFY}", "set -gx NETLIFY_AUTH_TOKEN [redacted:netlify_token]"),
    ],
)  # fmt: skip
def test_more_forms_of_the_version_8_kinds_are_redacted(text: str, expected: str) -> None:
    assert redact(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        # another command's option after a shell operator: `patch -p1`, `cp -pr`, `tar -pxvf`
        "mysql -u root shop < schema.sql && patch -p1 < fix.diff",
        'mysql -u root -e "show tables"; cp -pr backup/ /srv/',
        "mysqldump shop | gzip > shop.gz; tar -pxvf old.tar",
    ],
)
def test_a_short_option_after_a_shell_operator_is_no_mysql_password(text: str) -> None:
    assert version(text) == "8"  # `mysql` is version 8's trigger for this change
    assert_kept_beside(text, NETLIFY, "netlify_token")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # within mysql's own command any value counts; after an operator, one as long as a password
        ("mysql -uroot -pab shop", "mysql -uroot -p[redacted:command_password] shop"),
        (
            "mysql -h db | tee x.log; mysql -u app -pS3c2 shop",
            "mysql -h db | tee x.log; mysql -u app -p[redacted:command_password] shop",
        ),
        (
            'mysql -u root -e "use shop; select 1" -pPl4nt8Sql',
            'mysql -u root -e "use shop; select 1" -p[redacted:command_password]',
        ),
        ("mariadb -u r; ls; mariadb-dump -pab x", "mariadb -u r; ls; mariadb-dump -p[redacted:command_password] x"),
    ],
)  # fmt: skip
def test_a_mysql_password_is_still_found(text: str, expected: str) -> None:
    assert redact(text)[0] == expected
