"""Arm spec strings: parsing with `ast`, the canonical form, refusals."""

from __future__ import annotations

import re

import pytest

from arms.registry import default_spec
from arms.spec import ArmSpec, SpecError, canonical, format_value, parse_spec


def test_a_call_parses_into_name_and_sorted_keyword_params() -> None:
    spec = parse_spec("rrf(rrf_k=60, pool=20)")
    assert spec == ArmSpec(name="rrf", params=(("pool", 20), ("rrf_k", 60)))


def test_a_bare_name_parses_with_no_params_and_prints_with_empty_parentheses() -> None:
    assert parse_spec("walk") == ArmSpec(name="walk", params=())
    assert canonical(parse_spec("walk")) == "walk()"
    assert canonical("none()") == "none()"


def test_canonical_sorts_keys_and_prints_numbers_stably() -> None:
    assert (
        canonical("rrf(rrf_k=60, min_score=0.20, pool=20)") == "rrf(min_score=0.2,pool=20,rrf_k=60)"
    )
    # An int stays an int and a float keeps its decimal point, so the type survives a round trip.
    assert canonical("x(a=1, b=1.0, c=-0.5, d=1e-05)") == "x(a=1,b=1.0,c=-0.5,d=1e-05)"
    assert canonical("fts(score='bm25', flag=True)") == "fts(flag=True,score='bm25')"
    assert format_value(0.1 + 0.2) == "0.30000000000000004"


@pytest.mark.parametrize(
    "text",
    [
        "rrf(min_score=0.2,pool=20,rrf_k=60)",
        "walk()",
        "fts(pool=20,score='rank')",
        "x(a=-3,b=2.5e-07,c=False,d='it''s')",
        "fallback(decay_half_life_days=90.0,gate=0.5)",
    ],
)
def test_canonical_of_a_parsed_canonical_string_round_trips_exactly(text: str) -> None:
    once = canonical(parse_spec(text))
    assert canonical(parse_spec(once)) == once
    assert parse_spec(once) == parse_spec(text)


def test_equal_specs_written_differently_are_equal_and_hash_alike() -> None:
    a = parse_spec("rrf(pool=20, rrf_k=60)")
    b = parse_spec("rrf( rrf_k = 60 , pool = 20 )")
    assert a == b
    assert hash(a) == hash(b)
    assert a != parse_spec("rrf(pool=21, rrf_k=60)")  # control: a different value differs


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("rrf(__import__('os'))", "positional"),
        ("rrf(pool=__import__('os'))", "literal"),
        ("rrf(pool=1+1)", "literal"),
        ("rrf(pool=[1])", "literal"),
        ("rrf(pool=x)", "literal"),
        ("os.system('ls')", "must be a name or a call"),
        ("rrf.x(pool=1)", "must be a name or a call"),
        ("rrf(**{'pool': 1})", "**kwargs"),
        ("rrf(pool=1, pool=2)", "repeats"),
        ("rrf(pool=1e400)", "finite"),
        ("rrf(score=-'a')", "negates"),
        ("rrf(", "not valid syntax"),
        ("1", "must be a name or a call"),
    ],
)
def test_anything_but_keyword_literals_is_refused_with_a_clear_error(
    text: str, fragment: str
) -> None:
    with pytest.raises(SpecError, match=re.escape(fragment)):
        parse_spec(text)


def test_a_negative_number_is_a_literal_and_is_accepted() -> None:
    assert parse_spec("walk(echo_penalty=-0.5)").params == (("echo_penalty", -0.5),)


def test_default_spec_spells_out_every_default_parameter() -> None:
    assert default_spec("rrf") == "rrf(min_score=0.2,pool=20,rrf_k=60)"
    assert default_spec("vector") == "vector(min_score=0.2,pool=20)"
    assert default_spec("fts") == "fts(pool=20,score='rank')"
    assert default_spec("none") == "none()"
    assert default_spec("fallback") == (
        "fallback(decay_half_life_days=90.0,decay_w=0.3,fetch_factor=3,fetch_pool=20,gate=0.5,"
        "lexical_score=0.45,lexical_score_undated=0.4,min_score=0.2)"
    )
    assert default_spec("walk") == (
        "walk(blend_k=5,blend_q=0.65,echo_min_len=15,echo_penalty=0.35,episode_boost=1.1,"
        "files_per_seed=4,graph_boost=1.1,graph_cap=6,hop_factor=2,min_score=0.2,seeds=3,"
        "sessions_per_file=12)"
    )
    for name in ("rrf", "walk", "fallback"):
        assert canonical(default_spec(name)) == default_spec(name)
