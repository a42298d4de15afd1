"""``python -m jitgrad.examples.charlm``: a character-level transformer trained on the
Python standard library's own source code.

The text is on every machine without a download: the ``*.py`` files under
``sysconfig.get_paths()["stdlib"]`` (its ``test`` and ``idlelib`` packages and installed
third-party packages left out, ASCII files only), read in sorted path order until a few MB;
the last tenth is held out for validation. The model is a GPT-style decoder: token and
learned positional embeddings, two pre-LayerNorm blocks of causal self-attention
(``F.scaled_dot_product_attention(is_causal=True)``) and a GELU MLP, a final LayerNorm and a
linear head over the characters. It is trained with AdamW under ``jg.jit``; the validation
loss is printed in bits per character against the unigram baseline (the entropy of the
training text's character distribution), then a sample generated from a prompt.

    python -m jitgrad.examples.charlm --steps 3000 --batch 32

``train_step`` is one plain function of (model, optimizer, x, y): the unit the JIT
compiles as a whole.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn, optim

# Packages of the standard library's directory that are not its everyday code: its test
# suite (data files, deliberately odd code), IDLE, and what pip installed beside it.
SKIPPED_DIRS = frozenset({"test", "tests", "idlelib", "site-packages", "dist-packages"})


@dataclass(frozen=True)
class Config:
    """The model, the data and the run. ``FAST`` is the small one the tests use."""

    d_model: int = 64
    heads: int = 4
    layers: int = 2
    context: int = 64
    batch: int = 32
    steps: int = 1500
    lr: float = 3e-3
    warmup: int = 100
    text_chars: int = 2_000_000
    eval_windows: int = 512  # validation windows of ``context`` characters
    seed: int = 0


FAST = Config(
    d_model=32, context=32, batch=8, steps=300, warmup=20, text_chars=200_000, eval_windows=128
)


def stdlib_text(max_chars: int) -> str:
    """The standard library's ASCII ``*.py`` files, concatenated in sorted path order up to
    ``max_chars`` characters."""
    root = Path(sysconfig.get_paths()["stdlib"])
    paths = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")]
        paths += [Path(folder, f) for f in files if f.endswith(".py")]
    parts, total = [], 0
    for path in sorted(paths, key=lambda p: p.relative_to(root).as_posix()):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not text.isascii():
            continue
        parts.append(text)
        total += len(text)
        if total >= max_chars:
            break
    if not parts:
        raise SystemExit(f"no readable *.py files under the standard library at {root}")
    return "".join(parts)[:max_chars]


@dataclass
class Corpus:
    """The text as indices into ``vocab`` (its sorted characters), split train/validation."""

    vocab: str
    train: np.ndarray
    valid: np.ndarray

    @classmethod
    def load(cls, max_chars: int, valid_fraction: float = 0.1) -> Corpus:
        text = stdlib_text(max_chars)
        vocab = "".join(sorted(set(text)))
        lookup = np.zeros(128, np.int64)
        lookup[[ord(c) for c in vocab]] = np.arange(len(vocab))
        ids = lookup[np.frombuffer(text.encode("ascii"), np.uint8)]
        cut = round(len(ids) * (1 - valid_fraction))
        return cls(vocab, ids[:cut], ids[cut:])

    def encode(self, text: str) -> np.ndarray:
        unknown = sorted(set(text) - set(self.vocab))
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {''.join(unknown)!r}")
        return np.array([self.vocab.index(c) for c in text], np.int64)

    def decode(self, ids) -> str:
        return "".join(self.vocab[i] for i in ids)

    def unigram_bits(self) -> float:
        """Entropy in bits of the training text's character distribution: the loss of a
        model that ignores the context."""
        p = np.bincount(self.train, minlength=len(self.vocab)) / len(self.train)
        p = p[p > 0]
        return float(-(p * np.log2(p)).sum())

    def batch(self, rng: np.random.Generator, size: int, context: int):
        """``size`` random training windows: inputs and the next characters (int64)."""
        starts = rng.integers(0, len(self.train) - context - 1, size)
        rows = starts[:, None] + np.arange(context)
        return self.train[rows], self.train[rows + 1]

    def valid_windows(self, count: int, context: int):
        """Up to ``count`` validation windows, evenly spaced: the same every evaluation."""
        starts = np.linspace(0, len(self.valid) - context - 1, count).astype(np.int64)
        rows = starts[:, None] + np.arange(context)
        return self.valid[rows], self.valid[rows + 1]


class Block(nn.Module):
    """x + attention(LayerNorm(x)), then x + MLP(LayerNorm(x)): causal self-attention over
    ``heads`` heads, and Linear → GELU → Linear of width 4·d_model.

    Written from Linear, LayerNorm and ``F.scaled_dot_product_attention`` rather than
    ``nn.TransformerEncoderLayer(norm_first=True)``, which computes the same function: that
    layer projects in (length, batch, features) order, whose strided products make the
    jitted step several times slower here."""

    def __init__(self, d_model: int, heads: int, generator):
        super().__init__()
        if d_model % heads:
            raise ValueError(f"d_model {d_model} is not a multiple of heads {heads}")
        self.heads = heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, generator=generator)
        self.proj = nn.Linear(d_model, d_model, generator=generator)
        self.norm2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, 4 * d_model, generator=generator)
        self.fc2 = nn.Linear(4 * d_model, d_model, generator=generator)

    def forward(self, x):
        n, length, d = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(n, length, 3, self.heads, d // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each (n, heads, length, head_dim)
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(n, length, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class CharTransformer(nn.Module):
    """Characters (n, length) → next-character logits (n, length, vocab)."""

    def __init__(self, vocab_size: int, config: Config):
        super().__init__()
        rng = jg.random.default_rng(config.seed)
        self.context = config.context
        self.token = nn.Embedding(vocab_size, config.d_model, generator=rng)
        self.position = nn.Embedding(config.context, config.d_model, generator=rng)
        self.blocks = nn.ModuleList(
            [Block(config.d_model, config.heads, rng) for _ in range(config.layers)]
        )
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, vocab_size, generator=rng)
        # Small embeddings (GPT's 0.02): beside N(0, 1) ones the blocks' outputs are
        # drowned in the residual stream and the model learns slower.
        for table in (self.token, self.position):
            nn.init.normal_(table.weight, std=0.02, generator=rng)

    def forward(self, ids):
        length = ids.shape[-1]
        if length > self.context:
            raise ValueError(f"sequence of {length} characters is longer than the context")
        x = self.token(ids) + self.position(jg.arange(length))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def build(vocab_size: int, config: Config) -> tuple[CharTransformer, optim.Optimizer]:
    """The float32 model, initialised from ``config.seed``, and its AdamW optimizer."""
    previous = jg.get_default_dtype()
    jg.set_default_dtype(jg.float32)
    try:
        model = CharTransformer(vocab_size, config)
    finally:
        jg.set_default_dtype(previous)
    return model, optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01)


def train_step(model, optimizer, x, y):
    """One step: forward, cross-entropy over every position, backward, update."""
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss


def validation_loss(model, x, y):
    """Mean cross-entropy (nats) on a validation batch, without a graph."""
    with jg.no_grad():
        logits = model(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def next_logits(model, window):
    """Logits of every position of ``window`` (1, context), without a graph. Causal
    attention lets a shorter text be padded on the right: position ``i`` sees ``0..i``."""
    with jg.no_grad():
        return model(window)


@dataclass
class Result:
    model: CharTransformer
    corpus: Corpus
    unigram_bits: float
    valid_bits: list[tuple[int, float]] = field(default_factory=list)  # (step, bits/char)
    step_times: list[float] = field(default_factory=list)
    first_step_seconds: float = 0.0
    kernels: dict = field(default_factory=dict)  # jg.jit.stats() after the first step
    seconds: float = 0.0

    @property
    def final_bits(self) -> float:
        return self.valid_bits[-1][1]


def evaluate(model, evaluate_batch, corpus: Corpus, config: Config) -> float:
    """Validation loss in bits per character over ``config.eval_windows`` windows, in
    batches of ``config.batch`` (``evaluate_batch`` is ``validation_loss``, jitted)."""
    x, y = corpus.valid_windows(config.eval_windows, config.context)
    losses = [
        evaluate_batch(
            model, jg.asarray(x[k : k + config.batch]), jg.asarray(y[k : k + config.batch])
        )
        for k in range(0, len(x) - config.batch + 1, config.batch)
    ]
    return float(np.mean([loss.item() for loss in losses])) / math.log(2)


def train(config: Config = Config(), evals: int = 5, progress: bool = True) -> Result:
    """Train ``config.steps`` jitted steps on random windows; evaluate ``evals`` times."""
    corpus = Corpus.load(config.text_chars)
    model, opt = build(len(corpus.vocab), config)
    schedule = optim.lr_scheduler.LambdaLR(opt, _warmup_cosine(config))
    step, evaluate_batch = jg.jit(train_step), jg.jit(validation_loss)
    rng = np.random.default_rng(config.seed)
    result = Result(model, corpus, corpus.unigram_bits())
    eval_at = {round(config.steps * k / evals) for k in range(1, evals + 1)}
    bar = tqdm(range(1, config.steps + 1), desc="training", disable=not progress, leave=True)
    start = time.perf_counter()
    for k in bar:
        x, y = corpus.batch(rng, config.batch, config.context)
        t0 = time.perf_counter()
        loss = step(model, opt, jg.asarray(x), jg.asarray(y))
        elapsed = time.perf_counter() - t0
        if result.first_step_seconds:
            result.step_times.append(elapsed)
        else:  # compiles, or loads kernels from the disk cache: reported apart
            result.first_step_seconds, result.kernels = elapsed, jg.jit.stats()
        schedule.step()
        if k % 25 == 0 or k == 1:
            bar.set_postfix(loss=f"{loss.item() / math.log(2):.3f} bits/char")
        if k in eval_at:
            result.valid_bits.append((k, evaluate(model, evaluate_batch, corpus, config)))
            bar.write(f"step {k:>5}: validation {result.valid_bits[-1][1]:.3f} bits/char")
    bar.close()
    result.seconds = time.perf_counter() - start
    return result


def _warmup_cosine(config: Config):
    """A linear warm-up over ``config.warmup`` steps, then a cosine decay to a tenth."""

    def factor(step: int) -> float:
        if step < config.warmup:
            return (step + 1) / config.warmup
        done = (step - config.warmup) / max(1, config.steps - config.warmup)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * min(done, 1.0)))

    return factor


def generate(
    model: CharTransformer,
    corpus: Corpus,
    prompt: str,
    length: int = 200,
    temperature: float = 0.8,
    seed: int = 0,
) -> str:
    """``prompt`` followed by ``length`` characters sampled one at a time (temperature 0:
    the likeliest each time) from the model's view of the last ``context`` characters."""
    ids = list(corpus.encode(prompt))
    if not ids:
        raise ValueError("generate needs a prompt of at least one character")
    rng = np.random.default_rng(seed)
    forward, window = jg.jit(next_logits), np.zeros((1, model.context), np.int64)
    was_training = model.training
    model.eval()
    try:
        for _ in range(length):
            seen = ids[-model.context :]
            window[0, : len(seen)] = seen
            logits = forward(model, jg.asarray(window)).numpy()[0, len(seen) - 1]
            if temperature <= 0:
                ids.append(int(logits.argmax()))
                continue
            p = np.exp((logits - logits.max()) / temperature)
            ids.append(int(rng.choice(len(p), p=p / p.sum())))
    finally:
        model.train(was_training)
    return corpus.decode(ids)


def eager_step_times(corpus: Corpus, config: Config, steps: int = 8) -> list[float]:
    """Wall times of eager (not jitted) training steps on a fresh model, for comparison."""
    model, opt = build(len(corpus.vocab), config)
    x, y = corpus.batch(np.random.default_rng(config.seed), config.batch, config.context)
    x, y = jg.asarray(x), jg.asarray(y)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        train_step(model, opt, x, y)
        times.append(time.perf_counter() - t0)
    return times[2:]  # the first steps compile the per-op kernels


def warm_start_seconds(config: Config) -> float:
    """Seconds from a fresh interpreter's start to the end of its first jitted training
    step, with this process's kernels already in the disk cache."""
    code = (
        "import time; t = time.perf_counter()\n"
        "from dataclasses import replace\n"
        "from jitgrad.examples import charlm\n"
        f"charlm.train(replace(charlm.{config!r}, steps=1), evals=0, progress=False)\n"
        "print(time.perf_counter() - t)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def _format_time(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m jitgrad.examples.charlm",
        description="Train a character-level transformer on the Python standard library's "
        "source files and print its validation bits per character and a sample.",
    )
    parser.add_argument("--steps", type=int, help=f"training steps (default {Config.steps})")
    parser.add_argument("--batch", type=int, help=f"windows per step (default {Config.batch})")
    parser.add_argument(
        "--fast",
        action="store_true",
        help="a small model, context and text and few steps: a check that runs in seconds",
    )
    parser.add_argument("--prompt", default="def ", help="the sample's first characters")
    parser.add_argument(
        "--temperature",
        type=float,
        default=0.8,
        help="sampling temperature; 0 picks the likeliest character (default 0.8)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of everything (default 0)")
    args = parser.parse_args(argv)
    if (args.steps is not None and args.steps <= 0) or (args.batch is not None and args.batch <= 0):
        parser.error("--steps and --batch must be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    config = replace(FAST if args.fast else Config(), seed=args.seed)
    if args.steps is not None:
        config = replace(config, steps=args.steps)
    if args.batch is not None:
        config = replace(config, batch=args.batch)
    print(
        f"charlm: {config.layers} blocks, d_model {config.d_model}, {config.heads} heads, "
        f"context {config.context} (float32), AdamW lr={config.lr}, batch {config.batch}, "
        f"{config.steps} steps, seed {config.seed}"
    )
    result = train(config)
    corpus, bits = result.corpus, result.final_bits
    print(
        f"text: {len(corpus.train) + len(corpus.valid):,} characters of the standard "
        f"library's source, {len(corpus.vocab)} distinct; {len(corpus.valid):,} held out"
    )
    print(
        f"validation: {bits:.3f} bits/char against {result.unigram_bits:.3f} for the "
        f"unigram baseline ({1 - bits / result.unigram_bits:.0%} fewer)"
    )
    kernels = result.kernels
    print(
        f"first step: {result.first_step_seconds:.2f} s (jitted; kernels compiled: "
        f"{kernels.get('compiled', 0)}, loaded from the disk cache: "
        f"{kernels.get('disk_hits', 0)})"
    )
    median = statistics.median(result.step_times) if result.step_times else float("nan")
    print(
        f"median step time: {_format_time(median)} (jitted, batch {config.batch}), "
        f"{config.steps} steps in {result.seconds:.2f} s"
    )
    eager = statistics.median(eager_step_times(corpus, config))
    print(
        f"median eager step: {_format_time(eager)}: the jitted step is {eager / median:.1f}× faster"
    )
    if not args.fast:
        print(
            f"warm start: a fresh process trains its first jitted step "
            f"{warm_start_seconds(config):.2f} s after starting"
        )
    sample = generate(result.model, corpus, args.prompt, temperature=args.temperature)
    print(f"sample (temperature {args.temperature}):\n{sample}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
