"""Rules that read a run of a command line up to an option (`-p PASSWORD`) find, in linear time, what
`finditer` finds (`engine.secrets._matches`): a head after which nothing is found makes every later head
before the same stop fail too, so those are passed over."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest

from engine import secrets
from engine.sanitize import redact
from engine.secret_formats import KIND_VERSION

# Every rule that finds its matches this way: (kind, pattern, head, stops).
RUN_RULES = [
    *(
        (kind, pattern, head, rule.stops)
        for kind, rule in secrets._FORM_TOKENS.items()
        if rule.heads
        for pattern, head in zip(rule.patterns, rule.heads, strict=True)
    ),
    ("command_password", secrets._PASSWORD_COMMAND, secrets._PASSWORD_COMMAND_HEAD, "\n"),
]
WORDS = [
    "keytool", "-storepass", "-keypass", "pw1", "'q p'", "redis-cli", "-a", "--pass", "smbclient",
    "-U", "u%pw2", "-U u%pw3", "docker login", "podman login", "nerdctl login", "buildah login",
    "skopeo login", "helm registry login", "az login", "oc login", "cf login", "login", "-p", "-pX9",
    "gh secret set", "--body", "-b", "NAME", "ssh-keygen", "-N", "-t",
    "mysql", "mariadb", "mysqldump", "sshpass", "$PW", "-u", "me", "|", ";", "&", "\n", " ", "\t",
    '"d q"', "=v", "sqlcmd", "bcp", "-P", "-Ppw4", "mongosh", "mongodump", "ldapsearch", "ldapadd",
    "ldapmodify", "ldapdelete", "ldappasswd", "ldapwhoami", "-w", "openssl enc", "openssl aes-256-cbc",
    "openssl des3", "-k", "mosquitto_pub", "mosquitto_sub", "mosquitto_rr", "lftp", "-u me,pw5",
    "add-generic-password", "add-internet-password", "nmcli", "password", "wifi-sec.psk",
    "cqlsh", "cypher-shell", "influx setup", "twine upload", "nuget add source", "nuget update source",
    "nuget sources add", "nuget sources update", "nuget push", "vsce publish", "ovsx publish",
    "ovsx create-namespace", "--pat", "codecov", "codecovcli", "-t", "expo login", "ipmitool",
    "xfreerdp", "wlfreerdp", "sdl-freerdp", "/p:pw6", "rdesktop", "snmpwalk", "snmpget", "snmpgetnext",
    "snmpset", "snmpbulkwalk", "snmpbulkget", "snmptable", "snmptrap", "-A", "-X", "keyvault secret set",
    "--value", "&&", "2>x", "-c", "put-parameter", "--type SecureString", "--type String", "file://x",
]  # fmt: skip
# Version 8's commands and options, with the words every command line has.
WORDS_8 = [
    "pw1", "'q p'", "$PW", "-u", "me", "|", ";", "&", "\n", " ", "\t", '"d q"', "=v", "&&", "2>x",
    "-p", "-P", "-t", "-a", "password", "-storepass", "-keypass",
    "mysqladmin", "mysqlsh", "--uri", "root:pw7@h", "isql", "tsql", "hdbsql", "couchbase-cli",
    "elasticsearch-users", "influx user", "crane auth login", "oras login", "regctl registry login",
    "cosign login", "az acr login", "uv publish", "hatch publish", "pdm publish", "glab auth login",
    "doctl auth init", "rclone config create", "rclone config update", "secret_access_key", "pass",
    "supabase", "altool", "@env:X", "security unlock-keychain", "security create-keychain",
    "security import", "jarsigner", "signtool", "/p", "certutil", "psexec", "winrs", "-p:pw8",
    "schtasks", "/rp", "pscp", "plink", "-pw", "kubeadm", "--token", "--token=x9",
]  # fmt: skip


def _texts(words: list[str] = WORDS) -> Iterator[str]:
    rng = random.Random(20261205)
    for _ in range(1000):
        yield " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))


def _found(matches: Iterator[re.Match[str]]) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in matches]


def test_the_rules_that_read_runs_are_forty_six_command_kinds_and_mysql() -> None:
    assert sorted({kind for kind, *_ in RUN_RULES}) == [
        "altool_password",
        "cassandra_password",
        "cli_login_token",
        "codecov_token",
        "command_password",
        "couchbase_password",
        "elastic_user_password",
        "expo_password",
        "gh_secret",
        "hana_password",
        "influx_password",
        "influx_user_password",
        "ipmi_password",
        "keychain_command_password",
        "keychain_password",
        "keytool_password",
        "keyvault_secret",
        "kubeadm_token",
        "ldap_password",
        "lftp_password",
        "login_password",
        "marketplace_token",
        "mongo_password",
        "mqtt_password",
        "mysqladmin_password",
        "mysqlsh_password",
        "neo4j_password",
        "nmcli_password",
        "nuget_password",
        "openssl_password",
        "publish_password",
        "rclone_secret",
        "rdp_password",
        "redis_password",
        "registry_client_password",
        "registry_password",
        "signing_password",
        "smb_password",
        "snmp_community",
        "snmp_passphrase",
        "sqlserver_password",
        "ssh_keygen_passphrase",
        "ssm_secure_value",
        "supabase_password",
        "sybase_password",
        "twine_password",
        "windows_command_password",
    ]
    # version 5: registry 6 tools, login 3, one form each of the other five, and mysql's; version 6:
    # ldap 6 tools, openssl 3, mosquitto 3, sqlserver 2, keychain 2, one each of mongo, lftp, nmcli;
    # version 7: snmp 8 tools times 3 options, nuget 5, rdp 4, marketplace 3, one each of the other 9;
    # version 8: registry clients 5, Windows tools 5, publishers 3, keychain 3, signing 3, Sybase 2,
    # login tokens 2, rclone 2, one each of the other 9
    assert len(RUN_RULES) == 6 + 3 + 6 + (6 + 3 + 3 + 2 + 2 + 3) + (24 + 5 + 4 + 3 + 9) + (
        5 + 5 + 3 + 3 + 3 + 2 + 2 + 2 + 9
    )
    for _, pattern, _, stops in RUN_RULES:
        # the run right after the head: a lazy class that excludes exactly the stops
        assert f"[^{'|;&' if stops != chr(10) else ''}" in pattern.pattern.replace("\\n", "")


@pytest.mark.parametrize("rule", RUN_RULES, ids=lambda r: f"{r[0]}:{r[1].pattern[:40]}")
def test_runs_find_what_finditer_finds(
    rule: tuple[str, re.Pattern[str], re.Pattern[str], str],
) -> None:
    kind, pattern, head, stops = rule
    texts = _texts(WORDS_8 if KIND_VERSION.get(kind) == 8 else WORDS)
    # control: the texts hold matches of every rule, not only misses
    assert matches_as_finditer(pattern, head, stops, texts) > 0


def matches_as_finditer(
    pattern: re.Pattern[str],
    head: re.Pattern[str],
    stops: str | re.Pattern[str],
    texts: Iterator[str],
) -> int:
    """Assert that `_matches` finds what `finditer` finds in each text; the matches found."""
    found = 0
    for text in texts:
        expected = _found(pattern.finditer(text))
        assert _found(secrets._matches(pattern, text, head, stops)) == expected, text
        found += len(expected)
    return found


class _Counting:
    """A pattern that counts the `match` calls made on it."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.calls = 0

    def match(self, text: str, pos: int) -> re.Match[str] | None:
        self.calls += 1
        return self.pattern.match(text, pos)


def test_a_head_with_nothing_after_it_passes_over_the_rest_of_its_run() -> None:
    rule = secrets._FORM_TOKENS["keytool_password"]
    pattern, head = rule.patterns[0], rule.heads[0]
    counting = _Counting(pattern)
    one_line = "keytool -list -v " * 200
    assert list(secrets._matches(counting, one_line, head, rule.stops)) == []  # type: ignore[arg-type]
    assert (
        counting.calls == 1
    )  # the first head read to the end of the line; the other 199 failed with it
    # control: on 200 lines each head has its own run, and each is tried
    counting = _Counting(pattern)
    many_lines = "keytool -list -v\n" * 200
    assert list(secrets._matches(counting, many_lines, head, rule.stops)) == []  # type: ignore[arg-type]
    assert counting.calls == 200
    # a password after the dead heads' stop is still found
    text = f"{one_line}; keytool -list -storepass Pl4ntK3yPw"
    assert redact(text)[0] == f"{one_line}; keytool -list -storepass [redacted:keytool_password]"


def test_a_name_a_longer_name_begins_with_is_no_head_there() -> None:
    # `ldapsearch` starts `ldapsearchx`, where `ldapsearch\b` fails: that failure must not pass over
    # the real command later in the same run
    text = "ldapsearchx -v ldapsearch -x -w Pl4ntLd4pPw -b dc=ex"
    assert redact(text)[0] == "ldapsearchx -v ldapsearch -x -w [redacted:ldap_password] -b dc=ex"
    rule = secrets._FORM_TOKENS["ldap_password"]
    assert [m.span() for m in rule.heads[0].finditer(text)] == [(15, 25)]  # not (0, 10)
    # control: alone, the longer name is no command of the rule
    assert redact("ldapsearchx -w Pl4ntLd4pPw")[0] == "ldapsearchx -w Pl4ntLd4pPw"


def test_sshpass_heads_are_tried_inside_a_mysql_run_that_found_nothing() -> None:
    text = "mysql -u root " * 50 + "sshpass -p Pl4ntSshPw ssh host " + "mysql -u x " * 50
    kept, counts = redact(text)
    assert "Pl4ntSshPw" not in kept
    assert counts == {"redacted:command_password": 1}
    assert "mysql -u root " * 50 in kept  # control: the rest is as it was


def test_a_plugin_needle_must_be_a_literal_of_its_pattern() -> None:
    from detect_secrets.plugins.npm import NpmDetector

    with pytest.raises(ValueError, match="NpmDetector: each needle must be a literal"):
        secrets._plugin(NpmDetector, needles=("/:_token=",))
    rule = secrets._plugin(NpmDetector, needles=("/:_authToken=",))
    key = "//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert list(rule.spans(key)) == [(33, 73)]
    assert list(rule.spans("https://example.com/a " * 50)) == []  # control: no literal, not scanned
