"""ddppm: differentially private decentralized PCA (D-DP-PM) with a Rényi-divergence privacy accountant."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ddppm")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
