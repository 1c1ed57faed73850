"""The methods, one module or package each, and their registry (:mod:`ddppm.methods.base`)."""

from ddppm.methods.base import (
    DISTRIBUTED_PCA,
    NO_THREAT_MODEL,
    PARAM_COLUMNS,
    PROVEN_EVERY_OBSERVER,
    Method,
    RegisteredMethod,
    available_methods,
    calibrated_methods,
    common_task_methods,
    get_method,
    method_module,
    method_styles,
    param_table,
    register,
)

__all__ = [
    "DISTRIBUTED_PCA",
    "NO_THREAT_MODEL",
    "PARAM_COLUMNS",
    "PROVEN_EVERY_OBSERVER",
    "Method",
    "RegisteredMethod",
    "available_methods",
    "calibrated_methods",
    "common_task_methods",
    "get_method",
    "method_module",
    "method_styles",
    "param_table",
    "register",
]
