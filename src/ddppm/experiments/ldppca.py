"""Experiment ``ldppca``: the synthetic experiments of Wang & Xu, "Principal Component Analysis in the local
differential privacy model" (Theoretical Computer Science 809, 2020, 296–312; IJCAI 2019): their Fig. 3
(Algorithm 1, dense subspace, p ≪ n) and Fig. 4 (Algorithm 2, row-sparse subspace, p = 400).

A figure is a grid of panels: one row per group (a subspace dimension k and, for Fig. 4, a sparsity s), one
column per *panel* of the config (``ldppca.<figure>.panels``), which varies one of n, p, ε with the other two
fixed. Entry points (each a workflow step): :func:`check_config`; :func:`panel_config` (what a panel's job
reads); :func:`run_panel` (its runs); :func:`summarise` (a figure's points with bands, chance levels and fitted
theory rates) and :func:`findings` (the results in sentences), both from :mod:`ddppm.methods.ldppca.summary`.

Common random numbers. Within a run, the subspace, the users' data and a standard noise matrix are drawn once
per (group, p) from a generator that depends only on what they are; every ε and σ calibration scales the same
noise (``S̃ = S + σ Ḡ``), so curves of different σ modes differ by the noise level alone. Along an n sweep the
samples are nested (the first n₁ users are among the first n₂) and so is the noise (sums of independent blocks).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.errors import ConfigError
from ddppm.core.io import config_hash
from ddppm.core.progress import Progress
from ddppm.core.schema import canonical
from ddppm.core.seeds import run_seed
from ddppm.experiments.base import Experiment, register_experiment
from ddppm.methods import available_methods, get_method
from ddppm.methods.ldppca import LOCAL_DP_PCA
from ddppm.methods.ldppca.mechanism import achieved_delta, assumed_sensitivity, release_sigma, symmetric_noise
from ddppm.methods.ldppca.metrics import chance_level, projector_distance
from ddppm.methods.ldppca.models import haar_subspace, iter_nested_scatters, sparse_subspace
from ddppm.methods.ldppca.summary import findings, summarise

__all__ = [
    "FIGURES",
    "PAPER_POINTS",
    "check_config",
    "figure_title",
    "findings",
    "panel_config",
    "run_panel",
    "section_params",
    "summarise",
]

FIGURES = ("fig3", "fig4")
PAPER_POINTS = {"fig3": (100000, 40, 0.5), "fig4": (2000, 400, 1.0)}
"""The (n, p, ε) of each figure in the paper (§6.1, §6.2); δ = 1e-4 in both."""
SHARED_KEYS = ("delta", "sigma_modes", "seed", "spike", "data")


def _groups(figure_cfg: dict[str, Any]) -> list[tuple[int, int | None]]:
    """(k, s) of every row of panels; s is None for a dense subspace."""
    sparsities = figure_cfg.get("sparsity") or [None]
    return [(int(k), None if s is None else int(s)) for k in figure_cfg["k"] for s in sparsities]


def panel_points(panel: dict[str, Any]) -> list[tuple[int, int, float]]:
    """The (n, p, ε) of every point of a panel, in the order of its values (n and p rounded)."""
    fixed = (int(panel["n"]), int(panel["p"]), float(panel["eps"]))
    index = {"n": 0, "p": 1, "eps": 2}[panel["vary"]]
    points = []
    for value in panel["values"]:
        point = list(fixed)
        point[index] = float(value) if index == 2 else int(round(value))
        points.append(tuple(point))
    return points


def check_config(section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    """Cross-key checks of the validated section ``ldppca`` (raises :class:`ConfigError` naming the key)."""
    for figure in FIGURES:
        cfg = section[figure]
        for k, s in _groups(cfg):
            if s is not None and s < k:
                raise ConfigError(f"ldppca.{figure}.sparsity: s = {s} is below k = {k}; every s must be >= k")
            for i, panel in enumerate(cfg["panels"]):
                key = f"ldppca.{figure}.panels[{i}]"
                values = [v for v in panel["values"]]
                if len(set(values)) != len(values):
                    raise ConfigError(f"{key}.values has repeated values {values}; give each once")
                for n, p, _ in panel_points(panel):
                    if p <= max(k, s or 0):
                        raise ConfigError(f"{key}: p = {p} must exceed k = {k} and s = {s}; use larger p values")
                    if n < 1:
                        raise ConfigError(f"{key}: n = {n} users; use n >= 1")
        for name in cfg["methods"]:
            if get_method(name).task != LOCAL_DP_PCA:
                raise ConfigError(f"ldppca.{figure}.methods: {name!r} is not a local_dp_pca method")


def panel_config(section: dict[str, Any], figure: str, panel: int) -> dict[str, Any]:
    """Exactly what the job of one panel reads (for Snakemake ``params``), with its ``config_hash``."""
    cfg = section[figure]
    if not (0 <= panel < len(cfg["panels"])):
        raise ConfigError(f"ldppca.{figure}.panels has no panel {panel}")
    out = {key: copy.deepcopy(section[key]) for key in SHARED_KEYS}
    out.update(figure=figure, panel_index=int(panel), panel=copy.deepcopy(cfg["panels"][panel]))
    out.update({key: copy.deepcopy(cfg[key]) for key in ("k", "sparsity", "runs", "methods")})
    out["method_options"] = {name: copy.deepcopy(section["methods"][name]) for name in cfg["methods"]}
    out = canonical(out)  # key-sorted: reordering keys in a YAML file is not a parameter change
    out["config_hash"] = config_hash(out)
    return out


def _server_views(
    rng: np.random.Generator, p: int, k: int, s: int | None, n_values: list[int], cfg: dict[str, Any]
) -> Iterator[tuple[np.ndarray, Any, np.ndarray]]:
    """One run: the true V, then per n the scatter draw and the averaged standard noise Ḡ (σ = 1)."""
    V = haar_subspace(rng, p, k) if s is None else sparse_subspace(rng, p, k, s)
    data = cfg["data"]
    noise_sum, previous = np.zeros((p, p)), 0
    draws = iter_nested_scatters(
        rng, V, float(cfg["spike"]), n_values, int(data["max_row_entries"]), data["norm_enforcement"]
    )
    for draw in draws:  # per block: the users' data, then the sum of their standard noise matrices
        noise_sum = noise_sum + np.sqrt(draw.n - previous) * symmetric_noise(rng, p)
        previous = draw.n
        yield V, draw, noise_sum / draw.n


def run_panel(cfg: dict[str, Any]) -> pd.DataFrame:
    """Every run of one panel (``cfg`` from :func:`panel_config`): one row per (group, point, σ mode, method, run).

    Columns are listed in docs/ldppca.md (``runs`` table).
    """
    panel, runs = cfg["panel"], int(cfg["runs"])
    points = panel_points(panel)
    methods = {name: get_method(name) for name in cfg["methods"]}
    # Draw units: an n sweep shares one nested draw per run; otherwise one draw per distinct (n, p).
    units: dict[tuple[int, list[int]], list[tuple[int, int, float]]] = {}
    for n, p, eps in points:
        key = (p, n) if panel["vary"] != "n" else (p, -1)
        units.setdefault(key, []).append((n, p, eps))
    groups = _groups(cfg)
    total = len(groups) * len(points) * len(cfg["sigma_modes"]) * len(methods)
    progress = Progress(f"ldppca {cfg['figure']} panel {cfg['panel_index']} ({panel['vary']})", total, "curve points")
    rows = []
    for k, s in groups:
        for (p, _), unit_points in units.items():
            n_values = sorted({n for n, _, _ in unit_points})
            labels = ("ldppca", cfg["figure"], panel["vary"], p, k, "dense" if s is None else s, tuple(n_values))
            seeds = [run_seed(int(cfg["seed"]), labels, r) for r in range(runs)]
            streams = [_server_views(np.random.default_rng(seed), p, k, s, n_values, cfg) for seed in seeds]
            for views in zip(*streams, strict=True):
                V = np.stack([v[0] for v in views])
                draws = [v[1] for v in views]
                n = draws[0].n
                S = np.stack([d.scatter / n for d in draws])
                G = np.stack([v[2] for v in views])
                for _, _, eps in (pt for pt in unit_points if pt[0] == n):
                    for mode in cfg["sigma_modes"]:
                        sigma = release_sigma(eps, float(cfg["delta"]), mode)
                        S_tilde = S + sigma * G
                        delta_achieved = achieved_delta(sigma, eps)
                        for name, method in methods.items():
                            bases, facts = method.estimate(S_tilde, k, n, sigma, cfg["method_options"][name])
                            errors = projector_distance(bases, V)
                            for r in range(runs):
                                row = {
                                    "figure": cfg["figure"],
                                    "panel": int(cfg["panel_index"]),
                                    "varied": panel["vary"],
                                    "k": k,
                                    "sparsity": s,
                                    "n": n,
                                    "p": p,
                                    "eps": eps,
                                    "delta": float(cfg["delta"]),
                                    "sigma_mode": mode,
                                    "sensitivity_assumed": assumed_sensitivity(mode),
                                    "sigma": sigma,
                                    "delta_achieved": delta_achieved,
                                    "method": name,
                                    "run": r,
                                    "seed": seeds[r],
                                    "error": float(errors[r]),
                                    "chance": float(chance_level(k, p)),
                                    "rows_drawn": draws[r].rows_drawn,
                                    "rows_outside_ball": draws[r].rows_outside_ball,
                                    "clip_probability_bound": draws[r].clip_probability_bound,
                                }
                                row.update({key: values[r].item() for key, values in facts.items()})
                                rows.append(row)
                            progress.step()
    return _typed_runs(pd.DataFrame(rows))


_NULLABLE = {"sparsity": "Int64", "admm_iterations": "Int64", "block_size": "Int64", "converged": "boolean"}
_NULLABLE |= {"closed_form": "boolean"}


def _typed_runs(table: pd.DataFrame) -> pd.DataFrame:
    """Integers as integers (nullable where a method has no value), flags as booleans, every column present."""
    for column in ("penalty",):
        if column not in table:
            table[column] = np.nan
    for column, dtype in _NULLABLE.items():
        table[column] = (table[column] if column in table else pd.Series(pd.NA, index=table.index)).astype(dtype)
    for column in ("n", "p", "k", "run", "seed", "rows_drawn", "rows_outside_ball", "panel"):
        table[column] = table[column].astype("int64")
    table["feasible"] = table["delta_achieved"] <= table["delta"] * (1 + 1e-9)
    table["x"] = np.select(
        [table["varied"] == "n", table["varied"] == "p"], [table["n"], table["p"]], table["eps"]
    ).astype(float)
    return table


def figure_title(figure: str, cfg: dict[str, Any]) -> str:
    """Title of a figure: what it reproduces and its fixed settings (``cfg`` holds ``delta``, ``sigma_modes``
    and the figure's section)."""
    section = cfg[figure]
    what = {
        "fig3": "Wang & Xu Fig. 3: Algorithm 1, dense subspace, Σ = (λVVᵀ + I)/(5p(λ+1))",
        "fig4": "Wang & Xu Fig. 4: sparse subspace, Algorithm 2 (ℓ1-penalised Fantope ADMM) and Algorithm 1",
    }.get(figure, figure)
    return (
        f"{what}; δ = {cfg['delta']:g}, {section['runs']} runs per point, "
        f"σ calibrations: {', '.join(cfg['sigma_modes'])}"
    )


def section_params(section: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """Exactly the top-level keys ``keys`` of the section ``ldppca`` a job reads, key-sorted, with their hash
    (Snakemake ``params``; the hash is the ``config_hash`` the job's outputs carry)."""
    chosen = canonical({key: copy.deepcopy(section[key]) for key in keys})
    chosen["config_hash"] = config_hash(chosen)
    return chosen


@register_experiment
class LocalDPPCAExperiment(Experiment):
    """Wang & Xu's Fig. 3 (Algorithm 1, dense subspace) and Fig. 4 (Algorithm 2, sparse subspace)."""

    name = "ldppca"
    title = "Local-DP PCA (Wang & Xu)"
    targets_relative = tuple(f"figures/ldppca_{fig}.{ext}" for fig in FIGURES for ext in ("png", "pdf")) + (
        "ldppca/summary.csv",
        "ldppca/findings.txt",
    )
    findings_relative = "ldppca/findings.txt"
    provenance_relative = (*(f"ldppca/{fig}/summary.parquet" for fig in FIGURES), "ldppca/summary.parquet")

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        check_config(section, config)

    def methods_used(self, config: dict[str, Any]) -> list[str]:
        """Every method of the task ``local_dp_pca`` (the panels run and draw only those)."""

        return list(available_methods(task=LOCAL_DP_PCA))
