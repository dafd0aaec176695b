"""Intervals and paired tests for every aggregate the evaluators report.

Conventions (one place, used by every evaluator):

- **Rates** (TER, PEC(k), RR, TSR, PRR, Pass@1, invalid-DAG rate) get a 95% **Wilson** score
  interval. With ``n = 0`` the value and both bounds are ``None`` (undefined, not 0).
- **No interval from too few units**: a bootstrap needs at least :data:`MIN_UNITS` independent
  units to resample (runs; within a stratified bootstrap, runs of one stratum). With fewer, the
  resamples are all the sample itself and the interval would have zero width, a false
  certainty; the estimate then keeps its value and ``n`` and has no bounds (``low`` and
  ``high`` are ``None``; :func:`has_interval` is false), and is printed as ``0.50 n=1``.
- **Means** (AUC-PEC, RC, E5, SDE items, ...) get a **percentile bootstrap** interval, seeded and
  deterministic: the generator is keyed by ``(seed, metric key)`` so adding a metric never moves
  another metric's interval. The resampling is exact but cheap: a bootstrap resample of N values
  is a multinomial draw of counts over the *distinct* values (or rows), so scoring 100,000 runs
  whose per-run values take a few hundred distinct values costs O(distinct × resamples).
- **Paired comparisons** of two agents on the same tasks: :func:`mcnemar` for binary outcomes
  (success, clean run) — the exact binomial test when the discordant pairs are fewer than
  :data:`MCNEMAR_EXACT_BELOW`, else the continuity-corrected chi-square; and
  :func:`paired_bootstrap` for score differences.
- **pass^k** (:func:`pass_hat_k`): the chance that *all* k independent seeds of a task succeed,
  estimated per task without bias as C(c, k) / C(n, k) from its n seeds with c successes
  (τ-bench's estimator; with n = k it is simply "all k succeeded"), averaged over tasks; tasks
  with fewer than k seeds are left out and counted.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

LEVEL = 0.95
Z95 = 1.959963984540054
N_BOOT = 2000
MCNEMAR_EXACT_BELOW = 25
#: fewest independent units a bootstrap interval is estimated from (see the module docstring)
MIN_UNITS = 2
#: above this many distinct rows the bootstrap resamples indices in chunks instead of counts
_MAX_DISTINCT = 4096


@dataclass(frozen=True)
class Feedback:
    """One per-run metric as LangSmith feedback: a stable ``key``, a numeric ``score`` (or
    ``None`` when undefined for this run, e.g. FED of a clean run), a ``comment`` saying why,
    and for categorical metrics (the first error's type) a string ``value``."""

    key: str
    score: float | None
    comment: str = ""
    value: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "score": self.score, "comment": self.comment}
        if self.value is not None:
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95% interval; ``n`` is the sample it rests on."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    method: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def has_interval(est: Mapping[str, Any] | Estimate | None) -> bool:
    """Whether an estimate (or its ``to_dict()``) has both bounds; one with a value and no
    bounds rests on too few independent units for an interval (:data:`MIN_UNITS`)."""
    if isinstance(est, Estimate):
        return est.low is not None and est.high is not None
    return isinstance(est, Mapping) and est.get("low") is not None and est.get("high") is not None


def rng_for(seed: int, key: str) -> np.random.Generator:
    """The generator for one metric: keyed by (seed, metric key), stable across runs."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(key.encode())])


def wilson(successes: int, n: int, z: float = Z95) -> Estimate:
    """Wilson score interval for ``successes / n`` (undefined when ``n == 0``)."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"wilson: need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return Estimate(None, None, None, 0, "wilson")
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Estimate(p, low, high, n, "wilson")


def _compress(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows and their counts (rows: shape (n,) or (n, d))."""
    if rows.ndim == 1:
        vals, counts = np.unique(rows, return_counts=True)
        return vals.reshape(-1, 1), counts
    vals, counts = np.unique(rows, axis=0, return_counts=True)
    return vals, counts


def resample_sums(
    rows: np.ndarray | Sequence[Any], n_boot: int, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Bootstrap column sums: an array (n_boot, d) of Σ rows over each resample, and N.

    Exact: drawing N rows with replacement is a multinomial draw over the distinct rows.
    """
    arr = np.asarray(rows, dtype=float)
    n = arr.shape[0]
    if n == 0:
        raise ValueError("resample_sums: no rows")
    vals, counts = _compress(arr)
    if len(counts) <= _MAX_DISTINCT:
        draws = rng.multinomial(n, counts / n, size=n_boot)  # (n_boot, K)
        return draws @ vals, n
    flat = arr.reshape(n, -1)
    out = np.empty((n_boot, flat.shape[1]))
    chunk = max(1, 4_000_000 // n)
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = flat[idx].sum(axis=1)
    return out, n


def _percentiles(samples: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return (math.nan, math.nan)
    a = (1 - level) / 2
    lo, hi = np.quantile(samples, [a, 1 - a])
    return float(lo), float(hi)


def bootstrap_mean(
    values: Sequence[float] | np.ndarray,
    *,
    key: str = "mean",
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> Estimate:
    """Mean with a seeded percentile-bootstrap interval (``None`` values are not allowed)."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return Estimate(None, None, None, 0, "bootstrap")
    if np.isnan(arr).any():
        raise ValueError(f"bootstrap_mean({key}): values contain NaN/None")
    mean = float(arr.mean())
    if arr.size < MIN_UNITS:  # nothing to resample: no interval rather than a zero-width one
        return Estimate(mean, None, None, int(arr.size), "bootstrap")
    if np.all(arr == arr[0]):
        return Estimate(mean, mean, mean, int(arr.size), "bootstrap")
    sums, n = resample_sums(arr, n_boot, rng_for(seed, key))
    lo, hi = _percentiles(sums[:, 0] / n)
    return Estimate(mean, min(lo, mean), max(hi, mean), n, "bootstrap")


def estimate_from_samples(
    value: float | None,
    samples: np.ndarray,
    n: int,
    method: str = "bootstrap",
    *,
    units: int | None = None,
) -> Estimate:
    """An :class:`Estimate` from a point value and its bootstrap distribution; ``units`` is the
    most independent units any resample was drawn from (default ``n``): below
    :data:`MIN_UNITS` the estimate has no interval."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Estimate(None, None, None, n, method)
    if (n if units is None else units) < MIN_UNITS:
        return Estimate(float(value), None, None, n, method)
    lo, hi = _percentiles(np.asarray(samples, dtype=float))
    if math.isnan(lo):
        return Estimate(float(value), float(value), float(value), n, method)
    return Estimate(float(value), min(lo, value), max(hi, value), n, method)


def stratified_bootstrap(
    strata: Mapping[str, np.ndarray],
    stat: Callable[[Mapping[str, np.ndarray], Mapping[str, int]], np.ndarray],
    *,
    key: str,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> np.ndarray:
    """Resample within each stratum independently; ``stat`` maps per-stratum sums to values."""
    rng = rng_for(seed, key)
    sums: dict[str, np.ndarray] = {}
    ns: dict[str, int] = {}
    for name in sorted(strata):
        rows = strata[name]
        if len(rows) == 0:
            continue
        sums[name], ns[name] = resample_sums(rows, n_boot, rng)
    return stat(sums, ns)


# -- paired tests ------------------------------------------------------------------------------
def _binom_two_sided(k: int, n: int) -> float:
    """Exact two-sided binomial p-value for k of n under p = 1/2 (doubling the smaller tail)."""
    if n == 0:
        return 1.0
    k = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> dict[str, Any]:
    """McNemar's test on paired binary outcomes ``a[i]`` vs ``b[i]`` (same task, same seed).

    ``a_only`` = pairs where only A succeeded, ``b_only`` = only B. With fewer than
    :data:`MCNEMAR_EXACT_BELOW` discordant pairs the exact binomial test is used, otherwise the
    chi-square statistic with continuity correction, (|a_only − b_only| − 1)² / (a_only + b_only).
    """
    if len(a) != len(b):
        raise ValueError(f"mcnemar: paired samples differ in length ({len(a)} vs {len(b)})")
    a_only = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    b_only = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    d = a_only + b_only
    if d < MCNEMAR_EXACT_BELOW:
        p = _binom_two_sided(a_only, d)
        stat = None
        method = "exact binomial"
    else:
        stat = (abs(a_only - b_only) - 1) ** 2 / d
        p = math.erfc(math.sqrt(stat / 2))  # chi-square, 1 degree of freedom
        method = "chi-square (continuity corrected)"
    n = len(a)
    return {
        "n": n,
        "a_only": a_only,
        "b_only": b_only,
        "both": sum(1 for x, y in zip(a, b, strict=True) if x and y),
        "neither": sum(1 for x, y in zip(a, b, strict=True) if not x and not y),
        "difference": (sum(map(bool, a)) - sum(map(bool, b))) / n if n else None,
        "statistic": stat,
        "p_value": p,
        "method": method,
    }


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    key: str = "paired",
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    """Mean of ``a[i] − b[i]`` with a percentile-bootstrap 95% interval over pairs.

    ``p_value`` is the two-sided bootstrap p-value: twice the smaller share of resampled mean
    differences on either side of 0 (capped at 1).
    """
    if len(a) != len(b):
        raise ValueError(f"paired_bootstrap: samples differ in length ({len(a)} vs {len(b)})")
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        return {"n": 0, "difference": None, "low": None, "high": None, "p_value": None}
    mean = float(d.mean())
    if d.size < MIN_UNITS:  # one pair: no interval and no test, not a false certainty
        return {"n": int(d.size), "difference": mean, "low": None, "high": None, "p_value": None}
    if np.all(d == d[0]):
        return {
            "n": int(d.size),
            "difference": mean,
            "low": mean,
            "high": mean,
            "p_value": 1.0 if mean == 0 else 0.0,
        }
    sums, n = resample_sums(d, n_boot, rng_for(seed, key))
    boot = sums[:, 0] / n
    lo, hi = _percentiles(boot)
    p = min(1.0, 2 * min(float(np.mean(boot <= 0)), float(np.mean(boot >= 0))))
    return {"n": n, "difference": mean, "low": lo, "high": hi, "p_value": p}


def pass_hat_k(
    outcomes: Mapping[Any, Sequence[bool]], k: int, *, seed: int = 0, n_boot: int = N_BOOT
) -> dict[str, Any]:
    """pass^k over tasks: mean of C(c, k)/C(n, k) per task (n seeds, c successes).

    Tasks with fewer than k seeds are skipped and reported in ``skipped_tasks``. The interval
    is a bootstrap over tasks.
    """
    if k < 1:
        raise ValueError(f"pass^k needs k >= 1, got {k}")
    per_task = []
    skipped = 0
    for runs in outcomes.values():
        n = len(runs)
        if n < k:
            skipped += 1
            continue
        c = sum(1 for r in runs if r)
        per_task.append(math.comb(c, k) / math.comb(n, k))
    est = bootstrap_mean(per_task, key=f"pass^{k}", seed=seed, n_boot=n_boot)
    return {**est.to_dict(), "k": k, "tasks": len(per_task), "skipped_tasks": skipped}
