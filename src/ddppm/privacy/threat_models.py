"""The threat models: the one table every method, experiment and the config schema read.

A threat model names the three choices δ depends on (docs/privacy.md):

* ``view``: who observes. ``paper``: an agent's own releases only (journal eq. 22–25); ``network``: everything
  the agent receives, which is every release.
* ``accounting``: ``chernoff`` (Theorem 2, an upper bound on each tail) or ``exact`` (the true tail of the
  privacy loss, a generalised χ²).
* ``adjacency``: ``heuristic`` (the paper's unspecified neighbour, our guess) or ``worst`` (a search for the
  neighbour that leaks most: its δ is a lower bound on the true δ, "at least").

The built-in ones are :data:`BUILT_IN`; the config key ``threat_models`` may add more, and every experiment that
accounts a D-DP-PM family accepts any name in the merged table (:func:`threat_model_table`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from ddppm.core.errors import ConfigError

VIEWS = ("paper", "network")
ACCOUNTINGS = ("chernoff", "exact")
ADJACENCIES = ("heuristic", "worst")


@dataclass(frozen=True)
class ThreatModel:
    """One named privacy setting: who observes, how δ is accounted, which neighbour."""

    view: str
    accounting: str
    adjacency: str

    def __post_init__(self) -> None:
        for key, value, allowed in (
            ("view", self.view, VIEWS),
            ("accounting", self.accounting, ACCOUNTINGS),
            ("adjacency", self.adjacency, ADJACENCIES),
        ):
            if value not in allowed:
                raise ConfigError(f"threat_models.<name>.{key}: unknown {value!r}; use one of {list(allowed)}")

    def as_dict(self) -> dict[str, str]:
        """``{view, accounting, adjacency}``: the form the config and the tables use."""
        return asdict(self)

    @property
    def delta_is(self) -> str:
        """How a δ computed under this model reads: a searched worst neighbour gives a lower bound on the true δ
        ("at least"); a guessed neighbour gives the δ of that neighbour only."""
        return "at least" if self.adjacency == "worst" else "for the guessed neighbour"


BUILT_IN: dict[str, ThreatModel] = {
    "paper": ThreatModel("paper", "chernoff", "heuristic"),
    "paper_worst": ThreatModel("paper", "exact", "worst"),
    "network": ThreatModel("network", "chernoff", "heuristic"),
    "sound": ThreatModel("network", "exact", "worst"),
}
"""The built-in named threat models (also the config schema's default for ``threat_models``)."""


def threat_model_table(definitions: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, ThreatModel]:
    """The built-in threat models with the config's ``threat_models`` over them (a config entry of the same name
    replaces the built-in one)."""
    table = dict(BUILT_IN)
    for name, definition in (definitions or {}).items():
        table[name] = ThreatModel(**definition)
    return table


def resolve(
    name: str, definitions: Mapping[str, Mapping[str, str]] | None = None, key: str = "threat_models"
) -> ThreatModel:
    """The threat model ``name``; a :class:`ConfigError` naming ``key`` (the config key that asked for it)."""
    table = threat_model_table(definitions)
    if name not in table:
        raise ConfigError(
            f"{key}: unknown threat model {name!r}; known: {sorted(table)}. Define it under the top-level "
            "`threat_models` (view, accounting, adjacency)"
        )
    return table[name]
