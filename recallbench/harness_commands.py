"""The harness's command groups with every subcommand attached: `protocol` (with `instantiate`),
`roster` (with `mine`, `draft`, `review`) and `corpus` (with `mask`). `recallbench.cli` loads this
module only when one of these groups is named."""

from __future__ import annotations

from recallbench.harness_cli import corpus, protocol, roster
from recallbench.instantiate_cli import protocol_instantiate
from recallbench.mine_cli import corpus_mask, roster_mine
from recallbench.roster_cli import roster_draft, roster_review

protocol.add_command(protocol_instantiate)
for _subcommand in (roster_mine, roster_draft, roster_review):
    roster.add_command(_subcommand)
corpus.add_command(corpus_mask)

__all__ = ["corpus", "protocol", "roster"]
