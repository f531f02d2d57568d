"""The credentials of sanitizer version 7's formats (`engine.secret_formats.VERSION_7_FORMS`), planted
like the rest (`test_secrets_corpus.PLANTED` holds them too, so the store test plants them in four
places). The values are made up; each is written in the command or setting that takes it."""

from __future__ import annotations

from tests.engine.planted import Planted, planted

PLANTED_V7: tuple[Planted, ...] = (
    planted(
        "cqlsh",
        "cassandra_password",
        "cqlsh -u cassandra -p Pl4nt7CqlshPw cassandra.internal 9042",
        "Pl4nt7CqlshPw",
    ),
    planted(
        "cypher-shell",
        "neo4j_password",
        "cypher-shell -a neo4j://graph.internal:7687 -u neo4j -p 'Pl4nt7Neo4jPw' 'MATCH (n) RETURN count(n)'",
        "Pl4nt7Neo4jPw",
    ),
    planted(
        "neo4j-admin",
        "neo4j_initial_password",
        "docker exec graph neo4j-admin dbms set-initial-password Pl4nt7Neo4jInit",
        "Pl4nt7Neo4jInit",
    ),
    planted(
        "influx-setup",
        "influx_password",
        "influx setup -u admin -p Pl4nt7InfluxPw -o acme -b metrics -f",
        "Pl4nt7InfluxPw",
    ),
    planted(
        "twine",
        "twine_password",
        "twine upload -u __token__ -p Pl4nt7TwineUploadTok dist/*",
        "Pl4nt7TwineUploadTok",
    ),
    planted(
        "nuget-source",
        "nuget_password",
        "dotnet nuget add source https://nuget.pkg.github.com/acme/index.json -n github -u me -p Pl4nt7NugetPw --store-password-in-clear-text",
        "Pl4nt7NugetPw",
    ),
    planted(
        "nuget-setapikey",
        "nuget_api_key",
        "nuget setapikey oy2Pl4nt7NugetApiKey4d5e6f7 -Source https://api.nuget.org/v3/index.json",
        "Pl4nt7NugetApiKey",
    ),
    planted(
        "cargo",
        "cargo_token",
        "cargo login cioPl4nt7CargoTok3n0a1b2c3d4e5f6a7b8",
        "Pl4nt7CargoTok3n",
    ),
    planted(
        "poetry-http-basic",
        "http_basic_password",
        "poetry config http-basic.private-pypi deploy Pl4nt7PoetryPw",
        "Pl4nt7PoetryPw",
    ),
    planted(
        "poetry-pypi-token",
        "pypi_token_setting",
        "poetry config pypi-token.testpypi Pl4nt7PoetryTok-x9",
        "Pl4nt7PoetryTok",
    ),
    planted(
        "bundle",
        "bundle_credentials",
        "bundle config set --global rubygems.pkg.github.com me:Pl4nt7BundlePw",
        "Pl4nt7BundlePw",
    ),
    planted(
        "npm-config",
        "npm_auth_setting",
        "npm config set //npm.pkg.github.com/:_authToken Pl4nt7NpmCfgTok",
        "Pl4nt7NpmCfgTok",
    ),
    planted(
        "vsce",
        "marketplace_token",
        "npx vsce publish -p Pl4nt7VsceMarketTok --no-dependencies",
        "Pl4nt7VsceMarketTok",
    ),
    planted(
        "codecov",
        "codecov_token",
        "./codecov -t Pl4nt7C0decovTok -f coverage.xml",
        "Pl4nt7C0decovTok",
    ),
    planted(
        "sonar",
        "sonar_login",
        "mvn sonar:sonar -Dsonar.host.url=https://sonar.internal -Dsonar.login=Pl4nt7S0narTok",
        "Pl4nt7S0narTok",
    ),
    planted(
        "expo",
        "expo_password",
        "expo login -u acme-ci -p Pl4nt7Exp0Pw --non-interactive",
        "Pl4nt7Exp0Pw",
    ),
    planted(
        "httpie",
        "httpie_password",
        "http -a admin:Pl4nt7H77piePw POST https://api.internal/v1/jobs name=nightly",
        "Pl4nt7H77piePw",
    ),
    planted(
        "ipmitool",
        "ipmi_password",
        "ipmitool -I lanplus -H 10.0.0.5 -U ADMIN -P Pl4nt7IpmiPw chassis power status",
        "Pl4nt7IpmiPw",
    ),
    planted(
        "xfreerdp",
        "rdp_password",
        "xfreerdp /u:Administrator /p:Pl4nt7RdpPw /v:win.internal /cert:ignore",
        "Pl4nt7RdpPw",
    ),
    planted(
        "snmpwalk",
        "snmp_passphrase",
        "snmpwalk -v3 -l authNoPriv -u monitor -a SHA -A Pl4nt7SnmpAuthPw switch.internal",
        "Pl4nt7SnmpAuthPw",
    ),
    planted(
        "snmp-community",
        "snmp_community",
        "snmpget -v2c -c Pl4nt7C0mmunity printer.internal sysUpTime.0",
        "Pl4nt7C0mmunity",
    ),
    planted(
        "aws-ssm",
        "ssm_secure_value",
        "aws ssm put-parameter --name /prod/db/password --type SecureString --value 'Pl4nt7SsmValue' --overwrite",
        "Pl4nt7SsmValue",
    ),
    planted(
        "mosquitto_passwd",
        "mosquitto_passwd",
        "mosquitto_passwd -b /etc/mosquitto/passwd sensor Pl4nt7MqttFilePw",
        "Pl4nt7MqttFilePw",
    ),
    planted(
        "redis-auth",
        "redis_auth",
        "127.0.0.1:6379> AUTH default Pl4nt7RedisAuthPw\nOK",
        "Pl4nt7RedisAuthPw",
    ),
    planted(
        "curl-oauth2-bearer",
        "oauth2_bearer",
        "curl --oauth2-bearer Pl4nt7OAuthTok https://api.internal/v1/me",
        "Pl4nt7OAuthTok",
    ),
    planted(
        "consul",
        "consul_token",
        "consul acl set-agent-token agent 5eed7a11-Pl4nt7-Consul-Tok",
        "Pl4nt7-Consul",
    ),
    planted(
        "bitwarden",
        "bitwarden_password",
        "export BW_SESSION=$(bw unlock Pl4nt7BwMasterPw --raw)",
        "Pl4nt7BwMasterPw",
    ),
    planted(
        "ngrok",
        "ngrok_token",
        "ngrok config add-authtoken 2Pl4nt7NgrokTok_3xQw8Er6Ty4Ui2Op0",
        "Pl4nt7NgrokTok",
    ),
    planted(
        "doppler-secrets-set",
        "doppler_secret",
        "doppler secrets set STRIPE_API_KEY Pl4nt7DopplerVal -p web -c prd",
        "Pl4nt7DopplerVal",
    ),
    planted(
        "keyvault",
        "keyvault_secret",
        "az keyvault secret set --vault-name acme-kv --name db-password --value 'Pl4nt7KeyVaultPw'",
        "Pl4nt7KeyVaultPw",
    ),
    planted(
        "user-secrets",
        "user_secret",
        'dotnet user-secrets set "Authentication:Google:ClientSecret" "Pl4nt7UserSecret"',
        "Pl4nt7UserSecret",
    ),
    planted(
        "gcloud-secrets",
        "piped_secret",
        "echo -n 'Pl4nt7GcloudSecret' | gcloud secrets versions add db-password --data-file=-",
        "Pl4nt7GcloudSecret",
    ),
)
