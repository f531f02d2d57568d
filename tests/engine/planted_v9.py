"""What sanitizer version 9's commands print (`engine.secret_formats_v9.VERSION_9_FORMS`), planted like
the rest (`test_secrets_corpus.PLANTED` holds them too, so the store test plants them in four places).
Each text is a tool result as the memory stores it, its header on a line of its own: the command that
read the secret, then what it printed. The values are made up."""

from __future__ import annotations

from tests.engine.planted import Planted, planted


def result(command: str, body: str, tool: str = "Bash") -> str:
    """A tool result as stored: a line break, its header, then its body."""
    return f"\n[{tool} result: {command}]\n{body}"


PLANTED_V9: tuple[Planted, ...] = (
    planted(
        "op-read",
        "secret_store_output",
        result("op read op://ops/orders-db/password", "Pl4nt9OpReadPw"),
        "Pl4nt9OpReadPw",
    ),
    planted(
        "bw-get-password",
        "secret_store_output",
        result("bw get password github.com", "Pl4nt9BwGetPw"),
        "Pl4nt9BwGetPw",
    ),
    planted(
        "vault-kv-get",
        "secret_store_output",
        result(
            "VAULT_ADDR=https://vault.internal:8200 vault kv get secret/orders",
            "====== Data ======\nKey         Value\n---         -----\nstripe_live Pl4nt9VaultKvPw",
        ),
        "Pl4nt9VaultKvPw",
    ),
    planted(
        "gcloud-secrets-access",
        "secret_store_output",
        result("gcloud secrets versions access latest --secret=orders-db", "Pl4nt9GcloudPw"),
        "Pl4nt9GcloudPw",
    ),
    planted(
        "aws-secretsmanager",
        "secret_store_output",
        result(
            "aws secretsmanager get-secret-value --secret-id prod/orders --query SecretString",
            '"{\\"dsn\\": \\"Pl4nt9AwsSmPw\\"}"',
        ),
        "Pl4nt9AwsSmPw",
    ),
    planted(
        "aws-ssm-decrypted",
        "secret_store_output",
        result(
            "aws --region eu-west-1 ssm get-parameter --name /prod/orders/dsn --with-decryption",
            '{"Parameter": {"Name": "/prod/orders/dsn", "Value": "Pl4nt9AwsSsmPw"}}',
        ),
        "Pl4nt9AwsSsmPw",
    ),
    planted(
        "kubectl-get-secret",
        "secret_store_output",
        result(
            "kubectl -n prod get secret orders -o jsonpath='{.data.dsn}' | base64 -d",
            "Pl4nt9KubectlPw",
        ),
        "Pl4nt9KubectlPw",
    ),
    planted(
        "keychain-find",
        "secret_store_output",
        result("security find-generic-password -s orders-db -w", "Pl4nt9KeychainPw"),
        "Pl4nt9KeychainPw",
    ),
    planted(
        "doppler-secrets",
        "secret_store_output",
        result("doppler secrets get ORDERS_DSN --plain", "Pl4nt9DopplerPw"),
        "Pl4nt9DopplerPw",
    ),
    planted(
        "heroku-config",
        "secret_store_output",
        result("heroku config -a orders", "=== orders Config Vars\nSIGNING: Pl4nt9HerokuPw"),
        "Pl4nt9HerokuPw",
    ),
    planted(
        "printenv",
        "secret_store_output",
        result("printenv ORDERS_API_TOKEN", "Pl4nt9PrintenvPw"),
        "Pl4nt9PrintenvPw",
    ),
    planted(
        "sops-decrypt",
        "decrypted_output",
        result("sops -d secrets/orders.enc.yaml", "orders:\n  dsn: Pl4nt9SopsPw"),
        "Pl4nt9SopsPw",
    ),
    planted(
        "gpg-decrypt",
        "decrypted_output",
        result("gpg --decrypt --quiet ops/orders.txt.gpg", "admin Pl4nt9GpgPw"),
        "Pl4nt9GpgPw",
    ),
    planted(
        "phx-gen-secret",
        "generated_secret",
        result(
            "mix phx.gen.secret 64",
            "Pl4nt9PhxGenSecretZx7Cv5Bn3Mk1Wd8Fg6Hj4Kl2Pz0Yt9Ur7Ie5Ow3Qs1Ax",
        ),
        "Pl4nt9PhxGenSecret",
    ),
    planted(
        "cat-netrc",
        "credential_file",
        result(
            "cat ~/.netrc",
            "machine api.orders.example\n  login deploy\n  password Pl4nt9NetrcPw",
        ),
        "Pl4nt9NetrcPw",
    ),
    planted(
        "read-pgpass",
        "credential_file",
        result("~/.pgpass", "     1→db.internal:5432:orders:app:Pl4nt9PgpassPw", tool="Read"),
        "Pl4nt9PgpassPw",
    ),
)
