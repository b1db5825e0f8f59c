"""What the agent reads: ordering, paths, notebook cells, and the cap on a long list."""

from __future__ import annotations

from hooks._report import MAX_LISTED, Problem, render


def _problem(line: int, code: str = "F841", **kw) -> Problem:
    return Problem(path="/p/pkg/mod.py", line=line, column=5, code=code, message="m", **kw)


def test_sorted_by_position_with_project_relative_paths() -> None:
    text = render(
        [_problem(9, "AC101", note="contract `k`"), _problem(2)],
        relpath="pkg/mod.py",
        project="/p",
        ruff_changed_file=False,
    )
    body = [
        ln
        for ln in text.splitlines()
        if ln.startswith("pkg/mod.py:") and not ln.startswith("pkg/mod.py: ")
    ]
    assert body == ["pkg/mod.py:2:5: F841 m", "pkg/mod.py:9:5: AC101 m (contract `k`)"]
    assert text.startswith("pkg/mod.py: 2 problems left after ruff's safe fixes.\n")


def test_notebook_positions_name_the_cell() -> None:
    text = render(
        [_problem(2, cell=3), _problem(1, cell=1)],
        relpath="a.ipynb",
        project="/p",
        ruff_changed_file=True,
    )
    cells = [ln.split(":")[1] for ln in text.splitlines() if ":cell " in ln]
    assert cells == ["cell 1", "cell 3"]
    assert "read it again" in text.splitlines()[0]


def test_a_long_list_is_capped_and_says_how_to_see_the_rest() -> None:
    total = MAX_LISTED + 7
    text = render(
        [_problem(n) for n in range(1, total + 1)],
        relpath="pkg/mod.py",
        project="/p",
        ruff_changed_file=False,
    )
    listed = [
        ln
        for ln in text.splitlines()
        if ln.startswith("pkg/mod.py:") and not ln.startswith("pkg/mod.py: ")
    ]
    assert len(listed) == MAX_LISTED
    assert f"{total} problems" in text.splitlines()[0]
    assert "... and 7 more" in text and "atom-contracts check pkg/mod.py" in text
