"""The model a shipped fitted arm serves with: the copy `recallbench ship` made, checked by its hash.

A fitted arm (`arms.fitting`) runs only from the model its benchmark run used. `recallbench ship` copies
that run's locked artifact into ``$RECALLBENCH_HOME/fitted/<arm>-<sha12>.json`` (owner-only) and records
its file and sha256 in config.toml's ``[ship]`` table. `search`, `serve` and the prompt hook's search
service build the arm through `build_arm`, which hands a fitted arm exactly that model, after checking the
copy's bytes against the recorded hash; a non-fitted arm is built as before, without a model.

Only the standard library, the config module and the arm registry: the server's prompt search imports
this, and scoring a fitted arm never imports scikit-learn (`arms.ltr`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arms.base import Arm
from arms.registry import build, full_canonical, is_fitted
from engine.api import ReadAPI
from engine.private_files import private_file
from recallbench import config

__all__ = [
    "FITTED_DIR",
    "NotShippedError",
    "ShippedModelError",
    "arm_model",
    "build_arm",
    "copy_path",
    "install",
]

FITTED_DIR = "fitted"  # under $RECALLBENCH_HOME
_FIX = "ship the results folder again (`recallbench ship RESULTS_DIR`)"


class ShippedModelError(ValueError):
    """The shipped model cannot be used: its copy is missing, changed, or not the shipped arm's."""


class NotShippedError(ShippedModelError):
    """A fitted arm that is not the shipped one: there is no model it may run with."""


def copy_path(arm_name: str, sha256: str) -> Path:
    """Where `install` puts an artifact, relative to the home: ``fitted/<arm_name>-<sha12>.json``."""
    return Path(FITTED_DIR) / f"{arm_name}-{sha256[:12]}.json"


def install(data: bytes, arm_name: str, sha256: str, home: Path | None = None) -> Path:
    """Write an artifact's bytes as ``fitted/<arm_name>-<sha12>.json`` under the home, owner-only.

    The caller has checked `data` against `sha256` (the protocol lock's). Written through a temporary
    file and a rename, so a reader never sees half a model. Returns the path relative to the home,
    which is what config.toml records (the home and its copies move together).

    Raises:
        OSError: the folder or file cannot be written.
    """
    base = home if home is not None else config.home()
    relative = copy_path(arm_name, sha256)
    target = base / relative
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with os.fdopen(private_file(tmp), "wb") as handle:
        handle.write(data)
    tmp.replace(target)
    return relative


def arm_model(spec: str, ship: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
    """The model arm `spec` must be built with: None for an arm that is not fitted, else the shipped
    model, read from its copy and checked against the sha256 config.toml records.

    `ship` is config.toml's ``[ship]`` table (read from the home when None).

    Raises:
        NotShippedError: `spec` is fitted but is not the shipped arm (or nothing is shipped).
        ShippedModelError: the copy is missing, its sha256 is not the recorded one, or it holds no
            model for this arm; the message names the file, both hashes and the fix.
        ValueError: `spec` does not parse or names an unknown arm (arms.spec.SpecError,
            arms.registry.RegistryError).
    """
    if not is_fitted(spec):
        return None
    if ship is None:
        try:
            ship = config.shipped()
        except (OSError, ValueError) as exc:
            msg = f"cannot read {config.config_file()}: {exc}; {_FIX}"
            raise ShippedModelError(msg) from exc
    canonical = full_canonical(spec)
    shipped = ship.get("arm") if ship else None
    if ship is None or not isinstance(shipped, str) or full_canonical(shipped) != canonical:
        now = f"the shipped arm is {shipped}" if isinstance(shipped, str) else "nothing is shipped"
        msg = (
            f"arm {canonical} is fitted: it runs only with the model shipped from a benchmark run, "
            f"and {now}. Ship a run whose rule chose it (`recallbench ship RESULTS_DIR`), or explore "
            "fits with `recallbench arm fit` (exploration only)."
        )
        raise NotShippedError(msg)
    return _read_copy(ship, canonical)


def _read_copy(ship: Mapping[str, Any], canonical: str) -> Mapping[str, Any]:
    """The model in the copy `ship` names, after checking its hash and arm."""
    name, expected = ship.get("model_file"), ship.get("model_sha256")
    if not isinstance(name, str) or not isinstance(expected, str):
        msg = (
            f"{config.config_file()} ships the fitted arm {canonical} but records no model "
            f"(model_file, model_sha256); {_FIX}"
        )
        raise ShippedModelError(msg)
    path = config.home() / name
    try:
        data = path.read_bytes()
    except OSError as exc:
        msg = f"Missing shipped model {path} (sha256 {expected}) for {canonical}: {exc}; {_FIX}"
        raise ShippedModelError(msg) from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        msg = (
            f"Expected sha256 of {path} to be {expected} (recorded by `recallbench ship`) but got "
            f"{actual}; the shipped model changed after shipping. Fix: {_FIX}"
        )
        raise ShippedModelError(msg)
    try:
        body = json.loads(data)
    except ValueError as exc:  # the recorded hash matched: the artifact was never JSON
        msg = f"shipped model {path} is not JSON ({exc}); {_FIX}"
        raise ShippedModelError(msg) from exc
    if not isinstance(body, dict) or not isinstance(body.get("model"), dict):
        msg = f"shipped model {path} holds no model; {_FIX}"
        raise ShippedModelError(msg)
    # A reranker over a fine-tuned encoder was fitted as `<arm>@<encoder>` (`recallbench ship`).
    encoder = ship.get("encoder")
    fitted_for = f"{canonical}@{encoder}" if isinstance(encoder, str) else canonical
    if body.get("arm") != fitted_for:
        msg = f"shipped model {path} was fitted for {body.get('arm')}, not {fitted_for}; {_FIX}"
        raise ShippedModelError(msg)
    model: dict[str, Any] = body["model"]
    return model


def build_arm(spec: str, memory: ReadAPI) -> Arm:
    """Arm `spec` over `memory`, a fitted one with the shipped model (`arm_model`).

    Raises:
        NotShippedError, ShippedModelError: see `arm_model`.
        ValueError: `spec` does not parse or names an unknown arm or parameter.
    """
    return build(spec, memory, arm_model(spec))
