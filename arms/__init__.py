"""Retrieval arms behind one interface."""

from arms.base import Arm, Hit, Query
from arms.registry import (
    RegistryError,
    build,
    default_spec,
    full_canonical,
    names,
    register,
    resolve,
)
from arms.spec import ArmSpec, SpecError, canonical, parse_spec

__all__ = [
    "Arm",
    "ArmSpec",
    "Hit",
    "Query",
    "RegistryError",
    "SpecError",
    "build",
    "canonical",
    "default_spec",
    "full_canonical",
    "names",
    "parse_spec",
    "register",
    "resolve",
]
