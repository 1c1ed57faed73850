"""What the parties of a federated release agree on in public before it runs (docs/federation.md, "What the
parties agree on").

Every input that shapes a release outside the mechanisms is public: the declared bounds, ε and δ, the method, k,
how the records are prepared, the number of parties and each one's count of rows, the methods' options, the noise
(``secure`` for a release; ``simulation`` only to compare with a one-process fit) and the seed of the public
randomness. The coordinator sends the agreement with every message; a party refuses any message whose agreement
differs from its own copy (:meth:`Agreement.digest`), so that nobody can change ε, the bounds or the method in the
middle of a run.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ddppm.core.errors import ConfigError
from ddppm.release.inputs import check_budget, check_choices, check_rank, declared_bounds, standardize_choice
from ddppm.release.route import method_options

FEDERATED_TRUST = ("local", "secure_aggregation")
"""The trust levels a federated release serves: with a curator (``central``) nobody needs a federation."""


@dataclass(frozen=True)
class Agreement:
    """The public agreement of one federated release (module docstring). ``sizes``: each party's count of rows, in
    the parties' order (party ``j`` is the j-th); ``bounds``: the mapping :class:`~ddppm.PrivatePCA` takes;
    ``colluding``: c, the most parties that may collude with the coordinator. Where only a sum is seen (secure
    aggregation), each party then adds its share of the noise for p − c parties, so that the honest parties' shares
    alone make up the noise the certificate assumes (the release carries p/(p − c) times its variance)."""

    n_components: int
    epsilon: float
    delta: float
    bounds: dict[str, Any]
    sizes: tuple[int, ...]
    method: str
    trust: str = "local"
    standardize: bool | str = True
    noise: str = "secure"
    seed: int = 0
    method_options: dict[str, Any] = field(default_factory=dict)
    colluding: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sizes", tuple(int(s) for s in self.sizes))
        object.__setattr__(self, "standardize", standardize_choice(self.standardize))
        self._check_holders()
        if self.method == "auto":
            raise ConfigError("agreement: name the method (the parties agree on it before the run; `ddppm advise` "
                              "chooses one from public parameters)")  # fmt: skip
        check_choices(self.standardize, self.noise, self.seed)
        check_budget(self.epsilon, self.delta, self.n)
        method_options(self.method_options)

    def _check_holders(self) -> None:
        """Two or more parties, each with rows, at a trust level a federation serves."""
        if len(self.sizes) < 2 or min(self.sizes) < 1:
            raise ConfigError(f"agreement: sizes {list(self.sizes)} must give two or more parties, each with rows")
        if self.trust not in FEDERATED_TRUST:
            raise ConfigError(f"agreement: trust {self.trust!r} must be one of {FEDERATED_TRUST} (with a curator, "
                              "fit in one process: PrivatePCA)")  # fmt: skip
        c = self.colluding
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < max(len(self.sizes), 1):
            raise ConfigError(f"agreement: colluding {c!r} must be a whole number from 0 to {len(self.sizes) - 1} "
                              "(the most parties that may collude with the coordinator; at least one must not)")

    @property
    def n(self) -> int:
        """The total count of rows (public: the sum of the sizes)."""
        return int(sum(self.sizes))

    def checked(self, d: int) -> tuple[Any, int]:
        """The declared bounds for d features, and k, checked (a party does this on its own records' d)."""
        return declared_bounds(self.bounds, d, self.standardize), check_rank(self.n_components, d)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (what travels in messages)."""
        data = asdict(self)
        data["sizes"] = list(self.sizes)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Agreement:
        """The agreement of :meth:`to_dict`'s mapping; unknown keys are refused."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"agreement: unknown keys {unknown}; the keys are {sorted(known)}")
        return cls(**data)

    def digest(self) -> str:
        """SHA-256 of the canonical JSON: equal agreements, equal digests."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()


def read_agreement(path: str | Path) -> Agreement:
    """The agreement in the JSON file ``path`` (as ``ddppm agreement`` writes it), checked."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"agreement: {path} is not a file (the JSON every party and the coordinator accepted)")
    try:
        return Agreement.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as error:
        raise ConfigError(f"agreement: {path} is not JSON ({error})") from None
