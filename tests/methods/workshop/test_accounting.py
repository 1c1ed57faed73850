"""The accounting engine on the workshop releases (ddppm.methods.workshop.accounting) against a direct Gaussian δ."""

import numpy as np

from tests.methods.workshop.helpers import workshop_setup


def test_accountant_on_workshop_releases_equals_direct_gaussian_delta():
    """The shared accountant (exact, network view, one realisation of ω_i) on the workshop releases equals the
    exact δ of the two Gaussians built directly from the literal M and L for X and for X' (apply_neighbour)."""
    from ddppm.accounting.accountant import AccountantSettings
    from ddppm.accounting.iteration import NoiseSchedule
    from ddppm.accounting.neighbours import apply_neighbour, heuristic_neighbours
    from ddppm.methods.workshop.accounting import iterations_delta, workshop_own_randomness
    from ddppm.methods.workshop.algorithm import WorkshopParams
    from ddppm.methods.workshop.release import conditional_law_full
    from ddppm.privacy.tails import gaussian_tail_delta

    T = 2
    problem, alpha, sq, _, _, _, _ = workshop_setup(T)
    params = WorkshopParams(alpha, sq, NoiseSchedule("constant", 0.5 * sq, 1.0), T)
    neighbour = heuristic_neighbours(problem, 2, 1, ("zero",))[0]
    settings = AccountantSettings(view="network", accounting="exact", observers=(0,), realisations=1)
    eps = np.array([0.5, 2.0])
    got = iterations_delta(problem, params, eps, settings, "two_sided", neighbours=[neighbour]).delta
    omega = workshop_own_randomness(problem, params, 0, settings)[:, 0]
    adjacent = apply_neighbour(problem, neighbour)
    laws = [conditional_law_full(p, alpha, sq, params.sigmas, 0, "network") for p in (problem, adjacent)]
    expected = gaussian_tail_delta(laws[0].mean_map @ omega, laws[0].cov, laws[1].mean_map @ omega, laws[1].cov, eps)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12)


# ---------------------------------------------------------------- experiment: config, δ levels, claims
