"""Public classes and functions report the public module that exports them, as httpx's do.

``verigate.Gate.__module__ == "verigate"`` (not ``verigate.gate._engine``): reprs, tracebacks, pickles and the API
reference then name the module a user imports from. A name exported by the top-level package reports ``verigate``;
one exported only by a sub-package reports that sub-package. Only objects defined in a private module are
renamed, each once. An attrs class has its string annotations resolved first: they are looked up in the module
``__module__`` names, which is the defining one only until it is renamed.

A package whose modules only some paths need (``verigate.judge``, ``verigate.store``) loads them on first use:
its ``__init__`` lists ``_EXPORTS`` (private module -> the names the package exports from it) and takes its
``__getattr__`` and ``__dir__`` from :func:`lazy` (PEP 562); its modules end with :func:`present_module`, so
their names report the package however they were first imported, as when the package imported every module
up front.

This module imports nothing but ``sys`` and ``types`` (``collections.abc`` for type checkers only): package
``__init__`` files on the hook fast path call it.
"""

from __future__ import annotations

import sys
import types

_TYPE_CHECKING = False  # type checkers read this constant as typing.TYPE_CHECKING
if _TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, MutableMapping

__all__ = ["lazy", "present", "present_module", "present_one"]

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


def present_module(namespace: Mapping[str, object]) -> None:
    """At the end of a private module of a lazy package: rename the names the package exports from every module of
    it loaded so far (this one included), so a module that ends without this call (it may import no helper) is
    covered by the next one that loads."""
    package = str(namespace["__name__"]).rpartition(".")[0]
    exports: Mapping[str, Iterable[str]] = getattr(sys.modules.get(package), "_EXPORTS", {})
    for module, names in exports.items():
        loaded = sys.modules.get(f"{package}.{module}")
        if loaded is not None:
            present(vars(loaded), package, names)


def lazy(namespace: MutableMapping[str, object]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package whose ``_EXPORTS`` maps private modules to exported names:
    a name's module is imported on first use, and the value is kept in the package's namespace."""
    package = str(namespace["__name__"])
    exports: Mapping[str, Iterable[str]] = namespace["_EXPORTS"]  # type: ignore[assignment]
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        __import__(f"{package}.{module}")
        loaded = sys.modules[f"{package}.{module}"]
        present(vars(loaded), package, exports[module])  # for a module that ends without present_module
        value = getattr(loaded, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
