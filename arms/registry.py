"""The arm registry: one entry per arm name, built from a spec string such as `rrf(pool=20,rrf_k=60)`.

The arms at the bottom of this module are registered when it is imported. Error messages that list
choices are built from the registry itself, so they cannot drift.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arms.base import Arm
from arms.bridge import BridgeArm, BridgeParams
from arms.cc import CCArm, CCParams
from arms.fallback import FallbackArm, FallbackParams
from arms.fitting import Example, FitFunction, Fitted, Part, PartsFitFunction
from arms.fts import FtsArm, FtsParams
from arms.ltr import LtrArm, LtrParams, fit_ltr, fit_ltr_parts
from arms.ltr_bridge import LtrbArm, LtrbParams, fit_ltrb
from arms.neighbors import NeighborsArm, NeighborsParams
from arms.none import NoneArm, NoneParams
from arms.rrf import RRFArm, RRFParams
from arms.settled import SettledArm
from arms.spec import ArmSpec, ParamValue, SpecError, canonical, omitted, parse_spec
from arms.vector import VectorArm, VectorParams
from arms.walk import WalkArm, WalkParams
from engine.api import ReadAPI
from engine.checks import is_int

ArmFactory = Callable[[ReadAPI, Any], Arm]
# A fitted arm is built as `arm_cls(memory, params, model)`, the model read from its artifact.
FittedArmFactory = Callable[[ReadAPI, Any, Mapping[str, Any]], Arm]


class RegistryError(ValueError):
    """An arm name that is unknown or already taken."""


@dataclass(frozen=True, kw_only=True)
class Entry:
    """A registered arm: its class (called as `arm_cls(memory, params)`) and its params dataclass."""

    name: str
    arm_cls: ArmFactory | FittedArmFactory
    params_cls: type[Any]
    description: str
    fit: FitFunction | None = None  # set for fitted arms (`register_fitted`)
    # set for fitted arms that can learn from several parts, each read through its own memory
    fit_parts: PartsFitFunction | None = None

    @property
    def fitted(self) -> bool:
        """Whether the arm runs only from a fitted model (`arms.fitting`)."""
        return self.fit is not None


_REGISTRY: dict[str, Entry] = {}


def register(
    name: str,
    arm_cls: ArmFactory | FittedArmFactory,
    params_cls: type[Any],
    description: str,
    *,
    fit: FitFunction | None = None,
    fit_parts: PartsFitFunction | None = None,
) -> None:
    """Add an arm under `name`; `description` is the one line `recallbench arms` prints.

    A fitted arm passes its `fit` function; it is then built as ``arm_cls(memory, params, model)``.
    One that can also be cross-fitted passes `fit_parts` (`arms.fitting.PartsFitFunction`).

    Raises:
        RegistryError: `name` is already registered, is not an identifier, or `params_cls` is not a
            dataclass.
    """
    if not isinstance(name, str) or not name.isidentifier():
        msg = f"arm names must be Python identifiers such as 'rrf', got {name!r}"
        raise RegistryError(msg)
    if name in _REGISTRY:
        msg = f"arm {name!r} is already registered (by {_REGISTRY[name].arm_cls!r}); pick another name"
        raise RegistryError(msg)
    if not dataclasses.is_dataclass(params_cls) or not isinstance(params_cls, type):
        msg = f"params_cls for arm {name!r} must be a dataclass type, got {params_cls!r}"
        raise RegistryError(msg)
    if not isinstance(description, str) or not description.strip() or "\n" in description:
        msg = f"arm {name!r} needs a one-line description, got {description!r}"
        raise RegistryError(msg)
    _REGISTRY[name] = Entry(
        name=name,
        arm_cls=arm_cls,
        params_cls=params_cls,
        description=description.strip(),
        fit=fit,
        fit_parts=fit_parts,
    )


def names() -> list[str]:
    """Registered arm names, sorted."""
    return sorted(_REGISTRY)


def entry(name: str) -> Entry:
    """The registry entry for `name`.

    Raises:
        RegistryError: no arm is registered under `name`.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        msg = f"unknown arm {name!r}, choose one of: {', '.join(names())}"
        raise RegistryError(msg) from None


def param_fields(name: str) -> dict[str, type[Any]]:
    """The parameter names of arm `name` and their declared types."""
    params_cls = entry(name).params_cls
    hints = typing.get_type_hints(params_cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(params_cls)}


def make_params(spec: ArmSpec | str) -> Any:
    """The arm's params dataclass filled from the spec (defaults for what it leaves out).

    Raises:
        RegistryError: the arm is unknown.
        SpecError: a parameter is unknown or has the wrong type, or the params class refuses a value.
    """
    if isinstance(spec, str):
        spec = parse_spec(spec)
    known = param_fields(spec.name)
    values: dict[str, ParamValue] = {}
    for key, value in spec.params:
        if key not in known:
            valid = ", ".join(sorted(known)) or "(none)"
            msg = f"{spec.name}: no parameter {key!r}; valid parameters: {valid}"
            raise SpecError(msg)
        values[key] = _coerce(spec.name, key, value, known[key])
    return entry(spec.name).params_cls(**values)


def resolve(spec: ArmSpec | str) -> ArmSpec:
    """The spec with every parameter spelled out (defaults filled in), as recorded in results.

    A parameter added after specs of its arm were recorded (field metadata `OMIT_DEFAULT`) is left
    out while it has its default, so those recorded strings stay what they were.
    """
    if isinstance(spec, str):
        spec = parse_spec(spec)
    params = make_params(spec)
    return ArmSpec(
        name=spec.name,
        params=tuple(
            (f.name, getattr(params, f.name))
            for f in dataclasses.fields(params)
            if not omitted(f, getattr(params, f.name))
        ),
    )


def build(
    spec: str | ArmSpec, memory: ReadAPI, model: Mapping[str, Any] | None = None
) -> SettledArm:
    """An arm built from its spec over `memory`; a fitted arm also needs its fitted `model`.

    Every arm comes wrapped in `arms.settled.SettledArm`, the final stage that applies typed
    corrections to its answer (and changes nothing on a memory without settles); the arm itself is
    its `inner`, and its attributes (`params`, ...) read through.

    Raises:
        RegistryError: the arm is unknown, is fitted and no model was given, or is not fitted and
            one was.
        SpecError: the spec does not parse, or names an unknown or ill-typed parameter.
    """
    if isinstance(spec, str):
        spec = parse_spec(spec)
    found = entry(spec.name)
    params = make_params(spec)
    if found.fitted:
        if model is None:
            msg = (
                f"arm {spec.name!r} is fitted: it runs only from a fitted model. Name its training "
                "data in the protocol's [[fits]] (`protocol register` fits it and locks the artifact), "
                "or explore with `recallbench arm fit`"
            )
            raise RegistryError(msg)
        arm = typing.cast(FittedArmFactory, found.arm_cls)(memory, params, model)
        return SettledArm(arm, memory)
    if model is not None:
        msg = f"arm {spec.name!r} is not fitted; it takes no model"
        raise RegistryError(msg)
    return SettledArm(typing.cast(ArmFactory, found.arm_cls)(memory, params), memory)


def fit(spec: str | ArmSpec, memory: ReadAPI, examples: tuple[Example, ...], seed: int) -> Fitted:
    """Fit arm `spec` on `examples` over `memory` (the training corpus), seeded.

    Raises:
        RegistryError: the arm is unknown or not fitted.
        arms.fitting.FitError: the examples cannot fit the arm.
    """
    if isinstance(spec, str):
        spec = parse_spec(spec)
    found = entry(spec.name)
    if found.fit is None:
        fitted = ", ".join(n for n in names() if entry(n).fitted) or "(none registered)"
        msg = f"arm {spec.name!r} is not fitted; fitted arms: {fitted}"
        raise RegistryError(msg)
    return found.fit(memory, make_params(spec), examples, seed)


def fit_parts(spec: str | ArmSpec, parts: Sequence[Part], seed: int) -> Fitted:
    """Fit arm `spec` on several parts, each part's examples read through its own memory, seeded.

    Raises:
        RegistryError: the arm is unknown, not fitted, or cannot fit from parts.
        arms.fitting.FitError: the examples cannot fit the arm.
    """
    if isinstance(spec, str):
        spec = parse_spec(spec)
    found = entry(spec.name)
    if found.fit_parts is None:
        able = (
            ", ".join(n for n in names() if entry(n).fit_parts is not None) or "(none registered)"
        )
        msg = (
            f"arm {spec.name!r} cannot be cross-fitted (it fits over one memory only); arms that "
            f"can: {able}"
        )
        raise RegistryError(msg)
    return found.fit_parts(parts, make_params(spec), seed)


def is_fitted(spec: str | ArmSpec) -> bool:
    """Whether the arm of `spec` runs only from a fitted model."""
    return entry((parse_spec(spec) if isinstance(spec, str) else spec).name).fitted


def default_spec(name: str) -> str:
    """The canonical spec of a registered arm with every default parameter spelled out."""
    return canonical(resolve(ArmSpec(name=name)))


def full_canonical(spec: str | ArmSpec) -> str:
    """`canonical(resolve(spec))`: the canonical string with all defaults, e.g. for results files."""
    return canonical(resolve(spec))


def _coerce(arm: str, key: str, value: ParamValue, declared: Any) -> ParamValue:
    """Check `value` against the field's declared type; an int is accepted where a float is declared."""
    allowed = _allowed_types(declared)
    if float in allowed and is_int(value):
        return float(value)
    if isinstance(value, bool):
        ok = bool in allowed
    elif isinstance(value, str) and typing.get_origin(declared) is typing.Literal:
        ok = value in typing.get_args(declared)
    else:
        ok = type(value) in allowed
    if not ok:
        expected = (
            " or ".join(repr(v) for v in typing.get_args(declared))
            if typing.get_origin(declared) is typing.Literal
            else " or ".join(t.__name__ for t in allowed)
        )
        msg = f"{arm}: {key} must be {expected}, got {value!r}"
        raise SpecError(msg)
    return value


def _allowed_types(declared: Any) -> set[type]:
    if typing.get_origin(declared) is typing.Literal:
        return {type(v) for v in typing.get_args(declared)}
    args = typing.get_args(declared)
    if args:
        return {a for a in args if isinstance(a, type)}
    return {declared} if isinstance(declared, type) else set()


register("none", NoneArm, NoneParams, "No memory at all: the baseline every other arm must beat.")
register("fts", FtsArm, FtsParams, "Words: SQLite FTS5 BM25 over chunk text.")
register(
    "vector",
    VectorArm,
    VectorParams,
    "Meaning: cosine nearest neighbours of the query's embedding.",
)
register(
    "fallback",
    FallbackArm,
    FallbackParams,
    "Vector hits with time decay; lexical hits join only when the vector channel is weak.",
)
register(
    "rrf", RRFArm, RRFParams, "Reciprocal rank fusion of the FTS and vector pools (vector + words)."
)
register(
    "walk",
    WalkArm,
    WalkParams,
    "Multi-hop reinstatement: seeds, then hops through shared files, episodes and neighbours.",
)
register(
    "cc",
    CCArm,
    CCParams,
    "Convex combination of per-query normalised vector and BM25 scores (score fusion).",
)
register(
    "neighbors",
    NeighborsArm,
    NeighborsParams,
    "Fused hits gain a share of their adjacent chunks' scores (context propagation).",
)
register(
    "bridge",
    BridgeArm,
    BridgeParams,
    "rrf plus a hop through the files a question's code identifier was edited in (file bridge).",
)
register(
    "ltr",
    LtrArm,
    LtrParams,
    "Learned reranker: a fitted logistic model over features of the deep lexical and vector pools.",
    fit=fit_ltr,
    fit_parts=fit_ltr_parts,
)
register(
    "ltrb",
    LtrbArm,
    LtrbParams,
    "ltr's learned ranking fused with the file bridge for questions naming a code identifier.",
    fit=fit_ltrb,
)
