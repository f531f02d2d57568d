"""Count the files a module hashes, for tests of the checks that skip a hash."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest


def hashed_files(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str) -> list[Path]:
    """Wrap `module.name` (a function of one path returning its digest); the list fills with each
    path it is called with, in order."""
    hashed: list[Path] = []
    real: Callable[[Path], str] = getattr(module, name)

    def counting(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(module, name, counting)
    return hashed
