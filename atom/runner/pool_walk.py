"""The runner's one walk: every module's rows, in every row space it caches in.

``atom.pool_layout.assign_pool_rows`` gives a module one row space. An MLA layer with a sparse
indexer sits in two -- its latent row and its indexer-key row, the latter owned by a subset of
layers and counted apart -- so the engine walks once and asks the builder for *all* of a
module's kinds, appending the module to each in visit order. Running ``assign_pool_rows`` once
per row space would be a second walk, which is the two-answers split ``pool_rows`` exists to
close. The result is the same ``PoolRows`` type, so every reader is unchanged. (A request to
accept a list of kinds in ``assign_pool_rows`` itself is in /tmp/spec/pool_layout_requests.md;
when it lands this becomes one call.)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from atom.pool_layout import PoolRows


def walk_pool_rows(
    modules: Iterable[object],
    row_kinds: Callable[[object], tuple[Hashable, ...]],
    *,
    owner: str,
) -> PoolRows:
    """``pool_rows`` over ``modules``; a module that caches nothing for ``owner`` is refused.

    Every module handed here is one the runner means ``owner`` to bind, so a module with no row
    space is a flavour mismatch (an MLA draft offered to an MHA target), not a module to skip.
    """
    by_kind: dict[Hashable, list[object]] = {}
    seen: set[int] = set()
    for module in modules:
        if id(module) in seen:
            raise ValueError(f"module {module} is visited twice by the pool_rows walk")
        seen.add(id(module))
        kinds = row_kinds(module)
        if not kinds:
            raise ValueError(
                f"module {module} ({type(module).__name__}) has no row space in builder {owner!r}: "
                "nothing of this flavour caches it"
            )
        for kind in kinds:
            by_kind.setdefault(kind, []).append(module)
    return PoolRows(by_kind)
