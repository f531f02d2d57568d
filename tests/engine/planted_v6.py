"""The credentials of sanitizer version 6's formats (`engine.secret_formats.VERSION_6_FORMS`), planted
like the rest (`test_secrets_corpus.PLANTED` holds them too, so the store test plants them in four
places). The values are made up; provider tokens are written in each provider's format (Netlify 38
characters after `nfp_`, Render 32 after `rnd_`, PostHog 43 after `phx_`, a Cloudflare origin CA key
24 and 146 hex characters), passwords in the command or statement that takes them."""

from __future__ import annotations

from tests.engine.planted import Planted

_HEX146 = "0123456789abcdef" * 9 + "01"
PLANTED_V6: tuple[Planted, ...] = (
    Planted(
        label="netlify",
        kind="netlify_token",
        text="netlify deploy --auth nfp_Pl4ntN3tl1fyQw8Er6Ty4Ui2Op0As9Df7Gh5Jk --prod",
        cores=("Pl4ntN3tl1fy",),
    ),
    Planted(
        label="render",
        kind="render_key",
        text="the deploy hook reads the Render key rnd_Pl4ntR3nderQw8Er6Ty4Ui2Op0As9Df7 from the vault",
        cores=("Pl4ntR3nder",),
    ),
    Planted(
        label="posthog",
        kind="posthog_personal_key",
        text="POSTHOG_PERSONAL_API_KEY is phx_Pl4ntP0stH0gQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1X for the export",
        cores=("Pl4ntP0stH0g",),
    ),
    Planted(
        label="google-refresh",
        kind="google_refresh_token",
        text='"refresh_token": "1//0gPl4ntG00gleR3freshQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qw8Er6Ty4",',
        cores=("Pl4ntG00gleR3fresh",),
    ),
    Planted(
        label="facebook",
        kind="facebook_token",
        text="graph api call with EAACEdEose0cBAPl4ntF4cebookQw8Er6Ty4Ui2Op0As9Df7Gh5 returned 200",
        cores=("Pl4ntF4cebook",),
    ),
    Planted(
        label="cloudflare-origin-ca",
        kind="cloudflare_origin_ca_key",
        text=f"X-Auth-User-Service-Key: v1.0-5eed1e55c0de4a11b0b5f00d-{_HEX146}",
        cores=("5eed1e55c0de4a11b0b5f00d",),
    ),
    Planted(
        label="sql-with-password",
        kind="sql_password",
        text="psql -c \"ALTER USER app WITH PASSWORD 'Pl4ntSqlPassw0rd';\"",
        cores=("Pl4ntSqlPassw0rd",),
    ),
    Planted(
        label="sql-identified-by",
        kind="sql_password",
        text="MariaDB [shop]> create user 'app'@'%' identified by 'Pl4ntMySqlUs3rPw';",
        cores=("Pl4ntMySqlUs3rPw",),
    ),
    Planted(
        label="sqlcmd",
        kind="sqlserver_password",
        text="sqlcmd -S db.internal -U sa -P Pl4ntSqlCmdPassw0rd -Q 'SELECT 1'",
        cores=("Pl4ntSqlCmdPassw0rd",),
    ),
    Planted(
        label="mongosh",
        kind="mongo_password",
        text="mongosh -u admin -p 'Pl4ntM0ngoPassw0rd' --authenticationDatabase admin",
        cores=("Pl4ntM0ngoPassw0rd",),
    ),
    Planted(
        label="sqlplus",
        kind="sqlplus_password",
        text="sqlplus -S app/Pl4ntSqlPlusPw@//db.internal:1521/ORCL @report.sql",
        cores=("Pl4ntSqlPlusPw",),
    ),
    Planted(
        label="ldapsearch",
        kind="ldap_password",
        text='ldapsearch -x -H ldap://dir.internal -D "cn=admin,dc=example,dc=org" -w Pl4ntLdapBindPw -b dc=example,dc=org',
        cores=("Pl4ntLdapBindPw",),
    ),
    Planted(
        label="zip",
        kind="archive_password",
        text="zip -r -P Pl4ntZ1pPassw0rd backup.zip ./exports",
        cores=("Pl4ntZ1pPassw0rd",),
    ),
    Planted(
        label="7z",
        kind="archive_password",
        text="7z a -tzip -pPl4nt7z1pPassw0rd -mhe=on backup.7z ./exports",
        cores=("Pl4nt7z1pPassw0rd",),
    ),
    Planted(
        label="openssl-enc",
        kind="openssl_password",
        text="openssl enc -aes-256-cbc -salt -in dump.sql -out dump.enc -k Pl4nt0pensslPw",
        cores=("Pl4nt0pensslPw",),
    ),
    Planted(
        label="chpasswd",
        kind="passwd_stdin",
        text="echo 'deploy:Pl4ntChPassw0rd' | sudo chpasswd",
        cores=("Pl4ntChPassw0rd",),
    ),
    Planted(
        label="redis-conf",
        kind="redis_config_password",
        text="bind 127.0.0.1\nrequirepass Pl4ntR3disC0nfPw\nappendonly yes",
        cores=("Pl4ntR3disC0nfPw",),
    ),
    Planted(
        label="minio",
        kind="minio_secret",
        text="mc alias set local http://localhost:9000 minioadmin Pl4ntM1n10S3cretK3y",
        cores=("Pl4ntM1n10S3cretK3y",),
    ),
    Planted(
        label="rabbitmq",
        kind="rabbitmq_password",
        text="rabbitmqctl add_user deploy Pl4ntR4bbitPw && rabbitmqctl set_user_tags deploy administrator",
        cores=("Pl4ntR4bbitPw",),
    ),
    Planted(
        label="mosquitto",
        kind="mqtt_password",
        text="mosquitto_pub -h broker.internal -u sensor -P Pl4ntMqttPassw0rd -t home/temp -m 21",
        cores=("Pl4ntMqttPassw0rd",),
    ),
    Planted(
        label="lftp",
        kind="lftp_password",
        text="lftp -u deploy,Pl4ntLftpPassw0rd sftp://files.internal -e 'mirror -R dist /www'",
        cores=("Pl4ntLftpPassw0rd",),
    ),
    Planted(
        label="keychain",
        kind="keychain_password",
        text="security add-generic-password -a deploy -s ci-token -w Pl4ntK3ychainPw -U",
        cores=("Pl4ntK3ychainPw",),
    ),
    Planted(
        label="cmdkey",
        kind="windows_password",
        text="cmdkey /add:fileserver /user:CORP\\deploy /pass:Pl4ntCmdK3yPw",
        cores=("Pl4ntCmdK3yPw",),
    ),
    Planted(
        label="vault-login",
        kind="vault_login_token",
        text="vault login s.Pl4ntV4ultL3gacyT0ken01",
        cores=("Pl4ntV4ultL3gacy",),
    ),
    Planted(
        label="nmcli",
        kind="nmcli_password",
        text="nmcli dev wifi connect Office-5G password 'Pl4ntW1f1Passw0rd'",
        cores=("Pl4ntW1f1Passw0rd",),
    ),
    Planted(
        label="wpa-supplicant",
        kind="wifi_password",
        text='network={\n    ssid="Office"\n    psk="Pl4ntWpaPassphr4se"\n}',
        cores=("Pl4ntWpaPassphr4se",),
    ),
    Planted(
        label="dotnet-appsetting",
        kind="keyed_setting",
        text='<appSettings><add key="SmtpPassword" value="Pl4ntSmtpPassw0rd" /></appSettings>',
        cores=("Pl4ntSmtpPassw0rd",),
    ),
)
