"""Benchmark scripts (``python -m benchmarks.<family>``): cost curves per family, and secure mode against the cost
of its OpenDP draws (``python -m benchmarks.secure_cost``). See docs/performance.md."""
