"""Known-answer and must-reject vectors: the documents (:mod:`~dpstream.vectors.format`), the shipped
corpus (:mod:`~dpstream.vectors.corpus`) and its generation and verification
(:mod:`~dpstream.vectors.generate`, ``dpstream vectors generate|verify``)."""

from dpstream.vectors.format import (
    MUST_REJECT_FORMAT,
    MUST_REJECT_VERSION,
    VECTOR_FORMAT,
    VECTOR_VERSION,
    KnownAnswerVector,
    MustRejectVector,
)

__all__ = [
    "MUST_REJECT_FORMAT",
    "MUST_REJECT_VERSION",
    "VECTOR_FORMAT",
    "VECTOR_VERSION",
    "KnownAnswerVector",
    "MustRejectVector",
]
