"""Runtime contracts: the engine's sizing, carving and binding, checked by running them.

Unlike the rest of ``contracts`` this submodule imports the engine (and so torch); only tests and
users import it, explicitly, and nothing on the static path does. ``checks`` holds one function per
contract of BRIEF section 4, each raising :class:`~contracts.runtime.checks.ContractViolation`
naming the contract and what it found; ``strategies`` holds the hypothesis strategies that draw
engine cases (model x tp x pp stage x kv dtype x scheduler block x block count).
"""

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
    "check_disjoint_in_bounds",
    "check_element_readback",
    "check_price_equals_carve",
    "check_refusals",
    "check_rows_from_walk",
    "check_transfer_units",
    "check_write_readback",
]
