"""``ddppm advise`` on generated arguments (issue 63, Hypothesis): numbers of every sign and size, non-numbers,
infinities, rates above 1, unknown trust levels. Every case ends in an answer (exit 0) or in exit 2 with one message
(ours, or argparse's usage line for a value that is not a number): never a traceback. The count is printed."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddppm.cli import main

CASES = int(os.environ.get("DDPPM_FUZZ_CASES", 80))


def mostly(good: st.SearchStrategy, bad: st.SearchStrategy) -> st.SearchStrategy:
    """A valid value nine times in ten (so that whole argument lists are often valid), else a malformed one."""
    return st.integers(0, 9).flatmap(lambda i: bad if i == 0 else good)


integers = mostly(st.sampled_from(["1000", "50", "200"]),
                  st.one_of(st.integers(-5, 10**7).map(str), st.sampled_from(["0", "-1", "1e3", "ten", "", "9" * 20])))
small = mostly(st.sampled_from(["8", "12", "20"]), st.sampled_from(["0", "1", "-3", "2.5", "10**6"]))
ranks = mostly(st.sampled_from(["1", "2"]), st.sampled_from(["0", "-1", "20", "1.0"]))
reals = mostly(st.sampled_from(["1", "0.5", "5"]),
               st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(str),
                         st.sampled_from(["0", "-1", "nan", "inf", "x"])))
deltas = mostly(st.sampled_from(["1e-6", "1e-8"]), st.sampled_from(["0", "1", "2", "-1e-6", "nan", "1e-400"]))

def test_generated_arguments_get_an_answer_or_one_clear_message(capsys: pytest.CaptureFixture) -> None:
    outcomes: list[int] = []

    @settings(max_examples=CASES, deadline=None, database=None, derandomize="DDPPM_FUZZ_CASES" not in os.environ,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
    @given(n=integers, d=small, m=mostly(st.sampled_from(["1", "4"]), st.sampled_from(["0", "-2", "10**9"])), k=ranks,
           eps=reals, delta=deltas, trust=mostly(st.sampled_from(["central", "local", "secure_aggregation"]),
                                                 st.sampled_from(["everyone", ""])))  # fmt: skip
    def case(n: str, d: str, m: str, k: str, eps: str, delta: str, trust: str) -> None:
        capsys.readouterr()
        argv = ["advise", f"--n={n}", f"--d={d}", f"--m={m}", f"--k={k}", f"--eps={eps}", f"--delta={delta}",
                f"--trust={trust}", "--runs=2"]  # fmt: skip
        try:
            code: Any = main(argv)
        except SystemExit as exit_:  # argparse: a value that is not a number, or an unknown choice
            code = exit_.code
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        assert code in (0, 2), (argv, code, err)
        assert (code == 0 and out) or (code == 2 and err.strip()), (argv, out, err)
        outcomes.append(code)

    case()
    print(f"ddppm advise: {len(outcomes)} generated argument lists, {outcomes.count(0)} answered, "
          f"{outcomes.count(2)} refused")  # fmt: skip
    assert len(outcomes) >= CASES and 0 in outcomes and 2 in outcomes
