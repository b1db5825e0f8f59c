"""The runner's one walk: every module's rows, in every row space it caches in.

An MLA layer with a sparse indexer sits in two row spaces -- its latent row and its indexer-key
row, the latter owned by the layers that declare an indexer and counted apart -- so a builder
answers *all* of a module's kinds and ``assign_pool_rows`` takes them as a list, appending the
module to each in visit order. Running the walk once per row space would be a second walk, the
two-answers split ``pool_rows`` exists to close.

What this adds over ``assign_pool_rows`` is the refusal: every module handed here is one the
runner means a builder to bind, so a module with no row space is a flavour mismatch (an MLA
draft offered to an MHA target) and is refused by name, not skipped as "caches nothing".
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from atom.pool_layout import PoolRows, assign_pool_rows


def walk_pool_rows(
    modules: Iterable[object],
    row_kinds: Callable[[object], tuple[Hashable, ...]],
    *,
    owner: str,
) -> PoolRows:
    def kinds_of(module: object) -> list[Hashable]:
        kinds = row_kinds(module)
        if not kinds:
            raise ValueError(
                f"module {module} ({type(module).__name__}) has no row space in builder {owner!r}: "
                "nothing of this flavour caches it"
            )
        # A list, not a tuple: a KvGeometry is itself a tuple and stays one kind.
        return list(kinds)

    return assign_pool_rows(modules, kinds_of)
