"""Experiment ``ppm``: the private randomized power method family on implicit-feedback data.

Reproduces Fig. 1 (relative error of the ideal low-pass filter against ε, every method, mean with a bootstrap
band) and Fig. 2 (first-step sensitivity ratio r(k, n)) of J. Nicolas, C. Sabater, M. Maouche, S. Ben Mokhtar and
M. Coates, "Differentially private and decentralized randomized power method", arXiv:2411.01931 (2024).

Entry points (each usable without Snakemake; the config section is ``ppm``, validated against
``ppm.schema.yaml``): :func:`check_config`, :func:`prepare_data`, :func:`load_problem`, :func:`run_method`,
:func:`summarise`, :func:`eps_ratio_table`, :func:`sensitivity_ratio_table`. Tables: docs/ppm.md.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ddppm.core.errors import ConfigError
from ddppm.core.progress import Progress
from ddppm.core.seeds import run_seed
from ddppm.data import recsys
from ddppm.experiments.base import Experiment, get_experiment, register_experiment
from ddppm.methods import available_methods
from ddppm.methods.ppm import PRIVATE_SUBSPACE, DenseOperator, PrivacySpec, initial_blocks
from ddppm.methods.ppm.algorithms import apply
from ddppm.methods.ppm.linalg import orthonormalize
from ddppm.methods.ppm.sensitivity import first_step_sensitivities, ratio_approximation

LOGGER = logging.getLogger("ddppm")
ANALYZE_GAUSS_MAX_ITEMS = 4000
"""Largest item count for methods that materialise Ã (``needs_dense``): beyond it the dense n × n matrix and its
eigendecomposition per run dominate everything (the paper leaves AnalyzeGauss out on MovieLens-10M too)."""


def default_section(**overrides: Any) -> dict[str, Any]:
    """The section ``ppm`` with every default of ``ppm.schema.yaml``, nested ``overrides`` merged in, validated
    (schema and :func:`check_config`): the library's way to run the experiment without Snakemake."""
    return get_experiment("ppm").default_section(**overrides)


def check_config(section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    """Cross-key checks of the validated section ``ppm`` that its schema cannot express; raises
    :class:`ConfigError` naming the key and the fix."""
    known = available_methods(task=PRIVATE_SUBSPACE)
    for name in section["methods"]:
        if name not in known:
            raise ConfigError(f"ppm.methods: unknown method {name!r}; the registered ones are {sorted(known)}")
    if section["eps_ratio_reference"] not in section["methods"]:
        raise ConfigError(
            f"ppm.eps_ratio_reference: {section['eps_ratio_reference']!r} is not in ppm.methods; add it or pick one of "
            f"{section['methods']}"
        )
    for role, name in section["claims"].items():
        if name not in known:
            raise ConfigError(f"ppm.claims.{role}: unknown method {name!r}; the registered ones are {sorted(known)}")
    if section["rank"] > section["block_size"]:
        raise ConfigError(f"ppm.rank = {section['rank']} exceeds ppm.block_size = {section['block_size']}: use k ≤ p")
    data = section["data"]
    if data["source"] == "synthetic":
        if section["block_size"] > data["items"]:
            raise ConfigError(f"ppm.block_size = {section['block_size']} exceeds ppm.data.items = {data['items']}")
        if section["clients"] is not None and section["clients"] > data["users"]:
            raise ConfigError(f"ppm.clients = {section['clients']} exceeds ppm.data.users = {data['users']}")
        dense = [m for m in section["methods"] if known[m].needs_dense]
        if dense and data["items"] > ANALYZE_GAUSS_MAX_ITEMS:
            raise ConfigError(
                f"ppm.methods: {dense} materialise the items × items matrix, too large for ppm.data.items = "
                f"{data['items']} > {ANALYZE_GAUSS_MAX_ITEMS}; remove them (as the paper does on MovieLens-10M)"
            )
    ratio = section["sensitivity_ratio"]
    if not ratio["k_min"] <= ratio["k_max"] <= min(ratio["sizes"]) // 2:
        raise ConfigError(
            f"ppm.sensitivity_ratio: need k_min ≤ k_max ≤ min(sizes)/2 (got {ratio['k_min']}, {ratio['k_max']}, "
            f"{min(ratio['sizes'])}); lower ppm.sensitivity_ratio.k_max"
        )


# ------------------------------------------------------------------------------------------------ data


def load_interactions(data: dict[str, Any], cache_dir: str | None = None) -> tuple[sp.csr_matrix, dict[str, Any]]:
    """R from ``ppm.data`` (synthetic or MovieLens), split (url) and cleaned, with its description."""
    if data["source"] == "synthetic":
        R = recsys.synthetic_interactions(
            data["users"],
            data["items"],
            data["density"],
            data["rank"],
            data["seed"],
            activity_spread=data["activity_spread"],
            popularity_spread=data["popularity_spread"],
            concentration=data["concentration"],
        )
        origin: dict[str, Any] = {"source": "synthetic", "label": "synthetic implicit feedback"}
    else:
        R, origin = recsys.load_movielens(data["url"], data["sha256"], member=data["member"], cache_dir=cache_dir)
        R = recsys.train_split(R, data["train_fraction"], data["split_seed"])
        origin = {**origin, "source": "url", "label": "MovieLens"}
    R, info = recsys.clean_interactions(R)
    return R, {**origin, **info}


def prepare_data(section: dict[str, Any], cache_dir: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Rule ``ppm_data``: the interactions (one row per (user, item)) and the reference filter (one row per item:
    degree and the top-k eigenvectors of Ã), plus metadata (data description, eigenvalues)."""
    R, info = load_interactions(section["data"], cache_dir)
    k = section["rank"]
    if max(section["block_size"], k) > R.shape[1]:
        raise ConfigError(f"ppm.block_size = {section['block_size']} exceeds the {R.shape[1]} items of the data")
    operator = recsys.ItemItemOperator(R)
    values, vectors = recsys.top_eigenvectors(operator, k, seed=section["seed"])
    coo = R.tocoo()
    interactions = pd.DataFrame({"user": coo.row.astype(np.int32), "item": coo.col.astype(np.int32)})
    reference = pd.DataFrame({"item": np.arange(R.shape[1], dtype=np.int32), "item_degree": operator.item_degrees})
    for j in range(k):
        reference[f"eigenvector_{j + 1}"] = vectors[:, j]
    noiseless = noiseless_errors(R, vectors, section)
    LOGGER.info(
        "ppm data: %d users, %d items, %d interactions; error without noise %.3g", *R.shape, R.nnz, noiseless.mean()
    )
    return (
        interactions,
        reference,
        {"data": info, "eigenvalues": values.tolist(), "noiseless_errors": noiseless.tolist()},
    )


def initial_seeds(section: dict[str, Any]) -> list[int]:
    """Seeds of the initial blocks ``G₀`` of runs 0..seeds−1, shared by every method and ε."""
    return [run_seed(section["seed"], ("ppm", "G0"), r) for r in range(section["seeds"])]


def noiseless_errors(R: sp.csr_matrix, U: np.ndarray, section: dict[str, Any]) -> np.ndarray:
    """Error of the power method without noise from each run's ``X⁰`` (L iterations, block p): the floor every
    private method reaches as ε → ∞ (their eq. 76 with ``Ũ`` the noise-free ``X^L``)."""
    operator = recsys.ItemItemOperator(R)
    X = initial_blocks([np.random.default_rng(s) for s in initial_seeds(section)], operator.n, section["block_size"])
    for _ in range(section["iterations"]):
        X = orthonormalize(apply(operator, X))
    k = section["rank"]
    return recsys.FilterError(R, operator.item_degrees, U[:, :k])(X[:, :, :k])


def load_problem(interactions: pd.DataFrame, reference: pd.DataFrame) -> tuple[sp.csr_matrix, np.ndarray]:
    """R and the reference eigenvectors ``U_k`` back from :func:`prepare_data`'s tables."""
    shape = (int(interactions["user"].max()) + 1, len(reference))
    R = sp.csr_matrix((np.ones(len(interactions)), (interactions["user"], interactions["item"])), shape=shape)
    U = reference[[c for c in reference.columns if c.startswith("eigenvector_")]].to_numpy()
    return R, U


# ------------------------------------------------------------------------------------------------ runs


def run_method(name: str, R: sp.csr_matrix, U: np.ndarray, section: dict[str, Any]) -> pd.DataFrame:
    """Rule ``ppm_runs``: every (ε, run) of one method; one row per run (columns in docs/ppm.md).

    Run r starts from the same ``X⁰ = QR(G₀)`` for every method and ε (seed ``run_seed(seed, ("ppm", "G0"), r)``);
    its noise comes from ``run_seed(seed, ("ppm", method, ε), r)``. ``A X⁰`` is computed once for all ε.
    """
    method = available_methods(task=PRIVATE_SUBSPACE)[name]
    operator = recsys.ItemItemOperator(R, clients=section["clients"], dtype=np.dtype(section["precision"]))
    p, k, L, runs = section["block_size"], section["rank"], section["iterations"], section["seeds"]
    if method.needs_dense and operator.n > ANALYZE_GAUSS_MAX_ITEMS:
        raise ConfigError(f"ppm.methods: {name} needs the dense {operator.n} × {operator.n} item matrix; remove it")
    init_seeds = initial_seeds(section)
    X0 = initial_blocks([np.random.default_rng(s) for s in init_seeds], operator.n, p)
    target = DenseOperator(operator.dense()) if method.needs_dense else operator
    first = None if method.needs_dense else apply(operator, X0)
    error_of = recsys.FilterError(R, operator.item_degrees, U[:, :k])
    progress = Progress(f"ppm {name}", total=len(section["epsilons"]) * runs, unit="runs")
    frames = []
    for eps in section["epsilons"]:
        noise_seeds = [run_seed(section["seed"], ("ppm", name, float(eps)), r) for r in range(runs)]
        estimate = method.estimate(
            target,
            X0,
            PrivacySpec(float(eps), section["delta"], section["sigma_calibration"]),
            L,
            [np.random.default_rng(s) for s in noise_seeds],
            first_product=first,
        )
        cal = estimate.calibration
        frames.append(
            pd.DataFrame(
                {
                    "method": name,
                    "eps": float(eps),
                    "run": np.arange(runs, dtype=np.int64),
                    "init_seed": np.array(init_seeds, dtype=np.int64),
                    "noise_seed": np.array(noise_seeds, dtype=np.int64),
                    "error": error_of(estimate.basis[:, :, :k]),
                    "sigma": cal.sigma,
                    "eps_zcdp": cal.eps_zcdp,
                    "eps_exact": cal.eps_exact,
                    "meets_target": cal.meets_target,
                    "sensitivity_mean": estimate.sensitivities.mean(axis=1),
                    "noise_std_mean": estimate.noise_std.mean(axis=1),
                }
            )
        )
        progress.step(runs, note=f"ε = {eps:g}, mean error {frames[-1]['error'].mean():.3g}")
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------- summary


def bootstrap_mean_interval(values: np.ndarray, level: float, resamples: int, rng: np.random.Generator) -> tuple:
    """Percentile bootstrap interval of the mean of ``values`` at coverage ``level`` (``resamples`` resamples
    with replacement, as their App. B.2: 99 %, 1000 resamples)."""
    values = np.asarray(values, dtype=float)
    means = values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
    alpha = (1 - level) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def summarise(runs: pd.DataFrame, bootstrap: dict[str, Any]) -> pd.DataFrame:
    """Table ``errors``: one row per (method, ε) with the mean error and its bootstrap interval, σ, the ε the
    σ achieves, and the mean sensitivity (columns in docs/ppm.md)."""
    methods = available_methods(task=PRIVATE_SUBSPACE)
    rows = []
    for (name, eps), group in runs.groupby(["method", "eps"], sort=False):
        rng = np.random.default_rng(run_seed(bootstrap["seed"], ("ppm", "bootstrap", name, float(eps)), 0))
        lo, hi = bootstrap_mean_interval(group["error"].to_numpy(), bootstrap["level"], bootstrap["resamples"], rng)
        first = group.iloc[0]
        rows.append(
            {
                "method": name,
                "label": methods[name].label if name in methods else name,
                "eps": float(eps),
                "runs": int(len(group)),
                "error_mean": float(group["error"].mean()),
                "error_lo": lo,
                "error_hi": hi,
                "sigma": float(first["sigma"]),
                "eps_zcdp": float(first["eps_zcdp"]),
                "eps_exact": float(first["eps_exact"]),
                "meets_target": bool(first["meets_target"]),
                "sensitivity_mean": float(group["sensitivity_mean"].mean()),
            }
        )
    return pd.DataFrame(rows)


def eps_at_error(eps: np.ndarray, error: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """ε at which a mean-error curve reaches each error level, interpolating log ε linearly in log error along
    the curve's running minimum over increasing ε (NaN outside the curve's range)."""
    order = np.argsort(eps)
    log_eps, envelope = np.log(np.asarray(eps, float)[order]), np.minimum.accumulate(np.asarray(error, float)[order])
    keep = np.concatenate([[True], np.diff(envelope) < 0])  # strictly decreasing part
    x, y = np.log(envelope[keep])[::-1], log_eps[keep][::-1]
    out = np.interp(np.log(levels), x, y, left=np.nan, right=np.nan)
    return np.exp(out)


def eps_ratio_table(summary: pd.DataFrame, reference: str, points: int = 25) -> pd.DataFrame:
    """Table ``eps_ratio``: for every method, the ε the reference method needs at the same mean error divided by
    the ε the method needs, at ``points`` error levels log-spaced over the range where both curves are driven
    by the noise: below 0.9 × the smaller of their largest mean errors (the saturated top) and above twice the
    larger of their smallest ones (the noise-free floor of L iterations, which every method reaches)."""
    ref = summary[summary["method"] == reference]
    rows = []
    for name, curve in summary.groupby("method", sort=False):
        if name == reference:
            continue
        top = min(curve["error_mean"].max(), ref["error_mean"].max()) * 0.9
        bottom = max(curve["error_mean"].min(), ref["error_mean"].min()) * 2
        if not bottom < top:
            continue
        levels = np.geomspace(top, bottom, points)
        eps_m = eps_at_error(curve["eps"].to_numpy(), curve["error_mean"].to_numpy(), levels)
        eps_r = eps_at_error(ref["eps"].to_numpy(), ref["error_mean"].to_numpy(), levels)
        for level, a, b in zip(levels, eps_m, eps_r, strict=True):
            if np.isfinite(a) and np.isfinite(b):
                rows.append(
                    {
                        "method": name,
                        "reference": reference,
                        "error_level": level,
                        "eps_method": a,
                        "eps_reference": b,
                        "eps_ratio": b / a,
                    }  # fmt: skip
                )
    return pd.DataFrame(
        rows, columns=["method", "reference", "error_level", "eps_method", "eps_reference", "eps_ratio"]
    )


def sensitivity_ratio_table(cfg: dict[str, Any]) -> pd.DataFrame:
    """Table ``sensitivity_ratio`` (their Fig. 2): per (n, k), the mean of both first-step bounds over ``runs``
    draws, their ratio (empirical r(k, n)), the range of the per-draw ratios and Approximation 6.2."""
    k = np.arange(cfg["k_min"], cfg["k_max"] + 1, cfg["k_step"])
    frames = []
    for n in cfg["sizes"]:
        rng = np.random.default_rng(run_seed(cfg["seed"], ("ppm", "sensitivity_ratio", int(n)), 0))
        prior, theirs = first_step_sensitivities(int(n), k, cfg["runs"], rng)
        per_run = prior / theirs
        frames.append(
            pd.DataFrame(
                {
                    "n": np.int64(n),
                    "k": k.astype(np.int64),
                    "runs": np.int64(cfg["runs"]),
                    "prior_mean": prior.mean(axis=0),
                    "theirs_mean": theirs.mean(axis=0),
                    "ratio_empirical": prior.mean(axis=0) / theirs.mean(axis=0),
                    "ratio_run_min": per_run.min(axis=0),
                    "ratio_run_max": per_run.max(axis=0),
                    "ratio_approximation": ratio_approximation(k, int(n)),
                }
            )
        )
        LOGGER.info("sensitivity ratio: n = %d done (%d values of k, %d draws)", n, k.size, cfg["runs"])
    return pd.concat(frames, ignore_index=True)


# -------------------------------------------------------------------------------------------- findings


def settings_title(section: dict[str, Any], data: dict[str, Any], sep: str = "; ") -> str:
    """The data and the settings of a run of the experiment, joined by ``sep`` (figure titles, findings)."""
    return (
        f"{data['label'].capitalize()}: {data['users']:,} users × {data['items']:,} items, {data['interactions']:,} "
        f"interactions{sep}p = {section['block_size']}, k = {section['rank']}, L = {section['iterations']}, "
        f"δ = {section['delta']:g}, {section['seeds']} runs per ε, σ calibration: {section['sigma_calibration']}"
    )


def findings(summary: pd.DataFrame, ratios: pd.DataFrame, title: str, claims: dict[str, str]) -> list[str]:
    """The claims of their §6.1 checked on this run's tables, as a title line and sentences with numbers (the
    experiment's section of the report's landing page). ``claims`` (config ``ppm.claims``) names the methods
    each claim compares: their centralised and decentralised methods and Balcan et al.'s centralised one; the
    local-DP methods are the run's methods whose trust model is ``local``."""
    ours, ours_dec, balcan = claims["centralised"], claims["decentralised"], claims["prior"]
    curve = {m: g.set_index("eps").sort_index() for m, g in summary.groupby("method")}
    registry = available_methods(task=PRIVATE_SUBSPACE)
    local = [m for m, method in registry.items() if m in curve and method.trust_model == "local"]
    lines = [
        "Private randomized power methods (Nicolas et al., arXiv:2411.01931): Fig. 1 and Fig. 2",
        f"Setting: {title}.",
    ]
    fmt = "{:.3g}".format
    if ours in curve and ours_dec in curve:
        a, b = curve[ours], curve[ours_dec]
        overlap = (a["error_lo"] <= b["error_hi"]) & (b["error_lo"] <= a["error_hi"])
        ratio = np.exp(np.abs(np.log(a["error_mean"] / b["error_mean"]))).max()
        lines.append(
            f"Nicolas et al. centralised ≈ decentralised: their bootstrap intervals overlap at {int(overlap.sum())} of "
            f"{len(a)} ε values; their mean errors differ by at most a factor {fmt(ratio)}."
        )
    if ours in curve and balcan in curve:
        a, b = curve[ours], curve[balcan]
        better = a["error_mean"] < b["error_mean"]
        worst = (b["error_mean"] / a["error_mean"]).idxmax()
        lines.append(
            f"Nicolas et al. < Balcan et al. centralised: smaller mean error at {int(better.sum())} of {len(a)} ε "
            f"values; the largest gap is at ε = {fmt(worst)} "
            f"({fmt(a['error_mean'][worst])} against {fmt(b['error_mean'][worst])})."
        )
    if balcan in curve and local:
        b = curve[balcan]["error_mean"]
        far = np.logical_and.reduce([curve[m]["error_mean"] >= 2 * b for m in local])
        lines.append(
            f"Balcan et al. centralised ≪ the local-DP methods ({', '.join(local)}): their mean error is at least "
            f"twice as large at {int(far.sum())} of {len(b)} ε values; at the largest ε ({fmt(b.index.max())}) "
            + ", ".join(f"{m} {fmt(curve[m]['error_mean'].iloc[-1])}" for m in local)
            + f" against {fmt(b.iloc[-1])}."
        )
    for name in (ours, ours_dec):
        r = ratios[ratios["method"] == name]["eps_ratio"] if len(ratios) else pd.Series(dtype=float)
        if len(r):
            levels = ratios[ratios["method"] == name]["error_level"]
            lines.append(
                f"At equal mean error ({fmt(levels.min())} to {fmt(levels.max())}, {len(r)} levels, log-ε "
                f"interpolation) {ratios['reference'].iloc[0]} needs {fmt(r.median())}× the ε of {name} (median; "
                f"range {fmt(r.min())}–{fmt(r.max())}); the paper reports about 4×."
            )
    over = summary[~summary["meets_target"].astype(bool)]
    if len(over):
        top = summary.loc[summary["eps"].idxmax()]
        lines.append(
            f"The σ used does not give the target ε (exact accounting) from ε = {fmt(over['eps'].min())} on: at the "
            f"target {fmt(top['eps'])} it gives ε = {fmt(top['eps_exact'])} (zCDP bound {fmt(top['eps_zcdp'])})."
        )
    else:
        lines.append("Every σ gives its target ε (exact accounting).")
    return lines


@register_experiment
class PrivatePowerMethodExperiment(Experiment):
    """Nicolas et al.'s Fig. 1 (error against ε, every method) and Fig. 2 (first-step sensitivity ratio)."""

    name = "ppm"
    title = "Nicolas et al.: private power methods"
    targets_relative = tuple(f"ppm/figures/{fig}.{ext}" for fig in ("fig1", "fig2") for ext in ("png", "pdf")) + tuple(
        f"ppm/tables/{table}.csv" for table in ("errors", "eps_ratio", "sensitivity_ratio")
    )
    findings_relative = "ppm/tables/findings.txt"
    provenance_relative = (
        "ppm/data/reference.parquet",
        *(f"ppm/tables/{table}.parquet" for table in ("errors", "eps_ratio", "sensitivity_ratio")),
    )

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        check_config(section, config)

    def methods_used(self, config: dict[str, Any]) -> list[str]:
        """Every method of the task ``private_subspace`` (the runs, and the figures' styles of all of them)."""
        return list(available_methods(task=PRIVATE_SUBSPACE))
