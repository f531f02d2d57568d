"""The credentials of sanitizer version 5's formats (`engine.secret_formats.VERSION_5_FORMS`), planted
like the rest (`test_secrets_corpus.PLANTED` holds them too, so the store test plants them in four
places). The values are made up, written by hand in each provider's format: the lengths are the ones
the formats ask for (RubyGems 48 hex characters, Dynatrace 24 and 64, Okta 42 with `00` first, …)."""

from __future__ import annotations

from tests.engine.planted import Planted

PLANTED_V5: tuple[Planted, ...] = (
    Planted(
        label="rubygems",
        kind="rubygems_key",
        text="gem push with GEM_HOST_API_KEY rubygems_c0ffee9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c",
        cores=("c0ffee9a8b7c",),
    ),
    Planted(
        label="clojars",
        kind="clojars_token",
        text="deploy token CLOJARS_Pl4ntC1ojarsQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qw8Er6Ty4 set",
        cores=("Pl4ntC1ojars",),
    ),
    Planted(
        label="contentful",
        kind="contentful_token",
        text="contentful login --management-token CFPAT-Pl4ntC0ntentfu1Qw8Er6Ty4Ui2Op0As9Df7Gh5Jk3L",
        cores=("Pl4ntC0ntentfu1",),
    ),
    Planted(
        label="dynatrace",
        kind="dynatrace_token",
        text="Api-Token dt0c01.PL4NTDYNAQW8ER6TY4UI2OP0.Pl4ntDyn4Secr3tQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qw8Er6Ty4U",
        cores=("PL4NTDYNA", "Pl4ntDyn4Secr3t"),
    ),
    Planted(
        label="easypost",
        kind="easypost_key",
        text="client = easypost.EasyPostClient('EZAKPl4ntEasyP0stQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qw')",
        cores=("Pl4ntEasyP0st",),
    ),
    Planted(
        label="flutterwave",
        kind="flutterwave_key",
        text="secret key FLWSECK_TEST-ab12fedcba9876543210fedcba987654-X for the sandbox",
        cores=("ab12fedcba98",),
    ),
    Planted(
        label="mapbox",
        kind="mapbox_token",
        text="MAPBOX_DOWNLOADS sk.eyJ1IjoicGxhbnQiLCJhIjoiPl4ntMapb0xQw8Er6Ty4Ui2O.Pl4ntMapb0xSigQw8Er6Ty",
        cores=("Pl4ntMapb0xQw", "Pl4ntMapb0xSig"),
    ),
    Planted(
        label="prefect",
        kind="prefect_key",
        text="prefect cloud login -k pnu_Pl4ntPr3fectQw8Er6Ty4Ui2Op0As9Df7Gh5",
        cores=("Pl4ntPr3fect",),
    ),
    Planted(
        label="readme",
        kind="readme_key",
        text="rdme openapi --key rdme_pl4ntr3admeqw8er6ty4ui2op0as9df7gh5jk3lz1xc5vb7nm9qw8er6ty4ui2op0as9df",
        cores=("pl4ntr3adme",),
    ),
    Planted(
        label="brevo",
        kind="brevo_key",
        text="api-key: xkeysib-b1e20123456789abcdef0123456789abcdef0123456789abcdef0123456789ab-Pl4ntBrev0Qw8Er6",
        cores=("b1e20123456789", "Pl4ntBrev0"),
    ),
    Planted(
        label="shippo",
        kind="shippo_token",
        text="ShippoToken shippo_live_5a5a0123456789abcdef0123456789abcdef0123 in the header",
        cores=("5a5a0123456789",),
    ),
    Planted(
        label="square",
        kind="square_token",
        text="square access token sq0atp-Pl4ntSqu4reT0kQw8Er6Ty from the dashboard",
        cores=("Pl4ntSqu4reT0k",),
    ),
    Planted(
        label="huggingface-org",
        kind="huggingface_org_token",
        text="org token 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 for the space",
        cores=("PlantHuggingOrg",),
    ),
    Planted(
        label="typeform",
        kind="typeform_token",
        text="typeform token tfp_Pl4ntTyp3formQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1X_Pl4ntTailQw8Er",
        cores=("Pl4ntTyp3form", "Pl4ntTailQw8Er"),
    ),
    Planted(
        label="frameio",
        kind="frameio_token",
        text="frame.io dev token fio-u-Pl4ntFram3ioQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qw8Er6Ty4Ui2O",
        cores=("Pl4ntFram3io",),
    ),
    Planted(
        label="alibaba",
        kind="alibaba_key",
        text="aliyun configure --access-key-id LTAI5tPl4ntA1iQw8Er6Ty4U --region cn-hangzhou",
        cores=("5tPl4ntA1i",),
    ),
    Planted(
        label="adobe",
        kind="adobe_client_secret",
        text="ADOBE client secret p8e-Pl4ntAd0beQw8Er6Ty4Ui2Op0As9Df7G rotated",
        cores=("Pl4ntAd0be",),
    ),
    Planted(
        label="linear-oauth",
        kind="linear_oauth_token",
        text="linear oauth lin_oauth_9e9e0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab",
        cores=("9e9e0123456789",),
    ),
    Planted(
        label="okta",
        kind="okta_token",
        text='curl -H "Authorization: SSWS 00Pl4nt0ktaQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1X" https://acme.okta.com/api/v1/users',
        cores=("Pl4nt0kta",),
    ),
    Planted(
        label="aws-configure",
        kind="aws_configure_secret",
        text="aws configure set aws_secret_access_key Pl4ntAwsC0nf1g/K7MDENG/bPxRfiCYQw8Er6Ty --profile ci",
        cores=("Pl4ntAwsC0nf1g", "bPxRfiCYQw8Er6Ty"),
    ),
    Planted(
        label="keytool",
        kind="keytool_password",
        text="keytool -importcert -alias ca -file ca.pem -keystore app.jks -storepass Pl4ntK3yt00lPw -noprompt",
        cores=("Pl4ntK3yt00lPw",),
    ),
    Planted(
        label="redis-cli",
        kind="redis_password",
        text="redis-cli -h cache.internal -p 6380 -a 'Pl4ntR3d1sPw' --tls ping",
        cores=("Pl4ntR3d1sPw",),
    ),
    Planted(
        label="oc-login",
        kind="login_password",
        text="oc login https://api.cluster.internal:6443 -u admin -p Pl4nt0cL0g1nPw",
        cores=("Pl4nt0cL0g1nPw",),
    ),
    Planted(
        label="smbclient",
        kind="smb_password",
        text="smbclient //fs.internal/share -U backup%Pl4ntSmbPassw0rd -c 'ls'",
        cores=("Pl4ntSmbPassw0rd",),
    ),
    Planted(
        label="htpasswd-file",
        kind="htpasswd_password",
        text="htpasswd -bc /etc/nginx/.htpasswd admin Pl4ntHtpFilePw",
        cores=("Pl4ntHtpFilePw",),
    ),
    Planted(
        label="htpasswd-stdout",
        kind="htpasswd_password",
        text="htpasswd -nbB grafana Pl4ntHtpN0F1lePw >> users.htpasswd",
        cores=("Pl4ntHtpN0F1lePw",),
    ),
    Planted(
        label="sshpass",
        kind="sshpass_password",
        text='SSHPASS="Pl4ntSshpa55Pw" sshpass -e ssh deploy@build.internal',
        cores=("Pl4ntSshpa55Pw",),
    ),
    Planted(
        label="gh-secret",
        kind="gh_secret",
        text="gh secret set DEPLOY_TOKEN --repo acme/app --body Pl4ntGhS3cretB0dy",
        cores=("Pl4ntGhS3cretB0dy",),
    ),
    Planted(
        label="environ-subscript",
        kind="env_var_secret",
        text="os.environ['DATABASE_PASSWORD'] = 'Pl4ntEnv1r0nPw'  # for the local run",
        cores=("Pl4ntEnv1r0nPw",),
    ),
    Planted(
        label="setenv",
        kind="env_var_secret",
        text='monkeypatch.setenv("STRIPE_API_KEY", "Pl4ntS3tenvK3y")',
        cores=("Pl4ntS3tenvK3y",),
    ),
    Planted(
        label="sudo-stdin",
        kind="piped_password",
        text="echo 'Pl4ntSud0Passw0rd' | sudo -S systemctl restart nginx",
        cores=("Pl4ntSud0Passw0rd",),
    ),
    Planted(
        label="ssh-keygen",
        kind="ssh_keygen_passphrase",
        text="ssh-keygen -t ed25519 -C deploy -N 'Pl4ntK3yPhrase' -f ~/.ssh/deploy",
        cores=("Pl4ntK3yPhrase",),
    ),
    Planted(
        label="securestring",
        kind="securestring_password",
        text="$pw = ConvertTo-SecureString 'Pl4ntPSh3llPw' -AsPlainText -Force",
        cores=("Pl4ntPSh3llPw",),
    ),
    Planted(
        label="requests-auth",
        kind="auth_tuple_password",
        text="r = requests.get(url, auth=('deploy', 'Pl4ntR3questsPw'), timeout=10)",
        cores=("Pl4ntR3questsPw",),
    ),
    Planted(
        label="odbc",
        kind="odbc_password",
        text="Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=app;Pwd=Pl4nt0dbcPassw0rd;Encrypt=yes",
        cores=("Pl4nt0dbcPassw0rd",),
    ),
    Planted(
        label="xml-password",
        kind="xml_secret",
        text="<server><id>nexus</id><username>deploy</username><password>Pl4ntXm1Passw0rd</password></server>",
        cores=("Pl4ntXm1Passw0rd",),
    ),
)
