"""ATOM, the engine slice the contracts guard.

Nothing is imported here on purpose: `atom.pool_layout` must be importable
without aiter, triton or the rest of the engine (CI imports it alone), and an
ancestor `__init__` that imported anything would drag it in with every member.
"""
