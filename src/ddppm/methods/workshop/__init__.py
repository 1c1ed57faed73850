"""D-DP-PM, the workshop version (Campbell, Scaglione & Peisert, "Decentralized Differentially Private Power
Method", TPDP workshop 2025): algorithm, release model, Theorem 1, budget split, accounting and calibration.
The registry entry is :mod:`ddppm.methods.workshop.method` (method name ``ddppm_workshop``)."""

from ddppm.methods.workshop.method import WorkshopDDPPM

__all__ = ["WorkshopDDPPM"]
