"""The credential formats sanitizer version 7 added (`engine.secret_formats` holds every version's and
their triggers): passwords and tokens given to database shells, package registries' and marketplaces'
command lines, remote-management tools and secret stores. Standard library only."""

from __future__ import annotations

from engine.secret_form_parts import (
    ARG_FIRST,
    ARG_VALUE,
    ARGS,
    DASH_P,
    ECHOED,
    NOT_REDIRECTION,
    Form,
    forms,
)

# The same, bare only (`"sonar.login=", …` is code).
_BARE_ARG = NOT_REDIRECTION + rf"(?P<t>{ARG_FIRST}\S*)"
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
    "cassandra_password": forms("cqlsh", tail=DASH_P),
    # `cypher-shell -u neo4j -p PASS`; `neo4j-admin [dbms] set-initial-password PASS`
    "neo4j_password": forms("cypher-shell", tail=DASH_P),
    "neo4j_initial_password": forms("set-initial-password", tail=r"[ \t]+" + ARG_VALUE),
    # `influx setup -u admin -p PASS -o org -b bucket`
    "influx_password": forms("influx setup", tail=DASH_P),
    # `twine upload -u __token__ -p PASS dist/*`
    "twine_password": forms("twine upload", tail=DASH_P),
    # `dotnet nuget add source URL -u me -p PASS`, `dotnet nuget push x.nupkg -k KEY`
    "nuget_password": (
        *forms(
            *(
                f"nuget {verb}"
                for verb in ("add source", "update source", "sources add", "sources update")
            ),
            tail=DASH_P,
        ),
        *forms("nuget push", tail=ARGS + r"-k[ \t]+" + ARG_VALUE),
    ),
    # `nuget setapikey KEY`
    "nuget_api_key": forms("setapikey", tail=r"[ \t]+" + ARG_VALUE),
    # `cargo login TOKEN`
    "cargo_token": forms("cargo login", tail=r"[ \t]+" + ARG_VALUE),
    # `poetry config http-basic.NAME USER PASS`, `composer config http-basic.HOST USER PASS`
    "http_basic_password": forms(
        "http-basic.", tail=r"[\w.\-]{1,100}[ \t]+(?!-)" + _WORD + r"[ \t]+" + ARG_VALUE
    ),
    # `poetry config pypi-token.NAME TOKEN`
    "pypi_token_setting": forms("pypi-token.", tail=r"[\w.\-]{1,100}[ \t]+" + ARG_VALUE),
    # `bundle config [set] [--global] HOST USER:PASS`
    "bundle_credentials": forms(
        "bundle config",
        tail=r"""(?:[ \t]+(?:set|--[\w\-]+))*[ \t]+[\w.\-]+[ \t]+["']?[\w.\-@]+:(?P<t>[^\s'"/][^\s'"]*)""",
    ),
    # `npm config set _authToken TOKEN`, `yarn config set npmAuthToken TOKEN` (`…=TOKEN` is an
    # assignment in every version)
    "npm_auth_setting": forms(
        "npm config set",
        "yarn config set",
        tail=r"(?:[ \t]+-[\w\-]+)*[ \t]+(?:\S*:)?(?:_authToken|_auth|_password|npmAuthToken|npmAuthIdent)"
        r"[ \t]+" + ARG_VALUE,
    ),
    # `vsce publish -p TOKEN`, `ovsx publish --pat TOKEN` (the extension marketplaces)
    "marketplace_token": forms(
        "vsce publish",
        "ovsx publish",
        "ovsx create-namespace",
        tail=ARGS + r"(?:-p|--pat)[ \t]+" + ARG_VALUE,
    ),
    # `codecov -t TOKEN`, `codecovcli upload-process -t TOKEN`
    "codecov_token": forms("codecov", tail=r"\w*\b" + ARGS + r"-t[ \t]+" + ARG_VALUE),
    # `-Dsonar.login=TOKEN`
    "sonar_login": forms("sonar.login=", head="(?:-D)?", tail=_BARE_ARG),
    # `expo login -u me -p PASS` (`-p --non-interactive`: it asks)
    "expo_password": forms("expo login", tail=ARGS + r"-p(?:[ \t]+|=)" + ARG_VALUE),
    # HTTPie: `http -a me:PASS URL`, `https -a me:PASS URL`
    "httpie_password": forms("http -a ", "https -a ", tail=r"""["']?[^\s:'"`]*:(?P<t>[^\s'"`]+)"""),
    # `ipmitool -I lanplus -H host -U admin -P PASS power status`
    "ipmi_password": forms("ipmitool", tail=r"\b" + ARGS + r"-P[ \t]+" + ARG_VALUE),
    # `xfreerdp /u:me /p:PASS /v:host`; `rdesktop -u me -p PASS host`
    "rdp_password": (
        *forms("xfreerdp", "wlfreerdp", "sdl-freerdp", tail=r"\d?\b" + ARGS + r"/p:" + ARG_VALUE),
        *forms("rdesktop", tail=DASH_P),
    ),
    # SNMPv3: `snmpwalk -v3 -l authPriv -u me -a SHA -A AUTHPASS -x AES -X PRIVPASS host` (a form per
    # option, so that both are found)
    "snmp_passphrase": tuple(
        ("", f"snmp{tool}", r"\b" + ARGS + f"-{flag}[ \\t]+" + ARG_VALUE)
        for flag in "AX"
        for tool in _SNMP_TOOLS
    ),
    # SNMPv1/v2c: `snmpwalk -v2c -c COMMUNITY host` (the community is the shared secret; `public`, a
    # plain word, is kept)
    "snmp_community": tuple(
        ("", f"snmp{tool}", r"\b" + ARGS + r"-c[ \t]+" + ARG_VALUE) for tool in _SNMP_TOOLS
    ),
    # `mosquitto_passwd -b FILE USER PASS`
    "mosquitto_passwd": forms(
        "mosquitto_passwd",
        tail=r"(?:[ \t]+-c)?[ \t]+-b(?:[ \t]+-c)?[ \t]+\S+[ \t]+\S+[ \t]+" + ARG_VALUE,
    ),
    # Redis's `AUTH [USER] PASS` typed at its prompt (`127.0.0.1:6379> AUTH PASS`) or a line's start
    # (a user is a name: `AUTH = "x9"` is code)
    "redis_auth": forms(
        "AUTH ",
        head=r"(?:(?<![^\n])|(?<=>))[ \t]*",
        tail=r"(?:[\w.\-@]+[ \t]+)?" + ARG_VALUE + r"(?=[ \t]*(?:\n|$))",
    ),
    # `curl --oauth2-bearer TOKEN`
    "oauth2_bearer": forms("--oauth2-bearer", tail=r"(?:[ \t]+|=)" + ARG_VALUE),
    # `consul acl set-agent-token agent TOKEN`
    "consul_token": forms("set-agent-token", tail=r"[ \t]+\S+[ \t]+" + ARG_VALUE),
    # Bitwarden's CLI: `bw unlock PASS`, `bw login EMAIL PASS`
    "bitwarden_password": (
        *forms("bw unlock", tail=r"[ \t]+" + ARG_VALUE),
        *forms("bw login", tail=r"[ \t]+(?!-)\S+[ \t]+" + ARG_VALUE),
    ),
    # `ngrok config add-authtoken TOKEN`, `ngrok authtoken TOKEN`
    "ngrok_token": forms("add-authtoken", "ngrok authtoken", tail=r"[ \t]+" + ARG_VALUE),
    # `doppler secrets set API_TOKEN VALUE` (`engine.secrets` checks that the name names a secret)
    "doppler_secret": forms(
        "doppler secrets set", tail=r"[ \t]+(?P<key>[A-Za-z_]\w*)[ \t]+" + ARG_VALUE
    ),
    # `aws ssm put-parameter --name db --type SecureString --value VALUE` (a `SecureString` only; a
    # value read from `file://` stays)
    "ssm_secure_value": forms(
        "put-parameter",
        tail=r"(?=[^\n|;&]*?[ \t]--type(?:[ \t]+|=)SecureString\b)"
        + ARGS
        + r"--value(?:[ \t]+|=)(?!file://)"
        + ARG_VALUE,
    ),
    # `az keyvault secret set --vault-name v --name db --value VALUE`
    "keyvault_secret": forms("keyvault secret set", tail=ARGS + r"--value(?:[ \t]+|=)" + ARG_VALUE),
    # `dotnet user-secrets set "Section:ApiKey" VALUE` (every value there is a secret)
    "user_secret": forms("user-secrets set", tail=r"[ \t]+" + _WORD + r"[ \t]+" + ARG_VALUE),
    # a value echoed into a secret store: `echo -n VALUE | gcloud secrets versions add NAME
    # --data-file=-`, `printf VALUE | docker secret create NAME -` (the store reads stdin: `-`);
    # `echo VALUE | [npx] wrangler secret put NAME`, `… | vercel env add NAME ENV`, `… | gh secret set
    # NAME` (they read stdin for the value; `gh secret set` is version 5's trigger, so the pipe is part
    # of this one's)
    "piped_secret": (
        *(
            (ECHOED + _PIPE_TO, prefix, _SECRET_NAME)
            for prefix in ("wrangler secret put", "vercel env add")
        ),
        *(
            (ECHOED + r"[ \t]*", pipe, _SECRET_NAME)
            for pipe in ("| gh secret set", "|gh secret set")
        ),
        (
            ECHOED + r"[ \t]*\|[ \t]*",
            "gcloud secrets",
            r"(?:[ \t]+(?!--data-file)[^\s|;&]+){1,8}?[ \t]+--data-file(?:=|[ \t]+)-(?![^\s|;&])",
        ),
        (
            ECHOED + r"[ \t]*\|[ \t]*",
            "docker secret create",
            r"(?:[ \t]+-[\w\-=]+)*[ \t]+[^\s|;&\-][^\s|;&]*[ \t]+-(?![^\s|;&])",
        ),
    ),
}
