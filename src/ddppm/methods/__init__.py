"""The methods, one module or package each, and their registry (:mod:`ddppm.methods.base`)."""

from ddppm.methods.base import (
    NO_THREAT_MODEL,
    PARAM_COLUMNS,
    Method,
    available_methods,
    get_method,
    method_module,
    param_table,
    register,
)

__all__ = [
    "NO_THREAT_MODEL",
    "PARAM_COLUMNS",
    "Method",
    "available_methods",
    "get_method",
    "method_module",
    "param_table",
    "register",
]
