"""A parameter schedule as table columns and back: a parameter table row records T, α, σ_q and the full list
σ_p(1..T), so anyone can recompute its δ with :func:`ddppm.accounting.accountant.evaluate_delta`."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule

PARAMETER_COLUMNS = ("alpha", "sigma_q", "schedule", "scale", "ratio", "T", "sigma_p")


def params_to_row(params: DDPPMParams) -> dict[str, Any]:
    """The table columns of ``params``; ``sigma_p`` is the JSON list σ_p(1..T)."""
    return {
        "alpha": params.alpha,
        "sigma_q": params.sigma_q,
        "schedule": params.schedule.kind,
        "scale": params.schedule.scale,
        "ratio": params.schedule.ratio,
        "T": int(params.T),
        "sigma_p": json.dumps([float(s) for s in params.sigmas]),
    }


def params_from_row(row: pd.Series | dict) -> DDPPMParams:
    """Rebuild the parameters recorded in a row of a calibration or parameter table."""
    return DDPPMParams(
        alpha=float(row["alpha"]),
        sigma_q=float(row["sigma_q"]),
        schedule=NoiseSchedule(str(row["schedule"]), float(row["scale"]), float(row["ratio"])),
        T=int(row["T"]),
    )
