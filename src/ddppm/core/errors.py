"""Exception types. Every message names the offending key or input and says how to fix it."""


class DDPPMError(ValueError):
    """Base class of all errors raised on bad input by ddppm."""


class ConfigError(DDPPMError):
    """A configuration value is invalid."""


class DataError(DDPPMError):
    """A data set could not be loaded, failed its checksum, or violates an assumption (unit ball)."""


class NetworkError(DDPPMError):
    """A mixing matrix or graph violates Assumption 2 of the paper."""


class PrivacyError(DDPPMError):
    """A privacy parameter (epsilon, delta) is out of range."""
