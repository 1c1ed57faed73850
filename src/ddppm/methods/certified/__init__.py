"""D-DP-PM made private by proof (``ddppm_certified``): the smallest repair of the journal's Algorithm 1 whose
every release is a Gaussian mechanism with bounded sensitivity and data-independent noise (docs/certified.md).

* :mod:`.algorithm`: the repaired algorithm, vectorised over runs, and its agent-by-agent form;
* :mod:`.accounting`: its certified δ (sensitivity plus exact composition) and the observer's exact law;
* :mod:`.method`: the registered method (journal figures and the common task).
"""

from ddppm.methods.certified.method import CertifiedDDPPM

__all__ = ["CertifiedDDPPM"]
