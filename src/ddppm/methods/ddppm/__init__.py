"""D-DP-PM, the journal version (Campbell, Scaglione & Peisert): algorithm, release model, accountant,
calibration and theory. The registry entry is :mod:`ddppm.methods.ddppm.method`."""

from ddppm.methods.ddppm.method import DDPPM

__all__ = ["DDPPM"]
