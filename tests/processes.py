"""Processes seen through /proc, for the tests that start and end real processes (tests/cluster's Slurm harness,
tests/federation's Flower federation on loopback): the functions ``ddppm coordinate`` itself uses."""

from __future__ import annotations

from ddppm.federation.processes import alive, descendants

__all__ = ["alive", "descendants"]
