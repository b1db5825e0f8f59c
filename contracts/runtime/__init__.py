"""Runtime contracts: the engine's sizing, carving and binding, checked by running them.

Unlike the rest of ``contracts`` this submodule imports the engine (and so torch); only tests and
users import it, explicitly, and nothing on the static path does. ``checks`` holds one function per
runtime contract (the eight in ``checks.RUNTIME_CONTRACTS``: price equals carve, rows
from the walk, bind parity, disjoint and in bounds, transfer units, write-readback, refusal by
name; the eighth, a budget plan against its carve, is ``capacity.check_capacity``), each raising
:class:`~contracts.runtime.checks.ContractViolation`
naming the contract and what it found; ``strategies`` holds the hypothesis strategies that draw
engine cases (model x tp x pp stage x kv dtype x scheduler block x block count) and capacity
cases (a model, a budget and the plan's arguments).
"""

from contracts.runtime.capacity import check_capacity
from contracts.runtime.checks import (
    RUNTIME_CONTRACTS,
    ContractViolation,
    check_all,
    check_bind_parity,
    check_disjoint_in_bounds,
    check_element_readback,
    check_price_equals_carve,
    check_refusals,
    check_rows_from_walk,
    check_transfer_units,
    check_write_readback,
)

__all__ = [
    "RUNTIME_CONTRACTS",
    "ContractViolation",
    "check_all",
    "check_bind_parity",
    "check_capacity",
    "check_disjoint_in_bounds",
    "check_element_readback",
    "check_price_equals_carve",
    "check_refusals",
    "check_rows_from_walk",
    "check_transfer_units",
    "check_write_readback",
]
