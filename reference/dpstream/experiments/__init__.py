"""Paper experiments run by ``dpstream reproduce <name>``.

Each module of this package that defines a module-level ``EXPERIMENT`` is a
subcommand; adding an experiment means adding a module, nothing else. An experiment that
reads data files names them in ``Experiment.data``; they ship in the repository's ``data/``
folder and are read, checked against their checksums, through :mod:`dpstream.experiments.data`.

Every experiment's summary states how its noise was drawn (:func:`noise_mode`) and the command line
that produced it (:func:`command_line`); long loops report progress through
:func:`dpstream.experiments.progress.progress`.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass

from dpstream.experiments.data import DataFile

__all__ = ["Experiment", "command_line", "discover", "noise_mode"]


@dataclass(frozen=True)
class Experiment:
    """A reproducible paper experiment.

    ``anchors`` names the catalog entries it runs (:mod:`dpstream.catalog`; a test checks each resolves,
    and the generated index ``docs/catalog.md`` lists the experiment under each). ``add_arguments`` adds
    its options (``--out`` is added for every experiment, ``--data-dir`` for every experiment with
    ``data``); ``run`` executes it with the parsed arguments and returns the exit status. ``data`` lists
    the files it reads by default. ``check``, if given, runs right after parsing, before any work: it
    raises :class:`~dpstream.errors.DPStreamInputError` naming the option for a rule between arguments
    (``--k`` > ``--T``) or for missing or corrupted data, which ``dpstream`` reports as a usage error
    (exit status 2).
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    anchors: tuple[str, ...]
    data: tuple[DataFile, ...] = ()
    check: Callable[[argparse.Namespace], None] | None = None


def noise_mode(secure: bool, seed: int) -> str:
    """How the noise was drawn, for summaries: ``secure (OpenDP)`` or ``insecure seeded, seed=N``."""
    return "secure (OpenDP)" if secure else f"insecure seeded, seed={seed}"


def command_line(args: argparse.Namespace) -> str:
    """The command line that produced a run (set by :func:`dpstream.cli.main`; else this process's argv)."""
    recorded = getattr(args, "command_line", None)
    return recorded if isinstance(recorded, str) else shlex.join(["dpstream", *sys.argv[1:]])


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
