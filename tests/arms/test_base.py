"""The arm interface's `Query`: what every arm may rely on before it searches."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from arms.base import Query
from engine.scope import Scope

NOW = datetime(2025, 6, 1, tzinfo=UTC)


@pytest.mark.parametrize("text", ["", " ", "\n\t  "])
def test_an_empty_or_blank_query_is_refused_with_a_clear_message(text: str) -> None:
    with pytest.raises(ValueError, match="the query is empty"):
        Query(text=text, scope=Scope.of("/a"), now=NOW)
    # control: one word is a query
    assert Query(text=" retry ", scope=Scope.of("/a"), now=NOW).text == " retry "
