"""The credential formats that sanitizer versions 4 to 7 added, as data: for each kind, its forms.

A form is (head, prefix, tail): a regex, a literal, a regex. Every match of a form holds its prefix, so
the prefixes are the version's trigger texts (`engine.sanitize.VERSION_TRIGGERS`): a corpus that holds
none of version 7's reads under version 7 exactly as under version 6, one that holds none of version
6's or 7's as under version 5, and so on. Standard library only, so that the sanitizer names the triggers without
importing detect-secrets; `engine.secrets` builds the rules.
"""

from __future__ import annotations

# The newest sanitizer version with formats here.
LATEST_VERSION = 7
ALNUM = "[A-Za-z0-9]"
Form = tuple[str, str, str]


def _forms(*prefixes: str, tail: str, head: str = "") -> tuple[Form, ...]:
    return tuple((head, prefix, tail) for prefix in prefixes)


_DOPPLER_KEY = f"{ALNUM}{{40,44}}"


# A value as a shell command gives it: quoted (the quotes kept out) or bare.
def _value(first: str) -> str:
    """A value as a shell command gives it: quoted (the quotes kept out), or bare, starting with a
    character of the class `first`."""
    return rf"""(?:'(?P<q>[^'\n]+)'|"(?P<d>[^"\n]+)"|(?P<t>{first}\S*))"""


_VALUE = _value(r"""[^\s'"]""")
# What may stand between a command's name and the option that takes the password.
_ARGS = r"[^\n|;&]*?[ \t]"
# `docker login -u me -p PASS` (`--password PASS` is an assignment in every version): the value only.
_LOGIN_PASSWORD = _ARGS + r"-p(?:[ \t]+|=)?" + _VALUE
# `echo VALUE` or `printf VALUE` (with options), the value quoted or bare: what a pipe then feeds.
_ECHOED = (
    r"(?:echo|printf)[ \t]+(?:-[a-zA-Z]+[ \t]+)?"
    r"""(?:'(?P<q>[^'\n]+)'|"(?P<d>[^"\n]+)"|(?P<t>[^\s'"|]+))"""
)
# A quoted name (`engine.secrets` checks that it names a secret) and a quoted value.
_NAME = r"""(?P<quote>["'])(?P<key>[A-Za-z_][A-Za-z0-9_]*)(?P=quote)"""
_QUOTED = r"""(?:'(?P<q>[^'\n]+)'|"(?P<d>[^"\n]+)")"""
# The last words of an XML element's name that hold a secret, as such names are spelled.
_XML_SECRET_WORDS = tuple(
    spelling
    for word in ("password", "passwd", "passphrase", "secret")
    for spelling in (word, word.capitalize(), word.upper())
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

# Version 5: formats found missing by feeding the rules credential-shaped lines (docs/transcripts.md):
# provider tokens with a literal prefix, passwords given to a command on its command line or piped into
# it, and secrets set into the environment, an HTTP client, a connection string or an XML element.
VERSION_5_FORMS: dict[str, tuple[Form, ...]] = {
    "rubygems_key": _forms("rubygems_", tail="[a-f0-9]{48}"),
    "clojars_token": _forms("CLOJARS_", tail=f"{ALNUM}{{60}}"),
    "contentful_token": _forms("CFPAT-", tail=r"[A-Za-z0-9_\-]{43}"),
    "dynatrace_token": _forms("dt0c01.", tail=rf"{ALNUM}{{24}}\.{ALNUM}{{64}}"),
    "easypost_key": _forms("EZAK", "EZTK", tail=f"{ALNUM}{{54}}"),
    "flutterwave_key": _forms("FLWSECK-", "FLWSECK_TEST-", tail="[a-fA-F0-9]{32}-X"),
    "mapbox_token": _forms("sk.eyJ", tail=r"[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    "prefect_key": _forms("pnu_", tail=f"{ALNUM}{{36}}"),
    "readme_key": _forms("rdme_", tail="[a-z0-9]{70}"),
    "brevo_key": _forms("xkeysib-", "xsmtpsib-", tail=f"[a-f0-9]{{64}}-{ALNUM}{{16}}"),
    "shippo_token": _forms("shippo_live_", "shippo_test_", tail="[a-f0-9]{40}"),
    "square_token": _forms("sq0atp-", tail=r"[A-Za-z0-9_\-]{22,60}"),
    "huggingface_org_token": _forms("api_org_", tail="[A-Za-z]{34}"),
    "typeform_token": _forms("tfp_", tail=r"[A-Za-z0-9_\-.=]{59}"),
    "frameio_token": _forms("fio-u-", tail=r"[A-Za-z0-9_\-=]{64}"),
    "alibaba_key": _forms("LTAI", tail=f"{ALNUM}{{12,20}}(?!{ALNUM})"),
    "adobe_client_secret": _forms("p8e-", tail=f"{ALNUM}{{32}}(?!{ALNUM})"),
    "linear_oauth_token": _forms("lin_oauth_", tail="[a-f0-9]{64}"),
    # `Authorization: SSWS <token>`: Okta's API tokens (42 characters, `00` first)
    "okta_token": _forms("SSWS ", tail=r"(?P<t>00[A-Za-z0-9_\-]{40})"),
    # `aws configure set [profile.NAME.]aws_secret_access_key VALUE` (and the session token)
    "aws_configure_secret": _forms(
        "aws configure set",
        tail=r"[ \t]+(?:[\w\-]+\.)*(?:aws_secret_access_key|aws_session_token)[ \t]+" + _VALUE,
    ),
    "keytool_password": _forms(
        "keytool", tail=_ARGS + r"-(?:src|dest)?(?:store|key)pass[ \t]+" + _VALUE
    ),
    "redis_password": _forms("redis-cli", tail=_ARGS + r"(?:-a|--pass)[ \t]+" + _VALUE),
    "login_password": tuple(("", f"{tool} login", _LOGIN_PASSWORD) for tool in ("az", "oc", "cf")),
    "smb_password": _forms(
        "smbclient", tail=_ARGS + r"""(?:-U|--user)(?:[ \t]+|=)["']?[^\s%"']+%(?P<t>[^\s"']+)"""
    ),
    # `htpasswd -b FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD` (no file)
    "htpasswd_password": (
        ("", "htpasswd", r"[ \t]+-(?=[a-mo-zA-Z]*b)[a-mo-zA-Z]+[ \t]+\S+[ \t]+\S+[ \t]+" + _VALUE),
        ("", "htpasswd", r"[ \t]+-(?=[a-zA-Z]*b)(?=[a-zA-Z]*n)[a-zA-Z]+[ \t]+\S+[ \t]+" + _VALUE),
    ),
    "sshpass_password": _forms("SSHPASS=", tail=_VALUE),
    # `gh secret set NAME --body VALUE`
    "gh_secret": _forms("gh secret set", tail=_ARGS + r"(?:--body|-b)(?:[ \t]+|=)" + _VALUE),
    # a literal set into the environment under a name that names a secret (`engine.secrets` checks
    # the name): `os.environ["DB_PASSWORD"] = "…"`, `ENV[…] = …`, `process.env[…] = …`, and
    # `monkeypatch.setenv("API_TOKEN", "…")`, `os.putenv`, `os.environ.setdefault`, `System.put_env`
    "env_var_secret": (
        *_forms(
            "environ[",
            "ENV[",
            "env[",
            tail=rf"[ \t]*{_NAME}[ \t]*\][ \t]*=(?!=)[ \t]*{_QUOTED}",
        ),
        *_forms(
            "setenv(",
            "putenv(",
            "put_env(",
            "setdefault(",
            tail=rf"[ \t]*{_NAME}[ \t]*,[ \t]*{_QUOTED}",
        ),
    ),
    # a value echoed into a command that reads a password from stdin: `echo PASS | sudo -S …`,
    # `echo PASS | docker login -u me --password-stdin`, `echo TOKEN | gh auth login --with-token`
    "piped_password": (
        (_ECHOED + r"[ \t]*\|[ \t]*", "sudo -S", ""),
        *(
            (_ECHOED + r"[ \t]*\|[ \t]*[^|\n;&]*?", prefix, "")
            for prefix in ("--password-stdin", "--with-token")
        ),
    ),
    # `ssh-keygen … -N PASSPHRASE` (the new key's passphrase; `-N ''` is none)
    "ssh_keygen_passphrase": _forms("ssh-keygen", tail=_ARGS + r"-N[ \t]+" + _VALUE),
    # PowerShell: `ConvertTo-SecureString 'PASS' -AsPlainText`
    "securestring_password": _forms(
        "ConvertTo-SecureString", tail=r"[ \t]+(?:-String[ \t]+)?" + _VALUE
    ),
    # Python's HTTP clients: `auth=("user", "PASS")`, `HTTPBasicAuth("user", "PASS")`, …
    "auth_tuple_password": _forms(
        "auth=(",
        "BasicAuth(",
        "HTTPBasicAuth(",
        "HTTPDigestAuth(",
        tail=r"""[ \t]*(?:'[^'\n]*'|"[^"\n]*"|[A-Za-z_][\w.]*)[ \t]*,[ \t]*""" + _QUOTED,
    ),
    # an ODBC connection string's `Pwd=…;` (a path after `PWD=` is the shell's working directory)
    "odbc_password": _forms("Pwd=", "PWD=", "pwd=", tail=r"""(?P<t>[^;\s'"]+)"""),
    # `<password>…</password>`, `<db.password>…`, `<clientSecret>…`: an element whose name ends so
    "xml_secret": _forms(
        *(f"{word}>" for word in _XML_SECRET_WORDS),
        head=r"<[\w.:\-]*",
        tail=r"(?P<t>[^<>\n]{1,200})</",
    ),
}

# Version 6: found missing the same way (docs/transcripts.md): passwords given to database, directory,
# archive, message-queue and Wi-Fi tools, set in SQL, a Redis or .NET configuration or a keychain, and
# tokens of providers with a literal prefix. A password in SQL is quoted with `'`: a trigger never holds
# `"` (a JSONL line spells it `\"`, which the version scan does not read).
# A value given to a command: as `_VALUE`, but a bare one never starts with `-` (`-p --next-option`:
# the tool asks for the password).
_OPTION_VALUE = _value(r"""[^\s'"\-]""")
# A password in SQL: between `'`s, without a `"` (a Python string holding SQL, `"PASSWORD '", "…"`,
# is code, not a password).
_SQL_QUOTED = r"""(?P<t>[^'"\n]+)'"""
# What stands before a lower-case `password '…'` or `identified by '…'` in a statement: `WITH`, `LOGIN`,
# `[UN]ENCRYPTED`, or `ROLE`/`USER` and a name.
_SQL_USER = r"(?i:role|user)[ \t]+\S+[ \t]+"
_SQL_PASSWORD_AT = rf"(?:(?i:with|encrypted|unencrypted|login)[ \t]+|{_SQL_USER})"
# What a Redis directive stands after: the start of a line (a configuration file), `CONFIG SET` or `--`.
_REDIS_AT = r"(?:(?<![^\n])[ \t]*|(?i:config[ \t]+set)[ \t]+|--)"

VERSION_6_FORMS: dict[str, tuple[Form, ...]] = {
    "netlify_token": _forms("nfp_", tail=f"{ALNUM}{{36,40}}(?!{ALNUM})"),
    "render_key": _forms("rnd_", tail=f"{ALNUM}{{32}}(?!{ALNUM})"),
    "posthog_personal_key": _forms("phx_", tail=f"{ALNUM}{{43}}(?!{ALNUM})"),
    "google_refresh_token": _forms("1//0", tail=r"[A-Za-z0-9_\-]{40,}"),
    "facebook_token": _forms("EAACEdEose0cBA", tail=f"{ALNUM}{{20,}}"),
    "cloudflare_origin_ca_key": _forms("v1.0-", tail="[a-f0-9]{24}-[a-f0-9]{146}"),
    # `ALTER USER app WITH [ENCRYPTED] PASSWORD 'PASS'`, `IDENTIFIED BY 'PASS'`, `PASSWORD('PASS')`
    # (in capitals as written; in lower case only in a statement's shape, for prose says "identified by
    # 'name'")
    "sql_password": (
        *_forms("PASSWORD '", "IDENTIFIED BY '", "PASSWORD('", "password('", tail=_SQL_QUOTED),
        *_forms("password '", "Password '", head=_SQL_PASSWORD_AT, tail=_SQL_QUOTED),
        *_forms("identified by '", head=_SQL_USER, tail=_SQL_QUOTED),
    ),
    # `sqlcmd -S db -U sa -P PASS`, `bcp … -P PASS` (SQL Server's tools)
    "sqlserver_password": (
        ("", "sqlcmd", r"\b" + _ARGS + r"-P[ \t]*" + _OPTION_VALUE),
        ("", "bcp ", f"(?:{_ARGS})?" + r"-P[ \t]*" + _OPTION_VALUE),
    ),
    # `mongosh -u admin -p PASS`, `mongodump … -p PASS`
    "mongo_password": _forms("mongo", tail=r"\w*\b" + _ARGS + r"-p[ \t]+" + _OPTION_VALUE),
    # `sqlplus app/PASS@db`
    "sqlplus_password": _forms(
        "sqlplus",
        tail=r"""(?:[ \t]+-\w+)*[ \t]+["']?[\w$#.]+/(?P<t>[^\s@/'"]+)(?=@|[\s'"]|$)""",
    ),
    # `ldapsearch -D cn=admin,dc=ex -w PASS …` (OpenLDAP's tools; `-W` asks for it)
    "ldap_password": _forms(
        *(f"ldap{tool}" for tool in ("search", "add", "modify", "delete", "passwd", "whoami")),
        tail=r"\b" + _ARGS + r"-w[ \t]+" + _OPTION_VALUE,
    ),
    # `zip -r -P PASS out.zip dir`, `unzip -P PASS in.zip`; `7z a -pPASS out.7z dir` (`x`, `e` too)
    "archive_password": (
        (r"(?:un)?zip(?:[ \t]+-[A-Za-z]+){0,6}", " -P", r"[ \t]+" + _OPTION_VALUE),
        *(
            ("", f"{tool} {command}", r"(?:[ \t]+-[\w=.]+){0,6}?[ \t]+-p(?P<t>[^\s'\"]+)")
            for tool in ("7z", "7za")
            for command in "axe"
        ),
    ),
    # `openssl enc -aes-256-cbc -k PASS`, `openssl aes-256-cbc -k PASS`
    "openssl_password": _forms(
        "openssl enc", "openssl aes-", "openssl des", tail=_ARGS + r"-k[ \t]+" + _OPTION_VALUE
    ),
    # `echo 'app:PASS' | chpasswd`; `echo PASS | passwd --stdin app`
    "passwd_stdin": (
        (
            r"""(?:echo|printf)[ \t]+(?:-[a-zA-Z]+[ \t]+)?["']?[\w.\-]+:(?P<t>[^\s'"|]+)["']?"""
            r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?",
            "chpasswd",
            "",
        ),
        (_ECHOED + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?", "passwd --stdin", ""),
    ),
    # `requirepass PASS` in redis.conf, `CONFIG SET masterauth PASS`, `redis-server --requirepass PASS`
    "redis_config_password": _forms(
        "requirepass", "masterauth", head=_REDIS_AT, tail=r"[ \t]+" + _OPTION_VALUE
    ),
    # `mc alias set NAME URL ACCESS_KEY SECRET_KEY` (MinIO's client)
    "minio_secret": _forms(
        "mc alias set",
        "mc config host add",
        tail=r"[ \t]+\S+[ \t]+\S+[ \t]+\S+[ \t]+" + _OPTION_VALUE,
    ),
    # `rabbitmqctl add_user NAME PASS`, `rabbitmqctl change_password NAME PASS`
    "rabbitmq_password": _forms(
        "rabbitmqctl add_user",
        "rabbitmqctl change_password",
        tail=r"[ \t]+\S+[ \t]+" + _OPTION_VALUE,
    ),
    # `mosquitto_pub -u me -P PASS …` (and `_sub`, `_rr`)
    "mqtt_password": _forms(
        "mosquitto_pub",
        "mosquitto_sub",
        "mosquitto_rr",
        tail=r"\b" + _ARGS + r"-P[ \t]+" + _OPTION_VALUE,
    ),
    # `lftp -u me,PASS host`
    "lftp_password": _forms("lftp", tail=r"\b" + _ARGS + r"""-u[ \t]+[^\s,'"]+,(?P<t>[^\s'"]+)"""),
    # macOS keychain: `security add-generic-password -a me -s svc -w PASS`
    "keychain_password": _forms(
        "add-generic-password", "add-internet-password", tail=_ARGS + r"-w[ \t]+" + _OPTION_VALUE
    ),
    # Windows: `cmdkey /add:srv /user:me /pass:PASS`; `net use \\srv\share PASS /user:me`
    "windows_password": (
        ("", "/pass:", _OPTION_VALUE),
        ("", "net use", r"(?:[ \t]+(?:[A-Za-z]:|\*))?[ \t]+\\\\\S+[ \t]+(?!/)" + _OPTION_VALUE),
    ),
    # `vault login TOKEN` (20 characters or more: a legacy `s.` token; `hvs.` ones are a format of their own)
    "vault_login_token": _forms(
        "vault login", tail=r"(?:[ \t]+-[\w\-]+(?:=\S+)?)*[ \t]+(?P<t>[A-Za-z0-9._\-]{20,})(?!\S)"
    ),
    # Wi-Fi: `nmcli dev wifi connect NAME password PASS`; `wpa_passphrase NAME PASS`, `psk="PASS"`
    "nmcli_password": _forms(
        "nmcli", tail=r"\b" + _ARGS + r"(?:password|wifi-sec\.psk)[ \t]+" + _OPTION_VALUE
    ),
    "wifi_password": (
        ("", "wpa_passphrase", r"""[ \t]+(?:'[^'\n]+'|"[^"\n]+"|\S+)[ \t]+""" + _OPTION_VALUE),
        ("", "psk=", _OPTION_VALUE),
    ),
    # .NET's `<add key="DbPassword" value="PASS" />` (`engine.secrets` checks that the key names a
    # secret); `netlify env:set API_TOKEN VALUE`; Windows' `setx API_TOKEN VALUE`
    "keyed_setting": (
        ("", "<add key=", rf"{_NAME}[ \t]+value=[ \t]*{_QUOTED}"),
        ("", "env:set", r"[ \t]+(?P<key>[A-Za-z_]\w*)[ \t]+" + _OPTION_VALUE),
        ("", "setx ", r"[ \t]*(?P<key>[A-Za-z_]\w*)[ \t]+" + _OPTION_VALUE),
    ),
}

# Version 7: found missing the same way (docs/transcripts.md): passwords and tokens given to database
# shells, package registries' and marketplaces' command lines, remote-management tools and secret
# stores, and HTTPie's, curl's and Redis's own spellings.
# A value given to a command, as `_OPTION_VALUE`, but not a shell operator or a redirection
# (`cargo login && cargo publish`, `bw unlock 2>/dev/null`: the tool asks for it).
_ARG_VALUE = r"(?!\d*[<>])" + _value(r"""[^\s'"\-&|;()<>]""")
# The same, bare only (`"sonar.login=", …` is code).
_BARE_ARG = r"""(?!\d*[<>])(?P<t>[^\s'"\-&|;()<>]\S*)"""
# `twine upload -u __token__ -p PASS`: a command's `-p`, as `mongo_password` reads it.
_DASH_P = r"\b" + _ARGS + r"-p[ \t]+" + _ARG_VALUE
# A pipe into a command, run directly or by a package runner (`| npx wrangler …`).
_PIPE_TO = r"[ \t]*\|[ \t]*(?:(?:npx|bunx|pnpm[ \t]+dlx|yarn[ \t]+dlx)[ \t]+)?"
# The name a piped value is stored under (`… | wrangler secret put API_KEY`).
_SECRET_NAME = r"(?:[ \t]+-[\w\-=]+)*[ \t]+[A-Za-z_][\w\-]*(?![^\s|;&])"
# The SNMP tools that take a community or v3 passphrases.
_SNMP_TOOLS = ("walk", "get", "getnext", "set", "bulkwalk", "bulkget", "table", "trap")
# One word of a command line, quoted or bare (`USER` in `http-basic.NAME USER PASS`).
_WORD = r"""(?:'[^'\n]+'|"[^"\n]+"|[^\s'"]+)"""

VERSION_7_FORMS: dict[str, tuple[Form, ...]] = {
    # `cqlsh -u cassandra -p PASS host`
    "cassandra_password": _forms("cqlsh", tail=_DASH_P),
    # `cypher-shell -u neo4j -p PASS`; `neo4j-admin [dbms] set-initial-password PASS`
    "neo4j_password": _forms("cypher-shell", tail=_DASH_P),
    "neo4j_initial_password": _forms("set-initial-password", tail=r"[ \t]+" + _ARG_VALUE),
    # `influx setup -u admin -p PASS -o org -b bucket`
    "influx_password": _forms("influx setup", tail=_DASH_P),
    # `twine upload -u __token__ -p PASS dist/*`
    "twine_password": _forms("twine upload", tail=_DASH_P),
    # `dotnet nuget add source URL -u me -p PASS`, `dotnet nuget push x.nupkg -k KEY`
    "nuget_password": (
        *_forms(
            *(
                f"nuget {verb}"
                for verb in ("add source", "update source", "sources add", "sources update")
            ),
            tail=_DASH_P,
        ),
        *_forms("nuget push", tail=_ARGS + r"-k[ \t]+" + _ARG_VALUE),
    ),
    # `nuget setapikey KEY`
    "nuget_api_key": _forms("setapikey", tail=r"[ \t]+" + _ARG_VALUE),
    # `cargo login TOKEN`
    "cargo_token": _forms("cargo login", tail=r"[ \t]+" + _ARG_VALUE),
    # `poetry config http-basic.NAME USER PASS`, `composer config http-basic.HOST USER PASS`
    "http_basic_password": _forms(
        "http-basic.", tail=r"[\w.\-]{1,100}[ \t]+(?!-)" + _WORD + r"[ \t]+" + _ARG_VALUE
    ),
    # `poetry config pypi-token.NAME TOKEN`
    "pypi_token_setting": _forms("pypi-token.", tail=r"[\w.\-]{1,100}[ \t]+" + _ARG_VALUE),
    # `bundle config [set] [--global] HOST USER:PASS`
    "bundle_credentials": _forms(
        "bundle config",
        tail=r"""(?:[ \t]+(?:set|--[\w\-]+))*[ \t]+[\w.\-]+[ \t]+["']?[\w.\-@]+:(?P<t>[^\s'"/][^\s'"]*)""",
    ),
    # `npm config set _authToken TOKEN`, `yarn config set npmAuthToken TOKEN` (`…=TOKEN` is an
    # assignment in every version)
    "npm_auth_setting": _forms(
        "npm config set",
        "yarn config set",
        tail=r"(?:[ \t]+-[\w\-]+)*[ \t]+(?:\S*:)?(?:_authToken|_auth|_password|npmAuthToken|npmAuthIdent)"
        r"[ \t]+" + _ARG_VALUE,
    ),
    # `vsce publish -p TOKEN`, `ovsx publish --pat TOKEN` (the extension marketplaces)
    "marketplace_token": _forms(
        "vsce publish",
        "ovsx publish",
        "ovsx create-namespace",
        tail=_ARGS + r"(?:-p|--pat)[ \t]+" + _ARG_VALUE,
    ),
    # `codecov -t TOKEN`, `codecovcli upload-process -t TOKEN`
    "codecov_token": _forms("codecov", tail=r"\w*\b" + _ARGS + r"-t[ \t]+" + _ARG_VALUE),
    # `-Dsonar.login=TOKEN`
    "sonar_login": _forms("sonar.login=", head="(?:-D)?", tail=_BARE_ARG),
    # `expo login -u me -p PASS` (`-p --non-interactive`: it asks)
    "expo_password": _forms("expo login", tail=_ARGS + r"-p(?:[ \t]+|=)" + _ARG_VALUE),
    # HTTPie: `http -a me:PASS URL`, `https -a me:PASS URL`
    "httpie_password": _forms(
        "http -a ", "https -a ", tail=r"""["']?[^\s:'"`]*:(?P<t>[^\s'"`]+)"""
    ),
    # `ipmitool -I lanplus -H host -U admin -P PASS power status`
    "ipmi_password": _forms("ipmitool", tail=r"\b" + _ARGS + r"-P[ \t]+" + _ARG_VALUE),
    # `xfreerdp /u:me /p:PASS /v:host`; `rdesktop -u me -p PASS host`
    "rdp_password": (
        *_forms(
            "xfreerdp", "wlfreerdp", "sdl-freerdp", tail=r"\d?\b" + _ARGS + r"/p:" + _ARG_VALUE
        ),
        *_forms("rdesktop", tail=_DASH_P),
    ),
    # SNMPv3: `snmpwalk -v3 -l authPriv -u me -a SHA -A AUTHPASS -x AES -X PRIVPASS host` (a form per
    # option, so that both are found)
    "snmp_passphrase": tuple(
        ("", f"snmp{tool}", r"\b" + _ARGS + f"-{flag}[ \\t]+" + _ARG_VALUE)
        for flag in "AX"
        for tool in _SNMP_TOOLS
    ),
    # SNMPv1/v2c: `snmpwalk -v2c -c COMMUNITY host` (the community is the shared secret; `public`, a
    # plain word, is kept)
    "snmp_community": tuple(
        ("", f"snmp{tool}", r"\b" + _ARGS + r"-c[ \t]+" + _ARG_VALUE) for tool in _SNMP_TOOLS
    ),
    # `mosquitto_passwd -b FILE USER PASS`
    "mosquitto_passwd": _forms(
        "mosquitto_passwd",
        tail=r"(?:[ \t]+-c)?[ \t]+-b(?:[ \t]+-c)?[ \t]+\S+[ \t]+\S+[ \t]+" + _ARG_VALUE,
    ),
    # Redis's `AUTH [USER] PASS` typed at its prompt (`127.0.0.1:6379> AUTH PASS`) or a line's start
    # (a user is a name: `AUTH = "x9"` is code)
    "redis_auth": _forms(
        "AUTH ",
        head=r"(?:(?<![^\n])|(?<=>))[ \t]*",
        tail=r"(?:[\w.\-@]+[ \t]+)?" + _ARG_VALUE + r"(?=[ \t]*(?:\n|$))",
    ),
    # `curl --oauth2-bearer TOKEN`
    "oauth2_bearer": _forms("--oauth2-bearer", tail=r"(?:[ \t]+|=)" + _ARG_VALUE),
    # `consul acl set-agent-token agent TOKEN`
    "consul_token": _forms("set-agent-token", tail=r"[ \t]+\S+[ \t]+" + _ARG_VALUE),
    # Bitwarden's CLI: `bw unlock PASS`, `bw login EMAIL PASS`
    "bitwarden_password": (
        *_forms("bw unlock", tail=r"[ \t]+" + _ARG_VALUE),
        *_forms("bw login", tail=r"[ \t]+(?!-)\S+[ \t]+" + _ARG_VALUE),
    ),
    # `ngrok config add-authtoken TOKEN`, `ngrok authtoken TOKEN`
    "ngrok_token": _forms("add-authtoken", "ngrok authtoken", tail=r"[ \t]+" + _ARG_VALUE),
    # `doppler secrets set API_TOKEN VALUE` (`engine.secrets` checks that the name names a secret)
    "doppler_secret": _forms(
        "doppler secrets set", tail=r"[ \t]+(?P<key>[A-Za-z_]\w*)[ \t]+" + _ARG_VALUE
    ),
    # `aws ssm put-parameter --name db --type SecureString --value VALUE` (a `SecureString` only; a
    # value read from `file://` stays)
    "ssm_secure_value": _forms(
        "put-parameter",
        tail=r"(?=[^\n|;&]*?[ \t]--type(?:[ \t]+|=)SecureString\b)"
        + _ARGS
        + r"--value(?:[ \t]+|=)(?!file://)"
        + _ARG_VALUE,
    ),
    # `az keyvault secret set --vault-name v --name db --value VALUE`
    "keyvault_secret": _forms(
        "keyvault secret set", tail=_ARGS + r"--value(?:[ \t]+|=)" + _ARG_VALUE
    ),
    # `dotnet user-secrets set "Section:ApiKey" VALUE` (every value there is a secret)
    "user_secret": _forms("user-secrets set", tail=r"[ \t]+" + _WORD + r"[ \t]+" + _ARG_VALUE),
    # a value echoed into a secret store: `echo -n VALUE | gcloud secrets versions add NAME
    # --data-file=-`, `printf VALUE | docker secret create NAME -` (the store reads stdin: `-`);
    # `echo VALUE | [npx] wrangler secret put NAME`, `… | vercel env add NAME ENV`, `… | gh secret set
    # NAME` (they read stdin for the value; `gh secret set` is version 5's trigger, so the pipe is part
    # of this one's)
    "piped_secret": (
        *(
            (_ECHOED + _PIPE_TO, prefix, _SECRET_NAME)
            for prefix in ("wrangler secret put", "vercel env add")
        ),
        *(
            (_ECHOED + r"[ \t]*", pipe, _SECRET_NAME)
            for pipe in ("| gh secret set", "|gh secret set")
        ),
        (
            _ECHOED + r"[ \t]*\|[ \t]*",
            "gcloud secrets",
            r"(?:[ \t]+(?!--data-file)[^\s|;&]+){1,8}?[ \t]+--data-file(?:=|[ \t]+)-(?![^\s|;&])",
        ),
        (
            _ECHOED + r"[ \t]*\|[ \t]*",
            "docker secret create",
            r"(?:[ \t]+-[\w\-=]+)*[ \t]+[^\s|;&\-][^\s|;&]*[ \t]+-(?![^\s|;&])",
        ),
    ),
}

# The kinds that are a password given to a command (or set in a statement or a setting): a match is
# exactly its group, and a variable or placeholder there is kept (`engine.secrets`).
COMMAND_PASSWORDS = (
    "registry_password",
    "aws_configure_secret",
    "keytool_password",
    "redis_password",
    "login_password",
    "smb_password",
    "htpasswd_password",
    "sshpass_password",
    "gh_secret",
    "piped_password",
    "ssh_keygen_passphrase",
    "securestring_password",
    "sql_password",
    "sqlserver_password",
    "mongo_password",
    "sqlplus_password",
    "ldap_password",
    "archive_password",
    "openssl_password",
    "passwd_stdin",
    "redis_config_password",
    "minio_secret",
    "rabbitmq_password",
    "mqtt_password",
    "lftp_password",
    "keychain_password",
    "windows_password",
    "vault_login_token",
    "nmcli_password",
    "wifi_password",
    "keyed_setting",
    *VERSION_7_FORMS,
)

# The forms whose tail is a lazy run up to the option (`_LOGIN_PASSWORD`, `_ARGS`), and the characters
# that end it: their matches are found in linear time (`engine.secrets._matches`).
RUN_FORMS = dict.fromkeys(
    (
        "registry_password",
        "login_password",
        "keytool_password",
        "redis_password",
        "smb_password",
        "gh_secret",
        "ssh_keygen_passphrase",
        "sqlserver_password",
        "mongo_password",
        "ldap_password",
        "openssl_password",
        "mqtt_password",
        "lftp_password",
        "keychain_password",
        "nmcli_password",
        "cassandra_password",
        "neo4j_password",
        "influx_password",
        "twine_password",
        "nuget_password",
        "marketplace_token",
        "codecov_token",
        "expo_password",
        "ipmi_password",
        "rdp_password",
        "snmp_passphrase",
        "snmp_community",
        "ssm_secure_value",
        "keyvault_secret",
    ),
    "\n|;&",
)

# The formats each version added, oldest first; the kinds of all of them, and the version of each.
FORMS_BY_VERSION: dict[int, dict[str, tuple[Form, ...]]] = {
    4: VERSION_4_FORMS,
    5: VERSION_5_FORMS,
    6: VERSION_6_FORMS,
    7: VERSION_7_FORMS,
}
FORMS: dict[str, tuple[Form, ...]] = {
    kind: forms for added in FORMS_BY_VERSION.values() for kind, forms in added.items()
}
KIND_VERSION: dict[str, int] = {
    kind: version for version, added in FORMS_BY_VERSION.items() for kind in added
}
# A few of each version's formats, by name, for the notes that say what a version began to redact.
EXAMPLES: dict[int, str] = {
    4: "Groq, xAI, Docker, Sentry, Doppler",
    5: "RubyGems, Dynatrace, Square, Okta, `aws configure set`, `os.environ[…] = …`, `<password>`",
    6: "SQL's `PASSWORD '…'`, `mongosh -p`, `sqlcmd -P`, `zip -P`, `requirepass`, Netlify, Render",
    7: "`cqlsh -p`, `twine upload -p`, `cargo login`, `poetry config http-basic`, `http -a`, `ipmitool -P`",
}


def triggers(version: int) -> tuple[str, ...]:
    """The texts without which no rule of `version` can match: its forms' prefixes."""
    forms = FORMS_BY_VERSION[version].values()
    return tuple(dict.fromkeys(prefix for group in forms for _, prefix, _ in group))


def kinds_after(version: int) -> tuple[str, ...]:
    """The kinds of the formats added after sanitizer `version`."""
    return tuple(kind for kind, added in KIND_VERSION.items() if added > version)


VERSION_4_TRIGGERS = triggers(4)
VERSION_5_TRIGGERS = triggers(5)
VERSION_6_TRIGGERS = triggers(6)
VERSION_7_TRIGGERS = triggers(7)
