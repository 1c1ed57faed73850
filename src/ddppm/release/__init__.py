"""A private PCA to release: :class:`~ddppm.release.estimator.PrivatePCA` (scikit-learn's shape, the bench's code),
its certificate (:mod:`~ddppm.release.certificate`), secure noise (:mod:`~ddppm.release.noise`) and ``ddppm fit``
(:mod:`~ddppm.release.cli`). docs/release.md walks through a release."""
