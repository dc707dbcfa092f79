"""Public classes and functions report the public module that exports them, as httpx's do.

``verigate.Gate.__module__ == "verigate"`` (not ``verigate.gate._engine``): reprs, tracebacks, pickles and the API
reference then name the module a user imports from. A name exported by the top-level package reports ``verigate``;
one exported only by a sub-package reports that sub-package. Only objects defined in a private module are
renamed, each once. An attrs class has its string annotations resolved first: they are looked up in the module
``__module__`` names, which is the defining one only until it is renamed.

This module imports nothing but ``sys`` and ``types``: package ``__init__`` files on the hook fast path call it.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable, Mapping

__all__ = ["present", "present_one"]

TOP = "verigate"


def _private(module: str) -> bool:
    return module.startswith(f"{TOP}.") and any(part.startswith("_") for part in module.split("."))


def present_one(value: object, module: str, name: str) -> None:
    """Report ``module`` as the home of ``value``, exported as ``name``, when it is a class or function of a
    private verigate module under that same name (an alias such as ``strict_loads`` keeps its real home)."""
    if not isinstance(value, (type, types.FunctionType)) or not _private(value.__module__):
        return
    if value.__name__ != name:
        return
    if hasattr(value, "__attrs_attrs__"):
        import attrs  # only a module that already defined an attrs class gets here

        try:
            attrs.resolve_types(value)  # type: ignore[type-var]
        except NameError:  # an annotation names a type imported for type checkers only: keep the real home
            return
    value.__module__ = module


def present(namespace: Mapping[str, object], package: str, names: Iterable[str] | None = None) -> None:
    """Rename the already loaded public names of ``package`` (its ``__all__``, or ``names``); a name the
    top-level package exports too reports ``verigate``. A private module that defines top-level names calls it
    with ``names`` = those names, so they report ``verigate`` however they were first imported."""
    top = sys.modules.get(TOP)
    top_names = set(getattr(top, "__all__", ()))
    for name in namespace.get("__all__", ()) if names is None else names:  # type: ignore[attr-defined]
        if name in namespace:
            present_one(namespace[name], TOP if name in top_names else package, name)
