"""Privacy of Gaussian releases, independent of any method: Rényi divergences, privacy-loss tails (Chernoff
bound and exact), and Gaussian-mechanism calibrations."""

from ddppm.privacy.tails import gaussian_tail_delta

__all__ = ["gaussian_tail_delta"]
