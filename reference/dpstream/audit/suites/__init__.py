"""Audit suites: each module here registers the audits of one algorithm family."""
