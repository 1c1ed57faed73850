"""Row partitions: which agent holds which rows of X (paper eq. 1, docs/method.md §3)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ddppm.core.errors import ConfigError


def check_agent_count(m: object) -> int:
    """``m`` as an int, or :class:`ConfigError` naming ``partition.m``."""
    if isinstance(m, bool) or not isinstance(m, int | np.integer) or int(m) < 1:
        raise ConfigError(f"partition.m must be an integer >= 1 (number of agents), got {m!r}")
    return int(m)


def partition_rows(
    n: int,
    m: int,
    *,
    seed: int | None = 0,
    shuffle: bool = True,
    sizes: Sequence[int] | None = None,
) -> list[np.ndarray]:
    r"""Split row indices ``0..n-1`` among ``m`` agents.

    Agent ``i`` holds rows ``parts[i]`` (its local data :math:`\mathbf{X}_i`, :math:`n_i` rows,
    :math:`\sum_i n_i = n`). With ``shuffle=True`` the rows are permuted by
    ``np.random.default_rng(seed).permutation(n)`` and then cut into consecutive blocks of the given
    sizes; with ``shuffle=False`` agent ``i`` gets a contiguous block. Sizes default to the near-equal
    split of ``np.array_split`` (the first ``n mod m`` agents get one extra row). Each part is returned
    **sorted ascending**, so a partition is a set of rows per agent and round-trips exactly through
    :func:`assignment_vector` / :func:`parts_from_assignment`.

    Parameters
    ----------
    n : int
        Number of rows, ``n >= m``.
    m : int
        Number of agents, ``m >= 1``.
    seed : int or None, default 0
        Seed of the shuffle (ignored if ``shuffle=False``).
    shuffle : bool, default True
        Shuffle rows before splitting.
    sizes : sequence of int or None
        Explicit part sizes :math:`n_i \ge 1` of length ``m`` summing to ``n``.

    Returns
    -------
    list of numpy.ndarray
        ``m`` int64 arrays of row indices.

    Raises
    ------
    ConfigError
        Invalid ``n``/``m`` (key ``partition.m``) or ``sizes`` (key ``partition.sizes``).
    """
    m = check_agent_count(m)
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or int(n) < 1:
        raise ConfigError(f"partition: number of rows n must be an integer >= 1, got {n!r}")
    n = int(n)
    if sizes is None:
        if n < m:
            raise ConfigError(
                f"partition.m: cannot give each of m = {m} agents at least one row of n = {n} rows; use m <= {n}"
            )
        q, r = divmod(n, m)
        size_arr = np.array([q + 1] * r + [q] * (m - r), dtype=np.int64)
    else:
        try:
            size_list = [int(s) for s in sizes]
            if any(int(s) != s for s in sizes):
                raise ValueError
        except (TypeError, ValueError) as err:
            raise ConfigError(f"partition.sizes must be a list of integers, got {sizes!r}") from err
        if len(size_list) != m:
            raise ConfigError(f"partition.sizes must have m = {m} entries (one per agent), got {len(size_list)}")
        if min(size_list) < 1:
            raise ConfigError(f"partition.sizes: every agent needs at least 1 row, got sizes {size_list}")
        if sum(size_list) != n:
            raise ConfigError(
                f"partition.sizes must sum to the number of rows n = {n}, but {size_list} sums to {sum(size_list)}"
            )
        size_arr = np.array(size_list, dtype=np.int64)
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    bounds = np.cumsum(size_arr)[:-1]
    return [np.sort(part).astype(np.int64) for part in np.split(order.astype(np.int64), bounds)]


def assignment_vector(parts: Sequence[np.ndarray], n: int) -> np.ndarray:
    """Agent id of every row: ``assign[r] = i`` iff row ``r`` is in ``parts[i]``.

    Parameters
    ----------
    parts : sequence of array_like of int
        Row indices per agent, as from :func:`partition_rows`.
    n : int
        Number of rows.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` int64 array (the table ``row_id -> agent``).

    Raises
    ------
    ConfigError
        A row index is out of range, or a row is assigned to no agent or to more than one
        (key ``partition``).
    """
    assign = np.full(int(n), -1, dtype=np.int64)
    for i, part in enumerate(parts):
        idx = np.asarray(part, dtype=np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ConfigError(f"partition: agent {i} has a row index outside 0..{n - 1}")
        if np.any(assign[idx] != -1) or np.unique(idx).size != idx.size:
            raise ConfigError(f"partition: agent {i} has a row that is already assigned (rows must be disjoint)")
        assign[idx] = i
    missing = np.flatnonzero(assign == -1)
    if missing.size:
        raise ConfigError(
            f"partition: {missing.size} of {n} rows are assigned to no agent (first: {missing[:5].tolist()})"
        )
    return assign


def parts_from_assignment(assign: np.ndarray, m: int) -> list[np.ndarray]:
    """Inverse of :func:`assignment_vector`: rows of each agent, in increasing row order.

    Parameters
    ----------
    assign : array_like of int
        ``(n,)`` agent id per row, values in ``0..m-1``.
    m : int
        Number of agents.

    Returns
    -------
    list of numpy.ndarray
        ``m`` int64 arrays; ``parts[i] = np.flatnonzero(assign == i)``.

    Raises
    ------
    ConfigError
        An agent id out of range or an agent with no rows (key ``partition``).
    """
    m = check_agent_count(m)
    a = np.asarray(assign).ravel()
    if a.size and (not np.issubdtype(a.dtype, np.integer) and not np.all(a == np.round(a))):
        raise ConfigError("partition: the assignment vector must hold integer agent ids")
    a = a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= m):
        raise ConfigError(f"partition: agent ids must lie in 0..{m - 1}, got range {a.min()}..{a.max()}")
    parts = [np.flatnonzero(a == i).astype(np.int64) for i in range(m)]
    empty = [i for i, p in enumerate(parts) if p.size == 0]
    if empty:
        raise ConfigError(f"partition: agents {empty} have no rows; every agent needs at least one row")
    return parts
