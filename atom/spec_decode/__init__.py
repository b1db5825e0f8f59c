"""Speculative decoding's KV: which drafts own a pool and how one is built.

Nothing here imports an attention backend. A draft's flavour arrives as a backend *class* the
runner selected from the draft's own config, and the class's ``DRAFT_OWNS_KV_POOL`` decides
whether the draft gets a :class:`DraftKvBuilder` (a sibling pool in the target's block-id space)
or binds into the target's pool (an MTP draft, an MLA draft).
"""
