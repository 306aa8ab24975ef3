"""The PHDStream room (seed 001): exact transcript probabilities and losses of PrivTree and PHDStream
(:mod:`~dpstream.audit.phdstream.loss`) and the family's registered audits (:mod:`~dpstream.audit.phdstream.cases`)."""
