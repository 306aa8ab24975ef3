"""Bridges from dpstream to other libraries: :mod:`dpstream.interop.opendp` (OpenDP measurements)."""
