"""The conformance kit: check any implementation, in any language, against the reference.

* the wire protocol v1 (JSON Lines over a child process's stdin/stdout; JSON Schema in
  ``protocol-v1.schema.json``; docs/conformance.md) and its harness side (:mod:`~.wire`);
* the reference speaking it (:mod:`~.serve`, ``dpstream serve``);
* the checks: known-answer and must-reject from the shipped corpus (:mod:`~.vector_checks`),
  statistical privacy audits of programs using their own randomness (:mod:`~.statistical`);
* the run and its reports (:mod:`~.runner`, :mod:`~.report`, ``dpstream conform``, :mod:`~.cli`).
"""
