"""Seven of the runtime contracts (``contracts.runtime.RUNTIME_CONTRACTS``; the budget plan's is
``test_capacity_properties.py``), over every model x tp x pp stage x kv dtype x
scheduler block x block count (hypothesis draws the case; strategies keep tensors small).

Each contract is also run once per registry model at the engine defaults, so a model that
hypothesis happens not to draw in a short profile is still covered by every contract.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from contracts.runtime import (
    check_bind_parity,
    check_disjoint_in_bounds,
    check_price_equals_carve,
    check_refusals,
    check_rows_from_walk,
    check_transfer_units,
    check_write_readback,
)
from contracts.runtime.checks import check_element_readback
from contracts.runtime.strategies import (
    case_names,
    default_case,
    engine_cases,
    importable_names,
)

# The profile's own example count (tests/conftest.py): "ci" keeps the suite inside its budget.
SETTINGS = settings()


def _built(case):
    return case.make_runner().initialize(case.blocks)


@pytest.mark.parametrize("name", case_names())
def test_every_model_holds_every_contract_at_defaults(name):
    case = default_case(name)
    runner = _built(case)
    check_price_equals_carve(runner)
    check_rows_from_walk(runner)
    check_disjoint_in_bounds(runner)
    check_transfer_units(runner)
    check_write_readback(runner)
    if not runner._state_pool_names():
        importing = case.make_runner().import_paged_pool(runner.paged_buf.clone(), case.blocks)
        check_bind_parity(runner, importing)
        check_element_readback(
            runner, importing=case.make_runner().import_paged_pool(runner.paged_buf, case.blocks)
        )
    else:
        check_element_readback(runner)
    check_refusals(case.make_runner, case.blocks, built=runner)


@SETTINGS
@given(engine_cases())
def test_price_equals_carve(case):
    check_price_equals_carve(_built(case))


@SETTINGS
@given(engine_cases())
def test_rows_come_from_the_walk(case):
    check_rows_from_walk(case.make_runner().initialize(case.blocks))


@SETTINGS
@given(engine_cases(names=importable_names()))
def test_bind_parity_between_allocating_and_import_paths(case):
    # Drawn only from models with an import path, so every example checks parity: returning
    # early for STATE models once made about a third of the examples check nothing. Those
    # models' decode-side refusal is test_refusal_by_name's.
    runner = case.make_runner()
    assert not runner._state_pool_names()
    runner.initialize(case.blocks)
    exported, blocks = runner.export_paged_pool()
    importing = case.make_runner().import_paged_pool(exported.clone(), blocks)
    check_bind_parity(runner, importing)


@SETTINGS
@given(engine_cases())
def test_views_are_disjoint_and_in_bounds(case):
    check_disjoint_in_bounds(_built(case))


@SETTINGS
@given(engine_cases())
def test_transfer_regions_are_scheduler_block_units(case):
    check_transfer_units(_built(case))


@SETTINGS
@given(engine_cases())
def test_write_readback_through_every_bound_view(case):
    runner = _built(case)
    check_write_readback(runner, seed=case.blocks)
    # The import side reads the allocating side's own bytes (no copy), so it sees every write.
    importing = None
    if not runner._state_pool_names():
        importing = case.make_runner().import_paged_pool(runner.paged_buf, case.blocks)
    check_element_readback(runner, importing=importing)


@SETTINGS
@given(engine_cases())
def test_refusal_by_name(case):
    check_refusals(case.make_runner, case.blocks)
