"""Figures. Each figure is a function from the workflow's tables to a :class:`matplotlib.figure.Figure`."""

from ddppm.plotting.fig2 import fig2_grid, fig2_single, plot_fig2_panel
from ddppm.plotting.fig3 import fig3
from ddppm.plotting.style import (
    BOUND_LABEL,
    INFEASIBLE_COLOR,
    INFEASIBLE_LABEL,
    OVER_BUDGET_LABEL,
    method_styles,
    save_figure,
    series_style,
)

__all__ = [
    "BOUND_LABEL",
    "INFEASIBLE_COLOR",
    "INFEASIBLE_LABEL",
    "OVER_BUDGET_LABEL",
    "fig2_grid",
    "fig2_single",
    "fig3",
    "method_styles",
    "plot_fig2_panel",
    "save_figure",
    "series_style",
]
