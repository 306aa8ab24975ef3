"""The hypercube room (seed 004): exact view losses of sparse counting and online synthetic data
(:mod:`~dpstream.audit.hypercube.loss`) and the family's registered audits (:mod:`~dpstream.audit.hypercube.cases`)."""
