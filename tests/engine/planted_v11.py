"""What sanitizer version 11's echoed variables print (`engine.secret_formats_v11.VERSION_11_FORMS`),
planted like the rest (`test_secrets_corpus.PLANTED` holds them too). Each text is a tool result as the
memory stores it, its header on a line of its own: `echo` of a variable named for a secret, or a
one-line Python or Node program printing one, then the value it printed. The values are made up."""

from __future__ import annotations

from tests.engine.planted import Planted, planted
from tests.engine.planted_v9 import result

PLANTED_V11: tuple[Planted, ...] = (
    planted(
        "echo-variable",
        "secret_variable_output",
        result("echo $DEPLOY_TOKEN", "Pl4ntElevenDepl0yQw8Er6Ty4Ui2Op0As9Df7Gh5"),
        "Pl4ntElevenDepl0y",
    ),
    planted(
        "echo-quoted-variable",
        "secret_variable_output",
        result('echo "$ACME_API_KEY"', "Pl4ntElevenAcmeK3yQw8Er6Ty4Ui2Op0As9Df7"),
        "Pl4ntElevenAcmeK3y",
    ),
    planted(
        "echo-n-braced-variable",
        "secret_variable_output",
        result(
            'cd api && echo -n "${DB_PASSWORD}" | wc -c; echo -n ${DB_PASSWORD}',
            "16\nPl4ntElevenDbPw",
        ),
        "Pl4ntElevenDbPw",
    ),
    planted(
        "python-print-environ",
        "secret_variable_output",
        result(
            "python3 -c \"import os; print(os.environ['ACME_SIGNING_SECRET'])\"",
            "Pl4ntElevenPyEnvQw8Er6Ty4Ui2Op0As9Df7Gh5",
        ),
        "Pl4ntElevenPyEnv",
    ),
    planted(
        "node-console-log-env",
        "secret_variable_output",
        result(
            'node -e "console.log(process.env.ACME_API_TOKEN)"',
            "Pl4ntElevenNodeEnvQw8Er6Ty4Ui2Op0As9Df7Gh5",
        ),
        "Pl4ntElevenNodeEnv",
    ),
)
