"""Tests of ddppm.plotting with small synthetic tables."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest

from ddppm.plotting import (
    BOUND_LABEL,
    INFEASIBLE_COLOR,
    INFEASIBLE_LABEL,
    OVER_BUDGET_LABEL,
    fig2_grid,
    fig2_single,
    fig3,
    method_styles,
    plot_fig2_panel,
    save_figure,
)

METHOD_STYLE = method_styles()

EPS = [1.0, 2.0, 5.0, 10.0]
LIMITS = [0.38, 0.143, 0.008, 2e-4]
AMI_LABEL = "AMI (synthetic stand-in)"


def make_summary(
    infeasible_eps=(), label="Diabetes", dataset="diabetes", nan_method=None, over_budget_eps=()
) -> pd.DataFrame:
    rows = []
    for e, lim in zip(EPS, LIMITS, strict=True):
        for k, m in enumerate(METHOD_STYLE):
            mean = 0.5 / e ** (0.5 + 0.2 * k) if m != "dpm" else 1e-3
            feas = not (m == "ddppm" and e in infeasible_eps) and not (m == "ldp" and e in over_budget_eps)
            if (m == "ddppm" and not feas) or m == nan_method:
                mean = np.nan
            rows.append(
                {
                    "dataset": dataset,
                    "label": label,
                    "method": m,
                    "threat_model": "network" if m == "ddppm" else "none",
                    "eps": e,
                    "n_runs": 20,
                    "error_mean": mean,
                    "error_lo": mean / 2,
                    "error_hi": mean * 1.5,
                    "mean_ci_lo": mean * 0.9,
                    "mean_ci_hi": mean * 1.1,
                    "delta": lim / 2,
                    "delta_limit": lim,
                    "feasible": feas,
                }
            )
    return pd.DataFrame(rows)


def make_curves(with_nan=False) -> pd.DataFrame:
    rows = []
    for ds, label, lim in (("diabetes", "Diabetes", 0.008), ("ami_synthetic", AMI_LABEL, 0.007)):
        for T in range(1, 7):
            err = max(0.4**T, 1e-3)
            d = lim * 0.05 * T
            rows.append(
                {
                    "dataset": ds,
                    "label": label,
                    "eps": 5.0,
                    "T": T,
                    "delta": d,
                    "delta_se": d / 20,
                    "delta_upper": d * 1.2,
                    "delta_limit": lim,
                    "error_mean": err,
                    "error_lo": err / 3,
                    "error_hi": min(1.0, err * 3),
                    "bound_sin": 1.0,
                }
            )
    df = pd.DataFrame(rows)
    if with_nan:
        df.loc[2, ["error_mean", "error_lo", "error_hi", "delta"]] = np.nan
        df.loc[:, "bound_sin"] = np.nan
    return df


def strip_of(ax):
    """The strip above a Fig. 2 panel that holds the 'no parameters' marks (None if the panel has none)."""
    strips = [child for child in ax.child_axes if child.get_label() == "infeasible strip"]
    return strips[0] if strips else None


def infeasible_markers(ax):
    """The 'no parameters met the δ limit' marks of a Fig. 2 panel: they live in its strip, off the error axis."""
    strip = strip_of(ax)
    return [c for c in (strip.collections if strip else []) if c.get_label() == INFEASIBLE_LABEL]


def legend_texts(fig) -> list[str]:
    return [t.get_text() for leg in fig.legends for t in leg.get_texts()]


def main_axes(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "secondary"]


def test_method_styles_come_from_the_registry():
    assert {"ddppm", "ldp", "ldp_analytic", "dpm"} <= set(METHOD_STYLE)
    assert METHOD_STYLE["ddppm"]["label"] == "D-DP-PM"
    assert METHOD_STYLE["dpm"]["label"] == "D-PM, no privacy (reference)"
    for st in METHOD_STYLE.values():
        assert {"label", "color", "marker", "linestyle"} <= set(st)
        assert st["color"] != INFEASIBLE_COLOR
    assert len({st["color"] for st in METHOD_STYLE.values()}) == len(METHOD_STYLE)


def test_fig2_single_axes_labels_scales_legend_and_files(tmp_path):
    fig = fig2_single(make_summary(), None, n=442)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "ε" in ax.get_xlabel() and "error" in ax.get_ylabel()
    assert fig._suptitle.get_text().startswith("Diabetes\n")  # the data set leads the heading
    texts = legend_texts(fig)
    labels = {"ddppm": "D-DP-PM [network]"}
    assert all(
        labels.get(m, st["label"]) in texts for m, st in METHOD_STYLE.items() if m in set(make_summary()["method"])
    )
    assert INFEASIBLE_LABEL not in texts and not infeasible_markers(ax)
    assert len(ax.collections) >= 4  # one band per method
    top = [c for c in ax.child_axes]
    assert top and [t.get_text() for t in top[0].get_xticklabels()][2] == "δ≤8e-3"

    png, pdf = tmp_path / "out" / "f.png", tmp_path / "out" / "f.pdf"
    save_figure(fig, png, pdf, dpi=60)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000
    assert pdf.read_bytes()[:4] == b"%PDF" and pdf.stat().st_size > 1000
    assert sorted(p.name for p in png.parent.iterdir()) == ["f.pdf", "f.png"]  # no temporary files left


def test_infeasible_marker_is_drawn_where_ddppm_had_no_parameters():
    fig = fig2_single(make_summary(infeasible_eps=(10.0,)))
    ax = fig.axes[0]
    markers = infeasible_markers(ax)
    assert len(markers) == 1
    np.testing.assert_allclose(markers[0].get_offsets()[:, 0], [10.0], rtol=0.1)  # curves are dodged sideways
    assert INFEASIBLE_LABEL in legend_texts(fig)


def test_over_budget_points_get_the_infeasible_colour():
    fig = fig2_single(make_summary(over_budget_eps=(5.0, 10.0)))
    ax = fig.axes[0]
    over = [c for c in ax.collections if c.get_label() == OVER_BUDGET_LABEL]
    assert len(over) == 1
    np.testing.assert_allclose(over[0].get_offsets()[:, 0], [5.0, 10.0], rtol=0.1)
    assert np.allclose(over[0].get_edgecolor()[0][:3], matplotlib.colors.to_rgb(INFEASIBLE_COLOR))
    assert OVER_BUDGET_LABEL in legend_texts(fig) and not infeasible_markers(ax)


def test_nans_do_not_crash(tmp_path):
    s = make_summary(infeasible_eps=(1.0, 2.0, 5.0, 10.0), nan_method="ldp")  # D-DP-PM and LDP all NaN
    fig = fig2_single(s, "All NaN", n=100)
    save_figure(fig, tmp_path / "a.png", tmp_path / "a.pdf", dpi=60)
    fig = fig3(make_curves(with_nan=True))
    assert BOUND_LABEL not in legend_texts(fig)  # every bound is NaN: no legend entry for it
    save_figure(fig, tmp_path / "b.png", tmp_path / "b.pdf", dpi=60)
    assert (tmp_path / "a.png").stat().st_size > 0 and (tmp_path / "b.pdf").stat().st_size > 0


def test_fig2_panel_on_given_axes_returns_legend_handles():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    handles = plot_fig2_panel(ax, make_summary(label=AMI_LABEL, dataset="ami_synthetic"))
    assert ax.get_title() == AMI_LABEL  # the stand-in label is kept, never retitled "AMI"
    assert "D-DP-PM [network]" in handles


def test_fig2_grid_two_by_two_with_shared_legend(tmp_path):
    panels = [
        (lab, make_summary(label=lab, infeasible_eps=inf), n)
        for lab, inf, n in (
            ("Diabetes", (), 442),
            ("Breast Cancer", (), 569),
            (AMI_LABEL, (10.0,), 1352),
            ("Wine", (), 178),
        )
    ]
    fig = fig2_grid(panels)
    axes = main_axes(fig)
    assert len(axes) == 4
    assert [ax.get_title() for ax in axes] == ["Diabetes", "Breast Cancer", AMI_LABEL, "Wine"]
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in axes)
    assert len(fig.legends) == 1 and INFEASIBLE_LABEL in legend_texts(fig)
    assert [len(infeasible_markers(ax)) for ax in axes] == [0, 0, 1, 0]
    save_figure(fig, tmp_path / "g.png", tmp_path / "g.pdf", dpi=60)
    assert (tmp_path / "g.png").stat().st_size > 1000


def test_fig2_grid_hides_unused_panel():
    panels = [(f"D{i}", make_summary(label=f"D{i}"), None) for i in range(3)]
    fig = fig2_grid(panels)
    assert len(main_axes(fig)) == 3


def test_fig3_two_panels_log_scales_bound_and_limits(tmp_path):
    curves = make_curves()
    fig = fig3(curves)
    ax_err, ax_del = main_axes(fig)
    assert ax_err.get_yscale() == "log" and ax_del.get_yscale() == "log"
    assert ax_err.get_xlabel() == ax_del.get_xlabel() == "iterations T"
    assert "error" in ax_err.get_ylabel() and "δ" in ax_del.get_ylabel()
    texts = legend_texts(fig)
    assert "Diabetes" in texts and AMI_LABEL in texts
    assert BOUND_LABEL not in texts  # every bound is 1 (vacuous): said in the title, not drawn at y = 1
    assert any("δ limit" in t for t in texts)
    # per data set: mean line (left; the vacuous bound is not drawn); δ line + δ⁺ line + limit line (right)
    assert len(ax_err.get_lines()) == 2 and len(ax_del.get_lines()) == 6
    assert len(main_axes(fig3(curves, show_upper_tail=False))[1].get_lines()) == 4
    limits = sorted(line.get_ydata()[0] for line in ax_del.get_lines() if len(set(line.get_ydata())) == 1)
    assert limits == pytest.approx([0.007, 0.008])
    assert "vacuous" in ax_err.get_title() and not ax_err.texts  # all bounds are 1: said in the title, over no data
    save_figure(fig, tmp_path / "f3.png", tmp_path / "f3.pdf", dpi=60)
    assert (tmp_path / "f3.pdf").stat().st_size > 1000


def test_save_figure_closes_pyplot_figures(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2])
    num = fig.number
    save_figure(fig, tmp_path / "p.png", tmp_path / "p.pdf", dpi=60)
    assert num not in plt.get_fignums()


def test_frontier_figure_marks_limit_and_choice(tmp_path):
    from ddppm.plotting.frontier import CHOSEN_LABEL, frontier_figure

    rng = np.random.default_rng(0)
    cands = pd.DataFrame(
        {
            "eps": 5.0,
            "T": rng.integers(1, 4, 30),
            "error_mean": rng.uniform(0.2, 1.0, 30),
            "delta_screen": 10 ** rng.uniform(-5, 0, 30),
            "delta_full": np.where(np.arange(30) < 3, 10 ** rng.uniform(-5, 0, 30), np.nan),
            "delta_limit": 0.008,
        }
    )
    chosen = pd.DataFrame([{"eps": 5.0, "met": True, "delta": 0.004, "error_mean": 0.5}])
    fig = frontier_figure([("Diabetes", cands, chosen), ("Wine", cands, chosen.assign(met=False))], 5.0, "sound")
    axes = main_axes(fig)
    assert len(axes) == 2 and all(ax.get_xscale() == "log" for ax in axes)
    assert CHOSEN_LABEL in legend_texts(fig)
    stars = [c for c in axes[0].collections if c.get_offsets().shape[0] == 1 and c.get_sizes()[0] > 200]
    assert len(stars) == 1 and not [c for c in axes[1].collections if c.get_sizes()[0] > 200]
    hollow_left = int((cands["delta_full"].isna() & (cands["delta_screen"] <= 0.008)).sum())
    assert hollow_left > 0 and f"{hollow_left} hollow left of the limit: never confirmed" in axes[0].get_title()
    save_figure(fig, tmp_path / "f.png", tmp_path / "f.pdf", dpi=60)
    assert (tmp_path / "f.png").stat().st_size > 1000


def test_frontier_figure_draws_a_reference_frontier_below_the_limit():
    from ddppm.plotting.frontier import frontier_figure

    cands = pd.DataFrame({"eps": 5.0, "T": [1, 2], "error_mean": [0.9, 0.5], "delta_screen": [0.3, 0.9],
                          "delta_full": [0.3, 0.9], "delta_limit": 0.008})  # fmt: skip
    chosen = pd.DataFrame([{"eps": 5.0, "met": False, "delta": np.nan, "error_mean": np.nan}])
    deltas = np.logspace(-12, -0.05, 25)
    ref = pd.DataFrame({"label": "repaired", "eps": 5.0, "delta": deltas, "error_mean": np.linspace(0.6, 0.1, 25)})
    fig = frontier_figure([("Diabetes", cands, chosen, 0.2, ref)], 5.0, "sound")
    ax = main_axes(fig)[0]
    (line,) = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 3]
    assert min(line.get_xdata()) >= 0.008 / 100 and min(line.get_xdata()) < 0.008  # drawn past the limit, clipped
    assert ax.get_xlim()[0] <= min(line.get_xdata())
    assert "repaired: error at each certified δ (T chosen on a public stand-in)" in legend_texts(fig)


def test_the_floor_turns_marks_into_proofs_and_rings_guessed_neighbour_points():
    """Where the δ floor of the curve's view exceeds the limit: an infeasible point gets a square (a proof), a
    point that met the limit (a guessed neighbour) gets a black ring; elsewhere nothing changes."""
    from ddppm.plotting.style import HEURISTIC_ONLY_LABEL, PROVEN_INFEASIBLE_LABEL

    floor = pd.DataFrame({"eps": EPS, "delta_limit": LIMITS, "floor_hockey": [0.1, 0.5, 0.5, 1e-5]})
    fig = fig2_single(make_summary(infeasible_eps=(5.0, 10.0)), floors={"network": floor})
    ax = fig.axes[0]
    by_label = {c.get_label(): c for c in [*ax.collections, *strip_of(ax).collections]}
    proven = by_label[PROVEN_INFEASIBLE_LABEL]  # ε = 5: infeasible and floor 0.5 > 8e-3 (in the strip)
    np.testing.assert_allclose(proven.get_offsets()[:, 0], [5.0], rtol=0.1)
    np.testing.assert_allclose(infeasible_markers(ax)[0].get_offsets()[:, 0], [10.0], rtol=0.1)  # floor below
    ringed = by_label[HEURISTIC_ONLY_LABEL]  # ε = 2: met the limit, yet the floor 0.5 > 0.143
    np.testing.assert_allclose(ringed.get_offsets()[:, 0], [2.0], rtol=0.1)
    assert {PROVEN_INFEASIBLE_LABEL, HEURISTIC_ONLY_LABEL, INFEASIBLE_LABEL} <= set(legend_texts(fig))


def test_methods_that_share_a_figure_have_distinct_colours() -> None:
    """One colour per method in every figure, from the registry: the methods a common-task figure can draw (every
    common-task method, the searched D-DP-PM variants, the peers), and those of the power methods' Fig. 1 and the
    journal's Fig. 2, are told apart by colour."""
    from ddppm.methods import available_methods, common_task_methods, method_styles

    styles = method_styles()
    ppm = [name for name, m in available_methods().items() if type(m).__module__.startswith("ddppm.methods.ppm")]
    figures = {
        "common task": [*common_task_methods(), "ddppm", "ddppm_workshop", "diffprivlib_pca", "opendp_pca"],
        "power methods": ppm,
        "journal Fig. 2": ["ddppm", "ddppm_certified", "ldp", "ldp_analytic", "oracle", "dpm"],
    }
    for figure, names in figures.items():
        colours = [styles[name]["color"] for name in names]
        assert len(set(colours)) == len(colours), f"{figure}: two methods share a colour"
