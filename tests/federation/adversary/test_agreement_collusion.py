"""Parties colluding with the coordinator (the agreement's ``colluding`` bound c): where only a sum is seen, every
party adds its share of the noise for p − c parties, so the honest parties' shares alone have the noise's law
(docs/federation.md, "Threat model")."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.core.errors import ConfigError
from ddppm.federation.agreement import Agreement
from ddppm.federation.coordinator import InProcess, coordinate
from ddppm.federation.party import Party
from ddppm.federation.public import PublicRelease
from tests.federation.conftest import BOUNDS, SIZES, split


def _drawn_stds(wine, agreement: Agreement) -> tuple[list[dict[str, list[float]]], object]:
    """Every party's standard deviations drawn per stream (OpenDP's sampler logs each release) in one secure run."""
    parties = [Party(rows, j, agreement) for j, rows in enumerate(split(wine))]
    release = coordinate(InProcess(parties, secure=agreement.trust == "secure_aggregation"), agreement, 13)
    logs = [{name: sorted({round(std, 12) for std, _ in stream.log}) for name, stream in party._streams.items()}
            for party in parties]  # fmt: skip
    return logs, release


@pytest.mark.parametrize("colluding", [0, 1, 2])
def test_under_secure_aggregation_each_share_is_for_the_parties_that_do_not_collude(wine, colluding):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "cape", trust="secure_aggregation", colluding=colluding)
    public = PublicRelease(agreement, 13)
    logs, release = _drawn_stds(wine, agreement)
    sharers = 3 - colluding
    sigma_z = float(public.calibration[0].params["sigma"])
    pre = {public.noise.sigma_range, public.noise.sigma_sum, public.noise.sigma_squares, public.noise.sigma_radius}
    expected_pre = sorted({round(float(s) / np.sqrt(sharers), 12) for s in pre if np.isfinite(s)})
    for log in logs:
        assert log["method"] == [round(sigma_z / np.sqrt(sharers), 12)]
        assert set(log["preprocessing"]) <= set(expected_pre) and log["preprocessing"]
    # the honest parties' shares alone add up to the one-process noise: (p − c)·(σ/√(p − c))² = σ²
    assert np.isclose(sharers * (sigma_z / np.sqrt(sharers)) ** 2, sigma_z**2)
    observer = release.certificate.to_dict()["observer"]
    assert (f"up to {colluding} part" in observer) == (colluding > 0)


def test_at_trust_local_every_party_adds_the_whole_noise_whoever_colludes(wine):
    """Every release is public there: colluders cannot take an honest party's noise away, so nothing changes."""
    plain = _drawn_stds(wine, Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional"))[0]
    colluded = _drawn_stds(wine, Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", colluding=2))[0]
    assert plain == colluded


@pytest.mark.parametrize("colluding", [3, -1, True, 1.5, "1"])
def test_a_collusion_bound_that_leaves_no_honest_party_is_refused(colluding):
    with pytest.raises(ConfigError, match="colluding .* must be a whole number from 0 to 2"):
        Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "cape", trust="secure_aggregation", colluding=colluding)
