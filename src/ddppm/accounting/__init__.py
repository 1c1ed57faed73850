"""The accounting engine: what an observer of a calibrated gossip method sees, how much it learns, and the
parameters that keep that within a δ limit.

* :mod:`~ddppm.accounting.iteration`: the noisy gossip power iteration both D-DP-PM variants release
  (:class:`~ddppm.accounting.iteration.DDPPMParams`) and its noise-free counterpart (T*);
* :mod:`~ddppm.accounting.release`: the release model, the observer's Gaussian view conditioned on its own
  randomness (the interface a variant implements: ``ReleaseFamily`` in :mod:`~ddppm.accounting.accountant`);
* :mod:`~ddppm.accounting.neighbours`: the neighbour pool (heuristic candidates, the worst-case search's proposals);
* :mod:`~ddppm.accounting.accountant`: δ(ε) of a parameter choice under a threat model;
* :mod:`~ddppm.accounting.floor`: the parameter-free δ floor and its worst neighbour;
* :mod:`~ddppm.accounting.calibration`: the parameter search (a variant plugs in through ``CandidateFamily``);
* :mod:`~ddppm.accounting.settings`, :mod:`~ddppm.accounting.schema`: the engine's settings and its config
  sections (``privacy``, ``calibration``), shared by every calibrated method's schema;
* :mod:`~ddppm.accounting.rows`: a parameter choice as table columns and back;
* :mod:`~ddppm.accounting.reference`: a slow, independent δ for the tests and the benchmark.

The engine imports nothing above :mod:`ddppm.privacy` and :mod:`ddppm.core`; the methods
(:mod:`ddppm.methods.ddppm`, :mod:`ddppm.methods.workshop`) stand on it.
"""
