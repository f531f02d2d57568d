"""The credential formats that sanitizer versions 4 to 9 added, as data: for each kind, its forms.

A form is (head, prefix, tail): a regex, a literal, a regex. Every match of a form holds its prefix, so
the prefixes are the version's trigger texts (`engine.sanitize.VERSION_TRIGGERS`): a corpus that holds
none of version 9's reads under version 9 exactly as under version 8, one that holds none of version
8's or 9's as under version 7, and so on. Version 7's, 8's and 9's formats are in
`engine.secret_formats_v7`, `engine.secret_formats_v8` and `engine.secret_formats_v9`, the pieces every form is built from in
`engine.secret_form_parts`. Standard library only, so that the sanitizer names the triggers without
importing detect-secrets; `engine.secrets` builds the rules.
"""

from __future__ import annotations

from engine.secret_form_parts import (
    ALNUM,
    ARGS,
    ECHOED,
    QUOTED,
    SQL_QUOTED,
    VALUE,
    Form,
    forms,
    value,
)
from engine.secret_formats_v7 import VERSION_7_FORMS
from engine.secret_formats_v8 import VERSION_8_COMMANDS, VERSION_8_FORMS
from engine.secret_formats_v9 import VERSION_9_FORMS
from engine.secret_formats_v10 import VERSION_10_FORMS
from engine.secret_formats_v11 import VERSION_11_FORMS

# The newest sanitizer version with formats here.
LATEST_VERSION = 11
_DOPPLER_KEY = f"{ALNUM}{{40,44}}"
# `docker login -u me -p PASS` (`--password PASS` is an assignment in every version): the value only.
_LOGIN_PASSWORD = ARGS + r"-p(?:[ \t]+|=)?" + VALUE
# `htpasswd`'s options, each group once (`-C 10`: a group and its number), never given back; a group
# holding `b` (the password on the command line) or `n` (no file) among them; an argument no option.
_HTPASSWD_OPTION = r"[ \t]+-[A-Za-z0-9]+(?:[ \t]+\d+(?=[ \t]))?"
_HTPASSWD_OPTIONS = rf"(?>(?:{_HTPASSWD_OPTION})+)"
_HTPASSWD_B = rf"(?=(?:{_HTPASSWD_OPTION})*?[ \t]+-[A-Za-z0-9]*b)"
_HTPASSWD_N = rf"(?:{_HTPASSWD_OPTION})*?[ \t]+-[A-Za-z0-9]*n"
_ARG = r"[ \t]+(?!-)\S+"
# A quoted name (`engine.secrets` checks that it names a secret) and a quoted value.
_NAME = r"""(?P<quote>["'])(?P<key>[A-Za-z_][A-Za-z0-9_]*)(?P=quote)"""
# The last words of an XML element's name that hold a secret, as such names are spelled.
_XML_SECRET_WORDS = tuple(
    spelling
    for word in ("password", "passwd", "passphrase", "secret")
    for spelling in (word, word.capitalize(), word.upper())
)

VERSION_4_FORMS: dict[str, tuple[Form, ...]] = {
    "groq_key": forms("gsk_", tail=f"{ALNUM}{{48,}}"),
    "replicate_token": forms("r8_", tail=f"{ALNUM}{{37}}"),
    "xai_key": forms("xai-", tail=f"{ALNUM}{{60,}}"),
    "perplexity_key": forms("pplx-", tail=f"{ALNUM}{{40,}}"),
    "fireworks_key": forms("fw_", tail=f"{ALNUM}{{24}}(?!{ALNUM})"),
    "langsmith_key": forms("lsv2_pt_", "lsv2_sk_", tail="[a-f0-9]{32}_[a-f0-9]{10}"),
    "docker_token": forms("dckr_pat_", "dckr_oat_", tail=r"[A-Za-z0-9_\-]{20,}"),
    "tailscale_key": forms("tskey-", tail=r"[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]{20,}"),
    "atlassian_token": forms("ATATT3", tail=r"[A-Za-z0-9_\-=]{50,}"),
    "bitbucket_token": forms("ATBB", tail=f"{ALNUM}{{28,}}"),
    "grafana_token": (
        *forms("glsa_", tail=f"{ALNUM}{{32}}_[A-Fa-f0-9]{{8}}"),
        *forms("glc_", tail="[A-Za-z0-9+/]{32,}={0,2}"),
    ),
    "sentry_token": (
        *forms("sntrys_eyJ", tail=r"[A-Za-z0-9+/=_\-]{40,}"),
        *forms("sntryu_", tail="[a-f0-9]{64}"),
    ),
    "planetscale_token": forms(
        "pscale_tkn_", "pscale_pw_", "pscale_oauth_", tail=r"[A-Za-z0-9_\-.]{32,64}"
    ),
    "fly_token": forms("fm1_", "fm2_", "fm1r_", "fm1a_", tail="[A-Za-z0-9+/]{40,}={0,2}"),
    "figma_token": forms("figd_", tail=r"[A-Za-z0-9_\-]{40,}"),
    "pulumi_token": forms("pul-", tail="[a-f0-9]{40}"),
    "newrelic_key": (
        *forms("NRAK-", tail="[A-Z0-9]{27}"),
        *forms("NRJS-", tail="[a-f0-9]{19}"),
        *forms("NRII-", tail=r"[A-Za-z0-9_\-]{32}"),
    ),
    "notion_token": (
        *forms("ntn_", tail=f"{ALNUM}{{40,}}"),
        *forms("secret_", tail=f"{ALNUM}{{43}}(?!{ALNUM})"),
    ),
    "buildkite_token": forms("bkua_", tail="[a-f0-9]{40}"),
    "terraform_token": forms(".atlasv1.", head=f"{ALNUM}{{14}}", tail=r"[A-Za-z0-9_\-=]{60,}"),
    "onepassword_token": forms("ops_eyJ", tail="[A-Za-z0-9+/]{60,}={0,2}"),
    "heroku_key": forms("HRKU-", tail=r"[A-Za-z0-9_\-]{40,}"),
    "doppler_token": (
        *forms("dp.st.", tail=rf"(?:[A-Za-z0-9_\-]{{1,40}}\.)?{_DOPPLER_KEY}"),
        *forms("dp.pt.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit.", tail=_DOPPLER_KEY),
    ),
    "registry_password": tuple(
        ("", f"{tool} login", _LOGIN_PASSWORD)
        for tool in ("docker", "podman", "nerdctl", "buildah", "skopeo", "helm registry")
    ),
    "discord_webhook": forms(
        "discord", tail=r"(?:app)?\.com/api/webhooks/\d{5,30}/(?P<t>[A-Za-z0-9_\-]{60,})"
    ),
}

# Version 5: formats found missing by feeding the rules credential-shaped lines (docs/transcripts.md):
# provider tokens with a literal prefix, passwords given to a command on its command line or piped into
# it, and secrets set into the environment, an HTTP client, a connection string or an XML element.
VERSION_5_FORMS: dict[str, tuple[Form, ...]] = {
    "rubygems_key": forms("rubygems_", tail="[a-f0-9]{48}"),
    "clojars_token": forms("CLOJARS_", tail=f"{ALNUM}{{60}}"),
    "contentful_token": forms("CFPAT-", tail=r"[A-Za-z0-9_\-]{43}"),
    "dynatrace_token": forms("dt0c01.", tail=rf"{ALNUM}{{24}}\.{ALNUM}{{64}}"),
    "easypost_key": forms("EZAK", "EZTK", tail=f"{ALNUM}{{54}}"),
    "flutterwave_key": forms("FLWSECK-", "FLWSECK_TEST-", tail="[a-fA-F0-9]{32}-X"),
    "mapbox_token": forms("sk.eyJ", tail=r"[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    "prefect_key": forms("pnu_", tail=f"{ALNUM}{{36}}"),
    "readme_key": forms("rdme_", tail="[a-z0-9]{70}"),
    "brevo_key": forms("xkeysib-", "xsmtpsib-", tail=f"[a-f0-9]{{64}}-{ALNUM}{{16}}"),
    "shippo_token": forms("shippo_live_", "shippo_test_", tail="[a-f0-9]{40}"),
    "square_token": forms("sq0atp-", tail=r"[A-Za-z0-9_\-]{22,60}"),
    "huggingface_org_token": forms("api_org_", tail="[A-Za-z]{34}"),
    "typeform_token": forms("tfp_", tail=r"[A-Za-z0-9_\-.=]{59}"),
    "frameio_token": forms("fio-u-", tail=r"[A-Za-z0-9_\-=]{64}"),
    "alibaba_key": forms("LTAI", tail=f"{ALNUM}{{12,20}}(?!{ALNUM})"),
    "adobe_client_secret": forms("p8e-", tail=f"{ALNUM}{{32}}(?!{ALNUM})"),
    "linear_oauth_token": forms("lin_oauth_", tail="[a-f0-9]{64}"),
    # `Authorization: SSWS <token>`: Okta's API tokens (42 characters, `00` first)
    "okta_token": forms("SSWS ", tail=r"(?P<t>00[A-Za-z0-9_\-]{40})"),
    # `aws configure set [profile.NAME.]aws_secret_access_key VALUE` (and the session token)
    "aws_configure_secret": forms(
        "aws configure set",
        tail=r"[ \t]+(?:[\w\-]+\.)*(?:aws_secret_access_key|aws_session_token)[ \t]+" + VALUE,
    ),
    "keytool_password": forms(
        "keytool", tail=ARGS + r"-(?:src|dest)?(?:store|key)pass[ \t]+" + VALUE
    ),
    "redis_password": forms("redis-cli", tail=ARGS + r"(?:-a|--pass)[ \t]+" + VALUE),
    "login_password": tuple(("", f"{tool} login", _LOGIN_PASSWORD) for tool in ("az", "oc", "cf")),
    "smb_password": forms(
        "smbclient", tail=ARGS + r"""(?:-U|--user)(?:[ \t]+|=)["']?[^\s%"']+%(?P<t>[^\s"']+)"""
    ),
    # `htpasswd -b FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD` (no file); the options in one
    # group or several, bcrypt's cost after `-C` (version 9: `htpasswd -b -c FILE USER PASS` took the
    # file for an option's and redacted USER)
    "htpasswd_password": (
        (
            "",
            "htpasswd",
            _HTPASSWD_B + rf"(?!{_HTPASSWD_N}){_HTPASSWD_OPTIONS}{_ARG}{_ARG}[ \t]+" + VALUE,
        ),
        (
            "",
            "htpasswd",
            _HTPASSWD_B + rf"(?={_HTPASSWD_N}){_HTPASSWD_OPTIONS}{_ARG}[ \t]+" + VALUE,
        ),
    ),
    "sshpass_password": forms("SSHPASS=", tail=VALUE),
    # `gh secret set NAME --body VALUE`
    "gh_secret": forms("gh secret set", tail=ARGS + r"(?:--body|-b)(?:[ \t]+|=)" + VALUE),
    # a literal set into the environment under a name that names a secret (`engine.secrets` checks
    # the name): `os.environ["DB_PASSWORD"] = "…"`, `ENV[…] = …`, `process.env[…] = …`, and
    # `monkeypatch.setenv("API_TOKEN", "…")`, `os.putenv`, `os.environ.setdefault`, `System.put_env`
    "env_var_secret": (
        *forms(
            "environ[",
            "ENV[",
            "env[",
            tail=rf"[ \t]*{_NAME}[ \t]*\][ \t]*=(?!=)[ \t]*{QUOTED}",
        ),
        *forms(
            "setenv(",
            "putenv(",
            "put_env(",
            "setdefault(",
            tail=rf"[ \t]*{_NAME}[ \t]*,[ \t]*{QUOTED}",
        ),
    ),
    # a value echoed into a command that reads a password from stdin: `echo PASS | sudo -S …`,
    # `echo PASS | docker login -u me --password-stdin`, `echo TOKEN | gh auth login --with-token`
    "piped_password": (
        (ECHOED + r"[ \t]*\|[ \t]*", "sudo -S", ""),
        *(
            (ECHOED + r"[ \t]*\|[ \t]*[^|\n;&]*?", prefix, "")
            for prefix in ("--password-stdin", "--with-token")
        ),
    ),
    # `ssh-keygen … -N PASSPHRASE` (the new key's passphrase; `-N ''` is none)
    "ssh_keygen_passphrase": forms("ssh-keygen", tail=ARGS + r"-N[ \t]+" + VALUE),
    # PowerShell: `ConvertTo-SecureString 'PASS' -AsPlainText`
    "securestring_password": forms(
        "ConvertTo-SecureString", tail=r"[ \t]+(?:-String[ \t]+)?" + VALUE
    ),
    # Python's HTTP clients: `auth=("user", "PASS")`, `HTTPBasicAuth("user", "PASS")`, …
    "auth_tuple_password": forms(
        "auth=(",
        "BasicAuth(",
        "HTTPBasicAuth(",
        "HTTPDigestAuth(",
        tail=r"""[ \t]*(?:'[^'\n]*'|"[^"\n]*"|[A-Za-z_][\w.]*)[ \t]*,[ \t]*""" + QUOTED,
    ),
    # an ODBC connection string's `Pwd=…;` (a path after `PWD=` is the shell's working directory)
    "odbc_password": forms("Pwd=", "PWD=", "pwd=", tail=r"""(?P<t>[^;\s'"]+)"""),
    # `<password>…</password>`, `<db.password>…`, `<clientSecret>…`: an element whose name ends so
    "xml_secret": forms(
        *(f"{word}>" for word in _XML_SECRET_WORDS),
        head=r"<[\w.:\-]*",
        tail=r"(?P<t>[^<>\n]{1,200})</",
    ),
}

# Version 6: found missing the same way (docs/transcripts.md): passwords given to database, directory,
# archive, message-queue and Wi-Fi tools, set in SQL, a Redis or .NET configuration or a keychain, and
# tokens of providers with a literal prefix. A password in SQL is quoted with `'`: a trigger never holds
# `"` (a JSONL line spells it `\"`, which the version scan does not read).
# A value given to a command: as `VALUE`, but a bare one never starts with `-` (`-p --next-option`:
# the tool asks for the password).
_OPTION_VALUE = value(r"""[^\s'"\-]""")
# What stands before a lower-case `password '…'` or `identified by '…'` in a statement: `WITH`, `LOGIN`,
# `[UN]ENCRYPTED`, or `ROLE`/`USER` and a name.
_SQL_USER = r"(?i:role|user)[ \t]+\S+[ \t]+"
_SQL_PASSWORD_AT = rf"(?:(?i:with|encrypted|unencrypted|login)[ \t]+|{_SQL_USER})"
# What a Redis directive stands after: the start of a line (a configuration file), `CONFIG SET` or `--`.
_REDIS_AT = r"(?:(?<![^\n])[ \t]*|(?i:config[ \t]+set)[ \t]+|--)"

VERSION_6_FORMS: dict[str, tuple[Form, ...]] = {
    "netlify_token": forms("nfp_", tail=f"{ALNUM}{{36,40}}(?!{ALNUM})"),
    "render_key": forms("rnd_", tail=f"{ALNUM}{{32}}(?!{ALNUM})"),
    "posthog_personal_key": forms("phx_", tail=f"{ALNUM}{{43}}(?!{ALNUM})"),
    "google_refresh_token": forms("1//0", tail=r"[A-Za-z0-9_\-]{40,}"),
    "facebook_token": forms("EAACEdEose0cBA", tail=f"{ALNUM}{{20,}}"),
    "cloudflare_origin_ca_key": forms("v1.0-", tail="[a-f0-9]{24}-[a-f0-9]{146}"),
    # `ALTER USER app WITH [ENCRYPTED] PASSWORD 'PASS'`, `IDENTIFIED BY 'PASS'`, `PASSWORD('PASS')`
    # (in capitals as written; in lower case only in a statement's shape, for prose says "identified by
    # 'name'")
    "sql_password": (
        *forms("PASSWORD '", "IDENTIFIED BY '", "PASSWORD('", "password('", tail=SQL_QUOTED),
        *forms("password '", "Password '", head=_SQL_PASSWORD_AT, tail=SQL_QUOTED),
        *forms("identified by '", head=_SQL_USER, tail=SQL_QUOTED),
    ),
    # `sqlcmd -S db -U sa -P PASS`, `bcp … -P PASS` (SQL Server's tools)
    "sqlserver_password": (
        ("", "sqlcmd", r"\b" + ARGS + r"-P[ \t]*" + _OPTION_VALUE),
        ("", "bcp ", f"(?:{ARGS})?" + r"-P[ \t]*" + _OPTION_VALUE),
    ),
    # `mongosh -u admin -p PASS`, `mongodump … -p PASS`
    "mongo_password": forms("mongo", tail=r"\w*\b" + ARGS + r"-p[ \t]+" + _OPTION_VALUE),
    # `sqlplus app/PASS@db`
    "sqlplus_password": forms(
        "sqlplus",
        tail=r"""(?:[ \t]+-\w+)*[ \t]+["']?[\w$#.]+/(?P<t>[^\s@/'"]+)(?=@|[\s'"]|$)""",
    ),
    # `ldapsearch -D cn=admin,dc=ex -w PASS …` (OpenLDAP's tools; `-W` asks for it)
    "ldap_password": forms(
        *(f"ldap{tool}" for tool in ("search", "add", "modify", "delete", "passwd", "whoami")),
        tail=r"\b" + ARGS + r"-w[ \t]+" + _OPTION_VALUE,
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
    "openssl_password": forms(
        "openssl enc", "openssl aes-", "openssl des", tail=ARGS + r"-k[ \t]+" + _OPTION_VALUE
    ),
    # `echo 'app:PASS' | chpasswd`; `echo PASS | passwd --stdin app`
    "passwd_stdin": (
        (
            r"""(?:echo|printf)[ \t]+(?:-[a-zA-Z]+[ \t]+)?["']?[\w.\-]+:(?P<t>[^\s'"|]+)["']?"""
            r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?",
            "chpasswd",
            "",
        ),
        (ECHOED + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?", "passwd --stdin", ""),
    ),
    # `requirepass PASS` in redis.conf, `CONFIG SET masterauth PASS`, `redis-server --requirepass PASS`
    "redis_config_password": forms(
        "requirepass", "masterauth", head=_REDIS_AT, tail=r"[ \t]+" + _OPTION_VALUE
    ),
    # `mc alias set NAME URL ACCESS_KEY SECRET_KEY` (MinIO's client)
    "minio_secret": forms(
        "mc alias set",
        "mc config host add",
        tail=r"[ \t]+\S+[ \t]+\S+[ \t]+\S+[ \t]+" + _OPTION_VALUE,
    ),
    # `rabbitmqctl add_user NAME PASS`, `rabbitmqctl change_password NAME PASS`
    "rabbitmq_password": forms(
        "rabbitmqctl add_user",
        "rabbitmqctl change_password",
        tail=r"[ \t]+\S+[ \t]+" + _OPTION_VALUE,
    ),
    # `mosquitto_pub -u me -P PASS …` (and `_sub`, `_rr`)
    "mqtt_password": forms(
        "mosquitto_pub",
        "mosquitto_sub",
        "mosquitto_rr",
        tail=r"\b" + ARGS + r"-P[ \t]+" + _OPTION_VALUE,
    ),
    # `lftp -u me,PASS host`
    "lftp_password": forms("lftp", tail=r"\b" + ARGS + r"""-u[ \t]+[^\s,'"]+,(?P<t>[^\s'"]+)"""),
    # macOS keychain: `security add-generic-password -a me -s svc -w PASS`
    "keychain_password": forms(
        "add-generic-password", "add-internet-password", tail=ARGS + r"-w[ \t]+" + _OPTION_VALUE
    ),
    # Windows: `cmdkey /add:srv /user:me /pass:PASS`; `net use \\srv\share PASS /user:me`
    "windows_password": (
        ("", "/pass:", _OPTION_VALUE),
        ("", "net use", r"(?:[ \t]+(?:[A-Za-z]:|\*))?[ \t]+\\\\\S+[ \t]+(?!/)" + _OPTION_VALUE),
    ),
    # `vault login TOKEN` (20 characters or more: a legacy `s.` token; `hvs.` ones are a format of their own)
    "vault_login_token": forms(
        "vault login", tail=r"(?:[ \t]+-[\w\-]+(?:=\S+)?)*[ \t]+(?P<t>[A-Za-z0-9._\-]{20,})(?!\S)"
    ),
    # Wi-Fi: `nmcli dev wifi connect NAME password PASS`; `wpa_passphrase NAME PASS`, `psk="PASS"`
    "nmcli_password": forms(
        "nmcli", tail=r"\b" + ARGS + r"(?:password|wifi-sec\.psk)[ \t]+" + _OPTION_VALUE
    ),
    "wifi_password": (
        ("", "wpa_passphrase", r"""[ \t]+(?:'[^'\n]+'|"[^"\n]+"|\S+)[ \t]+""" + _OPTION_VALUE),
        ("", "psk=", _OPTION_VALUE),
    ),
    # .NET's `<add key="DbPassword" value="PASS" />` (`engine.secrets` checks that the key names a
    # secret); `netlify env:set API_TOKEN VALUE`; Windows' `setx API_TOKEN VALUE`
    "keyed_setting": (
        ("", "<add key=", rf"{_NAME}[ \t]+value=[ \t]*{QUOTED}"),
        ("", "env:set", r"[ \t]+(?P<key>[A-Za-z_]\w*)[ \t]+" + _OPTION_VALUE),
        ("", "setx ", r"[ \t]*(?P<key>[A-Za-z_]\w*)[ \t]+" + _OPTION_VALUE),
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
    *VERSION_8_COMMANDS,
)

# The forms whose tail is a lazy run up to the option (`_LOGIN_PASSWORD`, `ARGS`), and the characters
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
        "mysqladmin_password",
        "mysqlsh_password",
        "sybase_password",
        "hana_password",
        "couchbase_password",
        "elastic_user_password",
        "influx_user_password",
        "registry_client_password",
        "publish_password",
        "cli_login_token",
        "rclone_secret",
        "supabase_password",
        "altool_password",
        "keychain_command_password",
        "signing_password",
        "windows_command_password",
        "kubeadm_token",
    ),
    "\n|;&",
)

# The formats each version added, oldest first; the kinds of all of them, and the version of each.
FORMS_BY_VERSION: dict[int, dict[str, tuple[Form, ...]]] = {
    4: VERSION_4_FORMS,
    5: VERSION_5_FORMS,
    6: VERSION_6_FORMS,
    7: VERSION_7_FORMS,
    8: VERSION_8_FORMS,
    9: VERSION_9_FORMS,
    10: VERSION_10_FORMS,
    11: VERSION_11_FORMS,
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
    8: (
        "`mysqladmin password`, `isql -P`, `crane auth login -p`, `jarsigner -storepass`, `net user`, "
        "`printf '%s' … |`"
    ),
    9: "what `op read`, `vault kv get`, `aws secretsmanager get-secret-value`, `sops -d`, `cat ~/.netrc` print",
    10: "what `op signin --raw`, `bw unlock`, `heroku auth:token`, `fly auth token` print",
    11: "what `echo $GITHUB_TOKEN` prints",
}


# The texts without which a version's change to a rule that is no form changes nothing. Version 8:
# `mysql`'s password (`engine.secrets._PASSWORD_COMMAND`) found after a shell operator that follows the
# last `mysql` word counts only when it has 6 characters or more (`mysql db < x.sql && patch -p1`: `-p1`
# is patch's). Version 9: `htpasswd_password` reads the options in several groups (`htpasswd -b -c FILE
# USER PASS`), where version 5's form read one.
RULE_TRIGGERS: dict[int, tuple[str, ...]] = {8: ("mysql", "mariadb"), 9: ("htpasswd",)}
# The older kinds whose rule a version changed so that it finds what it did not (a narrowed rule finds
# nothing new, and is not named here).
RULE_KINDS: dict[int, tuple[str, ...]] = {9: ("htpasswd_password",)}


def triggers(version: int) -> tuple[str, ...]:
    """The texts without which no rule of `version` can match, or match otherwise than before: its
    forms' prefixes, and its `RULE_TRIGGERS`."""
    forms = FORMS_BY_VERSION[version].values()
    prefixes = (prefix for group in forms for _, prefix, _ in group)
    return tuple(dict.fromkeys((*prefixes, *RULE_TRIGGERS.get(version, ()))))


def kinds_after(version: int) -> tuple[str, ...]:
    """The kinds of the formats added after sanitizer `version`."""
    return tuple(kind for kind, added in KIND_VERSION.items() if added > version)


def kinds_found_after(version: int) -> tuple[str, ...]:
    """The kinds a memory redacted under sanitizer `version` may still hold: those added after it, and
    the older ones whose rule a later version widened (`RULE_KINDS`)."""
    widened = (kind for v, kinds in RULE_KINDS.items() if v > version for kind in kinds)
    return tuple(dict.fromkeys((*kinds_after(version), *widened)))


VERSION_4_TRIGGERS = triggers(4)
VERSION_5_TRIGGERS = triggers(5)
VERSION_6_TRIGGERS = triggers(6)
VERSION_7_TRIGGERS = triggers(7)
VERSION_8_TRIGGERS = triggers(8)
VERSION_9_TRIGGERS = triggers(9)
VERSION_10_TRIGGERS = triggers(10)
VERSION_11_TRIGGERS = triggers(11)
