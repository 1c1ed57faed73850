"""Tests of ddppm.core.network: mixing matrices (Assumption 2), consensus (eq. 11/47) and row partitions."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from ddppm.core.errors import ConfigError, NetworkError
from ddppm.core.network import (
    TOPOLOGIES,
    assignment_vector,
    build_graph,
    consensus_matrix,
    gossip,
    metropolis_hastings_weights,
    mixing_matrix,
    paper_ring_w,
    partition_rows,
    parts_from_assignment,
    second_eigenvalue,
    validate_mixing_matrix,
)

# ------------------------------------------------------------------------------------------------ paper W


def test_paper_ring_exact_and_valid():
    W = paper_ring_w()
    expected = np.array([[0.5, 0.25, 0, 0.25], [0.25, 0.5, 0.25, 0], [0, 0.25, 0.5, 0.25], [0.25, 0, 0.25, 0.5]])
    np.testing.assert_array_equal(W, expected)
    validate_mixing_matrix(W)
    np.testing.assert_array_equal(mixing_matrix(), expected)
    np.testing.assert_array_equal(mixing_matrix("paper_ring", 4), expected)
    # fresh copy each call
    W[0, 0] = 9.0
    assert paper_ring_w()[0, 0] == 0.5


def test_paper_ring_spectrum():
    W = paper_ring_w()
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(W)), [0.0, 0.5, 0.5, 1.0], atol=1e-14)
    assert second_eigenvalue(W) == pytest.approx(0.5, abs=1e-14)


# ------------------------------------------------------------------------------------------- topologies


@pytest.mark.parametrize("m", [4, 9])
@pytest.mark.parametrize("topology", [t for t in TOPOLOGIES if t != "paper_ring"])
def test_every_topology_valid(topology, m):
    kwargs = {"seed": 3, "edge_prob": 0.7} if topology == "erdos_renyi" else {"seed": 3}  # random ones: seeded
    W = mixing_matrix(topology, m, **kwargs)
    assert W.shape == (m, m)
    np.testing.assert_allclose(W, W.T, atol=0)
    np.testing.assert_allclose(W.sum(axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(W >= 0)
    validate_mixing_matrix(W)
    lam2 = second_eigenvalue(W)
    assert 0.0 <= lam2 < 1.0
    # positive off-diagonal pattern == edge set of the graph
    graph = build_graph(topology, m, **kwargs)
    adj = nx.to_numpy_array(graph, nodelist=range(m)) > 0
    np.testing.assert_array_equal((W > 0) & ~np.eye(m, dtype=bool), adj)


def test_graph_shapes():
    assert build_graph("ring", 5).number_of_edges() == 5
    assert build_graph("path", 5).number_of_edges() == 4
    star = build_graph("star", 5)
    assert star.number_of_nodes() == 5 and star.number_of_edges() == 4 and star.degree[0] == 4
    assert build_graph("complete", 5).number_of_edges() == 10
    grid = build_graph("grid", 6)  # 2 x 3
    assert sorted(grid.nodes) == list(range(6)) and grid.number_of_edges() == 7
    grid9 = build_graph("grid", 9)  # 3 x 3
    assert grid9.number_of_edges() == 12 and grid9.degree[4] == 4
    grid12 = build_graph("grid", 12)  # 3 x 4
    assert grid12.number_of_edges() == 3 * 3 + 2 * 4
    ring1 = build_graph("ring", 1)
    assert ring1.number_of_nodes() == 1 and ring1.number_of_edges() == 0
    np.testing.assert_array_equal(mixing_matrix("ring", 1), [[1.0]])


def test_erdos_renyi_seeded_and_default_prob():
    g1 = build_graph("erdos_renyi", 20, seed=7)
    g2 = build_graph("erdos_renyi", 20, seed=7)
    assert sorted(g1.edges) == sorted(g2.edges)
    assert build_graph("erdos_renyi", 9, edge_prob=1.0, seed=0).number_of_edges() == 36
    assert build_graph("erdos_renyi", 9, edge_prob=0.0, seed=0).number_of_edges() == 0
    with pytest.raises(NetworkError, match="connected"):
        mixing_matrix("erdos_renyi", 9, edge_prob=0.0, seed=0)
    with pytest.raises(ConfigError, match="network.edge_prob"):
        build_graph("erdos_renyi", 9, edge_prob=1.5)


def test_metropolis_hastings_values():
    # path 0-1-2: degrees 1,2,1 -> w01 = w12 = 1/3
    W = metropolis_hastings_weights(nx.path_graph(3))
    expected = np.array([[2 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 1 / 3], [0, 1 / 3, 2 / 3]])
    np.testing.assert_allclose(W, expected, atol=1e-15)
    # complete graph K_m: all entries 1/m
    np.testing.assert_allclose(metropolis_hastings_weights(nx.complete_graph(5)), np.full((5, 5), 0.2))


@pytest.mark.parametrize("m", [2, 4, 9])
def test_second_eigenvalue_complete_graph(m):
    # MH weights of K_m = 11^T/m: consensus in one step, lambda_2 = 0
    assert second_eigenvalue(mixing_matrix("complete", m)) == pytest.approx(0.0, abs=1e-12)


def test_second_eigenvalue_ring_and_modulus():
    # MH ring, m = 6: W = I/3 + (S + S^T)/3, eigenvalues (1 + 2 cos(2 pi k/6))/3; max |.| for k >= 1 is 2/3
    assert second_eigenvalue(mixing_matrix("ring", 6)) == pytest.approx(2 / 3, abs=1e-12)
    # largest modulus, not second-largest signed eigenvalue: W = [[.1,.9],[.9,.1]] has eigenvalues 1, -0.8
    assert second_eigenvalue(np.array([[0.1, 0.9], [0.9, 0.1]])) == pytest.approx(0.8, abs=1e-12)


# -------------------------------------------------------------------------------------------- consensus


@pytest.mark.parametrize("topology,m", [("paper_ring", 4), ("ring", 9), ("grid", 9), ("star", 7)])
@pytest.mark.parametrize("c", [0, 1, 5, 20])
def test_gossip_equals_matrix_power(topology, m, c):
    W = mixing_matrix(topology, m)
    rng = np.random.default_rng(c)
    Z = rng.standard_normal((m, 3, 2))
    out = gossip(W, Z, c)
    expected = np.einsum("ij,jab->iab", np.linalg.matrix_power(W, c), Z)
    np.testing.assert_allclose(out, expected, atol=1e-12)
    np.testing.assert_allclose(consensus_matrix(W, c), np.linalg.matrix_power(W, c), atol=0)
    # 1-D values, and the input is not modified
    z = rng.standard_normal(m)
    z0 = z.copy()
    np.testing.assert_allclose(gossip(W, z, c), consensus_matrix(W, c) @ z, atol=1e-12)
    np.testing.assert_array_equal(z, z0)


def test_gossip_one_round_uses_only_neighbours():
    W = mixing_matrix("path", 5)
    Z = np.zeros((5, 2))
    Z[4] = 1.0  # only the last agent holds a value
    out = gossip(W, Z, 1)
    assert np.all(out[:3] == 0.0) and np.all(out[3:] > 0)


@pytest.mark.parametrize("topology,m", [("paper_ring", 4), ("ring", 9), ("path", 6), ("grid", 9), ("star", 5)])
def test_consensus_error_decays_like_lambda2_power(topology, m):
    """Eq. (47): ||m (W^c)_{i,:} z - sum_j z_j|| <= m lambda_2^c ||z - zbar|| for every agent i."""
    W = mixing_matrix(topology, m)
    lam2 = second_eigenvalue(W)
    rng = np.random.default_rng(42)
    d = 4
    Z = rng.standard_normal((m, d))
    total = Z.sum(axis=0)
    spread = np.linalg.norm(Z - Z.mean(axis=0))
    prev = None
    for c in range(1, 21):
        est = m * gossip(W, Z, c)  # every agent's estimate of sum_j z_j
        err = np.linalg.norm(est - total, axis=1)
        assert np.all(err <= m * lam2**c * spread * (1 + 1e-9) + 1e-12), (c, err.max())
        # stacked residual (W^c - 11^T/m) z contracts by at least lambda_2 per round
        resid = np.linalg.norm(est / m - Z.mean(axis=0))
        if prev is not None:
            assert resid <= lam2 * prev * (1 + 1e-9) + 1e-13, (c, resid, prev)
        prev = resid
    assert prev <= lam2**20 * spread * (1 + 1e-9) + 1e-13


# ----------------------------------------------------------------------------------------------- errors


def test_non_stochastic_rejected():
    W = paper_ring_w()
    W[1, 1] = 0.6
    W[0, 0] = 0.6
    with pytest.raises(NetworkError) as info:
        validate_mixing_matrix(W, key="network.W")
    msg = str(info.value)
    assert "stochastic" in msg and "network.W" in msg and "row 0" in msg and "1.1" in msg
    assert "metropolis_hastings_weights" in msg


def test_asymmetric_rejected():
    # doubly stochastic but not symmetric (a directed cycle permutation mixed with I)
    P = np.roll(np.eye(4), 1, axis=1)
    W = 0.5 * np.eye(4) + 0.5 * P
    with pytest.raises(NetworkError, match=r"not symmetric.*network"):
        validate_mixing_matrix(W)
    with pytest.raises(NetworkError, match="symmetric"):
        validate_mixing_matrix(W, key="custom")


def test_negative_entry_rejected():
    W = np.array([[1.2, -0.2], [-0.2, 1.2]])
    with pytest.raises(NetworkError, match=r"negative entry W\[0,1\]"):
        validate_mixing_matrix(W)


def test_disconnected_rejected():
    block = np.array([[0.5, 0.5], [0.5, 0.5]])
    W = np.block([[block, np.zeros((2, 2))], [np.zeros((2, 2)), block]])
    with pytest.raises(NetworkError) as info:
        validate_mixing_matrix(W)
    msg = str(info.value)
    assert "connected" in msg and "network" in msg and "add edges" in msg and "[0, 1]" in msg


def test_periodic_rejected():
    with pytest.raises(NetworkError, match="lambda_2"):
        validate_mixing_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))


def test_shape_and_finiteness_rejected():
    with pytest.raises(NetworkError, match="square"):
        validate_mixing_matrix(np.ones((2, 3)) / 3)
    W = paper_ring_w()
    W[2, 2] = np.nan
    with pytest.raises(NetworkError, match="non-finite"):
        validate_mixing_matrix(W)


def test_paper_ring_needs_m4():
    with pytest.raises(ConfigError) as info:
        mixing_matrix("paper_ring", 5)
    msg = str(info.value)
    assert "partition.m" in msg and "'ring'" in msg


def test_unknown_topology():
    for call in (lambda: mixing_matrix("torus", 4), lambda: build_graph("torus", 4)):
        with pytest.raises(ConfigError) as info:
            call()
        msg = str(info.value)
        assert "network.topology" in msg and "torus" in msg and "erdos_renyi" in msg


def test_bad_m_and_c():
    with pytest.raises(ConfigError, match="partition.m"):
        build_graph("ring", 0)
    with pytest.raises(ConfigError, match="partition.m"):
        build_graph("grid", 7)  # prime: no 2-D factorisation
    with pytest.raises(ConfigError, match="network.c"):
        consensus_matrix(paper_ring_w(), -1)
    with pytest.raises(ConfigError, match="network.c"):
        gossip(paper_ring_w(), np.zeros(4), 1.5)
    with pytest.raises(NetworkError, match="Z.shape"):
        gossip(paper_ring_w(), np.zeros(5), 1)


# -------------------------------------------------------------------------------------------- partition


@pytest.mark.parametrize("n,m", [(100, 4), (103, 4), (10, 3), (5, 5), (7, 1)])
@pytest.mark.parametrize("shuffle", [True, False])
def test_partition_sizes_and_cover(n, m, shuffle):
    parts = partition_rows(n, m, seed=1, shuffle=shuffle)
    assert len(parts) == m
    sizes = [len(p) for p in parts]
    assert sizes == [len(a) for a in np.array_split(np.arange(n), m)]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    allrows = np.concatenate(parts)
    np.testing.assert_array_equal(np.sort(allrows), np.arange(n))
    assert all(p.dtype == np.int64 for p in parts)


def test_partition_equal_when_divisible():
    assert [len(p) for p in partition_rows(100, 4)] == [25, 25, 25, 25]


def test_partition_reproducible_per_seed():
    a = partition_rows(50, 4, seed=5)
    b = partition_rows(50, 4, seed=5)
    c = partition_rows(50, 4, seed=6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))
    # matches the documented construction: permutation split into blocks, each sorted
    perm = np.random.default_rng(5).permutation(50)
    for part, block in zip(a, np.array_split(perm, 4), strict=True):
        np.testing.assert_array_equal(part, np.sort(block))


def test_partition_contiguous():
    parts = partition_rows(10, 3, shuffle=False)
    assert [p.tolist() for p in parts] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]


def test_partition_given_sizes():
    parts = partition_rows(10, 3, sizes=[2, 5, 3], seed=0)
    assert [len(p) for p in parts] == [2, 5, 3]
    np.testing.assert_array_equal(np.sort(np.concatenate(parts)), np.arange(10))
    parts = partition_rows(10, 3, sizes=[2, 5, 3], shuffle=False)
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3, 4, 5, 6], [7, 8, 9]]


@pytest.mark.parametrize("sizes", [[2, 5, 4], [0, 5, 5], [5, 5], [2, 5, 3, 0], [2.5, 4.5, 3]])
def test_partition_bad_sizes(sizes):
    with pytest.raises(ConfigError, match="partition.sizes"):
        partition_rows(10, 3, sizes=sizes)


def test_partition_too_few_rows():
    with pytest.raises(ConfigError, match="partition.m"):
        partition_rows(3, 4)


@pytest.mark.parametrize("shuffle", [True, False])
def test_assignment_roundtrip(shuffle):
    n, m = 37, 4
    parts = partition_rows(n, m, seed=11, shuffle=shuffle)
    assign = assignment_vector(parts, n)
    assert assign.shape == (n,)
    for i, p in enumerate(parts):
        assert np.all(assign[p] == i)
    back = parts_from_assignment(assign, m)
    assert len(back) == m
    for p, q in zip(parts, back, strict=True):
        np.testing.assert_array_equal(p, q)
    # through a stored "row_id -> agent" table (e.g. CSV) and back
    table = np.column_stack([np.arange(n), assign])
    back2 = parts_from_assignment(table[np.argsort(table[:, 0]), 1], m)
    assert all(np.array_equal(p, q) for p, q in zip(parts, back2, strict=True))


def test_assignment_errors():
    with pytest.raises(ConfigError, match="no agent"):
        assignment_vector([np.array([0, 1]), np.array([2])], 4)
    with pytest.raises(ConfigError, match="already assigned"):
        assignment_vector([np.array([0, 1]), np.array([1, 2])], 3)
    with pytest.raises(ConfigError, match="outside"):
        assignment_vector([np.array([0, 5])], 3)
    with pytest.raises(ConfigError, match="0..1"):
        parts_from_assignment(np.array([0, 1, 2]), 2)
    with pytest.raises(ConfigError, match="no rows"):
        parts_from_assignment(np.array([0, 0, 2]), 3)


def test_the_parties_network_is_the_topology_from_three_parties_on() -> None:
    from ddppm.core.network import mixing_matrix, parties_mixing_matrix

    np.testing.assert_array_equal(parties_mixing_matrix(1), np.ones((1, 1)))
    np.testing.assert_array_equal(parties_mixing_matrix(2, "ring"), mixing_matrix("complete", 2))
    np.testing.assert_array_equal(parties_mixing_matrix(5, "ring"), mixing_matrix("ring", 5))


def test_a_problem_checks_each_network_once_and_every_new_one() -> None:
    """Neighbour problems on one network skip the repeated check (a calibration builds thousands), but a network
    not seen before, even one edited in place, is still checked."""
    from ddppm.core.problem import _CHECKED_NETWORKS, DistributedProblem

    W = np.full((3, 3), 1 / 3)
    blocks = tuple(np.ones((2, 2)) for _ in range(3))
    DistributedProblem(blocks=blocks, W=W, c=1)
    assert (str(W.dtype), W.shape, W.tobytes()) in _CHECKED_NETWORKS
    bad = W.copy()
    bad[0, 1], bad[0, 2] = 0.0, 2 / 3  # rows still sum to 1, but W is no longer symmetric
    with pytest.raises(NetworkError):
        DistributedProblem(blocks=blocks, W=bad, c=1)
    W[0, 1], W[0, 2] = 0.0, 2 / 3  # the checked matrix edited in place: new bytes, checked again
    with pytest.raises(NetworkError):
        DistributedProblem(blocks=blocks, W=W, c=1)
