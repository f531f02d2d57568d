"""The credential formats sanitizer version 8 added (`engine.secret_formats` holds every version's and
their triggers): passwords given to more database and search-engine shells, container registries and
package publishers, cloud and storage command lines, code-signing and keychain tools, Windows' remote
tools; values fed to a command through a here-string, `printf '%s'` or a `.pgpass` line; passwords in
configuration files and code (wp-config, Gradle, LDAP, keepalived, SQL, Django); session cookies and
OpenVPN static keys (`VERSION_8_COMMANDS`); and 15 more providers' tokens by their literal prefix
(`VERSION_8_TOKENS`). Standard library only."""

from __future__ import annotations

from engine.secret_form_parts import (
    ARG_VALUE,
    ARGS,
    DASH_P,
    ECHOED,
    QUOTED,
    SQL_QUOTED,
    Form,
    echoed,
    forms,
    value,
)


def _option(option: str) -> str:
    """The tail of a command that takes its password after `option` (a regex: `-pw`, `/r?p`), anywhere
    in its arguments."""
    return r"\b" + ARGS + option + r"[ \t]+" + ARG_VALUE


# One word of a command line that is no option (`USER` in `mc admin user add ALIAS USER PASS`).
_NAME_ARG = r"[ \t]+(?![-/])\S+"
# What reads a secret from stdin, after a pipe or before a here-string: `docker login
# --password-stdin`, `gh auth login --with-token`, `sudo -S`, `passwd --stdin`, `chpasswd`, and
# version 7's secret stores.
_STDIN_READERS = (
    r"(?:[^|\n;&<]*?[ \t](?:--password-stdin|--with-token|--data-file(?:=|[ \t]+)-(?![^\s|;&]))"
    r"|(?:sudo[ \t]+)?(?:sudo[ \t]+-S|passwd[ \t]+--stdin|chpasswd)"
    r"|(?:npx[ \t]+)?(?:wrangler[ \t]+secret[ \t]+put|vercel[ \t]+env[ \t]+add|gh[ \t]+secret[ \t]+set"
    r"|docker[ \t]+secret[ \t]+create))"
)
# `printf`'s format that prints its argument as it is: `'%s'`, `"%s\n"`, `%s`.
_PRINTF_FORMAT = r"""(?:'%s(?:\\n)?'|"%s(?:\\n)?"|%s(?:\\n)?)"""
# A `.pgpass` line, `host:port:database:user:PASS`, echoed into the file (quoted or bare).
_PGPASS_LINE = (
    r"""(?:echo|printf)[ \t]+(?:-[a-zA-Z]+[ \t]+)?(?P<quote>["']?)"""
    r"""(?:[^\s:'"]+:){4}(?P<t>[^\s'"]+)(?P=quote)[ \t]*>>?[ \t]*[^\s|;&]*?"""
)

# A quoted argument of a call.
_QUOTED_ARG = r"""(?:'[^'\n]*'|"[^"\n]*")"""
# A directive at a line's start (a configuration file), and its value after a space, `=` or `:`.
_DIRECTIVE_AT = r"(?<![^\n])[ \t]*"
_DIRECTIVE_VALUE = r"(?:[ \t]*[=:][ \t]*|[ \t]+)" + ARG_VALUE
# Cookies in a header: any of them, one whose name says it holds a session or a token, and such a
# one's value, as long as a session id (`sid=1` is a counter).
_COOKIE_PAIRS = r"""(?:[^\s=;'"]+=[^;\s'"]*;[ \t]*){0,30}?"""
_SESSION_NAME = r"""[^\s=;'"]*(?i:sess|sid|token|auth|jwt|remember|login)[^\s=;'"]*="""
_SESSION_VALUE = r"""[^;\s'"]{8,}"""


def _session_cookie(nth: int) -> str:
    """The `nth` session cookie of a header (its value the group), after the cookies before it."""
    before = (_COOKIE_PAIRS + _SESSION_NAME + _SESSION_VALUE + r";[ \t]*") * (nth - 1)
    return before + _COOKIE_PAIRS + _SESSION_NAME + f"(?P<t>{_SESSION_VALUE})"


_OPENVPN_END = "-----END OpenVPN Static key V1-----"

# A password or token given to a command or set in a file (`COMMAND_PASSWORDS`: a match is exactly its
# group, and a variable or a placeholder there is kept).
VERSION_8_COMMANDS: dict[str, tuple[Form, ...]] = {
    # `mysqladmin -u root -p password NEWPASS` (the new password, by its place after `password`)
    "mysqladmin_password": forms("mysqladmin", tail=_option("password")),
    # `mysqlsh root:PASS@localhost`, `mysqlsh --uri root:PASS@db:3306`
    "mysqlsh_password": forms(
        "mysqlsh",
        tail=r"\b" + ARGS + r"""(?:--uri(?:=|[ \t]+))?["']?[\w.\-]+:(?P<t>[^\s@'"/]+)@""",
    ),
    # Sybase's and FreeTDS's `isql -U sa -P PASS`, `tsql -S h -U sa -P PASS`
    "sybase_password": forms("isql", "tsql", tail=_option("-P")),
    # `db2 connect to DB user NAME using PASS`
    "db2_password": forms(
        "db2 connect to",
        tail=r"[ \t]+\S+[ \t]+(?i:user)[ \t]+\S+[ \t]+(?i:using)[ \t]+" + ARG_VALUE,
    ),
    # SAP HANA's `hdbsql -n host -u SYSTEM -p PASS`
    "hana_password": forms("hdbsql", tail=DASH_P),
    # `couchbase-cli bucket-list -c h -u Administrator -p PASS`
    "couchbase_password": forms("couchbase-cli", tail=DASH_P),
    # ArangoDB's shells: `arangosh --server.password PASS` (`--server.password=PASS` is an assignment
    # in every version)
    "arango_password": forms("--server.password", tail=r"[ \t]+" + ARG_VALUE),
    # `elasticsearch-users useradd me -p PASS -r superuser`
    "elastic_user_password": forms("elasticsearch-users", tail=DASH_P),
    # `influx user create -n me -p PASS`
    "influx_user_password": forms("influx user", tail=DASH_P),
    # the registries' other clients: `crane auth login -u me -p PASS ghcr.io`, `oras login`,
    # `regctl registry login`, `cosign login`, `az acr login -n reg -u me -p PASS`
    "registry_client_password": forms(
        "crane auth login",
        "oras login",
        "regctl registry login",
        "cosign login",
        "acr login",
        tail=r"\b" + ARGS + r"-p(?:[ \t]+|=)" + ARG_VALUE,
    ),
    # `skopeo copy --src-creds me:PASS …`, `--dest-creds`, `podman pull --creds me:PASS …`
    "registry_creds": forms(
        "--creds",
        "--src-creds",
        "--dest-creds",
        tail=r"""(?:[ \t]+|=)["']?[^\s:'"]+:""" + r"""(?P<t>[^\s'"]+)""",
    ),
    # package publishers: `uv publish -u __token__ -p PASS` (`-t TOKEN`), `hatch publish -a PASS`,
    # `pdm publish -P PASS`
    "publish_password": (
        *forms("uv publish", tail=_option("-[pt]")),
        *forms("hatch publish", tail=_option("-a")),
        *forms("pdm publish", tail=_option("-P")),
    ),
    # `glab auth login -t TOKEN`, `doctl auth init -t TOKEN`
    "cli_login_token": forms("glab auth login", "doctl auth init", tail=_option("-t")),
    # `cloudflared service install TOKEN` (a tunnel's token)
    "cloudflared_token": forms("cloudflared service install", tail=r"[ \t]+" + ARG_VALUE),
    # Backblaze B2: `b2 authorize-account KEY_ID KEY`, `b2 account authorize KEY_ID KEY`
    "b2_application_key": forms(
        "authorize-account", "b2 account authorize", tail=_NAME_ARG + r"[ \t]+" + ARG_VALUE
    ),
    # `rclone config create NAME s3 … secret_access_key KEY`; `rclone obscure PASS`
    "rclone_secret": forms(
        "rclone config create",
        "rclone config update",
        tail=ARGS
        + r"(?:secret_access_key|pass|password|client_secret|account_key|key|token)[ \t]+"
        + ARG_VALUE,
    ),
    "rclone_obscured_password": forms("rclone obscure", tail=r"[ \t]+" + ARG_VALUE),
    # MinIO's `mc admin user add ALIAS USER PASS`
    "minio_user_password": forms(
        "mc admin user add", tail=_NAME_ARG + _NAME_ARG + r"[ \t]+" + ARG_VALUE
    ),
    # `supabase db push -p PASS`, `supabase link --project-ref r -p PASS`
    "supabase_password": forms("supabase", tail=DASH_P),
    # `xcrun altool --upload-app -u me -p PASS` (not `@keychain:NAME` or `@env:NAME`, references)
    "altool_password": forms("altool", tail=r"\b" + ARGS + r"-p[ \t]+(?!@)" + ARG_VALUE),
    # macOS: `security unlock-keychain -p PASS`, `security create-keychain -p PASS k`,
    # `security import cert.p12 -k k -P PASS`
    "keychain_command_password": (
        *forms("unlock-keychain", "create-keychain", tail=_option("-p")),
        *forms("security import", tail=_option("-P")),
    ),
    # code signing: `jarsigner -storepass PASS app.jar alias` (`-keypass`), `signtool sign /f c.pfx
    # /p PASS app.exe`, `certutil -p PASS -importpfx c.pfx`
    "signing_password": (
        *forms("jarsigner", tail=_option("-(?:storepass|keypass)")),
        *forms("signtool", tail=_option("/p")),
        *forms("certutil", tail=_option("-p")),
    ),
    # Windows: `net user NAME PASS /add` (`*` asks for it; the space after `user` keeps `dotnet
    # user-secrets` out of the trigger)
    "windows_user_password": forms("net user ", tail=r"[ \t]*(?![-/])\S+[ \t]+(?!/)" + ARG_VALUE),
    # Windows: `psexec \\host -u admin -p PASS cmd`, `winrs -r:h -u:me
    # -p:PASS cmd`, `schtasks /create … /ru me /rp PASS`; PuTTY's `pscp -pw PASS`, `plink -pw PASS`
    "windows_command_password": (
        *forms("psexec", tail=_option("-p")),
        *forms("winrs", tail=r"\b" + ARGS + r"-p(?:assword)?:" + ARG_VALUE),
        *forms("schtasks", tail=_option("/r?p")),
        *forms("pscp", "plink", tail=_option("-pw")),
    ),
    # `unrar x -pPASS archive.rar` (`-p-` asks for none)
    "unrar_password": forms(
        "unrar", tail=r"\b(?:[ \t]+[\w\-=.]+){0,6}?[ \t]+-p(?P<t>[^\s'\"\-][^\s'\"]*)"
    ),
    # Drupal's `drush user:password NAME PASS` (`upwd`, `user-password`)
    "drush_password": forms(
        "drush user:password",
        "drush user-password",
        "drush upwd",
        tail=_NAME_ARG + r"[ \t]+" + ARG_VALUE,
    ),
    # fish's `set -x NAME VALUE` (`-gx`, `-Ux`), csh's `setenv NAME VALUE` (`engine.secrets` checks that
    # the name names a secret)
    "shell_set_secret": forms(
        "set -x ",
        "set -gx ",
        "set -Ux ",
        "set -xg ",
        "setenv ",
        tail=r"[ \t]*(?P<key>[A-Za-z_]\w*)[ \t]+" + ARG_VALUE,
    ),
    # a here-string into what reads a secret from stdin: `gh auth login --with-token <<< TOKEN`,
    # `docker login -u me --password-stdin <<< PASS`, `chpasswd <<< 'bob:PASS'`
    "here_string_secret": (
        (
            r"(?:--password-stdin|--with-token|chpasswd|passwd[ \t]+--stdin|sudo[ \t]+-S)"
            r"(?:[ \t]+[^\s<|;&]+){0,4}?[ \t]*",
            "<<<",
            r"[ \t]*" + ARG_VALUE,
        ),
    ),
    # `kubeadm join host:6443 --token abcdef.0123456789abcdef` (a bootstrap token joins a node)
    "kubeadm_token": forms("kubeadm", tail=r"\b" + ARGS + r"--token(?:[ \t]+|=)" + ARG_VALUE),
    # `echo PAT | az devops login --organization URL` (it reads the token from stdin)
    "piped_devops_token": ((ECHOED + r"[ \t]*\|[ \t]*(?:az[ \t]+)?", "devops login", ""),),
    # `printf '%s' PASS | docker login --password-stdin` and the same into every other stdin reader
    # (`echo PASS |` and `printf PASS |` are version 4's to 7's)
    "printf_piped_secret": forms(
        "printf",
        tail=r"[ \t]+"
        + _PRINTF_FORMAT
        + r"[ \t]+"
        + value(r"""[^\s'"|\-]""")
        + r"[ \t]*\|[ \t]*"
        + _STDIN_READERS,
    ),
    # a new password echoed into `passwd` or `smbpasswd`: `echo -e 'PASS\nPASS' | passwd`, `printf
    # 'PASS\nPASS\n' | sudo passwd bob`, `… | smbpasswd -s -a bob` (`passwd --stdin` and `chpasswd` are
    # version 6's)
    "passwd_piped": tuple(
        (echoed(longest=200) + r"[ \t]*", pipe, r"(?![\w\-])")
        for pipe in ("| passwd", "|passwd", "| sudo passwd", "| smbpasswd", "|smbpasswd")
    ),
    # `echo 'db.internal:5432:app:me:PASS' >> ~/.pgpass`
    "pgpass_password": ((_PGPASS_LINE, ".pgpass", ""),),
    # PHP's `define('DB_PASSWORD', 'PASS');` (wp-config.php; the name must name a secret)
    "php_define_secret": forms(
        "define('", "define( '", tail=r"(?P<key>[A-Za-z_]\w*)'[ \t]*,[ \t]*" + QUOTED
    ),
    # Gradle's signing config: `storePassword 'PASS'`, `keyPassword "PASS"`
    "gradle_signing_password": forms("storePassword", "keyPassword", tail=r"[ \t]+" + QUOTED),
    # a directory or VRRP password in a configuration file: nslcd's and pam_ldap's `bindpw PASS`,
    # slapd.conf's `rootpw PASS`, LDIF's `olcRootPW: PASS`, sssd's `ldap_default_authtok = PASS`,
    # keepalived's `auth_pass PASS` (a `{SSHA}` hash is kept)
    "config_password": forms(
        "bindpw",
        "bind_pw",
        "rootpw",
        "olcRootPW",
        "ldap_default_authtok",
        "auth_pass",
        head=_DIRECTIVE_AT,
        tail=r":?" + _DIRECTIVE_VALUE,
    ),
    # MySQL's `SET PASSWORD FOR 'app'@'%' = 'PASS';` (`= PASSWORD('…')` is version 6's)
    "sql_set_password": forms(
        "SET PASSWORD FOR",
        "set password for",
        tail=r"[ \t]+\S+[ \t]*=[ \t]*'" + SQL_QUOTED,
    ),
    # Django: `user.set_password('PASS')`, `create_superuser('admin', 'a@example.com', 'PASS')`
    "django_password": (
        *forms("set_password(", tail=r"[ \t]*" + QUOTED + r"[ \t]*\)"),
        *forms(
            "create_superuser(",
            tail=r"[ \t]*(?:username=)?"
            + _QUOTED_ARG
            + r"[ \t]*,[ \t]*(?:email=)?"
            + _QUOTED_ARG
            + r"[ \t]*,[ \t]*"
            + QUOTED,
        ),
    ),
    # the first three session cookies of a header or of curl's: `Cookie: theme=dark; sessionid=VALUE;
    # remember_me=VALUE`, `Set-Cookie: auth_token=VALUE; Path=/`, `curl --cookie 'sid=VALUE'`
    "session_cookie": tuple(
        form
        for nth in (1, 2, 3)
        for form in (
            *forms(
                "Cookie:",
                "cookie:",
                "Set-Cookie:",
                "set-cookie:",
                tail=r"[ \t]*" + _session_cookie(nth),
            ),
            *forms("--cookie", tail=r"""(?:[ \t]+|=)["']?""" + _session_cookie(nth)),
        )
    ),
    # curl's `-u :TOKEN`, `--user :TOKEN` (no user name: the password or token alone; `-u :` alone
    # negotiates)
    "curl_token_password": forms(
        "-u :", "--user :", "--user=:", "-u ':", "--user ':", tail=r"(?P<t>[^\s'\"]+)"
    ),
    # OpenVPN's `tls-auth` key: the lines between its BEGIN and END (unclosed: to the end)
    "openvpn_static_key": forms(
        "-----BEGIN OpenVPN Static key V1-----",
        tail=rf"[ \t]*\n(?P<t>[\s\S]+?)(?:\n?{_OPENVPN_END}|\Z)",
    ),
}

# Tokens of providers with a literal prefix, as version 4's to 6's (a match widens over the token's
# characters; each needs letters and digits).
VERSION_8_TOKENS: dict[str, tuple[Form, ...]] = {
    # Slack's refresh and configuration tokens: `xoxe-1-…`
    "slack_refresh_token": forms("xoxe-", tail=r"\d-[A-Za-z0-9\-]{40,}"),
    # Tavily `tvly-[dev-|prod-]` and 32 characters
    "tavily_key": forms("tvly-", tail=r"(?:dev-|prod-)?[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    "jina_key": forms("jina_", tail=r"[A-Za-z0-9_\-]{40,}"),
    "nvidia_key": forms("nvapi-", tail=r"[A-Za-z0-9_\-]{60,}"),
    "cerebras_key": forms("csk-", tail=r"[A-Za-z0-9]{40,}"),
    "vercel_blob_token": forms("vercel_blob_rw_", tail=r"[A-Za-z0-9]{16}_[A-Za-z0-9]{30}"),
    "mongodb_atlas_secret": forms("mdb_sa_sk_", tail=r"[A-Za-z0-9_\-]{30,}"),
    "e2b_key": forms("e2b_", tail=r"[a-f0-9]{40}(?![a-f0-9])"),
    "browserbase_key": forms("bb_live_", tail=r"[A-Za-z0-9_\-]{20,}"),
    "pinecone_key": forms("pcsk_", tail=r"[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}"),
    "neon_key": forms("napi_", tail=r"[A-Za-z0-9]{60,}"),
    "circleci_token": forms("CCIPAT_", tail=r"[A-Za-z0-9]{20,24}_[a-f0-9]{40}"),
    # JFrog: a reference token (`reftkn:01:` in base64) and an API key
    "jfrog_token": (
        *forms("cmVmdGtuOjAxOj", tail=r"[A-Za-z0-9+/]{40,}={0,2}"),
        *forms("AKCp", tail=r"[A-Za-z0-9]{60,}"),
    ),
    # SonarQube's user, project and global analysis tokens
    "sonarqube_token": forms("squ_", "sqp_", "sqa_", tail=r"[a-f0-9]{40}(?![a-f0-9])"),
    # GitLab's feature-flag client token (its other prefixes are detect-secrets')
    "gitlab_feature_flag_token": forms("glffct-", tail=r"[A-Za-z0-9_\-]{20}(?![A-Za-z0-9_\-])"),
}

VERSION_8_FORMS: dict[str, tuple[Form, ...]] = {**VERSION_8_COMMANDS, **VERSION_8_TOKENS}
