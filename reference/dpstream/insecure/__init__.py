"""INSECURE helpers for audits and benchmarks: seeded bulk noise (never for releases).

:mod:`dpstream.insecure.batch` draws whole matrices of Laplace, discrete Laplace and
discrete Gaussian noise from one seed, for the vectorised audit samplers
(:mod:`dpstream.audit.vectorised`). Like :class:`dpstream.noise.InsecureSeededNoise` it is
predictable from its seed and its floating-point samplers leak through their low-order
bits: it exists to *measure* mechanisms, never to protect data. Besides
:mod:`dpstream.noise`, this package is the only place allowed to touch ``numpy.random``.
"""

from dpstream.insecure.batch import BulkNoise

__all__ = ["BulkNoise"]
