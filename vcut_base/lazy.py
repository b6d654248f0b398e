"""Public names of a package imported from their submodule when first used (PEP 562)."""

import importlib

__all__ = ["lazy_names"]


def lazy_names(namespace, homes):
    """``(__getattr__, __dir__)`` for the package whose globals are ``namespace``.

    ``homes`` maps a submodule to the public names it defines; the first use
    of a name imports that submodule and keeps the value in ``namespace``.
    """
    module_of = {name: module for module, names in homes.items() for name in names}
    package = namespace["__name__"]

    def __getattr__(name):
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(namespace["__all__"]))

    return __getattr__, __dir__
