"""Exact privacy-loss tails of two Gaussians (``ddppm.privacy.exact``) against independent references.

In whitened coordinates (``Σ₁ = I``, ``Σ₂ = diag(1 + β)``, ``Δμ ↦ w``) the loss under P is
``ℒ = Σ_k a_k u_k² + b_k u_k + c_k`` with ``u ~ N(0, I)`` (helpers below); under Q, ``u = −w + √γ v``.
References: Gaussian closed forms (β = 0, Balle–Wang), χ² / non-central χ² laws, direct quadrature of
the normal density over ``{ℒ > ε}`` (K = 1) and a nested quadrature (K = 2), Monte Carlo, and an
independently coded Chernoff bound (an upper bound on each tail).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from ddppm.privacy.exact import ExactTails, exact_tails, loss_cgf

EPS = np.array([0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 100.0])


# ------------------------------------------------------------------------------------------------ helpers


def loss_coefficients(beta: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``a = ½(1/γ − 1)``, ``b = w/γ`` and ``Σ c = Σ ½w²/γ + ½ ln γ`` of ``ℒ = Σ a u² + b u + c``."""
    gamma = 1 + np.asarray(beta, float)
    return 0.5 * (1 / gamma - 1), w / gamma, float(np.sum(0.5 * w**2 / gamma + 0.5 * np.log(gamma)))


def gaussian_loss_tails_mc(
    beta: np.ndarray, w2col: np.ndarray, eps: np.ndarray, n: int, rng: np.random.Generator
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Monte-Carlo estimates and standard errors, per ε, of ``Pr_P(ℒ > ε)``, ``Pr_P(ℒ < −ε)``,
    ``H(ε) = E_P(1 − e^{ε−ℒ})₊`` and (sampling ``y ~ Q``) ``e^ε Pr_Q(ℒ > ε)``."""
    beta = np.asarray(beta, float)
    w = np.sqrt(np.asarray(w2col, float)) * rng.choice([-1.0, 1.0], beta.size)  # the law depends on w² only
    a, b, c = loss_coefficients(beta, w)
    u = rng.standard_normal((n, beta.size))
    loss_p = (u * u) @ a + u @ b + c
    v = rng.standard_normal((n, beta.size))
    uq = -w + np.sqrt(1 + beta) * v
    loss_q = (uq * uq) @ a + uq @ b + c
    out = {}
    for name, samples in (
        ("upper", loss_p[None, :] > eps[:, None]),
        ("lower", loss_p[None, :] < -eps[:, None]),
        ("hockey", np.maximum(0.0, -np.expm1(eps[:, None] - loss_p[None, :]))),
        ("q_upper", np.exp(eps)[:, None] * (loss_q[None, :] > eps[:, None])),
    ):
        samples = samples.astype(float)
        out[name] = (samples.mean(1), samples.std(1) / np.sqrt(n))
    return out


def cgf_real(s: np.ndarray | float, beta: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """K(s) coded from E e^{s(a u² + b u)} = (1 − 2sa)^{−1/2} exp(s²b²/(2(1 − 2sa))), u ~ N(0, 1); +inf outside."""
    a, b, c = loss_coefficients(beta, np.sqrt(w2))
    s = np.atleast_1d(np.asarray(s, float))[:, None]
    one = 1 - 2 * s * a
    with np.errstate(invalid="ignore", divide="ignore"):
        K = s[:, 0] * c + np.sum(-0.5 * np.log(one) + s * s * b * b / (2 * one), axis=1)
    return np.where(np.all(one > 0, axis=1), K, np.inf)


def chernoff(beta: np.ndarray, w2: np.ndarray, eps: float, sign: int) -> float:
    """``inf_{s>0} exp(K(sign·s) − sε)``: dense grid, then bounded Brent around the best grid point."""
    # domain: 1 + (1 + sign·s)β > 0, i.e. s < (1+β)/|β| for β < 0 (upper), s < 1 + 1/β for β > 0 (lower)
    edges = [-(1 + bk) / bk for bk in beta if bk < 0] if sign > 0 else [1 + 1 / bk for bk in beta if bk > 0]
    hi = min(min(edges, default=np.inf) * (1 - 1e-12), 1e7)
    t = np.union1d(np.geomspace(1e-9 * min(1.0, hi), hi, 3000), hi - np.geomspace(1e-12 * hi, 0.5 * hi, 300))
    obj = cgf_real(sign * t, beta, w2) - t * eps
    k = int(np.argmin(obj))
    res = optimize.minimize_scalar(
        lambda s: float(cgf_real(sign * s, beta, w2)[0] - s * eps),
        bounds=(t[max(k - 1, 0)], t[min(k + 1, t.size - 1)]),
        method="bounded",
        options={"xatol": 1e-14},
    )
    return float(np.exp(min(obj[k], res.fun, 0.0)))


def k1_tail_direct(beta: float, w: float, x: float, lower: bool = False) -> float:
    """``Pr(ℒ > x)`` (or ``Pr(ℒ < x)``), K = 1, by quadrature of the normal density over the region.

    ``ℒ − x = a u² + b u + c − x`` changes sign at the roots of the quadratic (stable formulas): the region is
    the outside or the inside of the roots. On each interval ``∫ φ = φ(r) ∫_0 e^{−r t − t²/2} dt`` from the end
    ``r`` nearer 0, so the quadrature keeps its relative accuracy for tails far below 1e-40.
    """
    a, b, c = loss_coefficients(np.array([beta]), np.array([w]))
    a, b = float(a[0]), float(b[0])
    C = c - x
    outside = (a > 0) != lower
    disc = b * b - 4 * a * C
    if disc <= 0:
        return 1.0 if outside else 0.0
    q = -0.5 * (b + np.copysign(np.sqrt(disc), b))
    r1, r2 = sorted([q / a, C / q])

    def piece(lo: float, hi: float) -> float:
        if lo < 0 < hi:
            return piece(lo, 0.0) + piece(0.0, hi)
        start = lo if lo >= 0 else -hi  # by symmetry of φ
        length = min(hi - lo, 40.0, 800.0 / max(start, 1e-300))  # beyond, e^{−rt−t²/2} < 1e-300
        val = integrate.quad(lambda t: np.exp(-start * t - t * t / 2), 0, length, epsabs=0, epsrel=1e-13, limit=200)
        return float(stats.norm.pdf(start) * val[0])

    return piece(-np.inf, r1) + piece(r2, np.inf) if outside else piece(r1, r2)


def k1_tail_closed(beta: float, w: float, x: float, lower: bool = False) -> float:
    """Same as :func:`k1_tail_direct` from the normal cdf at the roots (no quadrature)."""
    a, b, c = loss_coefficients(np.array([beta]), np.array([w]))
    a, b = float(a[0]), float(b[0])
    C = c - x
    outside = (a > 0) != lower
    disc = b * b - 4 * a * C
    if disc <= 0:
        return 1.0 if outside else 0.0
    q = -0.5 * (b + np.copysign(np.sqrt(disc), b))
    r1, r2 = sorted([q / a, C / q])
    if outside:
        return float(special.ndtr(r1) + special.ndtr(-r2))
    return float(special.ndtr(r2) - special.ndtr(r1) if r2 <= 0 else special.ndtr(-r1) - special.ndtr(-r2))


def balle_wang(D: float, eps: np.ndarray) -> np.ndarray:
    """``Φ(D/2 − ε/D) − e^ε Φ(−D/2 − ε/D)`` via Mills ratios (``e^ε φ(D/2 + ε/D) = φ(D/2 − ε/D)``)."""
    a = D / 2 - eps / D
    mills = lambda t: special.erfcx(t / np.sqrt(2)) * np.sqrt(np.pi / 2)  # noqa: E731  Φ(−t) = φ(t) M(t)
    direct = special.ndtr(a) - np.exp(eps) * special.ndtr(-D / 2 - eps / D)
    tail = stats.norm.pdf(a) * (mills(-a) - mills(-a + D))
    return np.where(a < -1, tail, direct)


def assert_rel(actual: np.ndarray, expected: np.ndarray, rtol: float, floor: float = 1e-300) -> float:
    """Relative comparison where the reference is representable; both must be ≤ floor elsewhere."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    big = expected > floor
    rel = np.abs(actual[big] / expected[big] - 1)
    assert np.all(rel <= rtol), f"max relative error {rel.max():.3g} > {rtol}"
    assert np.all(actual[~big] <= 10 * floor)
    return float(rel.max(initial=0.0))


def random_case(rng: np.random.Generator, K: int, R: int = 1, wscale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """β of both signs (γ = 1 + β between ~0.05 and ~6) and random w², shape (K, R)."""
    beta = rng.uniform(-0.95, 1.5, K) * rng.choice([0.05, 0.3, 1.0, 3.0], K)
    beta = np.maximum(beta, -0.95)
    w2 = (wscale * rng.standard_normal((K, R))) ** 2
    return beta, w2


# ------------------------------------------------------------------------------------------------ the CGF


def test_loss_cgf_matches_direct_expectation() -> None:
    """exp K(z) = E e^{zℒ} (K = 1, by quadrature), real and complex z; additive over coordinates."""
    beta, w = 0.7, 0.9
    a, b, c = loss_coefficients(np.array([beta]), np.array([w]))
    for z in (0.3, -0.6, 0.4 + 1.3j, -0.2 + 5.0j, 1.5 - 0.7j):

        def mgf(u: float, z: complex = z) -> complex:
            return np.exp(z * (a[0] * u * u + b[0] * u + c)) * stats.norm.pdf(u)

        re = integrate.quad(lambda u: mgf(u).real, -40, 40, epsabs=1e-14, epsrel=1e-12, limit=200)
        im = integrate.quad(lambda u: mgf(u).imag, -40, 40, epsabs=1e-14, epsrel=1e-12, limit=200)
        expected = re[0] + 1j * im[0]
        got = np.exp(loss_cgf(np.array(z), [beta], [w * w]))
        assert abs(got - expected) <= 1e-10 * abs(expected)
    rng = np.random.default_rng(3)
    beta, w2 = random_case(rng, 6, R=3)
    z = np.array([0.2, -0.3 + 2j, 0.1 + 40j])
    full = loss_cgf(z, beta, w2)
    assert full.shape == (3, 3)
    parts = sum(loss_cgf(z, beta[k : k + 1], w2[k : k + 1]) for k in range(6))
    np.testing.assert_allclose(full, parts, rtol=1e-12, atol=1e-12)  # log of each factor: no 2π jumps
    np.testing.assert_allclose(loss_cgf(np.conj(z), beta, w2), np.conj(full), rtol=1e-13)
    real = loss_cgf(np.array([0.2, -0.3]), beta, w2)
    for r in range(3):
        np.testing.assert_allclose(real[:, r], cgf_real(np.array([0.2, -0.3]), beta, w2[:, r]), rtol=1e-12)
    assert np.isinf(loss_cgf(np.array([1e6]), [-0.5], [1.0])).all()  # outside the domain
    assert loss_cgf(0.0, beta, w2[:, 0]) == pytest.approx(0.0, abs=1e-14)  # K(0) = 0 and K(−1) = 0 (Q is a law)
    assert loss_cgf(-1.0, beta, w2[:, 0]) == pytest.approx(0.0, abs=1e-13)


def test_loss_under_q_has_cgf_shifted_by_one() -> None:
    """Sampling y ~ Q (u = −w + √γ v): E_Q e^{sℒ} = exp K(s − 1)."""
    rng = np.random.default_rng(11)
    beta = np.array([-0.4, 0.5, 1.2])
    w = np.array([0.3, -0.5, 0.2])
    a, b, c = loss_coefficients(beta, w)
    v = rng.standard_normal((400_000, 3))
    uq = -w + np.sqrt(1 + beta) * v
    loss_q = (uq * uq) @ a + uq @ b + c
    for s in (0.3, 0.6):
        samples = np.exp(s * loss_q)
        se = samples.std() / np.sqrt(samples.size)
        assert abs(samples.mean() - np.exp(loss_cgf(s - 1.0, beta, w * w))) < 4 * se


# -------------------------------------------------------------------------------------- 1. Gaussian law


@pytest.mark.parametrize("D", [0.3, 1.0, 3.0, 6.0])
def test_equal_covariances_gaussian_closed_form(D: float) -> None:
    """β = 0: ℒ ~ N(D²/2, D²). The tails are closed-form; β = ±1e-300 forces the contour on the same law."""
    rng = np.random.default_rng(int(D * 10))
    w = rng.standard_normal(4)
    w2 = ((w * D / np.linalg.norm(w)) ** 2)[:, None]
    eps = np.array([0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 100.0])
    upper = stats.norm.cdf(D / 2 - eps / D)
    lower = stats.norm.cdf(-eps / D - D / 2)
    hockey = balle_wang(D, eps)
    assert upper[(upper > 0)].min() < 1e-30  # tiny tails are part of the comparison
    for beta in (np.zeros(4), np.array([0, 0, 0, 1e-300]), np.array([0, 0, -1e-300, 0])):
        out = exact_tails(beta, w2, eps)
        assert isinstance(out, ExactTails)
        assert_rel(out.upper[:, 0], upper, 1e-6)
        assert_rel(out.lower[:, 0], lower, 1e-6)
        assert_rel(out.hockey_stick[:, 0], hockey, 1e-6)
        assert_rel(out.delta[:, 0], np.minimum(1, upper + lower), 1e-6)


def test_degenerate_loss_identically_zero() -> None:
    """β = 0 and w = 0 (P = Q): ℒ ≡ 0, so both tails vanish for ε > 0 and H(ε) = (1 − e^ε)₊."""
    eps = np.array([-1.0, 0.0, 0.5, 3.0])
    out = exact_tails(np.zeros(3), np.zeros((3, 2)), eps)
    np.testing.assert_array_equal(out.upper, np.array([[1, 1], [0, 0], [0, 0], [0, 0]]))
    np.testing.assert_array_equal(out.lower, np.array([[1, 1], [0, 0], [0, 0], [0, 0]]))
    np.testing.assert_allclose(out.hockey_stick[:, 0], [-np.expm1(-1.0), 0, 0, 0])
    empty = exact_tails(np.zeros(0), np.zeros((0, 1)), eps)
    np.testing.assert_array_equal(empty.upper, out.upper[:, :1])


# -------------------------------------------------------------------------------------- 2. Monte Carlo


@pytest.mark.parametrize("K", [1, 2, 3, 5])
def test_monte_carlo_small_cases(K: int) -> None:
    """Tails and hockey stick within 4 standard errors of 4e5-sample Monte Carlo (plus e^ε Pr_Q = upper − H)."""
    rng = np.random.default_rng(100 + K)
    eps = np.array([0.0, 0.25, 0.5, 1.0, 2.0])
    worst = 0.0
    for _ in range(2):
        beta, w2 = random_case(rng, K, R=1, wscale=0.6)
        out = exact_tails(beta, w2, eps)
        mc = gaussian_loss_tails_mc(beta, w2[:, 0], eps, 400_000, rng)
        exact = {
            "upper": out.upper[:, 0],
            "lower": out.lower[:, 0],
            "hockey": out.hockey_stick[:, 0],
            "q_upper": out.upper[:, 0] - out.hockey_stick[:, 0],
        }
        for name, value in exact.items():
            mean, se = mc[name]
            ok = se > 0
            z = np.abs(value[ok] - mean[ok]) / se[ok]
            assert np.all(z < 4), f"{name}: z-scores {z}"
            assert np.all(value[~ok] < 1e-4)  # no sample in the tail: the tail must be small
            worst = max(worst, float(z.max(initial=0)))


# ---------------------------------------------------------------------------------- 3. exact ≤ Chernoff


def test_exact_below_chernoff_bound() -> None:
    """Pr(ℒ > ε) ≤ inf_s e^{K(s)−sε} and Pr(ℒ < −ε) ≤ inf_s e^{K(−s)−sε}, over random cases and ε up to 100."""
    rng = np.random.default_rng(7)
    worst_ratio = 0.0
    for i in range(24):
        K = [1, 2, 3, 5, 10, 40][i % 6]
        beta, w2 = random_case(rng, K, R=1, wscale=[0.05, 0.3, 1.0, 3.0][i % 4])
        out = exact_tails(beta, w2, EPS)
        for j, e in enumerate(EPS):
            for tail, sign in ((out.upper, 1), (out.lower, -1)):
                bound = chernoff(beta, w2[:, 0], e, sign)
                assert tail[j, 0] <= bound * (1 + 1e-9), (i, e, sign, tail[j, 0], bound)
                if 1e-300 < bound < 0.5:
                    worst_ratio = max(worst_ratio, tail[j, 0] / bound)
    assert worst_ratio < 1  # below 1 the bound is never attained


# ------------------------------------------------------------------------- 4. direct numerical integration


def test_one_coordinate_direct_quadrature() -> None:
    """K = 1: Pr(ℒ > ε) and Pr(ℒ < −ε) against quadrature of φ over the region cut out by the quadratic."""
    eps = np.array([-2.0, 0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 100.0])
    worst = 0.0
    for beta in (-0.95, -0.5, -0.1, -1e-3, 1e-3, 0.1, 1.0, 10.0, 300.0):
        for w in (0.0, 0.1, 1.0, 3.0):
            out = exact_tails([beta], [[w * w]], eps)
            up = np.array([k1_tail_direct(beta, w, e) for e in eps])
            lo = np.array([k1_tail_direct(beta, w, -e, lower=True) for e in eps])
            worst = max(worst, assert_rel(out.upper[:, 0], up, 1e-8), assert_rel(out.lower[:, 0], lo, 1e-8))
            assert np.all(out.upper[:, 0][up == 0] == 0) and np.all(out.lower[:, 0][lo == 0] == 0)
    assert 0 < worst < 1e-8


def test_direct_quadrature_agrees_with_closed_form() -> None:
    """The quadrature reference itself, against the normal cdf at the roots, down to ~1e-40."""
    for beta, w, e in ((-0.5, 1.0, 40.0), (1.0, 0.5, 0.2), (10.0, 3.0, 2.0), (-0.1, 0.1, 20.0), (0.5, 1.0, -3.0)):
        for lower in (False, True):
            direct, closed = k1_tail_direct(beta, w, e, lower), k1_tail_closed(beta, w, e, lower)
            assert direct == pytest.approx(closed, rel=1e-10, abs=1e-300)


def test_two_coordinates_nested_quadrature() -> None:
    """K = 2: Pr(ℒ₁ + ℒ₂ > ε) = ∫ φ(u₁) Pr(ℒ₂ > ε − ℒ₁(u₁)) du₁ (inner probability in closed form)."""
    beta, w = np.array([-0.6, 0.8]), np.array([0.7, 1.1])
    a, b, _ = loss_coefficients(beta, w)
    c1 = 0.5 * w[0] ** 2 / (1 + beta[0]) + 0.5 * np.log1p(beta[0])
    eps = np.array([0.0, 1.0, 3.0, 8.0])
    out = exact_tails(beta, (w * w)[:, None], eps)
    for j, e in enumerate(eps):

        def inner(u1: float, e: float = e) -> float:
            return stats.norm.pdf(u1) * k1_tail_closed(beta[1], w[1], e - (a[0] * u1 * u1 + b[0] * u1 + c1))

        ref = integrate.quad(inner, -30, 30, epsabs=0, epsrel=1e-12, limit=400, points=[-b[0] / (2 * a[0])])[0]
        assert out.upper[j, 0] == pytest.approx(ref, rel=1e-7)


# ------------------------------------------------------------------------------------- 5. hockey stick


def _quadratic_tail(A: float, B: float, C: float) -> float:
    """``Pr(A v² + B v + C > 0)`` for ``v ~ N(0, 1)``, from the normal cdf at the roots."""
    if abs(A) < 1e-300:
        return float(special.ndtr(np.sign(B) * C / abs(B))) if B else float(C > 0)
    disc = B * B - 4 * A * C
    if disc <= 0:
        return 1.0 if A > 0 else 0.0
    q = -0.5 * (B + np.copysign(np.sqrt(disc), B))
    r1, r2 = sorted([q / A, C / q])
    if A > 0:
        return float(special.ndtr(r1) + special.ndtr(-r2))
    return float(special.ndtr(r2) - special.ndtr(r1))


def hockey_stick_direct(beta: float, w: float, eps: float) -> float:
    """K = 1: ``H(ε) = Pr_P(ℒ > ε) − e^ε Pr_Q(ℒ > ε)`` from normal cdfs; under P, ``u ~ N(0, 1)``; under Q,
    ``u = −w + √γ v`` with ``v ~ N(0, 1)`` (the module docstring of ``ddppm.privacy.exact``)."""
    a, b, c = loss_coefficients(np.array([beta]), np.array([w]))
    a, b = float(a[0]), float(b[0])
    gamma = 1 + beta
    under_p = _quadratic_tail(a, b, c - eps)
    # a(√γ v − w)² + b(√γ v − w) + c − ε as a quadratic in v
    under_q = _quadratic_tail(a * gamma, np.sqrt(gamma) * (b - 2 * a * w), a * w * w - b * w + c - eps)
    return under_p - np.exp(eps) * under_q


def test_hockey_stick_against_its_direct_form() -> None:
    """K = 1: the contour integral's H (residue form: the poles at z = 0 and z = −1) equals H computed directly
    as ``Pr_P(ℒ > ε) − e^ε Pr_Q(ℒ > ε)`` from the normal cdf at the roots of the loss's quadratic."""
    eps = np.array([0.05, 0.3, 1.0, 2.0, 5.0])
    worst, compared = 0.0, 0
    for beta in (-0.9, -0.5, -0.1, 0.2, 1.0, 5.0):
        for w in (0.0, 0.3, 1.0, 2.5):
            out = exact_tails([beta], [[w * w]], eps)
            direct = np.array([hockey_stick_direct(beta, w, e) for e in eps])
            ok = direct > 1e-7  # where the direct difference is not lost to cancellation
            compared += int(ok.sum())
            if ok.any():
                worst = max(worst, assert_rel(out.hockey_stick[ok, 0], direct[ok], 1e-6))
            assert np.all(out.hockey_stick[~ok, 0] <= 1e-6)  # both tiny where the direct form cancels
    assert compared >= 60 and worst < 1e-6


def test_hockey_stick_bounds() -> None:
    """0 ≤ H ≤ Pr(ℒ > ε) and H non-increasing in ε, for random pairs of every shape."""
    rng = np.random.default_rng(5)
    for i in range(12):
        beta, w2 = random_case(rng, [1, 3, 8][i % 3], R=3, wscale=[0.01, 0.3, 2.0][i % 3])
        eps = np.linspace(0, 30, 31)
        out = exact_tails(beta, w2, eps)
        assert np.all(out.hockey_stick >= 0)
        assert np.all(out.hockey_stick <= out.upper * (1 + 1e-9))
        assert np.all(np.diff(out.hockey_stick, axis=0) <= 1e-12 * out.hockey_stick[:-1])


def test_hockey_stick_nearly_identical_laws() -> None:
    """P ≈ Q and ε = 0: H(0) is the total variation distance, tiny; no cancellation (vs ε ↦ 0 limits)."""
    # a single tiny β with w = 0: ℒ = a u² + c with a = −β/(2(1+β)); H(0) = E ℒ₊-ish ~ 1e-9
    beta = np.array([-1.2725253e-08])
    w2 = np.zeros((1, 1))
    out = exact_tails(beta, w2, np.array([0.0]))
    # closed form: H(0) = Pr_P(ℒ > 0) − Pr_Q(ℒ > 0) with ℒ > 0 ⇔ u² > −c/a; under Q, u² = γ v²
    thr = -np.log1p(beta[0]) / (1 / (1 + beta[0]) - 1)
    tv = integrate.quad(lambda t: stats.chi2.pdf(t, 1), thr, thr / (1 + beta[0]), epsabs=0, epsrel=1e-12)[0]
    assert 0 < tv < 1e-8
    assert out.hockey_stick[0, 0] == pytest.approx(tv, rel=1e-7)


# --------------------------------------------------------------------------------------- 6. pure χ² laws


@pytest.mark.parametrize("beta0", [-0.9, -0.3, 0.4, 5.0])
@pytest.mark.parametrize("K", [1, 4])
def test_pure_chi_square(beta0: float, K: int) -> None:
    """w = 0, all β equal: ℒ = a χ²_K + K c, closed form from scipy's χ² (including tiny tails)."""
    gamma = 1 + beta0
    a, c = 0.5 * (1 / gamma - 1), 0.5 * np.log(gamma)
    eps = np.array([0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 100.0])
    out = exact_tails(np.full(K, beta0), np.zeros((K, 1)), eps)
    thr_up = (eps - K * c) / a  # ℒ > ε ⇔ χ² > thr (a > 0) or χ² < thr (a < 0)
    thr_lo = (-eps - K * c) / a
    if a > 0:
        upper = stats.chi2.sf(np.maximum(thr_up, 0), K)
        lower = stats.chi2.cdf(np.maximum(thr_lo, 0), K)
    else:
        upper = stats.chi2.cdf(np.maximum(thr_up, 0), K)
        lower = stats.chi2.sf(np.maximum(thr_lo, 0), K)
    assert_rel(out.upper[:, 0], upper, 1e-8)
    assert_rel(out.lower[:, 0], lower, 1e-8)


def test_non_central_chi_square() -> None:
    """One coordinate with w ≠ 0: ℒ = a(u + b/2a)² + c − b²/4a, a non-central χ²₁ (scipy ncx2)."""
    for beta0, w in ((-0.5, 1.0), (-0.8, 0.3), (2.0, 1.5)):
        a, b, c = loss_coefficients(np.array([beta0]), np.array([w]))
        a, b = float(a[0]), float(b[0])
        nc, shift = (b / (2 * a)) ** 2, c - b * b / (4 * a)
        eps = np.array([0.0, 0.5, 1.0, 2.0, 5.0])
        out = exact_tails([beta0], [[w * w]], eps)
        thr = (eps - shift) / a
        ref = stats.ncx2.sf(np.maximum(thr, 0), 1, nc) if a > 0 else stats.ncx2.cdf(np.maximum(thr, 0), 1, nc)
        assert_rel(out.upper[:, 0], ref, 1e-7, floor=1e-12)


# ----------------------------------------------------------------------------------- 7. basic properties


def test_tails_are_probabilities_monotone_and_complementary() -> None:
    """Tails in [0, 1], non-increasing in ε, and Pr(ℒ > x) + Pr(ℒ < x) = 1 (ε and −ε)."""
    rng = np.random.default_rng(9)
    eps = np.linspace(0, 60, 61)
    for i in range(10):
        beta, w2 = random_case(rng, [1, 2, 4, 30][i % 4], R=4, wscale=[0.05, 0.5, 2.0][i % 3])
        out = exact_tails(beta, w2, eps)
        for t in (out.upper, out.lower, out.delta, out.hockey_stick):
            assert t.shape == (eps.size, 4)
            assert np.all((t >= 0) & (t <= 1))
        assert np.all(np.diff(out.upper, axis=0) <= 1e-12 * out.upper[:-1])
        assert np.all(np.diff(out.lower, axis=0) <= 1e-12 * out.lower[:-1])
        both = exact_tails(beta, w2, np.concatenate([eps[:8], -eps[:8]]))
        np.testing.assert_allclose(both.upper[:8] + both.lower[8:], 1.0, rtol=0, atol=1e-10)


def test_outside_the_support() -> None:
    """All β > 0: ℒ ≤ Σ w²/(2β) + ½ ln(1+β); above it the upper tail and H are exactly 0."""
    beta = np.array([0.5, 2.0])
    w2 = np.array([[0.2], [0.1]])
    top = float(np.sum(w2[:, 0] / (2 * beta) + 0.5 * np.log1p(beta)))
    out = exact_tails(beta, w2, np.array([top * 0.999, top, top + 1]))
    assert 0 < out.upper[0, 0] < 1e-2
    assert out.upper[1, 0] == 0 and out.upper[2, 0] == 0 and out.hockey_stick[2, 0] == 0


def test_input_validation_and_shapes() -> None:
    out = exact_tails([0.3, -0.2], [1.0, 0.5], 2.0)  # 1-D w2: one realisation, scalar ε
    assert out.upper.shape == (1, 1)
    with pytest.raises(ValueError):
        exact_tails([-1.0], [[1.0]], [1.0])
    with pytest.raises(ValueError):
        exact_tails([0.1, 0.2], [[1.0]], [1.0])


def test_many_pairs_in_one_pass_equal_one_call_per_pair() -> None:
    """exact_tails_many (one vectorised pass, β zero-padded per element) gives every pair's exact_tails: pairs of
    different K and R, including a Gaussian pair (every β = 0), K = 1, β near −1 and large β."""
    from ddppm.privacy.exact import exact_tails_many

    rng = np.random.default_rng(11)
    inputs = [random_case(rng, K, R) for K, R in ((3, 4), (1, 2), (12, 3), (5, 1), (30, 2))]
    inputs.append((np.zeros(4), rng.uniform(0, 2, (4, 3))))  # Gaussian: all β = 0
    inputs.append((np.array([-1 + 1e-6, 3e5, 0.2]), rng.uniform(0, 1, (3, 2))))
    eps = np.array([0.3, 2.0, 9.0, 40.0])
    batched = exact_tails_many(inputs, eps)
    for (beta, w2), got in zip(inputs, batched, strict=True):
        want = exact_tails(beta, w2, eps)
        for field in ("upper", "lower", "delta", "hockey_stick"):
            np.testing.assert_allclose(getattr(got, field), getattr(want, field), rtol=1e-10, atol=1e-300)
    values = np.concatenate([t.hockey_stick.ravel() for t in batched])
    assert (values > 1e-12).sum() > 10 and (values < 0.5).sum() > 10  # not vacuous: tails of every size


@pytest.mark.parametrize("order", ["C", "F", "transposed"])
def test_the_fast_sum_is_numpys_sum_up_to_rounding(order: str) -> None:
    """``_sum_last`` replaces ``x.sum(-1)`` in the CGF's hot loop (a product with ones): numpy's sum up to the order
    of the additions, for every axis length and layout, within a few ulps of the sum of the magnitudes; and the
    non-finite values propagate as numpy's do."""
    from ddppm.privacy.exact import _sum_last

    rng = np.random.default_rng(7)
    for K in range(1, 140):
        for shape in [(1, K), (37, K), (5, 8, K), (300, 8, K)]:
            x = rng.standard_normal(shape) * 10.0 ** rng.uniform(-8, 8, shape)
            if order == "F":
                x = np.asfortranarray(x)
            elif order == "transposed":
                x = np.ascontiguousarray(x.T).T
            got, expected = _sum_last(x), x.sum(-1)
            assert got.shape == expected.shape, (K, shape, order)
            if K < 8 or not x.flags.c_contiguous:  # slice additions in order, or numpy itself
                assert np.array_equal(got, expected), (K, shape, order)
            else:
                bound = 4 * K * np.finfo(float).eps * np.abs(x).sum(-1)
                assert np.all(np.abs(got - expected) <= bound), (K, shape, order)
    x = np.ones((4, 8, 20))
    x[0, 0, 3], x[1, 2, 5], x[2, 1, 0], x[2, 1, 1] = np.inf, np.nan, np.inf, -np.inf
    with np.errstate(invalid="ignore"):  # inf − inf is NaN in both, as it should be
        np.testing.assert_array_equal(_sum_last(x), x.sum(-1))


def test_a_pair_asked_again_is_answered_from_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """exact_tails_many computes each distinct input once (a calibration asks for a candidate's pairs in its search
    and again in its confirmation): the answer is the same object, read-only, and equals a fresh computation."""
    import ddppm.privacy.exact as exact

    rng = np.random.default_rng(12)
    first, second = random_case(rng, 4, 3), random_case(rng, 2, 2)
    eps = np.array([0.5, 3.0])
    monkeypatch.setattr(exact, "_MEMO", {})
    computed: list[int] = []
    real = exact._exact_many
    monkeypatch.setattr(exact, "_exact_many", lambda inputs, e: computed.append(len(inputs)) or real(inputs, e))
    a = exact.exact_tails_many([first, second, first], eps)  # a repeat within one batch: computed once
    b = exact.exact_tails_many([(first[0].copy(), first[1].copy())], eps)  # equal bytes: not computed again
    assert computed == [2] and a[0] is a[2] is b[0]
    assert not a[0].upper.flags.writeable
    fresh = real([first], eps)[0][0]
    np.testing.assert_array_equal(a[0].delta, fresh.delta)
    c = exact.exact_tails_many([first], np.array([0.5, 3.5]))  # another ε grid is another input
    assert computed == [2, 1] and not np.array_equal(c[0].delta, a[0].delta)
