"""Every figure says what it shows without its file name: titles name the threat model, legends list only what is
drawn and say what each band is, infeasible marks sit off the error axis, vacuous bounds are said, not overprinted.

Small synthetic tables; the figures are built, never written (except where a file is the point)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

from ddppm.plotting import BOUND_LABEL, INFEASIBLE_LABEL, fig2_grid, fig2_single, fig3
from ddppm.plotting.style import (
    BAND_LABEL,
    CHANCE_LABEL,
    DET_LABEL,
    PROVEN_INFEASIBLE_LABEL,
    threat_model_words,
)
from tests.plotting.test_plotting import EPS, LIMITS, legend_texts, main_axes, make_curves, make_summary, strip_of

WORDS = {
    "paper": ("an agent's own releases", "Chernoff bound of Theorem 2", "a guessed neighbour"),
    "paper_worst": ("an agent's own releases", "exact tail", "worst neighbour found by search", "at least"),
    "sound": ("every release on the network", "exact tail", "worst neighbour found by search", "at least"),
}


def suptitle(fig) -> str:
    return fig._suptitle.get_text() if fig._suptitle is not None else ""


def bands_said(fig) -> list[str]:
    """Legend entries that say what a shaded band is."""
    return [t for t in legend_texts(fig) if "band" in t]


# ------------------------------------------------------------------------------------------------ Fig. 3


@pytest.mark.parametrize("name", sorted(WORDS))
def test_fig3_title_names_the_threat_model_in_words(name):
    fig = fig3(make_curves(), threat_model=name)
    heading = suptitle(fig)
    assert f"threat model {name}:" in heading.replace("\n", " ")
    assert all(word in heading.replace("\n", " ") for word in WORDS[name])
    titles = {other: suptitle(fig3(make_curves(), threat_model=other)) for other in WORDS}
    assert len(set(titles.values())) == len(WORDS)  # three threat models, three different titles


def test_fig3_vacuous_bounds_are_said_once_and_not_drawn():
    curves = make_curves().assign(bound_det=1.0)  # bound and its terms all = 1: would lie on y = 1 together
    fig = fig3(curves, threat_model="paper")
    ax_err, _ = main_axes(fig)
    texts = legend_texts(fig)
    assert BOUND_LABEL not in texts and DET_LABEL not in texts
    assert "vacuous" in ax_err.get_title() and "not drawn" in ax_err.get_title()
    assert not any(np.allclose(line.get_ydata(), 1.0) for line in ax_err.get_lines())  # nothing drawn at y = 1


def test_fig3_draws_and_lists_a_bound_that_says_something():
    curves = make_curves().assign(bound_sin=0.5, bound_det=1.0)  # bound informative, its terms vacuous
    fig = fig3(curves)
    ax_err, _ = main_axes(fig)
    texts = legend_texts(fig)
    assert BOUND_LABEL in texts and DET_LABEL not in texts
    assert sum(np.allclose(line.get_ydata(), 0.5) for line in ax_err.get_lines()) == 2  # one per data set
    assert "consensus + power terms" in ax_err.get_title()


def test_fig3_upper_tail_on_top_of_delta_is_said_not_overprinted():
    curves = make_curves()
    curves["delta_upper"] = curves["delta"] * 1.001  # within 2 % of δ at every T
    fig = fig3(curves, upper_label="upper-tail δ⁺ of Theorem 2")
    _, ax_del = main_axes(fig)
    assert "upper-tail δ⁺ of Theorem 2" not in legend_texts(fig)
    assert "within 2 % of δ" in ax_del.get_title()
    assert len(ax_del.get_lines()) == 4  # δ and the δ limit per data set, no δ⁺ line under δ


def test_fig3_band_says_what_it_is_and_the_adjacency_reads_in_the_delta_label():
    fig = fig3(make_curves(), threat_model="sound")
    assert BAND_LABEL in legend_texts(fig) and any("standard errors" in t for t in bands_said(fig))
    assert "at least" in main_axes(fig)[1].get_ylabel()
    assert "guessed neighbour" in main_axes(fig3(make_curves(), threat_model="paper"))[1].get_ylabel()


def test_fig3_a_band_thinner_than_its_line_is_neither_drawn_nor_listed():
    from ddppm.plotting.fig3 import SE_LABEL

    assert SE_LABEL in legend_texts(fig3(make_curves()))  # ± 1.96 s.e. is 10 % of δ: visible
    curves = make_curves()
    curves["delta_se"] = curves["delta"] * 1e-4
    fig = fig3(curves)
    assert SE_LABEL not in legend_texts(fig) and not main_axes(fig)[1].collections


# ------------------------------------------------------------------------------------------------ Fig. 2


def test_no_infeasible_mark_lies_on_the_error_axes():
    floor = pd.DataFrame({"eps": EPS, "delta_limit": LIMITS, "floor_hockey": [0.1, 0.5, 0.5, 1e-5]})
    fig = fig2_single(make_summary(infeasible_eps=(5.0, 10.0)), floors={"network": floor})
    ax = main_axes(fig)[0]
    kinds = {INFEASIBLE_LABEL, PROVEN_INFEASIBLE_LABEL}
    assert not [c for c in ax.collections if c.get_label() in kinds]
    strip = strip_of(ax)
    marks = [c for c in strip.collections if c.get_label() in kinds]
    assert {c.get_label() for c in marks} == kinds
    assert [t.get_text() for t in strip.get_yticklabels()] == ["D-DP-PM [network]"]  # the row names its curve
    assert strip.get_xlabel().startswith("no parameters meet the δ limit")
    assert {t.get_text() for t in strip.get_xticklabels()} >= {"δ≤8e-3", "δ≤2e-4"}  # δ limits above the strip
    # nothing on the error axis sits above an error of 1: no made-up heights
    for line in ax.get_lines():
        y = np.asarray(line.get_ydata(), float)
        assert np.all(y[np.isfinite(y)] <= 1.0)


def test_fig2_legend_lists_only_curves_with_data_and_the_chance_level_in_words():
    summary = make_summary(infeasible_eps=tuple(EPS))  # D-DP-PM has no point at any ε
    fig = fig2_single(summary, n=178)
    texts = legend_texts(fig)
    assert "D-DP-PM [network]" not in texts  # nothing drawn for it on the error axis
    assert INFEASIBLE_LABEL in texts and strip_of(main_axes(fig)[0]) is not None
    assert CHANCE_LABEL in texts and "number of rows" in CHANCE_LABEL and "random direction" in CHANCE_LABEL
    assert BAND_LABEL in texts and "of runs" in BAND_LABEL


def test_fig2_heading_names_every_threat_model_in_words():
    summary = make_summary()
    summary.loc[summary["method"] == "ddppm", "threat_model"] = "sound"
    for fig in (fig2_single(summary), fig2_grid([("Diabetes", summary, 442)])):
        heading = suptitle(fig).replace("\n", " ")
        assert "sound:" in heading and all(word in heading for word in WORDS["sound"])
    assert not strip_of(main_axes(fig2_single(make_summary()))[0])  # every point feasible: no strip


# ------------------------------------------------------------------------------------------ other figures


def common_summary(at_chance: bool) -> pd.DataFrame:
    rows = []
    for k in (1, 2):
        chance = float(np.sqrt(1 - k / 64))
        for method, trust, slope in (("analyze_gauss", "central", 0.7), ("ldp", "local", 0.6),
                                     ("ddppm_workshop", "gossip", 0.2)):  # fmt: skip
            for eps in (1.0, 10.0):
                mean = chance - (0.004 if at_chance else slope) * np.log10(eps) - 0.001
                if method == "ddppm_workshop":
                    mean = np.nan  # no parameters met the limit at any ε
                rows.append({"k": k, "method": method, "trust_model": trust, "eps": eps, "delta_limit": 1e-5,
                             "error_mean": mean, "error_ci_lo": mean - 0.01, "error_ci_hi": mean + 0.01,
                             "chance_error": chance, "feasible": method != "ddppm_workshop",
                             "privacy_column": "searched" if method == "ddppm_workshop" else "certified"})  # fmt: skip
    return pd.DataFrame(rows)


def test_common_figure_names_empty_methods_in_the_title_and_says_when_all_sit_at_chance():
    from ddppm.plotting.common_task import common_figure

    styles = {m: {"label": m.upper(), "marker": "o", "color": c}
              for m, c in (("analyze_gauss", "#7f7f7f"), ("ldp", "#d62728"), ("ddppm_workshop", "#a55194"))}
    fig = common_figure(common_summary(at_chance=True), styles, "t")
    texts = legend_texts(fig)
    assert not any(t.startswith("DDPPM_WORKSHOP") for t in texts)
    gossip = [ax for ax in main_axes(fig) if "gossip" in ax.get_title()]
    assert gossip and all("no point to draw" in ax.get_title() and "DDPPM_WORKSHOP" in ax.get_title() for ax in gossip)
    drawn = [ax for ax in main_axes(fig) if "gossip" not in ax.get_title()]
    assert all(any("every method at chance level" in t.get_text() for t in ax.texts) for ax in drawn)
    assert all(ax.get_ylim()[0] > 0.5 for ax in drawn)  # zoomed in: the axis does not start at 0
    assert any("confidence interval of the mean" in t for t in bands_said(fig))
    spread = common_figure(common_summary(at_chance=False), styles, "t")
    assert not any(t.get_text() for ax in main_axes(spread) for t in ax.texts)
    assert all(ax.get_ylim()[0] == 0 for ax in main_axes(spread))


def ldppca_tables(values: tuple[float, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = []
    for mode in ("paper", "corrected"):
        for x in values:
            mean = 2.0 / x**0.5
            rows.append({"panel": 0, "varied": "p", "x": x, "k": 2, "sparsity": np.nan, "n": 1e6, "p": x, "eps": 1.0,
                         "sigma_mode": mode, "method": "ldppca_gaussian", "chance": 2.0, "error_mean": mean,
                         "error_lo": mean * 0.9, "error_hi": mean * 1.1, "feasible": True,
                         "theory_stated": 1.9 / x**0.5, "theory_proof": 1.8 / x**0.5})  # fmt: skip
    fits = pd.DataFrame([{"panel": 0, "method": "ldppca_gaussian", "rate": rate, "constant": 1.0,
                          "theorem": "Theorem 2"} for rate in ("stated", "proof")])  # fmt: skip
    return pd.DataFrame(rows), fits


def test_ldppca_points_stay_at_their_x_and_rates_without_a_segment_are_not_listed():
    from ddppm.plotting.ldppca import ldppca_figure

    summary, fits = ldppca_tables((30.0, 60.0))
    fig = ldppca_figure(summary, fits, "t")
    ax = main_axes(fig)[0]
    curves = [line for line in ax.get_lines() if line.get_marker() not in ("None", "", None)]
    assert curves and all(np.allclose(line.get_xdata(), [30.0, 60.0]) for line in curves)  # dodged on screen only
    assert any(t.startswith("Theorem 2") for t in legend_texts(fig))
    assert BAND_LABEL in legend_texts(fig)
    lone = summary.assign(theory_stated=np.where(summary["x"] == 30.0, 0.1, 5.0), theory_proof=5.0)
    fig = ldppca_figure(lone, fits, "t")  # one point below chance: no segment to draw
    assert not any(t.startswith("Theorem 2") for t in legend_texts(fig))
    assert any("rates not drawn" in t.get_text() for t in main_axes(fig)[0].texts)


def test_ppm_fig1_explains_the_purple_span_and_its_band():
    from ddppm.plotting import ppm as ppm_plots

    summary = pd.DataFrame([{"method": m, "eps": e, "error_mean": 0.5 / e**0.5, "error_lo": 0.4 / e**0.5,
                             "error_hi": 0.6 / e**0.5, "meets_target": e < 100, "eps_exact": e}
                            for m in ("ppm_theirs_sqrt2", "fedpower") for e in (1.0, 30.0, 1000.0)])  # fmt: skip
    fig = ppm_plots.fig1(summary, noiseless=0.01, title="t")
    assert ppm_plots.NO_METHOD_LABEL in legend_texts(fig)
    assert any("bootstrap interval of the mean" in t for t in bands_said(fig))
    quiet = ppm_plots.fig1(summary.assign(meets_target=True), noiseless=0.01, title="t")
    assert ppm_plots.NO_METHOD_LABEL not in legend_texts(quiet)  # no span drawn: no entry


def test_workshop_no_parameter_marks_sit_on_the_top_edge_and_panels_name_the_threat_model():
    from ddppm.plotting.workshop import NO_PARAMS, fig1

    rows = []
    for tm, method in (("paper", "ddppm_workshop"), ("sound", "ddppm_workshop"), ("none", "ldp")):
        for eps in (5.0, 50.0):
            missing = tm == "sound" and eps == 50.0
            mean = np.nan if missing else 0.5
            rows.append({"method": method, "threat_model": tm, "eps": eps, "error_mean": mean, "mean_ci_lo": mean,
                         "mean_ci_hi": mean, "feasible": not missing, "meets_limit_exact": True})  # fmt: skip
    section = {"methods": ["ddppm_workshop", "ldp"], "labels": {}, "threat_models": ["paper", "sound"],
               "claims": {"accuracy": 0.8, "drop_range": [10, 50]}}  # fmt: skip
    fig = fig1(pd.DataFrame(rows), section, "t")
    paper, sound = main_axes(fig)
    assert all(word in paper.get_title().replace("\n", " ") for word in ("an agent's own releases", "guessed"))
    assert "every release on the network" in sound.get_title().replace("\n", " ")
    (cross,) = [c for c in sound.collections if isinstance(c, PathCollection) and c.get_offsets().shape[0]]
    assert NO_PARAMS in legend_texts(fig)
    assert np.allclose(cross.get_offsets()[:, 1], 1.0) and cross.get_offset_transform() == sound.get_xaxis_transform()
    assert any("confidence interval of the mean" in t for t in bands_said(fig))
    assert "the same under every threat model" in suptitle(fig)


def test_frontier_lists_no_star_where_nothing_was_chosen():
    from ddppm.plotting.frontier import CHOSEN_LABEL, frontier_figure

    cands = pd.DataFrame({"eps": 5.0, "T": [1, 2], "error_mean": [0.9, 0.5], "delta_screen": [0.3, 0.9],
                          "delta_full": [0.3, 0.9], "delta_limit": 0.008})  # fmt: skip
    chosen = pd.DataFrame([{"eps": 5.0, "met": False, "delta": np.nan, "error_mean": np.nan}])
    fig = frontier_figure([("Diabetes", cands, chosen)], 5.0, "sound")
    assert CHOSEN_LABEL not in legend_texts(fig) and "nothing chosen" in suptitle(fig)
    assert all(word in suptitle(fig).replace("\n", " ") for word in WORDS["sound"][:2])


def test_threat_model_words():
    for name, words in WORDS.items():
        text = threat_model_words(name)
        assert text.startswith(f"{name}: ") and all(word in text for word in words)
    assert threat_model_words("none") == "none"
    custom = threat_model_words("mine", {"view": "network", "accounting": "chernoff", "adjacency": "heuristic"})
    assert custom == "mine: every release on the network, Chernoff bound of Theorem 2, a guessed neighbour"
