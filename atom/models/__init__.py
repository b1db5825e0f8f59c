"""Model configs (``configs/*.json``, facts with their ``_sources``), the registry over them, the
family predicate, and the module skeletons sizing walks. Nothing is imported here, so
``import atom.models.registry`` loads no torch."""
