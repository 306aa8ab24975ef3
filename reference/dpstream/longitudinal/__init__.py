"""Seed 002: continual release of synthetic data from longitudinal collections (Bun et al. 2024)."""
