"""``method="auto"``: the method :class:`ddppm.PrivatePCA` runs, chosen from public parameters only by a stated rule.

The advisor (:func:`ddppm.studies.advisor.advise`) simulates seeded spiked-covariance raw records of the user's
public shape (n, d, parties, ε, δ, trust, k; bounds assumed ``looseness`` times too wide) and returns the
**competitive set**: the methods not significantly worse than the best (paired 95 % intervals). Where it has more
than one member the simulation cannot tell them apart, and this **rule** (version :data:`RULE`) breaks the tie,
deterministically, from public quantities only (no record is read; the choice spends no privacy):

0. **simulation**: the competitive set at the assumed spectral gap λ_k/λ_(k+1) = 2 (:data:`ASSUMED_GAP`); one
   member: it.
1. **gaps**: the gap is an assumption nobody can check without the data, so the tied members are simulated again
   at every gap of :data:`GAPS` (1.5, 2, 4, 16, 64), among themselves; keep those competitive at the most gaps. A
   gap where no member beats chance counts for every member (the simulation tells nothing there).
2. **trust fit**: keep the members whose trust model asks for the most trust the user grants (a method built for
   a weaker trust model calibrates its noise against an observer the user does not fear: at ``central`` with m
   parties, the conventional method adds m noisy Gram matrices, √m times AnalyzeGauss's noise on the same
   statistic).
3. **noisy releases**: the fewest noisy releases composed, by the method's own calibration at the public shape
   (one-shot before iterative or adaptive: fewer places for the simulation's assumptions to fail).
4. **rounds**, then 5. **floats per agent**: the simpler protocol (a round synchronises every party; a party that
   drops out stalls it), then the less traffic.
6. **mean error**: the lower simulated mean error averaged over the gaps where a member beats chance (all gaps when
   none does); 7. **name**: alphabetical (never tied).

Its reasons are public and do not refer to the bench; ``tests/release/test_auto_bench.py`` compares its answers
with the bench's measured winners (README, "Which method should I use?"), and docs/method_map.md ("The advisor")
says how the rule was arrived at and where it disagrees (numbers given, the rule not tuned to them).

**A public stand-in.** The simulation costs time in proportion to n·d; above :data:`SIMULATED_ROWS` rows it runs on
a stand-in of that many rows (the same d, k, ε, δ, trust and looseness; the parties capped at half the rows), so a
first fit at n ≤ 10⁵, d ≤ 50 takes seconds (``benchmarks/bench_auto.py``). The stand-in is a harder problem than
the user's (fewer rows for the same budget); docs/method_map.md gives its measured effect on the choice.

**Cached** (:mod:`ddppm.release.auto_cache`): by every parameter that enters the simulation and the rule
(:meth:`Problem.key_fields`) and a code key, in this process and on disk, so a second fit of the same shape (also
in another process, ``ddppm fit``) simulates nothing. The certificate's ``method_choice`` (:meth:`Choice.words`)
states the rule, the gaps simulated, the competitive set, the step that decided and whether the answer came from
the cache.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from threadpoolctl import threadpool_limits

from ddppm.common_task.run import TRUST_LEVELS, TRUST_ORDER
from ddppm.core.errors import ConfigError
from ddppm.release import auto_cache

RULE = "auto/2"
"""The rule's version: part of every cache key and of the certificate's words."""
ASSUMED_GAP = 2.0
"""The spectral gap the advisor assumes (its default), where the competitive set is read."""
ASSUMED_LOOSENESS = 2.0
"""How many times too wide a release's declared bounds are assumed to be (the advisor's default)."""
GAPS = (1.5, 2.0, 4.0, 16.0, 64.0)
"""The gaps at which tied members are simulated again (step 1). 16 and 64 since rule auto/2: at small n only a
strong first direction separates the methods (n = 342, d = 4, ε = 1: none beats chance at gaps 1.5 and 4)."""
RUNS = {"start": 10, "cap": 20}
"""Simulated data sets per gap: the advisor doubles them from ``start`` until its answer separates or ``cap``."""
SIMULATED_ROWS = 3000
"""The most rows the simulation uses (a public stand-in above it: module docstring)."""
SEED = 0
"""The simulation's seed (every gap and every choice: the answer is a deterministic function of the key)."""
ADVISOR_OPTIONS = ("adjacency", "iterations", "topology", "consensus")
"""The advisor's method options (:data:`ddppm.studies.advisor.DEFAULTS`) that shape its simulation."""
STEPS = ("simulation", "gaps", "trust fit", "noisy releases", "rounds", "floats per agent", "mean error", "name")
"""The rule's steps, in order: the one that left a single member is ``Choice.decided_by``."""
RULE_WORDS = (
    f'rule {RULE} (docs/method_map.md, "The advisor"): the competitive set at the assumed spectral gap '
    f"{ASSUMED_GAP:g}; a tie is broken by: competitive at the most of the gaps {{{', '.join(f'{g:g}' for g in GAPS)}}} "
    "(a gap where no member beats chance counts for all), then the trust model nearest the trust granted, then "
    "fewer noisy releases (one-shot first), fewer rounds, fewer floats per agent, lower mean error over the gaps "
    "where a member beats chance, the name"
)


@dataclass(frozen=True)
class Problem:
    """The public parameters of a choice (what :func:`choose_method` may know): rows, dimension, parties, the
    budget, the trust granted, the rank, the bounds' assumed looseness (None: rows already in the unit ball) and
    the methods allowed."""

    n: int
    d: int
    parties: int
    eps: float
    delta: float
    trust: str
    k: int
    looseness: float | None
    methods: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in ("n", "d", "parties", "k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ConfigError(f"{name}: {value!r} must be a positive integer")
            object.__setattr__(self, name, int(value))
        for name in ("eps", "delta", "looseness"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, numbers.Real) and not isinstance(value, bool)):
                raise ConfigError(f"{name}: {value!r} must be a number")
            object.__setattr__(self, name, None if value is None else float(value))
        if self.n < 2 or self.n < self.parties:
            raise ConfigError(f"n: {self.n} rows cannot be held by {self.parties} parties (each needs a row; n ≥ 2)")
        if not self.k < self.d:
            raise ConfigError(f"k: {self.k} must be less than d = {self.d}")
        if not 0 < self.eps < float("inf"):
            raise ConfigError(f"eps: {self.eps!r} must be positive and finite")
        if not 0 < self.delta < 1:
            raise ConfigError(f"delta: {self.delta!r} must be in (0, 1)")
        if self.trust not in TRUST_LEVELS:
            raise ConfigError(f"trust: {self.trust!r} must be one of {TRUST_LEVELS}")
        if self.looseness is not None and not self.looseness >= 1:
            raise ConfigError(f"looseness: {self.looseness!r} must be None or at least 1")
        if isinstance(self.methods, str) or not self.methods or not all(isinstance(m, str) for m in self.methods):
            raise ConfigError(f"methods: {self.methods!r} must be a non-empty sequence of method names")
        object.__setattr__(self, "methods", tuple(self.methods))

    def stand_in(self) -> tuple[int, int]:
        """The rows and parties simulated: at most :data:`SIMULATED_ROWS` rows, the parties at most half of them."""
        rows = min(self.n, SIMULATED_ROWS)
        return rows, max(1, min(self.parties, rows // 2))

    def key_fields(self) -> dict[str, Any]:
        """Everything that enters the simulation and the rule (the cache key; :mod:`ddppm.release.auto_cache` adds
        the code key): the stand-in's shape (not n itself: two n above the cap simulate the same data)."""
        from ddppm.studies.advisor import DEFAULTS

        rows, parties = self.stand_in()
        return {"rule": RULE, "rows": rows, "d": self.d, "parties": parties, "eps": self.eps, "delta": self.delta,
                "trust": self.trust, "k": self.k, "looseness": self.looseness, "methods": sorted(self.methods),
                "assumed_gap": ASSUMED_GAP, "gaps": list(GAPS), "runs": dict(RUNS), "seed": SEED,
                "advisor": {key: DEFAULTS[key] for key in ADVISOR_OPTIONS}}  # fmt: skip


def release_problem(n: int, d: int, parties: int, eps: float, delta: float, trust: str, k: int, *,
                    standardize: bool | str, noise: str, mixed_units: bool = False) -> Problem:  # fmt: skip
    """The :class:`Problem` of a :class:`~ddppm.PrivatePCA` fit.

    Parameters
    ----------
    n, d, parties, k
        Rows, features, parties and the rank released.
    eps, delta, trust
        The budget of the whole release and the trust granted.
    standardize
        The fit's ``standardize``: False means rows already in the unit ball (no private standardisation to
        simulate); otherwise bounds are assumed :data:`ASSUMED_LOOSENESS` times too wide. ``"center"`` at k ≥ 2
        on ``mixed_units`` allows only the methods that release a second moment (:mod:`ddppm.common_task.centring`).
    noise
        ``secure`` allows the certified methods that can draw secure noise, ``simulation`` every certified method.
    mixed_units
        Whether the declared bounds put the features in different units
        (:func:`~ddppm.common_task.centring.mixed_units`).

    Returns
    -------
    Problem
        The public parameters :func:`choose_method` simulates.
    """
    from ddppm.methods import common_task_methods

    if noise not in ("secure", "simulation"):
        raise ConfigError(f"noise: {noise!r} must be 'secure' or 'simulation'")
    # a centred release beyond its first direction needs a method that releases a second moment: recoloured by the
    # private scales, its minor directions in small-unit features survive the noise (ddppm.common_task.centring)
    centred_rank = standardize == "center" and k > 1 and mixed_units
    allowed = tuple(name for name, m in common_task_methods().items()
                    if m.privacy_column == "certified" and (noise != "secure" or m.secure_noise)
                    and (m.second_moment or not centred_rank))  # fmt: skip
    looseness = None if standardize is False else ASSUMED_LOOSENESS
    return Problem(n, d, parties, eps, delta, trust, k, looseness, allowed)


@dataclass(frozen=True)
class Candidate:
    """A member of the competitive set as the rule sees it (module docstring, steps 1 to 7)."""

    method: str
    gaps_competitive: int
    trust_distance: int
    releases: int
    floats_per_agent: int
    rounds: int
    mean_error: float

    def step_value(self, step: str) -> Any:
        """The quantity step ``step`` minimises."""
        return {"gaps": -self.gaps_competitive, "trust fit": self.trust_distance, "noisy releases": self.releases,
                "floats per agent": self.floats_per_agent, "rounds": self.rounds, "mean error": self.mean_error,
                "name": self.method}[step]  # fmt: skip


def decide(candidates: Sequence[Candidate]) -> tuple[str, str]:
    """The rule on the competitive set's members (module docstring, steps 0 to 7).

    Parameters
    ----------
    candidates
        The members, with what each step reads.

    Returns
    -------
    tuple
        The chosen method and the step of :data:`STEPS` that left it alone (``simulation``: the only member).
    """
    if not candidates:
        raise ConfigError("methods: no method is usable at this trust level (the competitive set is empty)")
    remaining = list(candidates)
    if len(remaining) == 1:
        return remaining[0].method, STEPS[0]
    for step in STEPS[1:]:
        best = min(c.step_value(step) for c in remaining)
        remaining = [c for c in remaining if c.step_value(step) == best]
        if len(remaining) == 1:
            return remaining[0].method, step
    raise AssertionError("two candidates share a name")  # unreachable: names are distinct


@dataclass(frozen=True)
class Choice:
    """What the rule chose and how (the cache stores :meth:`to_record`); ``source``: ``simulation`` (computed by
    this call), ``memory cache`` or ``disk cache``."""

    method: str
    decided_by: str
    competitive: tuple[dict[str, Any], ...]
    gap_answers: tuple[dict[str, Any], ...]
    simulated: dict[str, int]
    source: str = "simulation"
    key: str = ""

    def to_record(self) -> dict[str, Any]:
        return {"key": self.key, "rule": RULE, "method": self.method, "decided_by": self.decided_by,
                "competitive": list(self.competitive), "gap_answers": list(self.gap_answers),
                "simulated": dict(self.simulated)}  # fmt: skip

    @classmethod
    def from_record(cls, record: dict[str, Any], source: str) -> Choice:
        return cls(record["method"], record["decided_by"], tuple(record["competitive"]),
                   tuple(record["gap_answers"]), dict(record["simulated"]), source, record["key"])  # fmt: skip

    def words(self, problem: Problem) -> str:
        """The certificate's ``method_choice``: the public parameters, the stand-in, the rule, the gaps simulated,
        the competitive set, the deciding step and where the answer came from."""
        rows, parties = self.simulated["rows"], self.simulated["parties"]
        bounds = ("rows already in the unit ball" if problem.looseness is None
                  else f"bounds assumed {problem.looseness:g}× too wide")  # fmt: skip
        stand_in = ("" if (rows, parties) == (problem.n, problem.parties)
                    else f"; simulated on a public stand-in of n={rows}, parties={parties}")  # fmt: skip
        members = ", ".join(f"{m['method']} {m['error_mean']:.3f} [{m['error_lo']:.3f}, {m['error_hi']:.3f}]"
                            for m in self.competitive)  # fmt: skip
        gaps = "; ".join(f"gap {a['gap']:g}: {', '.join(a['members'])}"
                         + ("" if a["beats_chance"] else " (no member beats chance)")
                         + f" ({a['runs']} data sets)" for a in self.gap_answers)  # fmt: skip
        came = {"simulation": "computed by this fit (now cached)", "memory cache": "from the cache (this process)",
                "disk cache": "from the cache (disk)"}[self.source]  # fmt: skip
        return (f"auto: ddppm advise's simulation at the public parameters (n={problem.n}, d={problem.d}, "
                f"parties={problem.parties}, ε={problem.eps:g}, δ={problem.delta:g}, trust={problem.trust}, "
                f"k={problem.k}; {bounds}{stand_in}; no data read); {RULE_WORDS}; gaps simulated and their "
                f"competitive sets: {gaps}; competitive set at gap {ASSUMED_GAP:g}: {members}; chose {self.method}, "
                f"decided by: {self.decided_by}; answer {came}")  # fmt: skip


def choose_method(problem: Problem) -> Choice:
    """The rule's choice for ``problem``, from the cache when a valid entry exists (module docstring).

    Parameters
    ----------
    problem
        The public parameters (:class:`Problem`; :func:`release_problem` builds a fit's).

    Returns
    -------
    Choice
        The method, the step that decided, the competitive set and each gap's answer, the stand-in simulated, and
        ``source``: ``simulation`` (computed now, then stored), ``memory cache`` or ``disk cache``.
    """
    key = auto_cache.cache_key(problem.key_fields())
    record, where = auto_cache.remembered(key, lambda r: _valid_record(r, problem))
    if record is not None:
        return Choice.from_record(record, f"{where} cache")
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads buy nothing, contention costs 4×
        choice = simulate_choice(problem)
    choice = replace(choice, source="simulation", key=key)
    auto_cache.remember(key, choice.to_record())
    return choice


def _valid_record(record: dict[str, Any], problem: Problem) -> bool:
    """A stored choice is used only if it is this rule's, names an allowed method inside its own competitive set
    and decided by a known step (anything else is recomputed)."""
    members = [m["method"] for m in record["competitive"]]
    intervals = [(m["error_lo"], m["error_mean"], m["error_hi"]) for m in record["competitive"]]
    gaps = [a for a in record["gap_answers"] if float(a["gap"]) in GAPS and int(a["runs"]) > 0
            and isinstance(a["beats_chance"], bool) and all(isinstance(m, str) for m in a["members"])]  # fmt: skip
    return (record["rule"] == RULE and record["method"] in problem.methods and record["method"] in members
            and set(members) <= set(problem.methods) and record["decided_by"] in STEPS
            and all(isinstance(e, float) and math.isfinite(e) for i in intervals for e in i)
            and all(lo <= mean <= hi and 0 <= mean <= 1 for lo, mean, hi in intervals)
            and len(gaps) == len(record["gap_answers"]) >= 1
            and record["simulated"] == dict(zip(("rows", "parties"), problem.stand_in(), strict=True)))  # fmt: skip


def simulate_choice(problem: Problem, advise: Callable[..., Any] | None = None) -> Choice:
    """The rule run afresh (no cache): the advisor at the assumed gap, and, for a tie, at the other gaps among the
    tied members, on the stand-in's shape.

    Parameters
    ----------
    problem
        The public parameters.
    advise
        The advisor (default :func:`ddppm.studies.advisor.advise`; tests pass a scripted one).

    Returns
    -------
    Choice
        The answer, ``source`` ``simulation`` and no key (:func:`choose_method` adds it).
    """
    from ddppm.studies import advisor

    ask = advise or advisor.advise
    rows, parties = problem.stand_in()

    def answer(gap: float, methods: Sequence[str]) -> tuple[Any, dict[str, Any]]:
        return ask(rows, problem.d, parties, problem.eps, problem.delta, problem.trust, problem.k, gap=gap,
                   runs_start=RUNS["start"], runs_cap=RUNS["cap"], seed=SEED, looseness=problem.looseness,
                   methods=list(methods))  # fmt: skip

    members, facts = answer(ASSUMED_GAP, problem.methods)
    competitive = tuple({"method": str(r.method), "error_mean": float(r.error_mean), "error_lo": float(r.error_lo),
                         "error_hi": float(r.error_hi)} for r in members.itertuples())  # fmt: skip
    names = [m["method"] for m in competitive]
    answers = {ASSUMED_GAP: _gap_answer(ASSUMED_GAP, names, facts)}
    if len(names) > 1:
        for gap in (g for g in GAPS if g != ASSUMED_GAP):
            tied, at_gap = answer(gap, names)
            answers[gap] = _gap_answer(gap, [str(m) for m in tied["method"]], at_gap)
    if len(names) == 1:
        method, step = names[0], STEPS[0]
    else:
        method, step = decide(_candidates(problem, members, answers))
    gap_answers = tuple({key: value for key, value in a.items() if key != "mean_errors"} for a in answers.values())
    return Choice(method, step, competitive, gap_answers, {"rows": rows, "parties": parties})


def _gap_answer(gap: float, members: list[str], facts: dict[str, Any]) -> dict[str, Any]:
    return {"gap": float(gap), "members": members, "beats_chance": bool(facts["beats_chance"]),
            "runs": int(facts["runs"]), "mean_errors": dict(facts["mean_errors"])}  # fmt: skip


def _candidates(problem: Problem, members: Any, answers: dict[float, dict[str, Any]]) -> list[Candidate]:
    """The competitive set's members with what each step of the rule reads (module docstring)."""
    from ddppm.methods import common_task_methods

    methods = common_task_methods()
    costs = members.set_index("method")
    releases = _release_counter(problem)
    # a gap where no member beats chance measures noise, not the methods: its mean errors decide nothing (they
    # made Amin et al.'s sampler the answer at n = 342, d = 4, ε = 1, where it loses on real records)
    informative = [a for a in answers.values() if a["beats_chance"]] or list(answers.values())
    candidates = []
    for name in costs.index:
        rounds = int(costs.loc[name, "rounds"])
        votes = sum(name in a["members"] or not a["beats_chance"] for a in answers.values())
        candidates.append(Candidate(
            method=str(name), gaps_competitive=votes,
            trust_distance=TRUST_ORDER[methods[name].trust_model] - TRUST_ORDER[problem.trust],
            releases=releases(str(name)),
            floats_per_agent=int(costs.loc[name, "floats_per_agent"]), rounds=rounds,
            mean_error=sum(a["mean_errors"][name] for a in informative) / len(informative),
        ))  # fmt: skip
    return candidates


def _release_counter(problem: Problem) -> Callable[[str], int]:
    """How many noisy releases a method composes (a pure-ε sampler: one), by its own calibration at the stand-in's
    public shape (the simulated task is built once, on first use)."""
    from ddppm.methods import common_task_methods
    from ddppm.studies.advisor import DEFAULTS
    from ddppm.studies.method_map import Shape, spiked_task

    rows, parties = problem.stand_in()
    options = {"adjacency": DEFAULTS["adjacency"], "iterations": int(DEFAULTS["iterations"])}
    tasks: list[Any] = []

    def count(name: str) -> int:
        if not tasks:
            shape = Shape(rows, problem.d, ASSUMED_GAP, parties, problem.k)
            tasks.append(spiked_task(shape, SEED, 0, DEFAULTS["topology"], int(DEFAULTS["consensus"])))
        own = common_task_methods()[name].common_calibrate(tasks[0], problem.eps, problem.delta, options)
        return max(1, sum(int(r.count) for r in own.releases))

    return count
