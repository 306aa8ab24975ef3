"""dpstream: reference implementation of continual-release differentially private synthetic data.

Start with ``dpstream.noise`` (the one door to randomness), ``dpstream.claims``
(privacy claims as values) and ``dpstream.counters``; the algorithm families live in
their own subpackages, the audits in ``dpstream.audit``.
"""

__version__ = "0.1.0"
