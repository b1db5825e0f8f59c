"""EntryClass / PoolSpec / sum_specs: specs naming the same class sum."""

from __future__ import annotations

import pytest

from atom.pool_layout import EntryClass, PoolSpec, sum_specs


def test_specs_naming_the_same_class_sum_and_classes_stay_apart():
    specs = [
        PoolSpec("kv", EntryClass.PAGE, 266240),
        PoolSpec("draft_kv", EntryClass.PAGE, 1024),
        PoolSpec("gdn", EntryClass.STATE, 39223296),
    ]
    assert sum_specs(specs) == {EntryClass.PAGE: 266240 + 1024, EntryClass.STATE: 39223296}
    assert sum_specs([]) == {}


@pytest.mark.parametrize(
    ("args", "error", "named"),
    [
        (("kv", "page", 1), TypeError, "'page'"),
        (("kv", EntryClass.PAGE, -5), ValueError, "-5"),
        (("", EntryClass.PAGE, 1), TypeError, "''"),
    ],
)
def test_refusals_name_the_value(args, error, named):
    with pytest.raises(error, match=named):
        PoolSpec(*args)


def test_sum_specs_refuses_what_is_not_a_spec():
    with pytest.raises(TypeError, match="1024"):
        sum_specs([1024])
