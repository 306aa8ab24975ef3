"""Audits: exact privacy loss, black-box distinguishing, calibration and accuracy checks."""
