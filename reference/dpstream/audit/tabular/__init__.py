"""The tabular room (seeds 003/000): exact transcript losses of StreamingMWEM and Algorithm 3
(:mod:`~dpstream.audit.tabular.loss`) and the family's registered audits (:mod:`~dpstream.audit.tabular.cases`)."""
