"""The public plan of a federated release, and the party's side of it: every step a party may be asked, in order,
what each message may carry and the admissible range of every public value in it, derived from the agreement
alone (docs/federation.md, "The plan a party enforces").

The coordinator, ``PrivatePCA.fit_stream``'s one holder and every party run the same plan (:func:`plan_steps`):

1. ``box_counts``, once per round of the private box (0 to 3 rounds, a public rule in n, d and ε);
2. ``sums``;
3. ``norm_counts``, when the clipping radius is searched and the grid the released statistics give has more than
   one radius (otherwise that radius is the answer, unseen: nothing is asked);
4. the method's own steps (:meth:`~ddppm.common_task.base.CommonTaskMethod.federated_steps`): ``method``, or
   ``method:0`` … ``method:L−1`` for the power methods and D-DP-PM, each carrying a query block.

A party (:class:`PlanFollower`) answers each step at most once, in that order, and refuses repeats, unknown steps,
anything after the last, unknown keys, and every public value outside its admissible set:

* the first box round's query is the whole public box; each later round's lies inside the round before it and
  keeps at least one of its bins (what :func:`~ddppm.common_task.range_finding.shrink_intervals` can return);
* from ``sums`` on, the box is the one ``sums`` carried, unchanged;
* the released mean lies in the box's image and the variances between the public floor and the box's half-width
  squared (the coordinator projects its estimates there, as the one-process fit does:
  :func:`~ddppm.common_task.preprocessing.admissible_statistics`); the radius is a point of the grid the party
  computes itself from them (:func:`radius_candidates`), and ``norm_counts``' grid is that grid;
  once released, none of them may change;
* a method's query block has the agreed shape, finite entries and orthonormal columns (what the method's
  sensitivity assumes: any orthonormal block, chosen adaptively, is covered by its accounting), and the first one
  is the public start drawn from the agreement's seed.

An honest coordinator's values are always admissible. With these checks
the party's computation after its ledger is charged cannot fail on its rows: every intermediate is finite.

Every refusal is one of four words (:class:`Refused`): ``refused: protocol`` (a message outside the plan),
``refused: rows`` (the party's own records do not match the agreement), ``refused: budget`` (its ledger's budget is
spent) and ``refused: agreement`` (another agreement's digest). Details stay in the party's own log.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddppm.common_task.clip_radius import max_norm, radius_grid
from ddppm.common_task.preprocessing import coordinate_bound, floor_of
from ddppm.core.errors import ConfigError

REFUSALS = ("protocol", "rows", "budget", "agreement")
"""The only words a party's refusal carries to the coordinator."""

REFUSED = "refused: protocol"
"""The refusal of any failure that names no other (:func:`refusal_of`)."""

REFUSAL_TEXTS = frozenset(f"refused: {kind}" for kind in REFUSALS)
"""Every text a refusal may carry out of the party."""

log = logging.getLogger("ddppm.party")


class Refused(ConfigError):
    """A party's refusal: its text, ``refused: <kind>``, is all that leaves the party; ``detail`` is for its own
    log only (it may name the party's files or values)."""

    def __init__(self, kind: str, detail: str = "") -> None:
        if kind not in REFUSALS:
            raise ValueError(f"a refusal is one of {REFUSALS}, not {kind!r}")
        self.kind, self.detail, self.refusal = kind, detail, f"refused: {kind}"
        super().__init__(self.refusal)


def refusal_of(error: BaseException) -> str:
    """The only text of a failure that leaves the party: the error's ``refusal`` if it is one of
    :data:`REFUSAL_TEXTS`, else :data:`REFUSED`. An error's own message may carry the party's data (a CSV cell in a
    parse error), so it is never sent."""
    refusal = getattr(error, "refusal", None)
    return refusal if isinstance(refusal, str) and refusal in REFUSAL_TEXTS else REFUSED


@dataclass(frozen=True)
class PlannedStep:
    """One step of the plan: the message's ``name``, its ``kind`` (``box_counts``, ``sums``, ``norm_counts`` or
    ``method``), its ``round`` within that kind, and whether it may be skipped (``norm_counts``: only when the
    released statistics' radius grid has one point)."""

    name: str
    kind: str
    round: int
    optional: bool = False


def preprocessing_steps(public: Any) -> tuple[PlannedStep, ...]:
    """The preprocessing's steps of the release of ``public`` (a :class:`~ddppm.federation.public.PublicRelease`):
    the box's rounds, the sums, the norm counts (none when the records are not centred)."""
    steps: list[PlannedStep] = []
    noise = public.noise
    if noise is not None:
        steps += [PlannedStep("box_counts", "box_counts", r) for r in range(noise.range_rounds)]
        steps.append(PlannedStep("sums", "sums", 0))
        if noise.radius_searched:
            steps.append(PlannedStep("norm_counts", "norm_counts", 0, optional=True))
    return tuple(steps)


def method_steps(public: Any) -> tuple[PlannedStep, ...]:
    """The method's steps (:meth:`~ddppm.common_task.base.CommonTaskMethod.federated_steps`; some need the method's
    calibration, which the party computes only when they come)."""
    return tuple(PlannedStep(name, "method", r) for r, name in enumerate(public.method.federated_steps(public)))


def plan_steps(public: Any) -> tuple[PlannedStep, ...]:
    """The steps of the release of ``public``, in order."""
    return preprocessing_steps(public) + method_steps(public)


def full_box(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The public box every coordinate of the publicly prepared rows lies in: ``[−1, 1]/√d``."""
    half = 1.0 / np.sqrt(d)
    return np.full(d, -half), np.full(d, half)


def variance_floor(public: Any) -> float:
    """The released variances' public floor (:func:`~ddppm.common_task.preprocessing.release_statistics`)."""
    return floor_of(public.noise, public.plan, public.agreement.n)


def radius_candidates(public: Any, mean: np.ndarray, variance: np.ndarray | None) -> np.ndarray:
    """The clipping radius' public grid from the released statistics: from the fixed radius (scaling) or the
    largest norm over the plan's span (centring only) up to the largest norm a standardised row can have."""
    plan, d = public.plan, public.d
    if plan.scale:
        highest, lowest = max_norm(mean, variance, np.full(d, 1.0 / np.sqrt(d))), plan.fixed_radius(d)
    else:
        highest = 1.0 + float(np.linalg.norm(mean))
        lowest = highest / plan.radius.span
    return radius_grid(lowest, highest, plan.radius)


def coordinate_bounds(public: Any, box: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """The largest absolute value of each coordinate of the rows the sums see, in the released box (at the common
    scale when centring only: :func:`~ddppm.common_task.preprocessing.coordinate_bound`)."""
    widths = None if public.plan.scale else public.widths
    return coordinate_bound(public.d, widths, public.box(*box) if box is not None else None)


def real_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float array if it holds real numbers (integers or floats; not bools, complex numbers, text or
    objects), else ValueError naming ``name``."""
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, not {array.dtype}")
    return array.astype(float)


class PlanFollower:
    """Party ``index``'s side of the plan of ``public`` (module docstring); ``saved``: :attr:`state` after its
    previous message (None: a new run)."""

    def __init__(self, public: Any, index: int, saved: dict[str, Any] | None = None) -> None:
        self.public, self.index = public, index
        self._preprocessing = preprocessing_steps(public)
        self._method: tuple[PlannedStep, ...] | None = None
        saved = saved or {}
        self.position = int(saved.get("position", 0))
        self._kept: dict[str, Any] = {k: (None if v is None else np.asarray(v, float))
                                      for k, v in saved.get("kept", {}).items()}  # fmt: skip

    @property
    def state(self) -> dict[str, Any]:
        """JSON-ready: the next step's position and the released values kept (the last box asked, the box, the
        mean, the variances, the radius)."""
        kept = {k: (None if v is None else np.asarray(v).tolist()) for k, v in self._kept.items()}
        return {"position": self.position, "kept": kept}

    def _step(self, position: int) -> PlannedStep | None:
        """The plan's step at ``position`` (None past the last); the method's steps are derived when first needed."""
        if position < len(self._preprocessing):
            return self._preprocessing[position]
        if self._method is None:
            self._method = method_steps(self.public)
        rest = position - len(self._preprocessing)
        return self._method[rest] if rest < len(self._method) else None

    @property
    def finished(self) -> bool:
        return self._step(self.position) is None

    def admit(self, step: Any, message: dict[str, Any]) -> dict[str, Any]:
        """The checked public values of ``step`` (float arrays; None where absent), once this party may answer
        it: in the plan's order, once, every value admissible; else :class:`Refused` (``protocol``). The position
        moves on before the answer is computed: a step is never answered twice, even if its answer fails."""
        if not isinstance(step, str):
            raise Refused("protocol", f"a step name must be text, got {type(step).__name__}")
        position, planned = self._expected(step)
        if not isinstance(message, dict):
            raise Refused("protocol", f"step {step!r}: the message is a {type(message).__name__}, not a mapping")
        try:
            checked = getattr(self, f"_check_{planned.kind}")(planned, message)
        except (TypeError, ValueError, ArithmeticError) as error:
            raise Refused("protocol", f"step {step!r}: {type(error).__name__}: {error}") from None
        self.position = position + 1
        return checked

    def _expected(self, step: str) -> tuple[int, PlannedStep]:
        """The position and planned step named ``step`` from here (skipping an optional one), or a refusal."""
        position = self.position
        while (planned := self._step(position)) is not None:
            if planned.name == step:
                return position, planned
            if not planned.optional:
                break
            position += 1
        expected = self._step(self.position)
        raise Refused("protocol", f"step {step!r} is not the plan's next (expected "
                      f"{expected.name if expected else 'nothing: the plan is done'}; {self.position} answered)")

    def _keys(self, message: dict[str, Any], allowed: set[str], required: set[str]) -> None:
        extra = set(message) - allowed - {"agreement"}
        missing = required - set(message)
        if extra or missing:
            raise ValueError(f"unexpected keys {sorted(extra)}, missing keys {sorted(missing)}")

    def _vector(self, value: Any, name: str) -> np.ndarray:
        array = real_array(value, name)
        if array.shape != (self.public.d,) or not np.all(np.isfinite(array)):
            raise ValueError(f"{name} must be {self.public.d} finite numbers")
        return array

    def _box(self, message: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
        lower, upper = message.get("lower"), message.get("upper")
        if lower is None and upper is None:
            return None
        if lower is None or upper is None:
            raise ValueError("lower and upper come together")
        lower, upper = self._vector(lower, "lower"), self._vector(upper, "upper")
        if not np.all(lower < upper):
            raise ValueError("every lower edge must be below its upper edge")
        return lower, upper

    def _child_box(self, box: Any, parent: tuple[np.ndarray, np.ndarray]) -> None:
        """``box`` is a result :func:`~ddppm.common_task.range_finding.shrink_intervals` can give from ``parent``:
        inside it, and at least one of its bins wide."""
        if box is None:
            raise ValueError("a box round's result is required")
        bins = self.public.plan.range.bins
        least = (parent[1] - parent[0]) / bins * (1 - 1e-9)
        if not (np.all(box[0] >= parent[0]) and np.all(box[1] <= parent[1]) and np.all(box[1] - box[0] >= least)):
            raise ValueError("the box must lie inside the previous round's and keep at least one of its bins")

    def _same(self, name: str, value: Any) -> None:
        """``value`` equals the released ``name`` kept earlier (bit for bit: no change mid-run)."""
        kept = self._kept.get(name)  # the box before any sums ran (not centred): none
        if (kept is None) != (value is None) or (kept is not None and not np.array_equal(kept, value)):
            raise ValueError(f"{name} differs from the one released before")

    def _check_box_counts(self, planned: PlannedStep, message: dict[str, Any]) -> dict[str, Any]:
        self._keys(message, {"lower", "upper"}, {"lower", "upper"})
        box = self._box(message)
        if planned.round == 0:
            lower, upper = full_box(self.public.d)
            if box is None or not (np.array_equal(box[0], lower) and np.array_equal(box[1], upper)):
                raise ValueError("the first box round asks about the whole public box [−1, 1]/√d")
        else:
            self._child_box(box, (self._kept["asked_lower"], self._kept["asked_upper"]))
        self._kept["asked_lower"], self._kept["asked_upper"] = box
        return {"lower": box[0], "upper": box[1]}

    def _check_sums(self, planned: PlannedStep, message: dict[str, Any]) -> dict[str, Any]:
        self._keys(message, {"lower", "upper"}, {"lower", "upper"})
        box = self._box(message)
        if self.public.noise.range_rounds:
            self._child_box(box, (self._kept["asked_lower"], self._kept["asked_upper"]))
        elif box is not None:
            raise ValueError("no box round ran: the sums carry no box")
        self._kept["lower"], self._kept["upper"] = box if box is not None else (None, None)
        return {"lower": self._kept["lower"], "upper": self._kept["upper"]}

    def _released_box(self, message: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
        box = self._box(message)
        self._same("lower", None if box is None else box[0])
        self._same("upper", None if box is None else box[1])
        return box

    def _statistics(self, message: dict[str, Any], box: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """The released mean and variances, admissible (module docstring) and equal to any released before."""
        public = self.public
        mean = self._vector(message.get("mean"), "mean")
        bound = coordinate_bounds(public, box)
        if not np.all(np.abs(mean) <= bound * (1 + 1e-12)):
            raise ValueError("the mean lies outside the box")
        variance = message.get("variance")
        if public.plan.scale:
            variance = self._vector(variance, "variance")
            lowest = np.minimum(variance_floor(public), bound**2) * (1 - 1e-12)
            if not (np.all(variance >= lowest) and np.all(variance <= bound**2 * (1 + 1e-12))):
                raise ValueError("the variances lie outside [their public floor, the box's half-width squared]")
        elif variance is not None:
            raise ValueError("centring only: no variances are released")
        if "mean" in self._kept:
            self._same("mean", mean)
            self._same("variance", variance)
        self._kept["mean"], self._kept["variance"] = mean, variance
        return mean, variance

    def _check_norm_counts(self, planned: PlannedStep, message: dict[str, Any]) -> dict[str, Any]:
        keys = {"lower", "upper", "mean", "variance", "radii"}
        self._keys(message, keys, {"lower", "upper", "mean", "radii"})
        box = self._released_box(message)
        mean, variance = self._statistics(message, box)
        radii = radius_candidates(self.public, mean, variance)
        if radii.size < 2 or not np.array_equal(real_array(message["radii"], "radii"), radii):
            raise ValueError("the radii must be the public grid of the released statistics, with two or more points")
        self._kept["norm_counts"] = np.ones(1)
        lower, upper = (None, None) if box is None else box
        return {"lower": lower, "upper": upper, "mean": mean, "variance": variance, "radii": radii}

    def _check_method(self, planned: PlannedStep, message: dict[str, Any]) -> dict[str, Any]:
        public, method = self.public, self.public.method
        query = method.federated_query
        centred = public.noise is not None
        allowed = {"lower", "upper"} | ({"mean", "variance", "radius"} if centred else set())
        allowed |= {query} if query else set()
        self._keys(message, allowed, allowed - {"variance"})
        checked: dict[str, Any] = {}
        box = self._released_box(message)
        checked["lower"], checked["upper"] = (None, None) if box is None else box
        if centred:
            checked["mean"], variance = self._statistics(message, box)
            if variance is not None:
                checked["variance"] = variance
            checked["radius"] = self._radius(message.get("radius"), checked["mean"], variance)
        if query:
            checked[query] = method.check_federated_query(public, self.index, planned.round, message[query])
        return checked

    def _radius(self, radius: Any, mean: np.ndarray, variance: np.ndarray | None) -> float | None:
        """The released radius: None where the plan has no search, else a point of the public grid (its only
        point when ``norm_counts`` did not run), the same at every method step."""
        if not self.public.noise.radius_searched:
            if radius is not None:
                raise ValueError("no radius search ran: the radius is the plan's fixed one")
            return None
        radii = radius_candidates(self.public, mean, variance)
        real = isinstance(radius, int | float | np.floating | np.integer) and not isinstance(radius, bool | np.bool_)
        value = float(radius) if real else np.nan
        if "norm_counts" not in self._kept and radii.size > 1:
            raise ValueError("the radius grid has several points, so norm_counts must run first")
        if value not in radii.tolist():
            raise ValueError("the radius must be a point of the public grid")
        if "radius" in self._kept:
            self._same("radius", np.asarray(value))
        self._kept["radius"] = np.asarray(value)
        return value


__all__ = ["REFUSALS", "REFUSAL_TEXTS", "REFUSED", "PlanFollower", "PlannedStep", "Refused", "method_steps",
           "plan_steps", "preprocessing_steps", "real_array", "refusal_of"]
