"""Plug-ins: outside modules that register models, attacks, OOD sets, measures and suites.

A plug-in comes one of two ways, and both end in the same ``register`` call its module makes
when it is imported:

* an installed package declares an entry point in one of :data:`GROUPS` (pytest's plug-in
  mechanism), e.g. in its ``pyproject.toml``::

      [project.entry-points."robustbnn.models"]
      rank1_bnn = "my_package.rank1"   # importing it calls MODELS.register("rank1_bnn", ...)

* ``--plugin MODULE`` on the command line: an installed module, or one in the current folder.

:func:`load_plugins` imports both, in the main process and (through
:func:`robustbnn.run.executors.setup_worker`) in every worker of every executor, so a name
registered by a plug-in resolves wherever a cell runs. A worker gets the folders it needs on
its ``sys.path`` from :func:`plugin_paths` (the run spec carries them), since a Ray worker may
start in another folder than the command.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points

from robustbnn.errors import PluginError

__all__ = ["GROUPS", "load_plugins", "plugin_paths"]

# Entry-point group -> what its modules register, and where.
GROUPS: dict[str, str] = {
    "robustbnn.models": "model",  # robustbnn.models.MODELS
    "robustbnn.attacks": "attack",  # robustbnn.attacks.ATTACKS
    "robustbnn.ood_sets": "OOD set",  # robustbnn.data.ood_sets.OOD_DATASETS
    "robustbnn.measures": "uncertainty measure",  # robustbnn.ood.uncertainty.UNCERTAINTIES
    "robustbnn.suites": "suite",  # robustbnn.suites.SUITES
}


def _one_line(err: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(err).split()) or type(err).__name__


def _raised(err: BaseException) -> str:
    """What an import raised, on one line: ``sys.exit(3)`` for a SystemExit."""
    if isinstance(err, SystemExit):
        return f"SystemExit: sys.exit({err.code!r}) at import; a plug-in must not end robustbnn"
    if isinstance(err, KeyboardInterrupt):
        return "KeyboardInterrupt at import (raised by the module, or Ctrl-C while importing it)"
    return f"{type(err).__name__}: {_one_line(err)}"


def _entry_points() -> list[tuple[str, EntryPoint]]:
    """Every entry point of every group, as ``(group, entry point)`` in group order."""
    return [(group, ep) for group in GROUPS for ep in entry_points(group=group)]


def _package(ep: EntryPoint) -> str:
    """`` of package NAME VERSION`` for an entry point of an installed distribution, else ''."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return ""
    return f" of package {dist.name} {dist.version}"


def _load_entry_point(group: str, ep: EntryPoint) -> None:
    """Import one entry point; any error becomes one :class:`PluginError` line."""
    try:
        ep.load()
    # Any error in a plug-in's own code, and a sys.exit or KeyboardInterrupt at its top level,
    # which would otherwise end robustbnn with the plug-in's exit code and no message.
    except (Exception, SystemExit, KeyboardInterrupt) as err:  # noqa: BLE001
        raise PluginError(
            f"{GROUPS[group]} plug-in entry point {ep.name} = {ep.value}{_package(ep)} (group "
            f"{group}) cannot be imported ({_raised(err)}); fix or uninstall the package that "
            "declares it (--debug shows the traceback)") from err


def _import_module(module: str) -> None:
    """Import one ``--plugin`` module; any error becomes one :class:`PluginError` line."""
    try:
        importlib.import_module(module)
    except ImportError as err:
        raise PluginError(f"--plugin {module}: cannot import it ({_one_line(err)}); check "
                          "the module name and that its package is installed") from None
    except (Exception, SystemExit, KeyboardInterrupt) as err:  # noqa: BLE001 - as above
        raise PluginError(f"--plugin {module}: importing it raised {_raised(err)}; fix the "
                          "module (--debug shows the traceback)") from err


def load_plugins(modules: Sequence[str] = (), paths: Sequence[str] = ()) -> None:
    """Import every entry point of :data:`GROUPS`, then every ``--plugin`` module.

    Idempotent: a module already imported is not imported again, so calling it once per
    process and again per cell costs a metadata scan and nothing else.

    A plug-in that fails to import is an error, whichever way it came: the default suite runs
    every registered model, so skipping a broken one would silently shrink the leaderboard.

    Args:
        modules: ``--plugin`` modules, found among the installed packages, then in the
            current folder (appended to ``sys.path``, as ``python -m`` does, so installed
            packages come first).
        paths: Folders appended to ``sys.path`` first (those :func:`plugin_paths` gave the
            main process), so a worker finds what the command found.

    Raises:
        PluginError: Naming the entry point (its group and package) or the module, and the
            error.
    """
    for path in paths:
        if path not in sys.path:
            sys.path.append(path)
    for group, ep in _entry_points():
        _load_entry_point(group, ep)
    if modules and "" not in sys.path and os.getcwd() not in sys.path:
        # A plug-in module in the folder robustbnn runs from, such as the repository's
        # examples/, imports as under `python -m`.
        sys.path.append(os.getcwd())
    for module in modules:
        _import_module(module)


def plugin_paths(modules: Sequence[str] = ()) -> tuple[str, ...]:
    """The folders a worker needs on ``sys.path`` to load the plug-ins this process loads.

    The current folder when there are ``--plugin`` modules, and the folder of every
    distribution that declares an entry point of :data:`GROUPS`. A process-pool worker
    inherits ``sys.path``; a Ray worker may not, and may start in another folder.
    """
    found = [os.getcwd()] if modules else []
    for _, ep in _entry_points():
        dist = getattr(ep, "dist", None)
        locate = getattr(dist, "locate_file", None)
        if locate is not None:
            found.append(os.path.abspath(str(locate(""))))
    return tuple(dict.fromkeys(found))
