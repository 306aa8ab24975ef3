"""Paper experiments run by ``dpstream reproduce <name>``.

Each module of this package that defines a module-level ``EXPERIMENT`` is a
subcommand; adding an experiment means adding a module, nothing else. An experiment that
reads data files names them in ``Experiment.data``; they ship in the repository's ``data/``
folder and are read, checked against their checksums, through :mod:`dpstream.experiments.data`.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

from dpstream.experiments.data import DataFile

__all__ = ["Experiment", "discover"]


@dataclass(frozen=True)
class Experiment:
    """A reproducible paper experiment.

    ``add_arguments`` adds its options (``--out`` is added for every experiment, ``--data-dir``
    for every experiment with ``data``); ``run`` executes it with the parsed arguments and
    returns the exit status. ``data`` lists the files it reads by default.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    data: tuple[DataFile, ...] = ()


def discover() -> dict[str, Experiment]:
    """All experiments of this package, by name."""
    found: dict[str, Experiment] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        experiment = getattr(module, "EXPERIMENT", None)
        if isinstance(experiment, Experiment):
            if experiment.name in found:
                raise RuntimeError(f"two experiments are named {experiment.name!r}")
            found[experiment.name] = experiment
    return found
