"""Attention backends, one per flavour, each with the builder that sizes, carves and binds its
pools. ``selector.select_backend`` is the one dispatch ``attn_family`` feeds."""
