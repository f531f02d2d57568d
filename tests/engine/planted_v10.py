"""What sanitizer version 10's commands print (`engine.secret_formats_v10.VERSION_10_FORMS`), planted
like the rest (`test_secrets_corpus.PLANTED` holds them too). Each text is a tool result as the memory
stores it, its header on a line of its own: the command that printed a tool's own token, then what it
printed. The values are made up."""

from __future__ import annotations

from tests.engine.planted import Planted, planted
from tests.engine.planted_v9 import result

PLANTED_V10: tuple[Planted, ...] = (
    planted(
        "op-signin-raw",
        "auth_token_output",
        result("op signin --account acme --raw", "Pl4ntTenOpSessi0nQw8Er6Ty4Ui2Op0As9Df7Gh5Jk3"),
        "Pl4ntTenOpSessi0n",
    ),
    planted(
        "bw-unlock",
        "auth_token_output",
        result(
            "bw unlock",
            "Your vault is now unlocked!\n\nTo unlock your vault, set your session key to the "
            '`BW_SESSION` environment variable. ex:\n$ export BW_SESSION="Pl4ntTenBwSessi0nKeyQw8Er6'
            'Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb7Nm9Qw8Er6Ty4Ui2Op0As9Df7Gh5Jk3Lz1Xc5Vb=="',
        ),
        "Pl4ntTenBwSessi0nKey",
    ),
    planted(
        "heroku-auth-token",
        "auth_token_output",
        result("heroku auth:token", "f4b3c2d1-8e7a-4b6c-9d0e-1a2b3c4d5e6f"),
        "f4b3c2d1-8e7a-4b6c-9d0e-1a2b3c4d5e6f",
    ),
    planted(
        "heroku-authorizations-create",
        "auth_token_output",
        result(
            "heroku authorizations:create -d 'deploy from CI'",
            "Creating OAuth Authorization... done\nClient:      <none>\nID:          "
            "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f\nDescription: deploy from CI\nScope:       global\n"
            "Token:       7e6d5c4b-3a29-4817-a6f5-e4d3c2b1a098",
        ),
        "7e6d5c4b-3a29-4817-a6f5-e4d3c2b1a098",
    ),
    planted(
        "fly-auth-token",
        "auth_token_output",
        result("fly auth token", "fo1_Pl4ntTenFlyT0kenQw8Er6Ty4Ui2Op0As9Df7Gh5"),
        "Pl4ntTenFlyT0ken",
    ),
)
