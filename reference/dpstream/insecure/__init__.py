"""The insecure door (hazmat): every noise source and sampler that must never protect a release.

Everything here is predictable or recorded, by design, for tests, audits, known-answer vectors,
conformance runs, benchmarks and simulations:

* :class:`InsecureSeededNoise`, :class:`InsecureZeroNoise` (:mod:`~dpstream.insecure.seeded`): seeded and
  noiseless sources;
* :class:`TapeRecorder`, :class:`TapeReplay` (:mod:`~dpstream.insecure.tape_sources`): record the draws of a
  run to a :class:`dpstream.tape.Tape`, or replay one (the tape *format* stays in :mod:`dpstream.tape`);
* :class:`ScriptedNoise` (:mod:`~dpstream.insecure.scripted`): scripted values at chosen sites;
* :class:`BulkNoise` (:mod:`~dpstream.insecure.batch`): seeded noise matrices for the vectorised audit samplers.

The secure default stays behind :mod:`dpstream.noise` (:class:`~dpstream.noise.SecureNoise`,
:func:`~dpstream.noise.default_noise`): an algorithm given no source draws through OpenDP. Besides
:mod:`dpstream.noise`, this package is the only place allowed to touch ``numpy.random``, ``random`` or
``secrets`` (``tests/foundation/test_randomness_door.py``).
"""

from dpstream.insecure.batch import BulkNoise
from dpstream.insecure.scripted import ScriptedNoise
from dpstream.insecure.seeded import InsecureSeededNoise, InsecureZeroNoise
from dpstream.insecure.tape_sources import TapeRecorder, TapeReplay

__all__ = ["BulkNoise", "InsecureSeededNoise", "InsecureZeroNoise", "ScriptedNoise", "TapeRecorder", "TapeReplay"]
