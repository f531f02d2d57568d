"""The arm registry: registration, building from specs, and its error messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from arms import registry
from arms.base import Hit, Query
from arms.none import NoneArm, NoneParams
from arms.registry import RegistryError, build, full_canonical, names, register, resolve
from arms.rrf import RRFArm, RRFParams
from arms.spec import OMIT_DEFAULT, ArmSpec, SpecError, canonical
from arms.walk import WalkArm, WalkParams
from engine.scope import Scope
from tests.arms.fake_memory import FakeMemory


def test_every_arm_is_registered_on_import() -> None:
    assert names() == [
        "bridge",
        "cc",
        "fallback",
        "fts",
        "ltr",
        "ltrb",
        "neighbors",
        "none",
        "rrf",
        "vector",
        "walk",
    ]


def test_registering_a_taken_name_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register("none2", NoneArm, NoneParams, "a second baseline")  # control: a fresh name is accepted
    assert "none2" in names()
    with pytest.raises(RegistryError, match="arm 'none2' is already registered"):
        register("none2", NoneArm, NoneParams, "again")
    with pytest.raises(RegistryError, match="arm 'rrf' is already registered"):
        register("rrf", NoneArm, NoneParams, "again")


def test_an_unknown_arm_names_every_registered_choice() -> None:
    with pytest.raises(
        RegistryError,
        match="unknown arm 'x', choose one of: bridge, cc, fallback, fts, ltr, ltrb, neighbors, none, rrf, vector, walk",
    ):
        build("x", FakeMemory())


def test_the_unknown_arm_message_follows_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register("zeta", NoneArm, NoneParams, "the last one")
    with pytest.raises(
        RegistryError,
        match="choose one of: bridge, cc, fallback, fts, ltr, ltrb, neighbors, none, rrf, vector, walk, zeta",
    ):
        build("x", FakeMemory())


def test_build_fills_defaults_and_applies_overrides() -> None:
    mem = FakeMemory()
    arm = build("rrf(pool=5)", mem).inner  # every built arm comes in the settles' final stage
    assert isinstance(arm, RRFArm)
    assert arm.params == RRFParams(pool=5, rrf_k=60, min_score=0.20)
    walk = build(ArmSpec(name="walk"), mem).inner
    assert isinstance(walk, WalkArm)
    assert walk.params == WalkParams()
    assert walk.params.seeds == 3
    assert walk.name == "walk"


def test_an_int_is_accepted_for_a_float_parameter_and_stored_as_float() -> None:
    arm = build("rrf(min_score=0)", FakeMemory()).inner
    assert isinstance(arm, RRFArm)
    assert arm.params.min_score == 0.0
    assert isinstance(arm.params.min_score, float)
    assert full_canonical("rrf(min_score=0)") == "rrf(min_score=0.0,pool=20,rrf_k=60)"


def test_an_unknown_parameter_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(
        SpecError,
        match="rrf: no parameter 'depth'; valid parameters: min_score, pool, rrf_k",
    ):
        build("rrf(depth=3)", FakeMemory())
    assert isinstance(build("rrf(pool=3)", FakeMemory()).inner, RRFArm)  # control


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("rrf(pool=0.5)", "rrf: pool must be int, got 0.5"),
        ("rrf(pool='20')", "rrf: pool must be int, got '20'"),
        ("rrf(pool=True)", "rrf: pool must be int, got True"),
        ("fts(score='tfidf')", "fts: score must be 'rank' or 'bm25', got 'tfidf'"),
        ("rrf(pool=0)", "rrf: pool must be >= 1, got 0"),
        ("rrf(rrf_k=0)", "rrf: rrf_k must be >= 1, got 0"),
        ("walk(seeds=0)", "walk: seeds must be >= 1, got 0"),
        ("walk(files_per_seed=0)", "walk: files_per_seed must be >= 1, got 0"),
        ("walk(sessions_per_file=0)", "walk: sessions_per_file must be >= 1, got 0"),
        ("walk(blend_q=1.5)", "walk: blend_q must be <= 1.0, got 1.5"),
        ("vector(min_score=-2)", "vector: min_score must be >= -1.0, got -2.0"),
        ("fts(pool=-1)", "fts: pool must be >= 1, got -1"),
        ("fallback(decay_w=-0.1)", "fallback: decay_w must be >= 0.0, got -0.1"),
        ("fallback(fetch_pool=0)", "fallback: fetch_pool must be >= 1, got 0"),
        ("ltr(pool=0)", "ltr: pool must be >= 1, got 0"),  # checked before the model is asked for
    ],
)
def test_ill_typed_or_out_of_range_values_are_refused_naming_the_arm_and_parameter(
    text: str, fragment: str
) -> None:
    with pytest.raises(SpecError) as info:
        build(text, FakeMemory())
    message = str(info.value)
    assert message.startswith(fragment)  # the arm and parameter as the user wrote them, first
    assert "Params" not in message  # never an internal class such as RRFParams.pool


@pytest.mark.parametrize(
    "text", ["rrf(rrf_k=1)", "walk(seeds=1)", "walk(blend_k=0)", "walk(graph_cap=0)"]
)
def test_the_smallest_meaningful_values_are_accepted(text: str) -> None:
    # control for the refusals above: one more (or the documented off switch) is fine
    assert build(text, FakeMemory()) is not None


def test_resolve_spells_out_every_parameter_and_round_trips() -> None:
    spec = resolve("walk(seeds=2)")
    assert dict(spec.params)["seeds"] == 2
    assert dict(spec.params)["graph_cap"] == 6
    assert resolve(canonical(spec)) == spec


def test_a_built_none_arm_answers_with_nothing_and_a_built_fts_arm_with_hits() -> None:
    mem = FakeMemory()
    mem.add_session("s1", project="/a", start=None)
    mem.add_chunk("c1", session="s1", text="needle")
    query = Query(text="needle", scope=Scope.of("/a"), now=datetime(2025, 6, 1, tzinfo=UTC))
    assert build("none", mem).search(query) == []
    assert build("fts", mem).search(query) == [Hit(chunk_id="c1", score=1.0, via="fts")]  # control


def test_every_arm_has_a_one_line_description_and_a_blank_one_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in names():
        text = registry.entry(name).description
        assert text.strip() == text
        assert text
        assert "\n" not in text
    assert registry.entry("rrf").description.startswith("Reciprocal rank fusion")
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register("described", NoneArm, NoneParams, "  said once  ")  # control: accepted, stripped
    assert registry.entry("described").description == "said once"
    with pytest.raises(RegistryError, match="needs a one-line description"):
        register("blank", NoneArm, NoneParams, "   ")
    with pytest.raises(RegistryError, match="needs a one-line description"):
        register("two_lines", NoneArm, NoneParams, "one\ntwo")


# The six arms as protocols/default.toml registered them (and results recorded them), verbatim.
REGISTERED_DEFAULTS = {
    "none": "none()",
    "fts": "fts(pool=20,score='rank')",
    "vector": "vector(min_score=0.2,pool=20)",
    "rrf": "rrf(min_score=0.2,pool=20,rrf_k=60)",
    "fallback": "fallback(decay_half_life_days=90.0,decay_w=0.3,fetch_factor=3,fetch_pool=20,"
    "gate=0.5,lexical_score=0.45,lexical_score_undated=0.4,min_score=0.2)",
    "walk": "walk(blend_k=5,blend_q=0.65,echo_min_len=15,echo_penalty=0.35,episode_boost=1.1,"
    "files_per_seed=4,graph_boost=1.1,graph_cap=6,hop_factor=2,min_score=0.2,seeds=3,"
    "sessions_per_file=12)",
}


@pytest.mark.parametrize("name", sorted(REGISTERED_DEFAULTS))
def test_registered_default_specs_keep_their_canonical_strings(name: str) -> None:
    recorded = REGISTERED_DEFAULTS[name]
    assert full_canonical(name) == recorded
    assert full_canonical(recorded) == recorded
    assert registry.default_spec(name) == recorded


@pytest.mark.parametrize("name", ["fts", "rrf", "fallback"])
def test_stem_is_named_only_when_set_and_round_trips(name: str) -> None:
    recorded = REGISTERED_DEFAULTS[name]
    # Spelled out at its default, the parameter added later leaves the recorded string as it was.
    assert full_canonical(f"{name}(stem=False)") == recorded
    stemmed = full_canonical(f"{name}(stem=True)")
    assert stemmed != recorded  # control: set, it is named
    assert "stem=True" in stemmed
    assert full_canonical(stemmed) == stemmed
    assert resolve(stemmed) == resolve(f"{name}(stem=True)")
    assert build(stemmed, FakeMemory()).params.stem is True
    with pytest.raises(SpecError, match=f"{name}: stem must be bool, got 1"):
        build(f"{name}(stem=1)", FakeMemory())


def test_stem_takes_its_place_in_sorted_key_order() -> None:
    assert full_canonical("fts(stem=True)") == "fts(pool=20,score='rank',stem=True)"
    assert full_canonical("rrf(stem=True,pool=5)") == "rrf(min_score=0.2,pool=5,rrf_k=60,stem=True)"
    assert full_canonical("fallback(stem=True)") == (
        "fallback(decay_half_life_days=90.0,decay_w=0.3,fetch_factor=3,fetch_pool=20,gate=0.5,"
        "lexical_score=0.45,lexical_score_undated=0.4,min_score=0.2,stem=True)"
    )


def test_only_fields_marked_omit_default_are_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass(frozen=True, kw_only=True)
    class Later:
        old: bool = False  # registered from the start: always spelled out
        new: bool = field(default=False, metadata={OMIT_DEFAULT: True})
        other: int = field(default=3, metadata={"unrelated": True})

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register("later", NoneArm, Later, "a params class with a parameter added later")
    assert full_canonical("later") == "later(old=False,other=3)"
    assert full_canonical("later(new=True)") == "later(new=True,old=False,other=3)"
    assert full_canonical("later(new=True,old=True)") == "later(new=True,old=True,other=3)"
