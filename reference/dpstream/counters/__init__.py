"""Continual counters used by the papers (001 App. D, 002 App. B, 003 section 8, 004 section 3)."""

from dpstream.counters.base import Counter
from dpstream.counters.simple import SimpleCounter, simple_counter_model

__all__ = ["Counter", "SimpleCounter", "simple_counter_model"]
