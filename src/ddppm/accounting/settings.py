"""The engine's settings from a method's validated options: the threat model, the accountant's settings and the
search space. Every function takes plain dictionaries, so it is usable without Snakemake."""

from __future__ import annotations

from typing import Any

from ddppm.accounting.accountant import AccountantSettings
from ddppm.accounting.calibration import CalibrationGrid
from ddppm.accounting.floor import FloorSettings
from ddppm.accounting.schema import engine_default
from ddppm.privacy.threat_models import resolve


def threat_model(name: str, definitions: dict[str, dict[str, str]] | None = None) -> dict[str, str]:
    """``{view, accounting, adjacency}`` of the threat model ``name`` (:func:`ddppm.privacy.threat_models.resolve`)."""
    return resolve(name, definitions, key="methods.ddppm.threat_models").as_dict()


def accountant_settings(privacy: dict[str, Any], model: dict[str, str]) -> AccountantSettings:
    """The accountant's settings from a method's ``privacy`` section and a threat model."""
    observers = privacy.get("observers")
    return AccountantSettings(
        view=model["view"],
        accounting=model["accounting"],
        adjacency=model["adjacency"],
        rank_mode=privacy["rank_mode"],
        rank_rtol=float(privacy["rank_rtol"]),
        candidate_rows=int(privacy["candidate_rows"]),
        candidate_kinds=tuple(privacy["candidate_kinds"]),
        observers=tuple(observers) if observers else None,
        search_floor_seeds=int(privacy.get("search_floor_seeds", engine_default("privacy", "search_floor_seeds"))),
        floor=FloorSettings(**privacy.get("floor", {})),
        realisations=int(privacy["realisations"]),
        seed=int(privacy["seed"]),
        **{
            k: int(privacy[k])
            for k in ("search_rows", "search_directions", "search_rounds", "search_keep", "search_width")
        },
    )


def calibration_grid(calibration: dict[str, Any]) -> CalibrationGrid:
    """The search space from a method's ``calibration`` section (``seed`` and ``chunks`` are not part of it)."""
    fields = {k: v for k, v in calibration.items() if k not in ("seed", "chunks")}
    for key in ("kappas", "schedules", "ratios", "t_offsets", "alpha_factors", "sigma_q_factors"):
        if key in fields:
            fields[key] = tuple(fields[key])
    return CalibrationGrid(**fields)
