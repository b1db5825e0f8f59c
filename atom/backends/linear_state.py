"""The STATE half of a linear-attention hybrid: one entry per request, entry-major.

Shared by the gated-delta-net hybrid (MHA full attention) and the MLA + KDA hybrid. The walk
puts every :class:`LinearAttention` module in the ``linear_state`` row space, so a hybrid's
shorter attention axis needs no hook of its own: counting the modules the builder owns leaves
the linear layers out of the paged pool without anyone saying so.

A STATE pool has no entry count on the P/D decode side -- only the paged count arrives with the
imported handle -- which is why the runner refuses such a model there by the pool's name.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import torch

from atom.models.modules import AttentionModule, LinearAttention
from atom.pool_layout import LinearStatePool

LINEAR_STATE = "linear_state"


def linear_state_pool(modules: list[AttentionModule], rows: int) -> LinearStatePool | None:
    linear = [m for m in modules if isinstance(m, LinearAttention)]
    if not linear:
        return None
    shapes = {(m.conv_shape, m.recurrent_shape, m.dtype) for m in linear}
    if len(shapes) != 1:
        raise ValueError(
            f"linear-attention modules declare {len(shapes)} state shapes {sorted(map(str, shapes))}; "
            "one STATE pool holds one"
        )
    conv_shape, recurrent_shape, dtype = shapes.pop()
    return LinearStatePool(
        rows,
        conv_shape=conv_shape,
        conv_dtype=dtype,
        recurrent_shape=recurrent_shape,
        recurrent_dtype=dtype,
    )


def linear_state_views(pool_views: Any, row: int) -> dict[str, torch.Tensor]:
    return {
        "conv_state": pool_views.conv_state(row),
        "recurrent_state": pool_views.recurrent_state(row),
    }


class LinearStateMixin:
    """The STATE half of a hybrid builder, written once for every flavour it sits beside.

    Put before the paged builder in the bases: the walk gives each linear-attention module a
    ``linear_state`` row, the pool is sized from the rows the walk assigned, and binding hands
    a linear module its state views; every other module is the paged builder's.
    """

    def row_kinds(self, module: AttentionModule) -> tuple[Hashable, ...]:
        if isinstance(module, LinearAttention):
            return (LINEAR_STATE,)
        return super().row_kinds(module)

    def _build_pools(self, modules: list[AttentionModule]) -> None:
        super()._build_pools(modules)
        pool = linear_state_pool(modules, self.pool_rows.counts().get(LINEAR_STATE, 0))
        if pool is not None:
            self.state_pools[LINEAR_STATE] = pool

    def _views_for(
        self, module: AttentionModule, kind: Hashable, row: int
    ) -> dict[str, torch.Tensor]:
        if kind == LINEAR_STATE:
            return linear_state_views(self.state_views[LINEAR_STATE], row)
        return super()._views_for(module, kind, row)
