"""contracts.globs agrees with pathspec's gitignore semantics, which it replaces on the hot path."""

from __future__ import annotations

import pathspec
import pytest

from contracts.fields import ConfigError, compile_globs
from contracts.globs import GlobError, GlobSet

GLOBS = [
    "atom/**",
    "tests/**",
    "*.py",
    "build/",
    "/top.py",
    "a/**/b.py",
    "**/test_*.py",
    "pkg/*.py",
    "docs",
    "src/[ab]*.py",
    "src/[!ab]*.py",
    "x?.py",
    "**",
    "a/b",
    "**/c",
    "a/**",
    "foo/**/",
    "*.pyi",
    "a*b/c",
    "atom/pool_layout/**",
]
PATHS = [
    "atom/x.py",
    "atom/a/b.py",
    "atom",
    "tests/t.py",
    "x.py",
    "a/x.py",
    "build/x.py",
    "a/build/y.py",
    "build",
    "top.py",
    "a/top.py",
    "a/b.py",
    "a/c/d/b.py",
    "a/b/c.py",
    "test_x.py",
    "q/test_y.py",
    "pkg/m.py",
    "pkg/s/m.py",
    "docs/x.md",
    "sub/docs/y",
    "src/a1.py",
    "src/c.py",
    "xa.py",
    "xab.py",
    "a/keep.py",
    "c",
    "z/c",
    "z/c/d.py",
    "foo/x/y.py",
    "foo",
    "m.pyi",
    "axb/c",
    "ab/c/d",
    "atom/pool_layout/entry_arena.py",
]


@pytest.mark.parametrize("glob", GLOBS)
def test_one_glob_matches_what_pathspec_matches(glob):
    ref = pathspec.GitIgnoreSpec.from_lines([glob])
    mine = GlobSet([glob])
    disagree = [p for p in PATHS if ref.match_file(p) != mine.match_file(p)]
    assert not disagree, disagree


@pytest.mark.parametrize(
    "globs",
    [
        ["atom/**", "!atom/keep.py"],
        ["*.py", "!tests/**"],
        ["!x.py", "*.py"],
        ["a/**", "!a/b/**", "a/b/c.py"],
        # Runs of one polarity, each matched as one pattern: the last run to match decides.
        ["atom/**", "tests/**", "!atom/keep.py", "!tests/x.py", "atom/keep.py"],
        ["a/**", "z/**", "foo/**", "!**/c/**", "!**/y.py"],
        ["!x.py", "!m.pyi", "*.py", "*.pyi"],
    ],
)
def test_negation_and_order_match_pathspec(globs):
    ref = pathspec.GitIgnoreSpec.from_lines(globs)
    mine = GlobSet(globs)
    paths = [*PATHS, "atom/keep.py", "tests/x.py"]
    disagree = [p for p in paths if ref.match_file(p) != mine.match_file(p)]
    assert not disagree, disagree


@pytest.mark.parametrize("bad", ["", "   ", "src/[ab", "# a comment", "/"])
def test_a_bad_glob_is_refused_by_name(bad):
    with pytest.raises(GlobError):
        GlobSet([bad])
    with pytest.raises(ConfigError, match="somewhere"):
        compile_globs([bad], where="somewhere")


def test_a_config_compiles_its_globs_once_and_refuses_a_bad_one_when_made(tmp_path):
    from contracts.config import Config

    config = Config(root=tmp_path, exclude=("build/**",), per_file_ignores=(("tests/*", ("AC3",)),))
    assert config.exclude_spec() is config.exclude_spec()  # compiled when made, not per call
    assert config.exclude_spec().match_file("build/x.py")
    assert config.ignored_codes("tests/t.py") == ("AC3",) and config.ignored_codes("a.py") == ()
    with pytest.raises(ConfigError, match=r"`exclude`.*src/\[ab"):
        Config(root=tmp_path, exclude=("src/[ab",))
    with pytest.raises(ConfigError, match=r"per-file-ignores.*src/\[ab"):
        Config(root=tmp_path, per_file_ignores=(("src/[ab", ("AC3",)),))
