"""Noise for a release: OpenDP's Gaussian sampler behind the methods' one noise hook (docs/release.md).

Every Gaussian release of the bench's code goes through :func:`ddppm.privacy.mechanisms.gaussian_release`. Given a
numpy generator it draws ``value + σ · standard_normal`` (the bench: fast, reproducible, and wrong for releasing
real data, since a floating-point Gaussian's low bits depend on the value it is added to; Mironov, CCS 2012).
Given a :class:`SecureNoise` it calls OpenDP's ``make_gaussian`` on the value instead: a vector Gaussian sampled
exactly on a grid and rounded to floats, whose privacy map (zCDP, ``ρ = Δ²/(2σ²)``) holds for the floats it
outputs (OpenDP's proof document for ``make_gaussian``). Public randomness (a power method's random start, the
order of a stream's batches) still comes from the numpy generator the source wraps: it reads no data.

A method may run with a :class:`SecureNoise` only if every one of its noise draws goes through the hook: its
``secure_noise`` flag (:attr:`ddppm.common_task.base.CommonTaskMethod.secure_noise`), checked by a test that runs
each such method with a source that adds no noise and finds the noiseless answer.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ddppm.core.errors import PrivacyError

OPENDP_SAMPLER = "OpenDP make_gaussian (vector, L2, zCDP map)"


def opendp_module() -> Any:
    """``opendp.prelude`` with the ``contrib`` features (``make_gaussian`` is one) enabled."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


@lru_cache(maxsize=256)
def gaussian_measurement(std: float) -> Any:
    """OpenDP's vector Gaussian of standard deviation ``std`` on float vectors under the L2 distance."""
    dp = opendp_module()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    return dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=float(std))


def opendp_rho(sensitivity: float, std: float) -> float:
    """OpenDP's own privacy map: the zCDP ρ of one release of L2 sensitivity ``sensitivity`` at noise ``std``."""
    return float(gaussian_measurement(float(std)).map(float(sensitivity)))


class SecureNoise:
    """A release's noise source: Gaussian releases from OpenDP (:func:`gaussian_measurement`), everything else
    from the numpy generator ``public``. ``log`` records each release's ``(std, size)`` (shared with the sources
    :meth:`spawn` makes), so a fit can say what it drew."""

    def __init__(self, public: np.random.Generator, log: list[tuple[float, int]] | None = None) -> None:
        self._public = public
        self.log: list[tuple[float, int]] = [] if log is None else log

    def gaussian_release(self, value: Any, std: float) -> np.ndarray:
        value = np.asarray(value, float)
        if not (np.isfinite(std) and std > 0):
            raise PrivacyError(f"a secure Gaussian release needs a positive finite noise scale, got {std!r}")
        if not np.all(np.isfinite(value)):
            raise PrivacyError("a secure Gaussian release got a non-finite value: check the rows for NaN or inf")
        drawn = gaussian_measurement(float(std))(value.ravel().tolist())
        self.log.append((float(std), int(value.size)))
        return np.asarray(drawn, float).reshape(value.shape)

    def spawn(self, n_children: int) -> list[SecureNoise]:
        """Independent children (as :meth:`numpy.random.Generator.spawn`), each a secure source sharing the log."""
        return [type(self)(child, self.log) for child in self._public.spawn(n_children)]

    def __getattr__(self, name: str) -> Any:  # public randomness only: every noise draw uses gaussian_release
        return getattr(self._public, name)
