"""Seeded synthetic data: the AMI smart-meter stand-in, the workshop paper's SBM graph signals, and the common task's
own sets (a spiked covariance, heavy-tailed counts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ddppm.core.errors import ConfigError


def ami_synthetic(n: int = 1352, d: int = 25, seed: int = 0) -> np.ndarray:
    r"""Seeded synthetic smart-meter daily load profiles (stand-in for the paper's private AMI data).

    The journal paper's AMI set (1352 × 25) is not public. This generator produces data of the same
    shape and of the same kind: each row is one household-day, each column the energy drawn in one of
    ``d`` equal time bins over the day (bin centres :math:`t_k = 24 (k + 1/2) / d` hours).

    Rows come from :math:`H = \lceil n / 7 \rceil` households observed for up to a week (the last
    household may have fewer days). Household :math:`h` has an archetype (commuter, at home during
    the day, with rooftop solar; probabilities .45/.35/.20), a lognormal scale
    :math:`s_h \sim \log\mathcal{N}(\log 0.4, 0.5^2)` (kWh per hour), a base (night) load
    :math:`b_h` and peak times :math:`\mu^{m}_h \approx 7.5` h, :math:`\mu^{e}_h \approx 19.5` h.
    Day :math:`j` of household :math:`h` has the load

    .. math::

        \ell(t) = s_h \Big[b_h + a^m \phi(t; \mu^m_h + \delta^m_j, w^m)
                  + a^e \phi(t; \mu^e_h + \delta^e_j, w^e) + a^{mid} \phi(t; 13, 3)
                  - \gamma_h \max(0, \sin(\pi (t - 6) / 12))\Big]_+ \, e^{\eta_{jk}},

    where :math:`\phi(t;\mu,w) = \exp(-\mathrm{dist}_{24}(t,\mu)^2 / 2w^2)` is a bump on the 24-hour
    circle, :math:`\delta \sim \mathcal{N}(0, 0.75^2)` shift the peaks from day to day (weekend days,
    :math:`j \in \{5, 6\}`, have a later, flatter morning peak and more midday use), :math:`\gamma_h`
    is the solar dip (net import can fall to the base load but not below zero) and
    :math:`\eta_{jk} \sim \mathcal{N}(0, 0.15^2)` is multiplicative noise. All entries are
    non-negative.

    Parameters
    ----------
    n : int
        Number of household-days (rows).
    d : int
        Number of time bins per day (columns).
    seed : int
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    numpy.ndarray
        ``(n, d)`` float64, non-negative, energy per bin in kWh.

    Raises
    ------
    ConfigError
        If ``n`` or ``d`` is not a positive integer.
    """
    if int(n) != n or n < 1 or int(d) != d or d < 1:
        raise ConfigError(f"ami_synthetic needs positive integers n and d, got n={n!r}, d={d!r}.")
    n, d = int(n), int(d)
    rng = np.random.default_rng(seed)
    t = 24.0 * (np.arange(d) + 0.5) / d  # bin centres, hours
    days_per_household = 7
    n_households = -(-n // days_per_household)
    hh = np.repeat(np.arange(n_households), days_per_household)[:n]
    day = np.tile(np.arange(days_per_household), n_households)[:n]
    weekend = day >= 5

    kind = rng.choice(3, size=n_households, p=[0.45, 0.35, 0.20])  # 0 commuter, 1 at home, 2 solar
    scale = rng.lognormal(mean=np.log(0.4), sigma=0.5, size=n_households)
    base = rng.uniform(0.25, 0.5, size=n_households)
    mu_m = rng.normal(7.5, 0.5, size=n_households)
    mu_e = rng.normal(19.5, 0.75, size=n_households)
    a_m = np.where(kind == 1, 0.8, 1.2) * rng.uniform(0.8, 1.2, size=n_households)
    a_e = rng.uniform(1.5, 2.5, size=n_households)
    a_mid = np.where(kind == 1, 0.9, 0.2) * rng.uniform(0.7, 1.3, size=n_households)
    solar = np.where(kind == 2, rng.uniform(0.8, 1.6, size=n_households), 0.0)

    shift_m = rng.normal(0.0, 0.75, size=n) + np.where(weekend, 1.5, 0.0)
    shift_e = rng.normal(0.0, 0.75, size=n)
    w_m = np.where(weekend, 1.8, 1.2)
    mid_boost = np.where(weekend, 0.6, 0.0)

    def bump(mu: np.ndarray, width: np.ndarray | float) -> np.ndarray:
        diff = np.abs(t[None, :] - np.asarray(mu)[:, None]) % 24.0
        dist = np.minimum(diff, 24.0 - diff)
        return np.exp(-(dist**2) / (2.0 * np.asarray(width, dtype=float).reshape(-1, 1) ** 2))

    sun = np.maximum(0.0, np.sin(np.pi * (t - 6.0) / 12.0))[None, :]
    shape = (
        base[hh, None]
        + a_m[hh, None] * bump(mu_m[hh] + shift_m, w_m)
        + a_e[hh, None] * bump(mu_e[hh] + shift_e, 1.6)
        + (a_mid[hh] + mid_boost)[:, None] * bump(np.full(n, 13.0), 3.0)
        - solar[hh, None] * sun
    )
    # Solar can push net import down to (not below) a small fraction of the base load.
    shape = np.maximum(shape, 0.1 * base[hh, None])
    noise = np.exp(rng.normal(0.0, 0.15, size=(n, d)))
    kwh_per_bin = 24.0 / d
    X = scale[hh, None] * shape * noise * kwh_per_bin
    return np.ascontiguousarray(X, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class GraphSignal:
    """The parts of the workshop SBM data: signals, excitation, Laplacian and graph.

    Attributes
    ----------
    g : numpy.ndarray
        ``(n_nodes, n_signals)`` filtered, noisy graph signals (the data matrix).
    x : numpy.ndarray
        ``(n_nodes, n_signals)`` excitation signals, i.i.d. U[-1, 1].
    laplacian : numpy.ndarray
        ``(n_nodes, n_nodes)`` combinatorial Laplacian :math:`S = D - A`.
    graph : networkx.Graph
        The SBM graph (node ``i`` is row ``i``; attribute ``block``).
    """

    g: np.ndarray
    x: np.ndarray
    laplacian: np.ndarray
    graph: Any


def sbm_graph_signal_parts(
    n_nodes: int = 400,
    n_signals: int = 3,
    n_blocks: int = 4,
    p_in: float = 0.1,
    p_out: float = 0.01,
    tau: float = 0.1,
    noise_var: float = 0.01,
    seed: int = 0,
) -> GraphSignal:
    r"""Generate the workshop paper's SBM graph signals and return all parts.

    See :func:`sbm_graph_signal` for the model and parameters.

    Returns
    -------
    GraphSignal
        ``g``, ``x``, the Laplacian ``S`` and the graph.
    """
    import networkx as nx

    if int(n_blocks) != n_blocks or not 1 <= n_blocks <= n_nodes:
        raise ConfigError(f"sbm_graph_signal needs 1 <= n_blocks <= n_nodes, got {n_blocks} and {n_nodes}.")
    if int(n_signals) != n_signals or n_signals < 1:
        raise ConfigError(f"sbm_graph_signal needs n_signals >= 1, got {n_signals!r}.")
    if not (0.0 <= p_in <= 1.0 and 0.0 <= p_out <= 1.0):
        raise ConfigError(f"sbm_graph_signal needs p_in, p_out in [0, 1], got {p_in!r}, {p_out!r}.")
    if tau < 0 or noise_var < 0:
        raise ConfigError(f"sbm_graph_signal needs tau >= 0 and noise_var >= 0, got {tau!r}, {noise_var!r}.")
    n_nodes, n_blocks, n_signals = int(n_nodes), int(n_blocks), int(n_signals)
    rng = np.random.default_rng(seed)
    sizes = [n_nodes // n_blocks + (1 if b < n_nodes % n_blocks else 0) for b in range(n_blocks)]
    probs = np.full((n_blocks, n_blocks), float(p_out))
    np.fill_diagonal(probs, float(p_in))
    graph_seed = int(rng.integers(0, 2**31 - 1))
    G = nx.stochastic_block_model(sizes, probs.tolist(), seed=graph_seed)
    S = nx.laplacian_matrix(G, nodelist=range(n_nodes)).toarray().astype(np.float64)
    x = rng.uniform(-1.0, 1.0, size=(n_nodes, n_signals))
    noise = rng.normal(0.0, np.sqrt(noise_var), size=(n_nodes, n_signals))
    g = np.linalg.solve(np.eye(n_nodes) + tau * S, x) + noise
    return GraphSignal(g=np.ascontiguousarray(g), x=x, laplacian=S, graph=G)


def sbm_graph_signal(
    n_nodes: int = 400,
    n_signals: int = 3,
    n_blocks: int = 4,
    p_in: float = 0.1,
    p_out: float = 0.01,
    tau: float = 0.1,
    noise_var: float = 0.01,
    seed: int = 0,
) -> np.ndarray:
    r"""Graph signals on a stochastic block model graph (workshop paper, §4, eq. 19).

    A graph :math:`\mathcal{G}` on ``n_nodes`` nodes is drawn from a stochastic block model with
    ``n_blocks`` near-equal blocks, edge probability ``p_in`` inside a block and ``p_out`` between
    blocks (:func:`networkx.stochastic_block_model`). With :math:`S = D - A` its Laplacian, each of
    the ``n_signals`` columns is the diffusion-filtered excitation

    .. math::

        g[k] = (I + \tau S)^{-1} x[k] + n[k], \qquad x[k] \sim U[-1, 1]^{n},
        \quad n[k] \sim \mathcal{N}(0, \sigma^2 I),

    with :math:`\tau = 0.1` and :math:`\sigma^2 = 0.01` as in the paper (``noise_var`` is the
    variance). The filter is a low-pass one, so :math:`g^\top S g \ll x^\top S x`.

    The paper states 400 nodes and 3 signals but **not** the number of blocks nor the edge
    probabilities. The defaults here (4 blocks of 100 nodes, matching the 4 agents of 100 rows;
    ``p_in = 0.1``, ``p_out = 0.01``, i.e. about 10 neighbours inside and 3 outside the block) are
    the project's choice.

    Parameters
    ----------
    n_nodes, n_signals, n_blocks : int
        Graph size, number of signals (columns), number of SBM blocks.
    p_in, p_out : float
        Edge probabilities within / between blocks.
    tau : float
        Diffusion constant of the filter.
    noise_var : float
        Variance of the Gaussian measurement noise.
    seed : int
        Seed (graph, excitation and noise all derive from it).

    Returns
    -------
    numpy.ndarray
        ``(n_nodes, n_signals)`` float64.
    """
    return sbm_graph_signal_parts(
        n_nodes=n_nodes,
        n_signals=n_signals,
        n_blocks=n_blocks,
        p_in=p_in,
        p_out=p_out,
        tau=tau,
        noise_var=noise_var,
        seed=seed,
    ).g


def spiked_synthetic(
    n: int = 20000,
    d: int = 50,
    spikes: tuple[float, ...] = (20.0, 10.0, 5.0),
    seed: int = 0,
) -> np.ndarray:
    r"""Rows from a spiked covariance model with a known spectral gap (the common task's large set).

    Each row is :math:`x_r = Q\,\mathrm{diag}(\sqrt{\lambda})\,z_r` with :math:`z_r \sim \mathcal{N}(0, I_d)`,
    :math:`Q` a seeded Haar-random rotation and the population spectrum
    :math:`\lambda = (\text{spikes}, 1, \dots, 1)`. The population top-k directions are the first k columns of
    :math:`Q`, and the gaps are known: with the defaults :math:`\lambda_1/\lambda_2 = 2`, :math:`\lambda_3/\lambda_4
    = 5`. It is large enough (``n = 20,000`` over 16 agents) that methods with no trusted party start to work,
    which the journal's small sets never show. The project's own choice; no source paper uses it.

    Parameters
    ----------
    n, d : int
        Rows and columns.
    spikes : tuple of float
        The leading population eigenvalues, each above 1 (the rest are 1), in decreasing order.
    seed : int
        Seed of the rotation and of the rows.

    Returns
    -------
    numpy.ndarray
        ``(n, d)`` float64.

    Raises
    ------
    ConfigError
        Spikes that are not decreasing and above 1, or more spikes than columns.
    """
    lam = np.asarray(spikes, dtype=float)
    if lam.ndim != 1 or lam.size >= d or np.any(lam <= 1.0) or np.any(np.diff(lam) > 0):
        raise ConfigError(
            f"dataset_options.spiked_synthetic.spikes: {list(spikes)} must be fewer than d = {d} values, "
            "each above 1, in decreasing order"
        )
    rng = np.random.default_rng(seed)
    Q = _haar_rotation(rng, d)
    scale = np.ones(d)
    scale[: lam.size] = np.sqrt(lam)
    return (rng.standard_normal((n, d)) * scale) @ Q.T


def _haar_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))  # Haar measure (Mezzadri's sign fix)


def spiked_population_directions(d: int, seed: int = 0) -> np.ndarray:
    """The population eigenvectors of :func:`spiked_synthetic` with this ``d`` and ``seed`` (columns, in the order
    of its spectrum): its rotation ``Q``, drawn first from the same generator."""
    return _haar_rotation(np.random.default_rng(seed), d)


HEAVY_TAILED_CAP = 500
"""The public maximum of :func:`heavy_tailed`'s counts: a count above is recorded as this (its declared bounds are
``[0, HEAVY_TAILED_CAP]`` by construction, never read from the records)."""
HEAVY_TAILED_DISPERSION = 1.0
"""The negative binomial's size r of :func:`heavy_tailed` (given the factors, variance m + m²/r)."""
HEAVY_TAILED_MEANS = (0.5, 8.0)
"""The first and last column's mean count of :func:`heavy_tailed` (geometric in between)."""
HEAVY_TAILED_LOADINGS = ((0.5, 1.0), 0.5)
"""The common factor's loadings (from the first column's to the last's, linear) and the second factor's amplitude."""


@dataclass(frozen=True, eq=False)
class HeavyTailed:
    """The parts of :func:`heavy_tailed`: the capped ``counts`` (n × d, the data matrix), the latent ``factors``
    (n × 2), the ``loadings`` (2 × d), each column's marginal mean ``base`` (d,) and each count's mean given the
    factors, ``means`` (n × d)."""

    counts: np.ndarray
    factors: np.ndarray
    loadings: np.ndarray
    base: np.ndarray
    means: np.ndarray


def heavy_tailed_parts(n: int = 20000, d: int = 10, seed: int = 0) -> HeavyTailed:
    """:func:`heavy_tailed` with its latent parts (see there for the law)."""
    if int(n) != n or n < 1 or int(d) != d or d < 2:
        raise ConfigError(f"heavy_tailed needs integers n ≥ 1 and d ≥ 2, got n={n!r}, d={d!r}; fix "
                          "`dataset_options.heavy_tailed`.")  # fmt: skip
    n, d = int(n), int(d)
    rng = np.random.default_rng(seed)
    j = np.arange(d)
    (first, last), (low, high), second = HEAVY_TAILED_MEANS, *HEAVY_TAILED_LOADINGS
    base = first * (last / first) ** (j / (d - 1))
    loadings = np.vstack([np.linspace(low, high, d), second * np.cos(np.pi * j / (d - 1))])
    factors = rng.standard_normal((n, 2))
    means = base * np.exp(factors @ loadings - 0.5 * np.sum(loadings**2, axis=0))
    r = HEAVY_TAILED_DISPERSION
    counts = np.minimum(rng.negative_binomial(r, r / (r + means)), HEAVY_TAILED_CAP).astype(np.float64)
    return HeavyTailed(counts=counts, factors=factors, loadings=loadings, base=base, means=means)


def heavy_tailed(n: int = 20000, d: int = 10, seed: int = 0) -> np.ndarray:
    r"""Heavy-tailed counts driven by two common factors, like yearly health-care visit counts (the common task's
    long-tailed set: most values small, a long tail; the project's own choice, no source paper uses it).

    Row i is one person, column j one kind of visit. Two latent factors :math:`f_i \sim \mathcal{N}(0, I_2)` (a
    person's overall need for care, and a contrast between the first and the last kinds) set each count's mean

    .. math::

        m_{ij} = \mu_j \exp\!\big(f_i^\top \ell_j - \tfrac12 \lVert \ell_j \rVert^2\big), \qquad
        \mu_j = 0.5 \cdot 16^{j/(d-1)}, \quad
        \ell_j = \big(0.5 + 0.5\,\tfrac{j}{d-1},\; 0.5 \cos(\pi j/(d-1))\big),

    so that :math:`\mathbb{E}\,m_{ij} = \mu_j` (0.5 to 8 visits a year; :data:`HEAVY_TAILED_MEANS`,
    :data:`HEAVY_TAILED_LOADINGS`), and given the factors the counts are independent negative binomials of size
    r = 1 (:data:`HEAVY_TAILED_DISPERSION`: geometric) and mean :math:`m_{ij}`,

    .. math::

        P(Y_{ij} = y \mid f_i) = \Big(\frac{r}{r + m_{ij}}\Big)^{r} \Big(\frac{m_{ij}}{r + m_{ij}}\Big)^{y}
        \frac{\Gamma(y + r)}{y!\,\Gamma(r)}, \qquad \mathbb{E}[Y_{ij} \mid f_i] = m_{ij}, \quad
        \operatorname{Var}[Y_{ij} \mid f_i] = m_{ij} + m_{ij}^2 / r,

    recorded as :math:`X_{ij} = \min(Y_{ij}, 500)` (:data:`HEAVY_TAILED_CAP`, the generator's public domain: every
    value is an integer in [0, 500], the declared bounds by construction). At the defaults (n = 20,000, d = 10) 44 %
    of the values are 0, the median is 1 and the 99th percentile about 34, while the largest counts reach the
    hundreds: about 4 % of the standardised rows are more than twice the typical norm √d, the rows a fixed clipping
    radius 2√d shrinks at every ε.

    Parameters
    ----------
    n, d : int
        Rows (people) and columns (kinds of visit), d ≥ 2.
    seed : int
        Seed of :func:`numpy.random.default_rng` (the factors, then the counts).

    Returns
    -------
    numpy.ndarray
        ``(n, d)`` float64 integer counts in [0, 500].

    Raises
    ------
    ConfigError
        If ``n`` or ``d`` is not an integer, n < 1 or d < 2.
    """
    return heavy_tailed_parts(n=n, d=d, seed=seed).counts


MIXED_UNITS_DOMAIN = ((0.0, 2.5e5), (-5.0, 15.0), (-5.0, 10.0), (-4.0, 8.0), (-2.0, 4.0))
""":func:`mixed_units`' public domain per column (a value outside is recorded at the nearest end)."""


def mixed_units(n: int = 5000, seed: int = 0) -> np.ndarray:
    r"""Five columns whose units differ by 10⁴ to 10⁵, with the centred covariance's second and third directions in
    the small-unit columns: a price in dollars beside four sizes in metres (the project's own set for the centred
    PCA, ``standardize="center"``; no source paper uses it).

    With :math:`f_i \sim \mathcal{N}(0, I_3)` and independent standard normal :math:`e_i \in \mathbb{R}^5`,

    .. math::

        x_{i0} = 10^5 + 2\cdot10^4\,(0.9 f_{i0} + 0.436 e_{i0}), \qquad
        x_{i,1:4} = \mu + f_{i1} a + f_{i2} b + f_{i0} c + 0.05\, e_{i,1:4},

    :math:`\mu = (5, 3, 2, 1)`, :math:`a = (1.6, 0.8, 0.3, 0.1)`, :math:`b = (-0.3, 0.6, 0.5, 0.15)`,
    :math:`c = (0.05, -0.1, 0.2, 0.12)`, each clipped to :data:`MIXED_UNITS_DOMAIN`. The columns' standard
    deviations are about 2·10⁴, 1.6, 1.0, 0.62 and 0.23; the covariance's eigenvalues about 4·10⁸, 3.2, 0.72, 0.014
    and 0.0025 (the second eigengap 8·10⁻⁹ of the first): its first direction is the price, the next two lie in the
    sizes (``a`` and ``b``, nearly).

    Parameters
    ----------
    n : int
        Rows, n ≥ 2.
    seed : int
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    numpy.ndarray
        ``(n, 5)`` float64.
    """
    if int(n) != n or n < 2:
        raise ConfigError(f"mixed_units needs an integer n ≥ 2, got n={n!r}; fix `dataset_options.mixed_units`.")
    rng = np.random.default_rng(seed)
    f, e = rng.standard_normal((int(n), 3)), rng.standard_normal((int(n), 5))
    price = 1e5 + 2e4 * (0.9 * f[:, 0] + 0.436 * e[:, 0])
    a, b, c = np.array([1.6, 0.8, 0.3, 0.1]), np.array([-0.3, 0.6, 0.5, 0.15]), np.array([0.05, -0.1, 0.2, 0.12])
    sizes = np.array([5.0, 3.0, 2.0, 1.0]) + np.outer(f[:, 1], a) + np.outer(f[:, 2], b) + np.outer(f[:, 0], c)
    X = np.column_stack([price, sizes + 0.05 * e[:, 1:]])
    lower, upper = np.array(MIXED_UNITS_DOMAIN).T
    return np.clip(X, lower, upper)


SPARSE_COUNTS_CAP = 200
""":func:`sparse_counts`' public domain: integers in ``[0, SPARSE_COUNTS_CAP]``."""


def sparse_counts(n: int = 5000, d: int = 10, seed: int = 0) -> np.ndarray:
    r"""Zero-inflated negative-binomial counts, mostly zero with long tails, like a survey's visit counts (the
    project's own set for sparse features; no source paper uses it).

    Column j has mean :math:`\mu_j = 0.1 \cdot 50^{j/(d-1)}` (0.1 to 5); a person is a structural zero with
    probability :math:`\pi_j = 0.5 + 0.4 (1 - j/(d-1))` (0.9 for the sparsest column, 0.5 for the densest), and else
    draws a negative binomial of size r = 0.5 and mean :math:`\mu_j / (1 - \pi_j)` scaled by a common factor
    :math:`\exp(0.7 g_i - 0.245)`, :math:`g_i \sim \mathcal{N}(0, 1)` (so the columns correlate), recorded as
    :math:`\min(Y, 200)` (:data:`SPARSE_COUNTS_CAP`, the public domain).

    Parameters
    ----------
    n, d : int
        Rows and columns, n ≥ 2 and d ≥ 2.
    seed : int
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    numpy.ndarray
        ``(n, d)`` float64 integer counts in [0, 200].
    """
    if int(n) != n or n < 2 or int(d) != d or d < 2:
        raise ConfigError(f"sparse_counts needs integers n ≥ 2 and d ≥ 2, got n={n!r}, d={d!r}; fix "
                          "`dataset_options.sparse_counts`.")  # fmt: skip
    n, d = int(n), int(d)
    rng = np.random.default_rng(seed)
    t = np.arange(d) / (d - 1)
    mean, zero = 0.1 * 50.0**t, 0.5 + 0.4 * (1 - t)
    factor = np.exp(0.7 * rng.standard_normal((n, 1)) - 0.245)
    r = 0.5
    active_mean = factor * mean / (1 - zero)
    counts = rng.negative_binomial(r, r / (r + active_mean)) * (rng.random((n, d)) >= zero)
    return np.minimum(counts, SPARSE_COUNTS_CAP).astype(np.float64)
