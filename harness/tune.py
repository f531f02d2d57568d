"""Fine-tuning all-MiniLM-L6-v2 on training questions: in-batch negatives, a plain torch loop.

A protocol's ``[[encoders]]`` entry names a training spec such as
``tune(batch=16,epochs=2,lr=2e-05,scale=20.0,threads=2,warmup=0.1)`` (`TuneParams`). At registration
the training rosters become `Pair`s (`training_pairs`: each question with each chunk that holds one of
its relevant messages), `fine_tune` trains the packaged model on them with the multiple-negatives
ranking loss (`batch_loss`: every other text of the batch is a negative for a query, except texts
relevant to the same question or repeating its own chunk), and `fit_encoder` saves the result where
`engine.tuned_embed.TunedEmbedder` finds it, named by its weights' sha256.

The fit is deterministic: the seed fixes the pair order of each epoch, the dropout masks and every
other draw, and the thread count (a recorded parameter) fixes how torch splits its sums. Two fits with
the same pairs, params and seed in one environment give the same weights, hence the same hash.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arms.fitting import Example
from arms.rrf import RRFArm, RRFParams
from arms.spec import OMIT_DEFAULT, SpecError, format_value, omitted, parse_spec
from engine.checks import is_int, is_number
from engine.embed_common import minilm_model_dir
from engine.memory import Memory
from engine.scope import Scope
from engine.tuned_embed import load_sentence_transformer, save_tuned

if TYPE_CHECKING:
    import numpy as np
    import torch

__all__ = [
    "Negative",
    "Pair",
    "TuneError",
    "TuneParams",
    "batch_loss",
    "fine_tune",
    "fit_encoder",
    "hard_negatives",
    "negative_mask",
    "same_query_mask",
    "training_pairs",
    "warmup_factor",
]

SPEC_NAME = "tune"
WEIGHT_DECAY = 0.01
# Hard-negative mining (`hard_negatives`): the `rrf` arm with 100 hits per channel, no cosine floor and
# its default constant. Not tuned.
HARD_POOL = 100
HARD_FUSION = RRFParams(pool=HARD_POOL, min_score=0.0, rrf_k=60)


class TuneError(ValueError):
    """A training spec, training data or batch that the encoder cannot be fine-tuned with."""


@dataclass(frozen=True, kw_only=True)
class TuneParams:
    """How the encoder is fine-tuned; the canonical spec (`canonical`) is what protocols record.

    `warmup` is the fraction of all steps over which the learning rate rises linearly to `lr` (then
    it stays constant); `threads` is torch's thread count during the fit, recorded because the
    weights depend on it. `hard` > 0 mines that many hard negatives per question from the training
    corpus (`hard_negatives`) and adds one of them, drawn by the seeded generator, to every pair of
    each batch as one more text its query must rank below its own.
    """

    epochs: int = 2
    lr: float = 2e-5
    batch: int = 16
    scale: float = 20.0
    warmup: float = 0.1
    threads: int = 2
    # Mined hard negatives per question (`training_pairs`); 0 trains on in-batch negatives alone and
    # is left out of the canonical spec, so specs written before it existed keep their text.
    hard: int = field(default=0, metadata={OMIT_DEFAULT: True})

    def __post_init__(self) -> None:
        for name, minimum in (("epochs", 1), ("batch", 2), ("threads", 1), ("hard", 0)):
            value: object = getattr(self, name)
            if not is_int(value) or value < minimum:
                msg = f"{SPEC_NAME}: {name} must be an int >= {minimum}, got {value!r}"
                raise TuneError(msg)
        for name in ("lr", "scale", "warmup"):
            number: object = getattr(self, name)
            if not is_number(number) or not math.isfinite(number):
                msg = f"{SPEC_NAME}: {name} must be a finite number, got {number!r}"
                raise TuneError(msg)
            # An int given for a float prints as a float in the canonical spec, as it parses back.
            object.__setattr__(self, name, float(number))
        for name in ("lr", "scale"):
            if getattr(self, name) <= 0:
                msg = f"{SPEC_NAME}: {name} must be > 0, got {getattr(self, name)!r}"
                raise TuneError(msg)
        if not 0 <= self.warmup < 1:
            msg = f"{SPEC_NAME}: warmup must be a fraction of the steps in [0, 1), got {self.warmup!r}"
            raise TuneError(msg)

    def to_dict(self) -> dict[str, int | float]:
        """The parameters as JSON values, by name."""
        return asdict(self)

    def canonical(self) -> str:
        """``tune(k=v,...)`` with every key, sorted, floats as their shortest round-tripping repr."""
        kept = (f for f in fields(self) if not omitted(f, getattr(self, f.name)))
        inner = ",".join(
            f"{f.name}={format_value(getattr(self, f.name))}"
            for f in sorted(kept, key=lambda f: f.name)
        )
        return f"{SPEC_NAME}({inner})"

    @classmethod
    def from_spec(cls, spec: str) -> TuneParams:
        """Parse ``tune`` or ``tune(key=literal,...)``; keys not given take their defaults.

        Raises:
            TuneError: the text does not parse, names another spec, or gives an unknown key.
        """
        try:
            parsed = parse_spec(spec)
        except SpecError as exc:
            raise TuneError(str(exc)) from None
        if parsed.name != SPEC_NAME:
            msg = f"training spec {spec!r} must be {SPEC_NAME}(...), got the name {parsed.name!r}"
            raise TuneError(msg)
        known = sorted(asdict(cls()))
        unknown = sorted(key for key, _ in parsed.params if key not in known)
        if unknown:
            msg = (
                f"training spec {spec!r} has unknown parameter(s) {', '.join(unknown)}; "
                f"choose from {', '.join(known)}"
            )
            raise TuneError(msg)
        values: dict[str, Any] = dict(parsed.params)
        return cls(**values)


@dataclass(frozen=True)
class Negative:
    """A chunk mined as a hard negative for a question: found near it, holding none of its evidence."""

    chunk_id: str
    text: str


@dataclass(frozen=True, kw_only=True)
class Pair:
    """One training pair: a question (by qid) and the text of a chunk relevant to it, with the
    question's mined hard negatives (empty unless `training_pairs` was asked for them)."""

    qid: str
    query: str
    chunk_id: str
    text: str
    negatives: tuple[Negative, ...] = ()


def training_pairs(
    memory: Memory, examples: Sequence[Example], *, hard: int = 0
) -> tuple[list[Pair], dict[str, int]]:
    """Each example with each chunk of `memory` holding a message it grades above 0, sorted by
    (qid, chunk id), and counts: ``examples``, ``used``, ``skipped_no_chunk`` (no such chunk),
    ``pairs``. With `hard` > 0 every pair carries its question's `hard_negatives`, and the counts
    gain ``negatives`` (mined, over all used questions).

    Raises:
        TuneError: an example's unit is not ``message`` (a session is too coarse to be a text).
    """
    coarse = sorted(e.qid for e in examples if e.unit != "message")
    if coarse:
        msg = (
            f"the encoder needs message-unit rosters, but {len(coarse)} example(s) name sessions "
            f"({', '.join(coarse[:5])}); train it on rosters sealed with unit 'message'"
        )
        raise TuneError(msg)
    ids = [chunk_id for _, chunk_id, _, _ in memory.chunk_rows()]
    records = memory.chunks(ids, Scope.everywhere())
    by_message: dict[str, list[int]] = {}
    for position, record in enumerate(records):
        for uuid in record.message_uuids:
            by_message.setdefault(uuid, []).append(position)
    pairs: list[Pair] = []
    used = mined = 0
    for example in examples:
        found = {
            position
            for uuid, grade in example.relevant.items()
            if grade > 0
            for position in by_message.get(uuid, ())
        }
        negatives: tuple[Negative, ...] = ()
        if found:
            used += 1
            if hard > 0:
                positives = {records[p].id for p in found}
                negatives = hard_negatives(memory, example, positives, hard)
                mined += len(negatives)
        pairs.extend(
            Pair(
                qid=example.qid,
                query=example.query.text,
                chunk_id=records[p].id,
                text=records[p].text,
                negatives=negatives,
            )
            for p in sorted(found)
        )
    pairs.sort(key=lambda pair: (pair.qid, pair.chunk_id))
    counts = {
        "examples": len(examples),
        "used": used,
        "skipped_no_chunk": len(examples) - used,
        "pairs": len(pairs),
    }
    if hard > 0:
        counts["negatives"] = mined
    return pairs, counts


def hard_negatives(
    memory: Memory, example: Example, positives: set[str], count: int
) -> tuple[Negative, ...]:
    """The `count` chunks a plain fusion ranks highest for the example's question, in its scope,
    that are not among `positives` (the chunks holding its evidence).

    The fusion is the `rrf` arm (`HARD_FUSION`) over the `memory`'s own channels: BM25 and the
    embedder's cosine, `HARD_POOL` each, every chunk scoring Σ 1 / (60 + rank) over the pools that
    hold it, ties broken by chunk id. These are the texts a reranker over those pools has to put below
    the evidence, so the encoder learns from the mistakes it will be asked to correct.
    """
    # k = both pools whole: every fused chunk, so `count` still fills after the positives are left out.
    fused = RRFArm(memory, HARD_FUSION).search(replace(example.query, k=2 * HARD_POOL))
    chosen = [hit.chunk_id for hit in fused if hit.chunk_id not in positives][:count]
    scope = example.query.scope
    text = {record.id: record.text for record in memory.chunks(chosen, scope)}
    return tuple(Negative(chunk_id=cid, text=text[cid]) for cid in chosen if cid in text)


def same_query_mask(pairs: Sequence[Pair]) -> torch.Tensor:
    """(b, b) bool: True at (i, j), i != j, where pair j is no negative for query i (same qid, or
    the same chunk, which would be both its positive and a negative)."""
    import torch

    n = len(pairs)
    rows = [[i != j and _shared(pairs[i], pairs[j]) for j in range(n)] for i in range(n)]
    return torch.tensor(rows, dtype=torch.bool).reshape(n, n)


def _shared(a: Pair, b: Pair) -> bool:
    return a.qid == b.qid or a.chunk_id == b.chunk_id


def negative_mask(
    pairs: Sequence[Pair], drawn: Sequence[Negative], positives: Mapping[str, set[str]]
) -> torch.Tensor:
    """(b, k) bool: True at (i, j) where the drawn hard negative j is no negative for query i, being
    one of the chunks that hold its evidence (`positives`: chunk ids by qid, over every pair)."""
    import torch

    rows = [[n.chunk_id in positives.get(p.qid, ()) for n in drawn] for p in pairs]
    return torch.tensor(rows, dtype=torch.bool).reshape(len(pairs), len(drawn))


def batch_loss(q: torch.Tensor, d: torch.Tensor, scale: float, mask: torch.Tensor) -> torch.Tensor:
    """The multiple-negatives ranking loss of one batch (Henderson et al. 2017, "Efficient Natural
    Language Response Suggestion for Smart Reply"; sentence-transformers' MultipleNegativesRankingLoss).

    `q` is (b, dim) and `d` (m, dim), m >= b, all rows L2-normalised: d_i is the positive text of
    query i for i < b, and rows from b on are extra negatives (hard negatives, `negative_mask`). The
    logits are ``scale * q @ d.T``; where `mask[i, j]` is True, d_j is relevant to query i too and is
    no negative, so its logit is -inf. The loss is the cross-entropy of row i against target i,
    averaged over the rows.

    Raises:
        TuneError: the shapes do not match, or the mask marks a query's own positive.
    """
    import torch
    from torch.nn import functional

    b = q.shape[0]
    m = d.shape[0] if d.dim() == 2 else -1
    if q.dim() != 2 or m < b or d.shape[1] != q.shape[1] or tuple(mask.shape) != (b, m):
        msg = (
            f"batch_loss needs q (b, dim), d (m, dim) with m >= b of the same width, and a (b, m) "
            f"mask, got q {tuple(q.shape)}, d {tuple(d.shape)}, mask {tuple(mask.shape)}"
        )
        raise TuneError(msg)
    if bool(mask.diagonal().any()):
        msg = "batch_loss: the mask marks a query's own positive (mask[i, i]); it must stay False"
        raise TuneError(msg)
    logits = (scale * q @ d.T).masked_fill(mask, float("-inf"))
    target = torch.arange(b, device=logits.device)
    return functional.cross_entropy(logits, target)


def fine_tune(
    pairs: Sequence[Pair],
    params: TuneParams,
    seed: int,
    *,
    base_dir: Path | None = None,
    progress: bool = False,
) -> Any:
    """Fine-tune the packaged all-MiniLM-L6-v2 (or the model in `base_dir`) on `pairs`.

    Each epoch visits the pairs in a fresh seeded order, in batches of `params.batch` (a last batch
    of one pair is dropped); each batch takes one AdamW step on `batch_loss`, its learning rate
    warmed up linearly over the first `params.warmup` of all steps. Returns the SentenceTransformer,
    in eval mode.

    Raises:
        TuneError: fewer than two pairs (no batch has a negative).
    """
    import torch

    steps_per_epoch = len(_batches(len(pairs), params.batch, None))
    if steps_per_epoch == 0:
        msg = f"fine-tuning needs at least 2 training pairs, got {len(pairs)}"
        raise TuneError(msg)
    previous = torch.get_num_threads()
    torch.set_num_threads(params.threads)
    try:
        model = _load_base(base_dir)
        _train(model, pairs, params, seed, steps_per_epoch, progress=progress)
    finally:
        torch.set_num_threads(previous)
    return model


def fit_encoder(
    pairs: Sequence[Pair],
    params: TuneParams,
    seed: int,
    *,
    cache: Path | None = None,
    base_dir: Path | None = None,
    progress: bool = False,
) -> str:
    """`fine_tune`, then `engine.tuned_embed.save_tuned` into `cache`; returns the weights sha256."""
    model = fine_tune(pairs, params, seed, base_dir=base_dir, progress=progress)
    return save_tuned(model, cache)


def warmup_factor(step: int, warmup_steps: int) -> float:
    """The learning-rate multiplier at 0-based `step`: (step + 1) / (warmup_steps + 1), then 1."""
    return min(1.0, (step + 1) / (warmup_steps + 1))


# --- the training loop ---------------------------------------------------------------------------


def _load_base(base_dir: Path | None) -> Any:
    """The model to start from, loaded offline on the CPU."""
    return load_sentence_transformer(base_dir if base_dir is not None else minilm_model_dir())


def _batches(n: int, size: int, order: np.ndarray[Any, Any] | None) -> list[list[int]]:
    """Positions in `order` (default 0..n-1) cut into batches of `size`; a last batch of 1 dropped."""
    positions = [int(i) for i in order] if order is not None else list(range(n))
    cut = [positions[start : start + size] for start in range(0, n, size)]
    return [batch for batch in cut if len(batch) >= 2]


def _train(
    model: Any,
    pairs: Sequence[Pair],
    params: TuneParams,
    seed: int,
    steps_per_epoch: int,
    *,
    progress: bool,
) -> None:
    """Run every epoch's steps on `model` in place; seeded after loading (building the model draws
    random initial weights before the packaged ones replace them)."""
    import numpy as np
    import torch
    from tqdm import tqdm

    torch.manual_seed(seed)
    random.seed(seed)
    rng = np.random.default_rng(seed)
    total = steps_per_epoch * params.epochs
    warmup_steps = int(params.warmup * total)
    positives: dict[str, set[str]] = {}
    for pair in pairs:
        positives.setdefault(pair.qid, set()).add(pair.chunk_id)
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.lr, weight_decay=WEIGHT_DECAY)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: warmup_factor(step, warmup_steps)
    )
    model.train()
    try:
        with tqdm(total=total, desc="fine-tuning", file=sys.stderr, disable=not progress) as bar:
            for _ in range(params.epochs):
                for batch in _batches(len(pairs), params.batch, rng.permutation(len(pairs))):
                    chosen = [pairs[i] for i in batch]
                    # One mined negative per pair that has any (none when `hard` is 0), drawn in
                    # batch order after the epoch's permutation, so the fit stays seeded.
                    drawn = [
                        p.negatives[int(rng.integers(len(p.negatives)))]
                        for p in chosen
                        if params.hard > 0 and p.negatives
                    ]
                    mask = same_query_mask(chosen)
                    if drawn:
                        mask = torch.cat([mask, negative_mask(chosen, drawn, positives)], dim=1)
                    loss = batch_loss(
                        _encode(model, [p.query for p in chosen]),
                        _encode(model, [p.text for p in chosen] + [n.text for n in drawn]),
                        params.scale,
                        mask,
                    )
                    optimizer.zero_grad()
                    torch.autograd.backward(loss)
                    optimizer.step()
                    schedule.step()
                    bar.set_postfix(loss=f"{loss.item():.4f}")
                    bar.update()
    finally:
        model.eval()


def _encode(model: Any, texts: Sequence[str]) -> torch.Tensor:
    """L2-normalised sentence embeddings of `texts`, with gradients."""
    from torch.nn import functional

    # Recent sentence-transformers renamed `tokenize` to `preprocess` (the old name logs a deprecation);
    # older releases have only `tokenize`.
    prepare = getattr(model, "preprocess", None) or model.tokenize
    features = prepare(list(texts))
    embedded: torch.Tensor = model(features)["sentence_embedding"]
    return functional.normalize(embedded, p=2.0, dim=-1)
