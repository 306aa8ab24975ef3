"""The counters' room: release models, exact losses and registered audits of the counters and mechanisms.

:mod:`~dpstream.audit.counters.models` (the paper's :class:`~dpstream.audit.linear_model.LinearReleaseModel`
of every linear counter), :mod:`~dpstream.audit.counters.loss` (their exact worst-case loss),
:mod:`~dpstream.audit.counters.mechanisms` (the one-shot mechanisms as streams, and their models) and
:mod:`~dpstream.audit.counters.cases` (the registered audits of the family).
"""
