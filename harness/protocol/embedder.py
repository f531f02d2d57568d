"""The embedder a protocol pins: registry names, the ids they report, and what a run would use.

A protocol names its embedder by the id an `engine.embed.Embedder` reports (``minilm-l6-v2``,
``hash-256-v1``), because that id is what keys stored vectors: two embedders with the same registry
name but different ids give different experiments. People choose an embedder by registry name
(``RECALLBENCH_EMBEDDER=minilm``), so this module maps between the two. Building an embedder from
the registry never loads a model (MiniLM loads its weights on the first ``embed`` call), so every id
can be known without torch.
"""

from __future__ import annotations

import os

from engine.embed import Embedder, UnknownEmbedderError, embedder_names, get_embedder
from engine.tuned_cache import is_tuned_id

ENV_VAR = "RECALLBENCH_EMBEDDER"
DEFAULT_NAME = "minilm"  # the default of `serve`, the hooks and `bench run` (recallbench.config)


class EmbedderChoiceError(ValueError):
    """The embedder named by the caller or by ``$RECALLBENCH_EMBEDDER`` is not registered."""


def live_name(override: str | None = None) -> str:
    """The registry name a run would use: `override`, else ``$RECALLBENCH_EMBEDDER``, else minilm."""
    return override or os.environ.get(ENV_VAR) or DEFAULT_NAME


def live_embedder(override: str | None = None) -> Embedder:
    """The embedder a run would use (see `live_name`); building it loads no model.

    Raises:
        EmbedderChoiceError: the name is not registered (the message lists the registered ones).
    """
    name = live_name(override)
    try:
        return get_embedder(name)
    except UnknownEmbedderError as exc:
        source = "the run options" if override else f"${ENV_VAR}"
        msg = f"{source} names embedder {name!r}: {exc}"
        raise EmbedderChoiceError(msg) from exc


def registry_ids() -> dict[str, str]:
    """Registry name -> the id its embedder reports, for every registered embedder."""
    out: dict[str, str] = {}
    for name in embedder_names():
        try:
            out[name] = get_embedder(name).id
        except Exception:  # an embedder that cannot be built has no id to offer
            continue
    return out


def name_for(embedder_id: str) -> str | None:
    """The registry name whose embedder reports `embedder_id`, or None when none does. A fine-tuned
    encoder is named by its id (`engine.embed.get_embedder` finds its weights in the model cache)."""
    if is_tuned_id(embedder_id):
        return embedder_id
    return next((n for n, i in sorted(registry_ids().items()) if i == embedder_id), None)


def known_ids_text() -> str:
    """``hash-256-v1 (RECALLBENCH_EMBEDDER=hash), minilm-l6-v2 (...=minilm)`` for messages."""
    return ", ".join(f"{i} ({ENV_VAR}={n})" for n, i in sorted(registry_ids().items()))


def pin_line(embedder_id: str) -> str:
    """The protocol line that pins `embedder_id`."""
    return f'embedder = "{embedder_id}"'


def use_hint(embedder_id: str) -> str:
    """How to make a run or a server use `embedder_id`: the environment setting, or why there is none."""
    name = name_for(embedder_id)
    if name is None:
        return f"no registered embedder reports the id {embedder_id} (known: {known_ids_text()})"
    if name == DEFAULT_NAME:
        return f"unset {ENV_VAR} or set it to {name}, the default"
    return f"set {ENV_VAR}={name}"
