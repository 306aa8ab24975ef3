"""The longitudinal room (seed 002): release models and exact Renyi brackets
(:mod:`~dpstream.audit.longitudinal.loss`), the closed form of the releases from a tape
(:mod:`~dpstream.audit.longitudinal.closed_form`), the family's own checks
(:mod:`~dpstream.audit.longitudinal.checks`), the numbers quoted in its docs
(:mod:`~dpstream.audit.longitudinal.report`) and its registered audits (:mod:`~dpstream.audit.longitudinal.cases`)."""
