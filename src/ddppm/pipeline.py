"""Pipeline steps: configuration in, tables out. The Snakemake scripts are thin wrappers around these.

Every function is usable without Snakemake: it takes plain dictionaries (the validated config) and
DataFrames, and returns DataFrames plus the metadata stored beside them in Parquet.
"""

from __future__ import annotations

import copy
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ddppm.accountant import AccountantSettings, evaluate_delta
from ddppm.algorithms import (
    DDPPMParams,
    ddppm_errors,
    dpm_error_curve,
    draw_standard_normals,
)
from ddppm.calibration import Calibration, CalibrationGrid, params_from_row
from ddppm.data import LABELS, check_unit_ball, load_dataset, normalize
from ddppm.errors import ConfigError
from ddppm.io import config_hash, read_parquet
from ddppm.ldp import ldp_errors, ldp_sigma
from ddppm.network import mixing_matrix, second_eigenvalue, validate_mixing_matrix
from ddppm.partition import partition_rows, parts_from_assignment
from ddppm.problem import DistributedProblem
from ddppm.seeds import run_generators, run_seed

SECTIONS = ("network", "partition", "privacy", "calibration", "montecarlo")
METHODS = ("ddppm", "ldp", "ldp_analytic", "dpm")


def eps_label(eps: float) -> str:
    """How ε appears in file names (``eps~5``, ``eps~0.5``)."""
    return f"{float(eps):g}"


def _merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _canonical(value):
    """Key-sorted copy, so that reordering keys in a YAML file is not a parameter change."""
    if isinstance(value, dict):
        return {k: _canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def dataset_config(config: dict, dataset: str, sections: tuple[str, ...] | None = None) -> dict:
    """The configuration one dataset's jobs depend on: global sections with its overrides merged in.

    ``sections`` restricts it to what one rule reads (e.g. ``("partition", "network")``). Rules pass this as
    ``params``, so editing one dataset's entry, or a section a rule does not read, reruns nothing else.
    """
    options = dict(config.get("dataset_options", {}).get(dataset, {}))
    merged = {section: _merge(config.get(section, {}), options.pop(section, {})) for section in SECTIONS}
    merged["dataset"] = options
    merged["epsilons"] = [float(e) for e in config["epsilons"]]
    merged["delta_limits"] = [float(d) for d in config["delta_limits"][dataset]]
    merged["delta_curve"] = dict(config.get("delta_curve", {}))
    if sections is not None:
        merged = {k: merged[k] for k in sections}
    merged = _canonical(merged)
    merged["config_hash"] = config_hash(merged)
    return merged


def check_config(config: dict) -> None:
    """Cross-key checks the JSON schema cannot express. Raises :class:`ConfigError` naming the key."""
    n_eps = len(config["epsilons"])
    for ds in config["datasets"]:
        limits = config.get("delta_limits", {}).get(ds)
        if limits is None:
            raise ConfigError(f"delta_limits.{ds} is missing: give {n_eps} δ limits in (0, 1), one per ε")
        if len(limits) != n_eps:
            raise ConfigError(f"delta_limits.{ds} has {len(limits)} values but epsilons has {n_eps}; give one per ε")
    unknown = (
        set(config.get("dataset_options", {}))
        - set(config["datasets"])
        - {"diabetes", "breast_cancer", "wine", "ami_synthetic", "sbm_graph_signal"}
    )
    if unknown:
        raise ConfigError(f"dataset_options has unknown datasets {sorted(unknown)}")
    for ds in config["datasets"]:
        m = dataset_config(config, ds)["partition"].get("m", 4)
        topo = dataset_config(config, ds)["network"].get("topology", "paper_ring")
        if topo == "paper_ring" and m != 4:
            raise ConfigError(f"network.topology=paper_ring needs partition.m=4 (got {m}) for {ds}; use topology: ring")


def setup_logging(log_path: str | Path | None) -> logging.Logger:
    """Send this step's log (and uncaught tracebacks) to the rule's ``log:`` file."""
    logger = logging.getLogger("ddppm")
    logger.setLevel(logging.INFO)
    logger.handlers.clear()
    handler: logging.Handler = logging.FileHandler(log_path, mode="w") if log_path else logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    if log_path:
        sys.stderr = open(log_path, "a")  # noqa: SIM115 - tracebacks of a failing job land in its log
    return logger


# --- data, partition, network ------------------------------------------------------------------------------


def prepare_dataset(name: str, options: dict) -> tuple[pd.DataFrame, dict]:
    """Load ``name`` and normalise it so every row is in the unit ball (spec §2)."""
    options = dict(options)
    source = options.pop("source", "default")
    method = options.pop("normalization", "standardize")
    loader_args = {k: options.pop(k) for k in ("url", "sha256", "seed") if k in options}
    dataset = load_dataset(name, source=source, **loader_args, **options)
    X, info = normalize(dataset.matrix, method)
    check_unit_ball(X, key=f"datasets.{name}")
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame.insert(0, "row_id", np.arange(X.shape[0]))
    return frame, {"dataset": dataset.meta, "normalization": info}


def matrix_of(frame: pd.DataFrame) -> np.ndarray:
    return frame[[c for c in frame.columns if c.startswith("x")]].to_numpy(dtype=float)


def partition_and_network(n: int, partition_cfg: dict, network_cfg: dict) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Row → agent table and the mixing matrix with its checks (Assumption 2) and ``λ₂``."""
    m = int(partition_cfg.get("m", 4))
    parts = partition_rows(
        n,
        m,
        seed=partition_cfg.get("seed", 0),
        shuffle=partition_cfg.get("shuffle", True),
        sizes=partition_cfg.get("sizes"),
    )
    agent = np.empty(n, dtype=int)
    for i, rows in enumerate(parts):
        agent[rows] = i
    part_df = pd.DataFrame({"row_id": np.arange(n), "agent": agent})
    W = mixing_matrix(
        network_cfg.get("topology", "paper_ring"),
        m,
        seed=network_cfg.get("seed"),
        edge_prob=network_cfg.get("edge_prob"),
    )
    validate_mixing_matrix(W, key="network")
    lam2 = second_eigenvalue(W)
    net_df = pd.DataFrame(W, columns=[f"w{j}" for j in range(m)])
    net_df.insert(0, "agent", np.arange(m))
    meta = {
        "c": int(network_cfg.get("c", 20)),
        "topology": network_cfg.get("topology", "paper_ring"),
        "lambda2": lam2,
        "m": m,
        "sizes": [len(p) for p in parts],
    }
    return part_df, net_df, meta


def load_problem(data_path: str | Path, partition_path: str | Path, network_path: str | Path) -> DistributedProblem:
    """Rebuild the :class:`DistributedProblem` from the pipeline's Parquet files."""
    data, _ = read_parquet(data_path)
    part, _ = read_parquet(partition_path)
    net, net_meta = read_parquet(network_path)
    W = net[[c for c in net.columns if c.startswith("w")]].to_numpy(dtype=float)
    validate_mixing_matrix(W, key="network")
    X = matrix_of(data.sort_values("row_id"))
    assign = part.sort_values("row_id")["agent"].to_numpy()
    return DistributedProblem.from_partition(X, parts_from_assignment(assign, W.shape[0]), W, int(net_meta["c"]))


# --- privacy settings and calibration ----------------------------------------------------------------------


def accountant_settings(privacy_cfg: dict) -> AccountantSettings:
    observers = privacy_cfg.get("observers")
    return AccountantSettings(
        view=privacy_cfg.get("view", "network"),
        rank_mode=privacy_cfg.get("rank_mode", "support"),
        rank_rtol=float(privacy_cfg.get("rank_rtol", 1e-22)),
        candidate_rows=int(privacy_cfg.get("candidate_rows", 1)),
        candidate_kinds=tuple(privacy_cfg.get("candidate_kinds", ("zero", "plus", "minus"))),
        observers=tuple(observers) if observers else None,
        realisations=int(privacy_cfg.get("realisations", 8)),
        seed=int(privacy_cfg.get("seed", 2)),
    )


def calibration_grid(cal_cfg: dict) -> CalibrationGrid:
    fields = {k: v for k, v in cal_cfg.items() if k not in ("seed", "chunks")}
    for key in ("kappas", "schedules", "ratios", "t_offsets", "alpha_factors", "sigma_q_factors"):
        if key in fields:
            fields[key] = tuple(fields[key])
    return CalibrationGrid(**fields)


def _calibration(problem: DistributedProblem, cfg: dict) -> Calibration:
    return Calibration(
        problem,
        np.array(cfg["epsilons"]),
        np.array(cfg["delta_limits"]),
        calibration_grid(cfg["calibration"]),
        accountant_settings(cfg["privacy"]),
        seed=int(cfg["calibration"].get("seed", 3)),
    )


def run_calibration_chunk(problem: DistributedProblem, cfg: dict, chunk: int) -> pd.DataFrame:
    """Coarse-grid slice ``chunk`` of ``calibration.chunks`` (one cluster job each)."""
    return _calibration(problem, cfg).coarse_rows(chunk, int(cfg["calibration"].get("chunks", 1)))


def run_calibration(
    problem: DistributedProblem, cfg: dict, coarse: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Spec §7 for one dataset: the chosen table (one row per ε), every candidate, and metadata.

    ``coarse`` is the gathered output of :func:`run_calibration_chunk`; without it the coarse grid is
    assessed here. Either way the result is the same.
    """
    run = _calibration(problem, cfg)
    result = run.finish(run.coarse_rows() if coarse is None else coarse)
    meta = {
        "t_star": result.t_star,
        "t_star_reached": result.t_star_reached,
        "mu1": result.mu1,
        "mu2": result.mu2,
        "screen_pairs": [list(p) for p in result.screen],
        "privacy": cfg["privacy"],
        "calibration": cfg["calibration"],
        "config_hash": cfg["config_hash"],
    }
    return result.chosen, result.candidates, meta


def chosen_row(calibration: pd.DataFrame, eps: float) -> pd.Series:
    rows = calibration[np.isclose(calibration["eps"], eps)]
    if rows.empty:
        raise ConfigError(f"ε={eps:g} is not in the calibration table; add it to `epsilons`")
    return rows.iloc[0]


# --- Monte Carlo -----------------------------------------------------------------------------------------


def chunk_indices(runs: int, chunks: int, k: int) -> np.ndarray:
    """Run indices of chunk ``k`` of ``chunks`` (near-equal, contiguous)."""
    if not 0 <= k < chunks:
        raise ConfigError(f"chunk {k} out of range for montecarlo.chunks={chunks}")
    return np.array_split(np.arange(runs), chunks)[k]


RUN_BLOCK = 32


def blocked_errors(run_indices: np.ndarray, compute) -> np.ndarray:
    """Evaluate ``compute(block_runs) -> errors`` on fixed, run-index-aligned blocks of ``RUN_BLOCK`` runs.

    A vectorised run's round-off depends on which other columns share its matrix product. Computing every
    run inside the same aligned block, whatever chunk asked for it, makes sharded and unsharded results
    bit-identical; runs outside the request are computed and discarded (at most one block per edge).
    """
    results: dict[int, float] = {}
    for block in np.unique(np.asarray(run_indices, dtype=int) // RUN_BLOCK):
        runs = np.arange(block * RUN_BLOCK, (block + 1) * RUN_BLOCK)
        results.update(zip(runs.tolist(), compute(runs), strict=True))
    return np.array([results[int(r)] for r in run_indices], dtype=float)


def montecarlo_runs(
    problem: DistributedProblem,
    method: str,
    eps: float,
    delta: float,
    calibration: pd.DataFrame,
    t_star: int,
    run_indices: np.ndarray,
    seed: int,
    dataset: str,
) -> pd.DataFrame:
    """Per-run errors of ``method`` at (ε, δ). Seeds derive from (dataset, method, ε, run index) only."""
    if method not in METHODS:
        raise ConfigError(f"montecarlo.methods: unknown method {method!r}; use {METHODS}")
    labels = (dataset, method, float(eps))
    row = chosen_row(calibration, eps)
    feasible, T = True, np.nan
    if method == "ddppm":
        feasible = bool(row["met"])
        if feasible:
            params = params_from_row(row)
            T = params.T

            def compute(runs):
                z0, zp = draw_standard_normals(problem.n, params.T, run_generators(seed, labels, runs))
                return ddppm_errors(problem, params, z0, zp)
    elif method == "dpm":
        T = int(row["T"]) if bool(row["met"]) else int(t_star)

        def compute(runs):
            z0 = draw_standard_normals(problem.n, 0, run_generators(seed, labels, runs))[0]
            return dpm_error_curve(problem, T, z0)[-1]
    else:
        sigma = ldp_sigma(method, eps, delta)

        def compute(runs):
            return ldp_errors(problem.X, sigma, run_generators(seed, labels, runs), problem.top_eigenvector)

    errors = blocked_errors(run_indices, compute) if feasible else np.full(len(run_indices), np.nan)
    return pd.DataFrame(
        {
            "dataset": dataset,
            "method": method,
            "eps": float(eps),
            "delta": float(delta),
            "feasible": feasible,
            "T": T,
            "run": np.asarray(run_indices, dtype=int),
            "seed": [run_seed(seed, labels, int(r)) for r in run_indices],
            "error": errors,
        }
    )


def summarize_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method, ε): mean error, the 2.5–97.5% band of runs and the 95% CI of the mean."""

    def stats(g: pd.DataFrame) -> pd.Series:
        e = g["error"].dropna().to_numpy()
        n = e.size
        mean = e.mean() if n else np.nan
        se = e.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
        lo, hi = np.quantile(e, [0.025, 0.975]) if n else (np.nan, np.nan)
        return pd.Series(
            {
                "n_runs": n,
                "error_mean": mean,
                "error_lo": lo,
                "error_hi": hi,
                "ci_lo": mean - 1.96 * se,
                "ci_hi": mean + 1.96 * se,
                "delta": g["delta"].iloc[0],
                "feasible": bool(g["feasible"].iloc[0]),
            }
        )

    return runs.groupby(["dataset", "method", "eps"], sort=True).apply(stats, include_groups=False).reset_index()


# --- Fig. 3: δ and error against T -------------------------------------------------------------------------


def delta_curve(
    problem: DistributedProblem, calibration: pd.DataFrame, candidates: pd.DataFrame, cfg: dict, dataset: str
) -> tuple[pd.DataFrame, dict]:
    """δ(ε) and the error for T = 1..T_max with the other calibrated parameters fixed (paper Fig. 3).

    If no candidate met the limit at this ε, the least-δ candidate is used and the table says so.
    """
    from ddppm.theory import theorem3_bound

    curve_cfg = cfg["delta_curve"]
    eps = float(curve_cfg.get("eps", 5))
    in_grid = np.isclose(np.array(cfg["epsilons"]), eps)
    limit = float(np.array(cfg["delta_limits"])[in_grid][0]) if in_grid.any() else np.nan
    if in_grid.any() and bool(chosen_row(calibration, eps)["met"]):
        base, source = params_from_row(chosen_row(calibration, eps)), "calibrated"
    else:
        at_eps = candidates[np.isclose(candidates["eps"], eps)] if in_grid.any() else candidates
        base, source = params_from_row(at_eps.nsmallest(1, "delta_screen").iloc[0]), "least-delta candidate"
    settings = accountant_settings(cfg["privacy"])
    runs = int(curve_cfg.get("runs", 100))
    rngs = run_generators(int(cfg["montecarlo"].get("seed", 1)), (dataset, "delta_curve"), range(runs))
    T_max = int(curve_cfg.get("T_max", 12))
    z0, zp = draw_standard_normals(problem.n, T_max, rngs)
    rows = []
    for T in range(1, T_max + 1):
        params = DDPPMParams(alpha=base.alpha, sigma_q=base.sigma_q, schedule=base.schedule, T=T)
        res = evaluate_delta(problem, params, np.array([eps]), settings)
        err = ddppm_errors(problem, params, z0, zp)
        bound = theorem3_bound(problem, params)
        rows.append(
            {
                "dataset": dataset,
                "label": LABELS.get(dataset, dataset),
                "eps": eps,
                "T": T,
                "delta": res.delta[0],
                "delta_se": res.delta_se[0],
                "delta_max": res.delta_max[0],
                "delta_upper": res.delta_upper[0],
                "delta_limit": limit,
                "error_mean": err.mean(),
                "error_lo": np.quantile(err, 0.025),
                "error_hi": np.quantile(err, 0.975),
                "bound_sin": bound["bound_sin"],
                "bound_det": float(np.sqrt(min(1.0, bound["consensus_term"] + bound["power_term"]))),
                "T_calibrated": base.T,
                "params_source": source,
            }
        )
    meta = {
        "params_source": source,
        "alpha": base.alpha,
        "sigma_q": base.sigma_q,
        "schedule": base.schedule.kind,
        "scale": base.schedule.scale,
        "ratio": base.schedule.ratio,
        "config_hash": cfg["config_hash"],
    }
    return pd.DataFrame(rows), meta


def summary_table(errors: pd.DataFrame, calibration: pd.DataFrame) -> pd.DataFrame:
    """``summary.csv``: per dataset and ε, errors of every method, and δ achieved against the δ limit."""
    wide = errors.pivot_table(index=["dataset", "eps"], columns="method", values="error_mean", dropna=False)
    wide.columns = [f"error_{m}" for m in wide.columns]
    cal_cols = [
        "dataset",
        "eps",
        "delta_limit",
        "met",
        "delta",
        "delta_se",
        "delta_upper",
        "delta_max",
        "T",
        "kappa",
        "schedule",
        "ratio_name",
        "reason",
    ]
    cal = calibration.reindex(columns=cal_cols)
    out = wide.reset_index().merge(cal, on=["dataset", "eps"], how="left")
    if "error_ddppm" in out and "error_ldp" in out:
        out["ldp_over_ddppm"] = out["error_ldp"] / out["error_ddppm"]
    return out.rename(columns={"delta": "delta_achieved", "delta_upper": "delta_theorem2"})
