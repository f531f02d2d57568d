"""The credentials of sanitizer version 8's formats (`engine.secret_formats_v8.VERSION_8_FORMS`), planted
like the rest (`test_secrets_corpus.PLANTED` holds them too, so the store test plants them in four
places). The values are made up; each is written in the command or setting that takes it."""

from __future__ import annotations

from tests.engine.planted import Planted


def _planted(label: str, kind: str, text: str, core: str) -> Planted:
    return Planted(label=label, kind=kind, text=text, cores=(core,))


PLANTED_V8: tuple[Planted, ...] = (
    _planted(
        "mysqladmin",
        "mysqladmin_password",
        "mysqladmin -u root -p password Pl4nt8MysqladminPw",
        "Pl4nt8MysqladminPw",
    ),
    _planted(
        "mysqlsh",
        "mysqlsh_password",
        "mysqlsh --uri root:Pl4nt8MysqlshPw@db.internal:3306 --sql",
        "Pl4nt8MysqlshPw",
    ),
    _planted(
        "isql",
        "sybase_password",
        "isql -S SYBASE -U sa -P Pl4nt8IsqlPw -D orders",
        "Pl4nt8IsqlPw",
    ),
    _planted(
        "db2",
        "db2_password",
        "db2 connect to SAMPLE user db2inst1 using Pl4nt8Db2Pw",
        "Pl4nt8Db2Pw",
    ),
    _planted(
        "hdbsql",
        "hana_password",
        "hdbsql -n hana.internal:30015 -u SYSTEM -p Pl4nt8HanaPw 'SELECT 1 FROM DUMMY'",
        "Pl4nt8HanaPw",
    ),
    _planted(
        "couchbase-cli",
        "couchbase_password",
        "couchbase-cli bucket-list -c cb.internal:8091 -u Administrator -p Pl4nt8CouchPw",
        "Pl4nt8CouchPw",
    ),
    _planted(
        "arangosh",
        "arango_password",
        "arangosh --server.endpoint tcp://127.0.0.1:8529 --server.username root --server.password Pl4nt8ArangoPw",
        "Pl4nt8ArangoPw",
    ),
    _planted(
        "elasticsearch-users",
        "elastic_user_password",
        "bin/elasticsearch-users useradd ops -p Pl4nt8ElasticPw -r superuser",
        "Pl4nt8ElasticPw",
    ),
    _planted(
        "influx-user",
        "influx_user_password",
        "influx user create -n grafana -o acme -p Pl4nt8InfluxUserPw",
        "Pl4nt8InfluxUserPw",
    ),
    _planted(
        "crane",
        "registry_client_password",
        "crane auth login ghcr.io -u deploy -p Pl4nt8CranePw",
        "Pl4nt8CranePw",
    ),
    _planted(
        "skopeo-creds",
        "registry_creds",
        "skopeo copy --src-creds deploy:Pl4nt8SkopeoPw docker://ghcr.io/acme/app:1 oci:app",
        "Pl4nt8SkopeoPw",
    ),
    _planted(
        "uv-publish",
        "publish_password",
        "uv publish -u __token__ -p Pl4nt8UvPublishTok dist/*",
        "Pl4nt8UvPublishTok",
    ),
    _planted(
        "glab",
        "cli_login_token",
        "glab auth login --hostname gitlab.acme.io -t Pl4nt8GlabTok",
        "Pl4nt8GlabTok",
    ),
    _planted(
        "cloudflared",
        "cloudflared_token",
        "sudo cloudflared service install eyJhIjoiPl4nt8CfTunnelTok",
        "Pl4nt8CfTunnelTok",
    ),
    _planted(
        "b2",
        "b2_application_key",
        "b2 authorize-account 0012a3b4c5d6e7f0000000001 K001Pl4nt8B2AppKey",
        "Pl4nt8B2AppKey",
    ),
    _planted(
        "rclone-config",
        "rclone_secret",
        "rclone config create backup s3 provider AWS access_key_id AKIAEXAMPLE secret_access_key Pl4nt8RcloneKey",
        "Pl4nt8RcloneKey",
    ),
    _planted(
        "rclone-obscure",
        "rclone_obscured_password",
        "rclone obscure Pl4nt8RcloneObscure",
        "Pl4nt8RcloneObscure",
    ),
    _planted(
        "mc-admin-user",
        "minio_user_password",
        "mc admin user add myminio backup-svc Pl4nt8MinioUserPw",
        "Pl4nt8MinioUserPw",
    ),
    _planted(
        "supabase",
        "supabase_password",
        "supabase db push -p Pl4nt8SupabasePw",
        "Pl4nt8SupabasePw",
    ),
    _planted(
        "altool",
        "altool_password",
        "xcrun altool --upload-app -f App.ipa -t ios -u dev@acme.io -p Pl4nt8AltoolPw",
        "Pl4nt8AltoolPw",
    ),
    _planted(
        "keychain-unlock",
        "keychain_command_password",
        "security unlock-keychain -p Pl4nt8KeychainPw build.keychain",
        "Pl4nt8KeychainPw",
    ),
    _planted(
        "jarsigner",
        "signing_password",
        "jarsigner -keystore release.jks -storepass Pl4nt8JarsignPw app.apk release",
        "Pl4nt8JarsignPw",
    ),
    _planted(
        "net-user",
        "windows_user_password",
        "net user backup Pl4nt8NetUserPw /add",
        "Pl4nt8NetUserPw",
    ),
    _planted(
        "plink",
        "windows_command_password",
        "plink -ssh -pw Pl4nt8PlinkPw admin@10.0.0.7 uptime",
        "Pl4nt8PlinkPw",
    ),
    _planted(
        "unrar",
        "unrar_password",
        "unrar x -pPl4nt8UnrarPw backup.rar /tmp/restore/",
        "Pl4nt8UnrarPw",
    ),
    _planted(
        "drush",
        "drush_password",
        "drush user:password admin Pl4nt8DrushPw",
        "Pl4nt8DrushPw",
    ),
    _planted(
        "fish-set",
        "shell_set_secret",
        "set -gx OPENROUTER_API_KEY Pl4nt8FishSetKey",
        "Pl4nt8FishSetKey",
    ),
    _planted(
        "here-string",
        "here_string_secret",
        "gh auth login --hostname github.acme.io --with-token <<< Pl4nt8HereStrTok",
        "Pl4nt8HereStrTok",
    ),
    _planted(
        "kubeadm",
        "kubeadm_token",
        "kubeadm join 10.0.0.1:6443 --token pl4nt8.kubeadmtoken0001 --discovery-token-unsafe-skip-ca-verification",
        "pl4nt8.kubeadmtoken",
    ),
    _planted(
        "az-devops",
        "piped_devops_token",
        "echo Pl4nt8DevopsPat | az devops login --organization https://dev.azure.com/acme",
        "Pl4nt8DevopsPat",
    ),
    _planted(
        "printf-pipe",
        "printf_piped_secret",
        "printf '%s' 'Pl4nt8PrintfPw' | docker login ghcr.io -u deploy --password-stdin",
        "Pl4nt8PrintfPw",
    ),
    _planted(
        "pgpass",
        "pgpass_password",
        "echo 'db.internal:5432:orders:app:Pl4nt8PgpassPw' >> ~/.pgpass && chmod 600 ~/.pgpass",
        "Pl4nt8PgpassPw",
    ),
    _planted(
        "wp-config",
        "php_define_secret",
        "define( 'DB_PASSWORD', 'Pl4nt8WpDbPw' );",
        "Pl4nt8WpDbPw",
    ),
    _planted(
        "gradle-signing",
        "gradle_signing_password",
        "        storePassword 'Pl4nt8GradleStorePw'",
        "Pl4nt8GradleStorePw",
    ),
    _planted(
        "slapd-rootpw",
        "config_password",
        'suffix "dc=acme,dc=io"\nrootpw Pl4nt8SlapdRootPw\ndirectory /var/lib/ldap',
        "Pl4nt8SlapdRootPw",
    ),
    _planted(
        "mysql-set-password",
        "sql_set_password",
        "SET PASSWORD FOR 'app'@'%' = 'Pl4nt8SetPw';",
        "Pl4nt8SetPw",
    ),
    _planted(
        "django-superuser",
        "django_password",
        "User.objects.create_superuser('admin', 'admin@acme.io', 'Pl4nt8DjangoPw')",
        "Pl4nt8DjangoPw",
    ),
    _planted(
        "session-cookie",
        "session_cookie",
        "curl -H 'Cookie: theme=dark; sessionid=Pl4nt8SessionCookie9x' https://app.acme.io/api/me",
        "Pl4nt8SessionCookie",
    ),
    _planted(
        "openvpn-static-key",
        "openvpn_static_key",
        "<tls-auth>\n-----BEGIN OpenVPN Static key V1-----\nPl4nt8OvpnStaticKey0a1b2c3d4e5f6a7b\n8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f\n-----END OpenVPN Static key V1-----\n</tls-auth>",
        "Pl4nt8OvpnStaticKey",
    ),
    # provider tokens
    _planted(
        "slack-refresh",
        "slack_refresh_token",
        "SLACK_REFRESH=xoxe-1-Pl4nt8SlackRefresh0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0",
        "Pl4nt8SlackRefresh",
    ),
    _planted(
        "tavily",
        "tavily_key",
        "search with 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 failed: quota",
        "Pl4nt8Tavily",
    ),
    _planted(
        "jina",
        "jina_key",
        "the reader rejects jina_Pl4nt8JinaKey0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8 with 401",
        "Pl4nt8JinaKey",
    ),
    _planted(
        "nvidia",
        "nvidia_key",
        "NVIDIA key 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 works",
        "Pl4nt8NvidiaKey",
    ),
    _planted(
        "cerebras",
        "cerebras_key",
        "inference works with csk-Pl4nt8CerebrasKey0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d now",
        "Pl4nt8CerebrasKey",
    ),
    _planted(
        "vercel-blob",
        "vercel_blob_token",
        "uploads fail with vercel_blob_rw_Pl4nt8VBlob0a1b2_Pl4nt8VercelBlobRw0a1b2c3d4e5f since Monday",
        "Pl4nt8VercelBlobRw",
    ),
    _planted(
        "mongodb-atlas",
        "mongodb_atlas_secret",
        "the service account mdb_sa_sk_Pl4nt8AtlasSecret0a1b2c3d4e5f6a7b8c9d was rotated",
        "Pl4nt8AtlasSecret",
    ),
    _planted(
        "e2b",
        "e2b_key",
        "sandboxes start with e2b_7c6b5a49382716f0e9d8c7b6a5f4e3d2c1b0a9f8 again",
        "e2b_7c6b5a4938271",
    ),
    _planted(
        "browserbase",
        "browserbase_key",
        "sessions open with bb_live_Pl4nt8Browserbase0a1b2c3 in staging",
        "Pl4nt8Browserbase",
    ),
    _planted(
        "pinecone",
        "pinecone_key",
        "the index answers to pcsk_3Xy9Q_Pl4nt8PineconeKey0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d only",
        "Pl4nt8PineconeKey",
    ),
    _planted(
        "neon",
        "neon_key",
        "Authorization header from NEON_API: napi_Pl4nt8NeonApiKey0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4",
        "Pl4nt8NeonApiKey",
    ),
    _planted(
        "circleci",
        "circleci_token",
        "the pipeline API took CCIPAT_Pl4nt8CircleToken0a1b2_c6d7e8f9a0b1c2d3e4f5061728394a5b6c7d8e9f fine",
        "Pl4nt8CircleToken",
    ),
    _planted(
        "jfrog-reference",
        "jfrog_token",
        "Artifactory accepts cmVmdGtuOjAxOjPl4nt8JfrogRefTok0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8 for pulls",
        "Pl4nt8JfrogRefTok",
    ),
    _planted(
        "sonarqube",
        "sonarqube_token",
        "analysis ran as squ_f00dfeedc4b5a69788796a5b4c3d2e1f0a9b8c7d yesterday",
        "squ_f00dfeedc4b5a697",
    ),
    _planted(
        "gitlab-ff",
        "gitlab_feature_flag_token",
        "Unleash instance id glffct-Pl4nt8GlFfTok0a1b2c3 for the client",
        "Pl4nt8GlFfTok",
    ),
)
