"""Mutation testing: one textual change at a time, the relevant tests run after each.

A check that cannot fail is a stub, and the way to find one is to break the code it guards and
see whether a test notices. For each target package this script

1. parses every module with ``ast`` and lists the *mutants*: one operator per site (a comparison
   flipped, an arithmetic operator swapped, a constant nudged, a guard's condition made
   ``False``, a call statement deleted, ...), each one contiguous source span replaced by
   another -- never two changes at once;
2. copies the repository once to a scratch directory (so the worktree is never touched, and an
   interrupted run leaves nothing mutated behind), and for each mutant writes the mutated module
   there, forks a child of a parent that already imported torch, hypothesis and pytest, and runs
   that package's test subset with ``-x``;
3. prints the kill rate per package and every survivor as ``path:line: before -> after``.

A mutant is *killed* when the tests fail (or error, or run past ``--timeout-factor`` x the
baseline), *survived* when they pass. The baseline (no mutation) must pass first, and one
planted mutant per package must be killed before any score is believed -- that is the check
that the children really import the scratch copy and not the installed worktree.

Equivalent mutants -- survivors no test could kill, because the program means the same thing --
are listed by their stable key (``path:line:operator:before->after``) in ``EQUIVALENT`` below and
argued one by one in docs/testing.md; they are reported apart and left out of the denominator.

    python bench/mutation.py                          # every target
    python bench/mutation.py --target atom/pool_layout
    python bench/mutation.py --target contracts/runtime --list   # mutants only, run nothing
    nice -n 19 python bench/mutation.py --target checkers/rules --only rules/retired_name \
        --jobs 2 > /tmp/mutation-retired.log &        # one rule, its own tests, two at once
    python bench/mutation.py --target checkers/rules --recheck /tmp/mutation-*.log
                                                      # after adding tests: the rest only
    nice -n 19 python bench/mutation.py --target checkers/core --since main --jobs 1
                                                      # only the lines changed since main

``--since REV`` mutates only the lines ``git diff REV -U0`` shows added or changed in the
working tree (and every line of a Python file git does not track yet): a change is proved by
mutation without re-scoring its whole package. A mutant is taken when any line of the span it
replaces is such a line, so the deletion of a call whose argument changed is among them.

Each rule module of checkers/rules runs its own tests and its own VALID/INVALID examples
(``TARGETS``); ``--jobs N`` runs N mutants at once, each in its own scratch copy. The children
load the derandomized "ci" hypothesis profile, so a verdict never depends on a draw.

Why not mutmut: see docs/testing.md ("Choosing the mutation tool").
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import functools
import json
import operator
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Each target package with the tests that guard it. A file may name a narrower subset; the
#: subsets are chosen so a survivor means "no test of this code", not "a test we did not run".
#: Files run in the order listed, so with -x the fast, pointed tests kill most mutants first.
TARGETS: dict[str, dict[str, list[str]]] = {
    "atom/pool_layout": {
        "*": ["tests/atom/pool_layout/test_documented_promises.py", "tests/atom/pool_layout"],
        # The budget plan's own tests first, then the plan against its carve and the goldens.
        "capacity.py": [
            "tests/atom/pool_layout/test_capacity.py",
            "tests/atom/runner/test_capacity_goldens.py",
            "tests/contracts/runtime/test_capacity_properties.py",
            "tests/atom/pool_layout",
        ],
        "reach.py": [
            "tests/atom/pool_layout/test_reach.py",
            "tests/atom/runner/test_capacity_goldens.py",
            "tests/atom/pool_layout",
        ],
    },
    # The budget plan above the leaf: the reach the skeleton reads, the classes a runner's pools
    # make, the report and the command's flags.
    "atom/capacity": {
        "*": [
            "tests/atom/models/test_layer_reaches.py",
            "tests/atom/runner/test_capacity_classes.py",
            "tests/atom/runner/test_capacity_goldens.py",
            "tests/atom/test_capacity_command.py",
            "tests/contracts/runtime/test_capacity_properties.py",
            "tests/atom/models/test_skeleton.py",
            "tests/atom/test_layout_command.py",
        ],
    },
    # P/D: the wire manifest both ends compare, the runner's half of it, the two-process
    # transfer and --block-sizes. The manifest is proved by its own tests in one process (a
    # difference the pair would refuse is one of them). The two-process plan starts two
    # interpreters; -k runs its cases of one model of each kind -- attention alone, a hybrid's
    # slots, DeepSeek-V4 -- with every mismatch and failure case (~15 s, the pointed tests of
    # the ends first), and a survivor is run again with the whole plan (docs/testing.md).
    "atom/pd": {
        "*": [
            "tests/atom/runner/test_wire_manifest.py",
            "tests/atom/pool_layout/test_manifest.py",
            "tests/atom/runner/test_pd_ends.py",
        ],
        "atom/pool_layout/manifest.py": [
            "tests/atom/pool_layout/test_manifest.py",
            "tests/atom/runner/test_wire_manifest.py",
            "tests/atom/test_layout_command.py",
        ],
        "atom/runner/pd_transfer.py": [
            "tests/atom/runner/test_pd_ends.py",
            "tests/atom/runner/test_pd_transfer.py",
            "-k",
            "not every_model or llama-3.1-8b or qwen3.5 or deepseek-v4",
        ],
        "atom/runner/block_sizes.py": [
            "tests/atom/runner/test_block_sizes.py",
            "tests/atom/test_layout_command.py",
        ],
    },
    "contracts/runtime": {
        # The pointed tests first (a planted breakage each, seconds), then the property tests
        # that reach what no pointed test does (byte_runs, the indexer write path), under the
        # derandomized "mutation" profile (see _preimport), the every-model defaults last.
        "*": [
            "tests/contracts/runtime/test_checks_fire.py",
            "tests/contracts/runtime/test_checks_at_their_boundaries.py",
            "tests/contracts/runtime/test_element_readback.py",
            "tests/contracts/runtime/test_checks_catch_breakage.py",
            "tests/contracts/runtime/test_strategies.py",
            # V4's declared element orders: the only caller of _declared_readback.
            "tests/contracts/runtime/test_v4_element_order.py",
            "tests/contracts/runtime/test_runtime_properties.py",
        ],
        "capacity.py": [
            "tests/contracts/runtime/test_capacity_check_fires.py",
            "tests/contracts/runtime/test_capacity_properties.py",
            "tests/atom/pool_layout/test_reach.py",
        ],
        # The capacity strategy's own tests first; then everything the engine strategy feeds.
        "strategies.py": [
            "tests/contracts/runtime/test_capacity_properties.py",
            "tests/contracts/runtime/test_strategies.py",
            "tests/contracts/runtime/test_checks_fire.py",
            "tests/contracts/runtime/test_checks_at_their_boundaries.py",
            "tests/contracts/runtime/test_element_readback.py",
            "tests/contracts/runtime/test_checks_catch_breakage.py",
            "tests/contracts/runtime/test_v4_element_order.py",
            "tests/contracts/runtime/test_runtime_properties.py",
        ],
    },
    # Each rule module with its own tests and its own VALID/INVALID examples (selected by the
    # kind's name from test_rule_examples.py): a survivor means "no test of this rule", and a
    # run of one module takes minutes. The precision sweeps (hundreds of labelled files, ~40 s
    # a run) come last, so only a mutant the pointed tests miss pays for them.
    "checkers/rules": {
        "*": ["tests/checkers/rules", "tests/checkers/test_rule_examples.py"],
        # The kind registry: its own pointed tests (a code prefix that matches no rule, which
        # kinds get imported to find out), then the config and the rule docs, which look up
        # and render every kind.
        "__init__.py": [
            "tests/checkers/test_kind_registry.py",
            "tests/checkers/test_config.py",
            "tests/checkers/test_rule_examples.py",
            "tests/checkers/test_docs.py",
        ],
        **{
            f"{module}.py": [
                f"tests/checkers/rules/test_{module}.py",
                "tests/checkers/test_rule_examples.py",
                *extra,
                "-k",
                f"{kind} or test_{module} or every_registered_kind"
                + (
                    " or cross_file_recheck"
                    if "tests/checkers/test_cross_file_recheck.py" in extra
                    else ""
                ),
            ]
            for module, kind, extra in (
                ("banned_import", "banned-import", []),
                # dependent_lines (the cross-file re-check) is held by the linter's tests.
                ("importorskip", "importorskip", ["tests/checkers/test_cross_file_recheck.py"]),
                (
                    "input_assert",
                    "input-assert",
                    # The file pre-filter (analysis/asserts.py) has its own tests.
                    [
                        "tests/checkers/rules/test_input_assert_prefilter.py",
                        "tests/checkers/rules/test_input_assert_precision.py",
                    ],
                ),
                ("keyword_only", "keyword-only", []),
                ("leaf_package", "leaf-package", ["tests/checkers/test_cross_file_recheck.py"]),
                (
                    "required_keyword",
                    "required-keyword",
                    ["tests/checkers/rules/test_required_keyword_precision.py"],
                ),
                ("retired_name", "retired-name", []),
                ("published_keys", "published-keys", []),
                ("reachable_calls", "reachable-calls", []),
                ("units", "units", []),
            )
        },
    },
    "checkers/analysis": {
        "*": ["tests/checkers/rules", "tests/checkers/test_rule_examples.py"],
        # The look before published-keys walks a module: its own tests, then the kind's.
        "checkers/analysis/dict_producers.py": [
            "tests/checkers/test_dict_producers.py",
            "tests/checkers/rules/test_published_keys.py",
        ],
        "checkers/analysis/resolution.py": [
            "tests/checkers/rules/test_reachable_calls.py",
            "tests/checkers/rules/test_units.py",
            "tests/checkers/rules/test_published_keys.py",
            "tests/checkers/test_analysis_lazy.py",
        ],
        "checkers/analysis/call_patterns.py": [
            "tests/checkers/rules/test_reachable_calls.py",
            "tests/checkers/test_rule_examples.py",
            "-k",
            "reachable-calls or test_reachable_calls",
        ],
        "checkers/analysis/imports.py": [
            "tests/checkers/rules",
            "tests/checkers/test_rule_examples.py",
            "tests/checkers/test_project.py",
        ],
        # A body read alone is held to the body read from the module's tree.
        "checkers/analysis/functions.py": [
            "tests/checkers/test_body_details.py",
            "tests/checkers/test_tree_sharing.py",
            "tests/checkers/rules",
            "tests/checkers/test_rule_examples.py",
        ],
        "checkers/analysis/program.py": [
            "tests/checkers/test_tree_sharing.py",
            "tests/checkers/test_analysis_lazy.py",
            "tests/checkers/rules",
            "tests/checkers/test_rule_examples.py",
        ],
        # The fix's layout is held by the format round trips of test_fix_layout.py.
        "checkers/analysis/asserts.py": [
            "tests/checkers/rules",
            "tests/checkers/test_rule_examples.py",
            "tests/checkers/test_fix_layout.py",
        ],
    },
    # The checker's own modules (TARGET_FILES), each with the tests that hold it -- the
    # pointed files first, seconds each. The default, every checkers test, is for a module no
    # entry names: minutes a mutant, so a whole-package run of this target is hours; prove a
    # change with --since instead.
    "checkers/core": {
        "*": ["tests/checkers", "tests/reliability/test_user_files.py"],
        "checkers/api.py": [
            "tests/checkers/test_never_green.py",
            "tests/checkers/test_declarations.py",
            "tests/checkers/test_diff_filter.py",
            "tests/checkers/test_cli.py",
            "tests/reliability/test_user_files.py",
            "tests/reliability/test_decoding.py",  # stdin as bytes
        ],
        "checkers/resolver.py": [
            "tests/checkers/test_never_green.py",
            "tests/checkers/test_declarations.py",
            "tests/checkers/test_diff_filter.py",
            "tests/checkers/test_cli.py",
            "tests/reliability/test_user_files.py",
            "tests/reliability/test_decoding.py",  # stdin as bytes
        ],
        "checkers/run.py": [
            "tests/checkers/test_never_green.py",
            "tests/checkers/test_declarations.py",
            "tests/checkers/test_diff_filter.py",
            "tests/checkers/test_cli.py",
            "tests/reliability/test_user_files.py",
            "tests/reliability/test_decoding.py",  # stdin as bytes
        ],
        "checkers/check_stdin.py": [
            "tests/checkers/test_never_green.py",
            "tests/checkers/test_declarations.py",
            "tests/checkers/test_diff_filter.py",
            "tests/checkers/test_cli.py",
            "tests/reliability/test_user_files.py",
            "tests/reliability/test_decoding.py",  # stdin as bytes
        ],
        "checkers/cli.py": [
            "tests/checkers/test_never_green.py",
            "tests/checkers/test_diff_filter.py",
            "tests/checkers/test_cli.py",
            "tests/reliability/test_decoding.py",
            "tests/reliability/test_interrupt.py",
        ],
        "checkers/check_command.py": [
            "tests/checkers/test_never_green.py",
            "tests/checkers/test_diff_filter.py",
            "tests/checkers/test_cli.py",
            "tests/reliability/test_decoding.py",
            "tests/reliability/test_interrupt.py",
        ],
        "checkers/pool.py": ["tests/reliability/test_interrupt.py"],
        # The serial loop's Ctrl-C check is the interrupt tests' to catch.
        "checkers/linter.py": [
            "tests/checkers",
            "tests/reliability/test_user_files.py",
            "tests/reliability/test_interrupt.py",
        ],
        "checkers/coverage.py": [
            "tests/checkers/test_never_green.py",
            "tests/checkers/test_one_file_fast_path.py",
        ],
        "checkers/discovery.py": [
            "tests/checkers/test_never_green.py",
            "tests/reliability/test_user_files.py",
            "tests/checkers/test_cli.py",
        ],
        "checkers/flake8_plugin.py": ["tests/checkers/test_flake8_plugin.py"],
        "checkers/interrupt.py": ["tests/reliability/test_interrupt.py"],
        "checkers/project.py": [
            "tests/reliability/test_user_files.py",
            "tests/checkers/test_project.py",
            # What a keystroke keeps of the disk's scans: the language server's index.
            "tests/hooks/lsp/test_neighbours.py",
        ],
        "checkers/source.py": ["tests/reliability/test_user_files.py"],
        "checkers/suppression.py": [
            "tests/checkers/test_never_green.py",
            "tests/checkers/test_suppression.py",
        ],
        "contracts/fields.py": [
            "tests/checkers/test_never_green.py",
            "tests/checkers/test_config.py",
        ],
        "hooks/lsp/folders.py": ["tests/hooks/lsp/test_server.py", "-k", "broken_config"],
    },
}

#: Targets that are not one package's whole tree (``TARGETS`` names the rest: every ``.py``
#: under the folder, subpackages included). Globs relative to the repository, each matched
#: within its folder only. ``checkers/core`` is the checker's own top-level modules --
#: checkers/analysis and checkers/rules are targets of their own -- and the two helpers of
#: other packages they lean on: the did-you-mean hint and the language server's error line.
TARGET_FILES: dict[str, list[str]] = {
    "checkers/core": ["checkers/*.py", "contracts/fields.py", "hooks/lsp/folders.py"],
    "atom/pd": [
        "atom/pool_layout/manifest.py",
        "atom/runner/kv_transfer.py",
        "atom/runner/pd_transfer.py",
        "atom/runner/block_sizes.py",
    ],
    "atom/capacity": [
        "atom/models/skeleton.py",
        "atom/runner/capacity.py",
        "atom/capacity_report.py",
        "atom/layout_command.py",
    ],
}

#: Survivors argued equivalent in docs/testing.md, by key. A key that no longer matches a mutant
#: is reported, so the list cannot silently outlive the code it argues about.
EQUIVALENT: dict[str, str] = {
    "checkers/reporters.py:<module>:const:10 -> 11@0": (
        "ASSUMED_SHOWN is a display length: any value lists that many tests and says how many "
        "more, which the tests read through the name"
    ),
    "checkers/rules/reachable_calls.py:ReachableCalls._edges:ifexp:self._antecedents(call[C_GUARDS],"
    " node[3]) if self._conditional else node[3] -> (self._antecedents(call[C_GUARDS], node[3]))@0": (
        "with no condition of `when`, _antecedents returns the held set it is given: the branch "
        "only spares the work"
    ),
    "checkers/analysis/functions.py:<module>:const:2 -> 3@0": (
        "FORMAT tags a summary's tuple shapes: any value other than the older summaries' 1 "
        "refuses them alike"
    ),
    "checkers/analysis/functions.py:<module>:const:2 -> 3@1": (
        "K_INSTALLED is compared only with itself by name, and any value but K_RESULT's 0 "
        "is as true"
    ),
    "checkers/analysis/resolution.py:Resolution._installing:const:True -> False@0": (
        "zip strict: line_numbers returns one line for each position it is given"
    ),
    "checkers/analysis/origins.py:InputOrigins._exits_before:cmp:(at.lineno, at.col_offset) "
    "<= (stmt.end_lineno, stmt.end_col_offset) -> ((at.lineno, at.col_offset) < "
    "(stmt.end_lineno, stmt.end_col_offset))@0": (
        "a statement's end is exclusive, and no node starts exactly where one ends: Python "
        "puts a `;` or a line break between two statements"
    ),
    "checkers/analysis/origins.py:InputOrigins._helper_named:const:False -> True@1": (
        "with no helper found both callers return before they read whether it is a method"
    ),
    "checkers/analysis/callers.py:HelperCallers._passed:return:return [] -> return None@0": (
        "both readers of the sites ask only whether there are any (`not sites`, "
        "`bool(sites)`), and None and [] answer alike"
    ),
    "atom/pool_layout/capacity.py:most_tokens:const:1 -> 2@2": "the bisection's midpoint "
    "(lo + hi + 2) // 2 still lies in lo + 1 .. hi whenever lo < hi, so the search takes other "
    "steps to the same largest L",
    "atom/pool_layout/capacity.py:_plan_shared:const:0 -> 1@0": "unify_pages gives every "
    "group the one page size (group size x largest layer page), and shared pages are planned "
    "only for two classes or more, so groups[1] exists and has the same page_bytes",
    "atom/pool_layout/paged_pool.py:RowSubsetPool.__init__:call:self._check_groups(groups) -> "
    "pass@0": "the groups are the parent's, which passed the same check, with only their row "
    "counts replaced: no name repeats and no alignment widens",
    "atom/pool_layout/reach.py:Reach.blocks_held:const:0 -> 1@0": "the fallback is read only "
    "for a sliding or chunked reach, whose tokens __post_init__ requires to be at least 1",
    "atom/runner/capacity.py:capacity_classes:const:0 -> 1@0": "the fallback is read only for "
    "the full reach (no tokens), and there is one full class, sorted first by the key's first "
    "element (not r.is_full) whatever its third",
    "checkers/analysis/dict_producers.py:spells_a_call_of:cmp:text.count(name) <= 1 -> "
    "(text.count(name) < 1)@0": "a shortcut only: a name spelled once is its definition, "
    "which the scan after it also finds and passes over",
    "checkers/linter.py:<module>:const:64 -> 65@0": "how many files are checked between two "
    "runs of the collector: a chunk's end lets the program's trees go and keeps the bodies "
    "worked out, and a later question reads a dropped tree's file again, so any size gives the "
    "same findings",
    "checkers/analysis/dict_producers.py:spells_a_call_of:const:64 -> 65@0": "the window need "
    "hold only `def` and the spaces before the name; a wider one differs only for a definition "
    "with 61 or more spaces before its name, counted as a use either way (a superset)",
    'checkers/coverage.py:Listed.any_match:ifexp:f"{under}/" if under else "" -> (\'\')@0': (
        "the folder is a shortcut past the matcher: a file outside it never matches the glob, "
        "so trying every file answers the same"
    ),
    "checkers/rules/__init__.py:<module>:const:False -> True@0": "contracts.contract is loaded "
    "by every kind module and by the linter before either registry function runs, and it "
    "imports no typing: the import moves, nothing else",
    "checkers/rules/required_keyword.py:_imports_and_calls:const:0 -> 1@0": "the default is "
    "used only when per_statement is empty, and then the loop over it runs no iteration "
    "at any depth",
    "checkers/rules/keyword_only.py:_name_span:ifexp:source.lines[line - 1] if line <= "
    'len(source.lines) else "" -> (source.lines[line - 1])@0': "a def parsed from the "
    "source starts on one of its lines",
    "checkers/rules/leaf_package.py:_spelled:ifexp:source.segment(ref.node).splitlines()[0] "
    "if ref.node is not None else ref.module -> (source.segment(ref.node).splitlines()[0])@0": (
        "its callers judge imports_of(source), whose refs always carry their node "
        "(_ImportWalker passes it; the caller beside it reads ref.node.names unguarded)"
    ),
    "atom/pool_layout/entry_arena.py:SplitEntryMajorArena.plan_planes:const:True -> False@0": "plan_planes zip strict: _strides "
    "returns one stride per plane, so the lengths are always equal",
    "atom/pool_layout/field_planes.py:plane_fields:const:True -> False@0": "plane_fields zip strict: "
    "plan_field_planes returns one name list per width",
    "atom/pool_layout/field_planes.py:plane_entry_bytes:const:True -> False@0": "plane_entry_bytes zip strict: "
    "the same",
    "atom/pool_layout/layer_major.py:plan_layer_major:ifexp:LayerMajorArena.nbytes(g, entries, "
    "align=align) if len(g) else 0 -> (LayerMajorArena.nbytes(g, entries, align=align))@0": "an empty group's "
    "nbytes is entries x walk([]).entry_bytes = 0 either way",
    "atom/pool_layout/mla_pool.py:MlaKvPool.__init__:call:self._check_groups(self._groups) -> pass@0": "MlaKvPool's "
    "field names are fixed and distinct and every field is at the pool's own align",
    "atom/pool_layout/paged_layout.py:shuffle_vector:guard:dtype.itemsize > VECTOR_BYTES -> False@0": "no torch "
    "dtype is wider than 16 bytes (complex128 is 16, pinned by the >= mutant's test)",
    "atom/pool_layout/element_order.py:row_major:const:True -> False@0": "row_major zip strict: "
    "the line before refuses an index of another length than the shape",
    "atom/pool_layout/transfer.py:TransferRegion.unit_data_bytes:const:True -> False@0": "zip "
    "strict: a tensor's shape and stride() have one entry per dim",
    "atom/pool_layout/v4_pool_fields.py:plan_shared_row_planes.rows:const:True -> False@0": "zip "
    "strict: split() returns one group per plane width",
    "atom/pool_layout/v4_pool_fields.py:plane_row_widths:binop:head_dim * "
    "torch.float8_e4m3fn.itemsize -> (head_dim // torch.float8_e4m3fn.itemsize)@0": "fp8's "
    "itemsize is 1, and x * 1 == x // 1",
    "atom/pool_layout/v4_pool_fields.py:indexer_block_regions:binop:rows * index_head_dim * "
    "torch.float8_e4m3fn.itemsize -> (rows * index_head_dim // torch.float8_e4m3fn.itemsize)@0": (
        "the same: fp8's itemsize is 1"
    ),
    "atom/pool_layout/manifest.py:RegionSetManifest.units:const:0 -> 1@0": "every region of a "
    "set holds one count: describe_regions and from_dict refuse a set that does not",
    "atom/pool_layout/manifest.py:WireManifest.to_dict:const:True -> False@0": "zip strict: "
    "a set's staging is StagingLayout.of its own regions, one staged region per region",
    "atom/pool_layout/manifest.py:WireManifest.format_text:const:True -> False@0": "the same",
    "atom/runner/pd_transfer.py:<module>:const:600.0 -> 601.0@0": "the default deadline of a "
    "pair no test passes: each states its own, and the deadline's kill is pinned at 0.2 s",
    "atom/runner/pd_transfer.py:<module>:const:10.0 -> 11.0@0": "the grace ends as soon as the "
    "other end exits, which one whose peer crashed does at once (the crash test reads its own "
    "exit 1); only an end that never exits waits out the bound, and it is killed either way",
    "atom/runner/pd_transfer.py:compare_views:const:True -> False@0": "zip strict: the line "
    "before refuses two indexes of different lengths",
    "atom/runner/pd_transfer.py:storages:const:0 -> 1@0": "set_(storage) gives the tensor the "
    "whole storage's size, whatever size it had",
    "atom/runner/pd_transfer.py:interleave_fields.key:const:1 -> 2@0": "the row of a role "
    "without one (-1 or -2) is compared only within its own pool, where every such row has "
    "the same value and the position decides",
    "atom/runner/pd_transfer.py:_prefill_case:const:0 -> 1@0": "the seed of a case that states "
    "none: any seed fills the pool with random bytes, and none is read back by value",
    'atom/runner/pd_transfer.py:_decode_case:binop:case.get("seed", 0) + 1 -> '
    "(case.get('seed', 0) - 1)@0": "the decode end's seed need only differ from the prefill "
    "end's, so that the two pools start apart: seed - 1 does, as seed + 1",
    "atom/runner/pd_transfer.py:_decode_case:const:0 -> 1@1": "the same: a default seed of 1 "
    "and its successor 2 still differ from the prefill end's default",
    "atom/runner/pd_transfer.py:_decode_case:const:1 -> 2@0": "the same: seed + 2 differs from "
    "the prefill end's seed",
    "atom/runner/pd_transfer.py:worker:call:out.flush() -> pass@0": "run_pair reads an end's "
    "lines after it exits, and the exit flushes them",
    "atom/runner/pd_transfer.py:worker:call:dist.destroy_process_group() -> pass@0": "the "
    "process ends right after its last case, and its group with it",
    "atom/runner/pd_transfer.py:worker:return:return 0 -> return None@0": "main hands it to "
    "SystemExit, which exits 0 for None as for 0",
    "atom/runner/pd_transfer.py:_kill:const:30 -> 31@0": "the bound of a wait for a process "
    "already sent SIGKILL, which ends it at once",
    "atom/runner/pd_transfer.py:_ends:const:1500 -> 1501@0": "how much of an end's stderr a "
    "failure quotes: every test reads a line inside the last few hundred characters",
    "atom/runner/pd_transfer.py:run_pair:const:True -> False@2": "zip strict: the lines "
    "before refuse results of another count than the cases",
    "atom/runner/pd_transfer.py:run_pair:const:False -> True@0": "the store is made with no "
    "world size, so there is no count of workers for it to wait for",
    "atom/runner/pd_transfer.py:run_pair:cmp:time.monotonic() > deadline -> "
    "(time.monotonic() >= deadline)@0": "two monotonic floats a poll apart: equality is one "
    "instant of a continuous clock, and the next poll comes 50 ms later either way",
    "atom/runner/pd_transfer.py:run_pair:cmp:time.monotonic() < grace -> "
    "(time.monotonic() <= grace)@0": "the same, for the grace",
    "atom/runner/pd_transfer.py:run_pair:call:time.sleep(0.05) -> pass@0": "how often the grace "
    "polls: the loop ends when the other end exits either way (a busy wait of milliseconds)",
    "atom/runner/pd_transfer.py:run_pair:const:0.05 -> 1.05@0": "the same, polled once a second",
    "atom/runner/pd_transfer.py:run_pair:call:time.sleep(0.05) -> pass@1": "how often the pair "
    "is polled: the same exits and the same deadline are seen, sooner or later by a poll",
    "atom/runner/pd_transfer.py:run_pair:const:0.05 -> 1.05@1": "the same, polled once a second",
    'checkers/rules/required_keyword.py:_resolve:return:return "" -> return None@0': "its one "
    "caller asks `resolved in targets`, which neither '' nor None is",
    "checkers/rules/required_keyword.py:_argument:const:1 -> 2@0": "-1 and -2 both fail "
    "`0 <= index`",
    "checkers/analysis/asserts.py:has_assert_statement:const:6 -> 7@1": "an 'assert' "
    "starting right after the last one (at + 6) follows its 't', which is no blank and no "
    "line break, so it can never answer True: searching from at + 7 skips only it",
    "contracts/runtime/checks.py:check_bind_parity:const:True -> False@0": "zip strict: the "
    "two module lists were just compared equal by prefix, so their lengths agree",
    "contracts/runtime/checks.py:byte_runs:const:True -> False@0": "zip strict: lead is "
    "shape[:k] and zipped with stride[:k], the same length",
    "contracts/runtime/checks.py:check_disjoint_in_bounds:cmp:stop > reach -> (stop >= reach)@0": (
        "equality is an empty run at reach; every later run starts at or past reach, so the "
        "owner it renames is never reported"
    ),
    "contracts/runtime/checks.py:_changed_outside:cmp:lo > cursor -> (lo >= cursor)@0": "at "
    "equality the gap compared is empty, and two empty slices are equal",
    "contracts/runtime/checks.py:_changed_outside:cmp:hi > lo -> (hi >= lo)@0": "the same, "
    "for an empty allowed span",
    "contracts/runtime/checks.py:<module>:const:8 -> 9@0": "no bound view has 8-byte elements: "
    "KV dtypes are bf16 and fp8, scales fp32, and EngineConfig refuses any other",
    "contracts/runtime/checks.py:documented_offsets:binop:h * block + t + 0 * d -> "
    "(h * block + t - 0 * d)@0": "0 * d is zero either way (it is there to broadcast)",
    "contracts/runtime/checks.py:_random_value:const:0.5 -> 1.5@0": "any floor that is a normal "
    "number of every KV dtype keeps every written element nonzero; 1.75 is, as 0.75 is",
    "contracts/runtime/checks.py:_random_value:const:0.25 -> 1.25@0": "the same for the "
    "magnitude floor: 1.25, as 0.25, is normal in bf16 and every fp8",
    "contracts/runtime/checks.py:byte_extent:const:True -> False@0": "zip strict: a tensor's "
    "shape and stride() have one entry per dim",
    "contracts/runtime/checks.py:declared_codes:const:True -> False@0": "zip strict: index "
    "is a meshgrid over one pick per axis of the order's shape",
    "contracts/runtime/checks.py:declared_named:const:True -> False@0": "zip strict: "
    "unravel_index gives one index per axis of shape, and an ElementOrder refuses axes of "
    "another length than its shape",
    "contracts/runtime/checks.py:byte_positions:const:True -> False@0": "zip strict: a "
    "tensor's shape and stride() have one entry per dim",
    "contracts/runtime/checks.py:check_disjoint_in_bounds:const:1 -> 2@0": "reach starts below "
    "every byte offset either way: -1 and -2 are both below 0, the least start and stop",
    "contracts/runtime/checks.py:_write_state:binop:lo - buf_lo -> (lo + buf_lo)@0": "a STATE "
    "arena is always its own torch.zeros allocation (allocate_per_req_cache passes no buf), so "
    "buf_lo is 0",
    "contracts/runtime/checks.py:_write_state:binop:hi - buf_lo -> (hi + buf_lo)@0": "the same",
    "contracts/runtime/checks.py:_sample:cmp:n <= 32 -> (n < 32)@0": "at n = 32 the sampled "
    "form is arange(16), an empty stride and arange(16, 32): every index, as arange(32) is",
    "contracts/runtime/checks.py:_sample:const:32 -> 33@0": "at n = 33 the sampled form is "
    "arange(16), [16] and arange(17, 33): every index, as arange(33) is",
    "contracts/runtime/checks.py:_digits:cmp:int_dtype is not torch.uint8 -> (int_dtype is torch.uint8)@0": (
        "torch casts integers modularly (40000 -> int16 is -25536), and this form is congruent to digit mod base: the same bits are written"
    ),
    "contracts/runtime/checks.py:_digits:binop:(digit + base // 2) % base - base // 2 -> ((digit + base // 2) % base + base // 2)@0": "the same: congruent to digit mod base",
    "contracts/runtime/checks.py:_digits:binop:digit + base // 2 -> (digit - base // 2)@0": "the same: congruent to digit mod base",
    "contracts/runtime/checks.py:_element_readback:const:0 -> 1@0": "every token of a view has one shape, and every view has a slot 1 (blocks >= 1, a scheduler block >= 16 tokens)",
    "contracts/runtime/checks.py:check_price_equals_carve:const:0 -> 1@3": "the default of "
    "entry_bytes().get(PAGE, 0) is never read: every registered model pages its attention, so "
    "every runner prices a PAGE entry",
    "contracts/runtime/strategies.py:engine_cases:guard:not options -> False@0": "every "
    "registered model builds at tp 1, pp 1 at every block _accepted_blocks lets through",
    "contracts/runtime/strategies.py:_accepted_blocks:guard:not accepted -> False@0": "every "
    "registered model pages within 256 tokens (the defaults test builds each)",
    'checkers/rules/importorskip.py:ImportOrSkip._chain:boolop:not target.startswith(".") and '
    "project.is_first_party(target) -> (not target.startswith('.') or "
    "project.is_first_party(target))@0": "import_chain from a third-party module or from a "
    "relative name that climbs above the top package is None either way (a dead end)",
    "checkers/rules/input_assert.py:InputAssert.wants:const:False -> True@0": "check() "
    "refuses a test file by the same pattern, so wanting it finds nothing either way",
    "checkers/analysis/asserts.py:exception_for:const:True -> False@0": "through_calls "
    "only changes names reached through a call, which contain a dot and are never the bare "
    "isinstance / issubclass",
    "checkers/analysis/asserts.py:fix:cmp:node.msg is not None -> (node.msg is None)@1": (
        "source_segment of a parsed node is never empty, so neither guard can return"
    ),
    "checkers/rules/keyword_only.py:KeywordOnly.check:const:1 -> 2@0": "a definition's owner is "
    "one bare class name, so a name with two dots matches no definition under either split",
    "checkers/rules/keyword_only.py:KeywordOnly._check_def:const:True -> False@0": "ast gives "
    "kw_defaults exactly one entry per kwonlyargs entry",
    "checkers/rules/keyword_only.py:_signature_span:ifexp:max(node.lineno, first_body - 1) if "
    "first_body > node.lineno else node.lineno -> (max(node.lineno, first_body - 1))@0": (
        "when the body starts on the def's line, max(lineno, lineno - 1) is lineno"
    ),
    "checkers/rules/keyword_only.py:_signature_span:cmp:first_body > node.lineno -> "
    "(first_body >= node.lineno)@0": "the same: at equality both branches give lineno",
    "checkers/rules/keyword_only.py:_signature_span:const:1 -> 2@1": "Contract.finding reads "
    "only the lines of a span_node tuple",
    "checkers/rules/keyword_only.py:_signature_span:const:1 -> 2@2": "the same",
    "checkers/rules/retired_name.py:_suppression_span:cmp:start >= best[0] -> (start > best[0])@0": (
        "two multi-line strings never start on one line, so there is no tie to break"
    ),
    "checkers/rules/retired_name.py:_suppression_span:const:0 -> 1@1": "at most two multi-line "
    "strings hold a line, one ending and one starting there; either comparison picks the latter",
    "checkers/rules/retired_name.py:_suppression_span:return:return span -> return None@0": (
        "Contract.finding takes span_node=None as the finding's own span, which is `span`"
    ),
    "checkers/rules/retired_name.py:_suppression_span:const:1 -> 2@0": "Contract.finding reads "
    "only the lines of a span_node tuple, never its columns",
    "checkers/rules/retired_name.py:_suppression_span:const:1 -> 2@1": "the same",
    # checkers/core, the lines added since 74bf8f9 (docs/testing.md, "checkers/core").
    "checkers/api.py:_check:cmp:len(targets) > 1 -> (len(targets) >= 1)@0": "one target makes "
    "one group, and one group falls through to the path a single target takes anyway",
    "checkers/resolver.py:by_declaration:ifexp:target if os.path.isdir(target) else target.parent "
    "-> (target)@0": "find_pyproject starts at a file's parent itself; the folder only keys "
    "the memo (one lookup per folder)",
    "checkers/run.py:merged:const:1 -> 2@0": "[0] of split('\\n', 1) and of split('\\n', 2) "
    "is the same first line",
    "checkers/run.py:merged:const:1 -> 2@1": "a second '--- P\\n+++ P\\n' in a diff is a "
    "removed line '-- P' followed by an added '++ P', which no rule's fix writes",
    "checkers/discovery.py:_python_script:const:256 -> 257@0": "Linux reads at most 256 bytes "
    "of a #! line (BINPRM_BUF_SIZE since 5.1): a python past them is not what the kernel runs, "
    "and only such a line tells 256 from 257",
    "contracts/fields.py:did_you_mean:const:1 -> 2@0": "get_close_matches sorts its matches "
    "best first (heapq.nlargest): [0] of the best two is the best one",
    "checkers/check_command.py:_report:call:out.buffer.flush() -> pass@0": "every way out flushes "
    "sys.stdout, its buffer with it (sys.exit's teardown; console_main's os._exit path "
    "flushes first), and a later write goes through the same buffer, after these bytes",
    "checkers/check_command.py:_report:call:out.write(result.fixed_text) -> pass@0": "the CLI reads "
    "stdin as bytes, and _check_stdin sets fixed_bytes to bytes for bytes: the else branch "
    "serves only a str, which no caller of _report passes",
    # checkers/analysis, the lines added since e2ad4a6 (docs/testing.md, "What a host tensor").
    "checkers/analysis/function_walk.py:FunctionWalker._context_marker:const:True -> False@0": (
        "a guard is a pair, and a with block's is only ever 'inside': ReachableCalls._off "
        "reads a tuple's ways, not the truth beside them"
    ),
    "checkers/analysis/function_walk.py:FunctionWalker._context_marker:const:True -> False@1": (
        "the same of one context: _off rules a `with ` guard out by its spelling alone"
    ),
    "checkers/analysis/function_walk.py:FunctionWalker._spread:const:0 -> 1@0": (
        "`handed = uses = 0` starts both counts at one value, and only their equality is read"
    ),
    "checkers/rules/published_keys.py:_together:const:1 -> 2@0": (
        "`range(2 << n)` visits each way of the n tests twice (only the low n bits are read), "
        "and a run already listed is not listed again"
    ),
}


# -- the operators -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    path: str  # repository-relative
    line: int
    operator: str
    start: int  # character offsets into the source
    stop: int
    before: str
    after: str
    #: The enclosing class and function (``Cls.method``; ``<module>`` at top level).
    scope: str = "<module>"
    #: The last line of the replaced span (``line`` is its first); set by enumerate_mutants.
    end_line: int = 0

    @property
    def key(self) -> str:
        before = " ".join(self.before.split())
        after = " ".join(self.after.split())
        return f"{self.path}:{self.scope}:{self.operator}:{before} -> {after}@{self._ordinal}"

    # Set by enumerate_mutants: how many earlier mutants in the same scope share operator,
    # before and after, so a key survives edits elsewhere in the file (line numbers do not, and
    # a count over the whole file would shift whenever an example with a `1` is added above).
    _ordinal: int = 0

    def apply(self, source: str) -> str:
        return source[: self.start] + self.after + source[self.stop :]

    def describe(self) -> str:
        before = " ".join(self.before.split())
        after = " ".join(self.after.split())
        if len(before) > 70:
            before = before[:67] + "..."
        if len(after) > 70:
            after = after[:67] + "..."
        return f"{self.path}:{self.line}: [{self.operator}] {before}  ->  {after}"


_CMP_SWAP = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BIN_SWAP = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}


class _Offsets:
    """(line, utf-8 column) -> character offset into the source, as ast positions need."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def __call__(self, line: int, col_bytes: int) -> int:
        text = self.lines[line - 1]
        return self.starts[line - 1] + len(text.encode("utf-8")[:col_bytes].decode("utf-8"))


def _skipped_nodes(tree: ast.AST) -> set[int]:
    """ids of nodes never mutated: annotations (never evaluated under postponed evaluation),
    docstrings, f-strings (messages: the tests assert on their wording separately), ``__all__``
    and the ``raise`` statements' arguments (a message, not behaviour)."""
    skip: set[int] = set()

    def drop(node: ast.AST | None) -> None:
        if node is not None:
            for sub in ast.walk(node):
                skip.add(id(sub))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            drop(node.returns)
            for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
                drop(a.annotation)
            for a in (node.args.vararg, node.args.kwarg):
                if a is not None:
                    drop(a.annotation)
        elif isinstance(node, ast.AnnAssign):
            drop(node.annotation)
        elif isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        ):
            drop(node)
        elif isinstance(node, ast.Raise):
            drop(node.exc)
            drop(node.cause)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                drop(body[0])
    return skip


def _is_guard(stmt: ast.If) -> bool:
    """An ``if`` whose body only refuses: the shape of a check (``raise`` / ``_fail(...)``)."""

    def refuses(s: ast.stmt) -> bool:
        if isinstance(s, ast.Raise):
            return True
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
            return name.startswith("_fail") or name.startswith("fail")
        return False

    return all(refuses(s) for s in stmt.body) and not stmt.orelse


def _mutations(node: ast.AST, seg: str) -> Iterator[tuple[str, str]]:
    """(operator, replacement text) for one node whose source text is ``seg``."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = _CMP_SWAP.get(type(op))
            if new is None:
                continue
            ops = list(node.ops)
            ops[i] = new()
            yield "cmp", "(" + ast.unparse(ast.Compare(node.left, ops, node.comparators)) + ")"
    elif isinstance(node, ast.BinOp):
        new = _BIN_SWAP.get(type(node.op))
        if new is not None:
            yield "binop", "(" + ast.unparse(ast.BinOp(node.left, new(), node.right)) + ")"
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "boolop", "(" + ast.unparse(ast.BoolOp(other, node.values)) + ")"
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not", "(" + ast.unparse(node.operand) + ")"
    elif isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            yield "const", repr(not v)
        elif isinstance(v, int):
            yield "const", repr(v + 1)
        elif isinstance(v, float):
            yield "const", repr(v + 1.0)
    elif isinstance(node, ast.IfExp):
        yield "ifexp", "(" + ast.unparse(node.body) + ")"
        yield "ifexp", "(" + ast.unparse(node.orelse) + ")"


def enumerate_mutants(path: Path, repo: Path = REPO) -> list[Mutant]:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    skip = _skipped_nodes(tree)
    at = _Offsets(source)
    rel = path.relative_to(repo).as_posix()
    out: list[Mutant] = []

    def span(node: ast.AST) -> tuple[int, int]:
        return at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)

    scopes: dict[int, str] = {}
    todo: list[tuple[ast.AST, str]] = [(tree, "<module>")]
    while todo:
        parent, name = todo.pop()
        for child in ast.iter_child_nodes(parent):
            inner = name
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = child.name if name == "<module>" else f"{name}.{child.name}"
            scopes[id(child)] = inner
            todo.append((child, inner))

    for node in ast.walk(tree):
        if id(node) in skip or not hasattr(node, "lineno"):
            continue
        # A guard deleted whole: the "delete one check" mutant.
        if isinstance(node, ast.If) and _is_guard(node) and id(node.test) not in skip:
            a, b = span(node.test)
            out.append(
                Mutant(rel, node.lineno, "guard", a, b, source[a:b], "False", scopes[id(node)])
            )
        # A call made only for its effect, deleted: a require_*() or a fill that no longer runs.
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            a, b = span(node)
            out.append(
                Mutant(rel, node.lineno, "call", a, b, source[a:b], "pass", scopes[id(node)])
            )
        # A return value replaced by None. Not `return False`: both are falsy, so for a
        # predicate (its caller tests truth) the mutant is equivalent by construction, and the
        # const operator already flips it to `return True`.
        if (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (
                isinstance(node.value, ast.Constant)
                and (node.value.value is None or node.value.value is False)
            )
        ):
            a, b = span(node)
            out.append(
                Mutant(
                    rel, node.lineno, "return", a, b, source[a:b], "return None", scopes[id(node)]
                )
            )
        if isinstance(node, ast.expr):
            a, b = span(node)
            seg = source[a:b]
            for op, text in _mutations(node, seg):
                out.append(Mutant(rel, node.lineno, op, a, b, seg, text, scopes[id(node)]))
    out.sort(key=lambda m: (m.start, m.stop, m.operator, m.after))
    seen: dict[tuple, int] = {}
    numbered = []
    for m in out:
        if m.apply(source) == source:
            continue
        try:
            ast.parse(m.apply(source))
        except SyntaxError:
            continue
        k = (m.path, m.scope, m.operator, " ".join(m.before.split()), " ".join(m.after.split()))
        n = seen.get(k, 0)
        seen[k] = n + 1
        numbered.append(_with_ordinal(m, n, source.count("\n", 0, m.stop) + 1))
    return numbered


def _with_ordinal(m: Mutant, n: int, end_line: int) -> Mutant:
    return dataclasses.replace(m, _ordinal=n, end_line=end_line)


def target_files(target: str, repo: Path = REPO) -> list[Path]:
    """The modules a target mutates: its ``TARGET_FILES`` globs (non-recursive), else every
    ``.py`` under the package, subpackages included."""
    if target in TARGET_FILES:
        return sorted({f for glob in TARGET_FILES[target] for f in repo.glob(glob) if f.is_file()})
    return sorted((repo / target).rglob("*.py"))


def changed_lines(rev: str, repo: Path = REPO) -> dict[str, set[int]]:
    """``{repository-relative path: line numbers}`` of the Python lines the working tree adds
    or changes against ``rev`` (the new side of ``git diff rev -U0``), and every line of a
    Python file git does not track. A hunk that only deletes adds no line: nothing of it is
    left to mutate. ValueError naming ``rev`` when git cannot diff against it."""
    import subprocess

    # The hunk parser of --diff-base (quoted paths, pure deletions), at zero lines of context,
    # from this checkout (`python bench/mutation.py` puts bench/, not the root, on sys.path).
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from checkers.diff_filter import parse_hunks

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(repo), "-c", "core.quotePath=false", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise ValueError(f"git cannot diff against {rev!r}: {done.stderr.strip()}")
        return done.stdout

    diff = git("diff", "--no-color", "--no-ext-diff", "-M", "-U0", rev, "--", "*.py")
    lines = {
        path: {n for a, b in ranges for n in range(a, b + 1)}
        for path, ranges in parse_hunks(diff).items()
    }
    untracked = git("ls-files", "-z", "--others", "--exclude-standard", "--", "*.py")
    for name in filter(None, untracked.split("\0")):
        n = len((repo / name).read_text(encoding="utf-8").splitlines())
        lines[name] = set(range(1, n + 1))
    return {path: found for path, found in lines.items() if found}


def select_mutants(
    target: str,
    *,
    only: str | None = None,
    since: dict[str, set[int]] | None = None,
    lines: tuple[int, int] | None = None,
    repo: Path = REPO,
) -> list[Mutant]:
    """The target's mutants, narrowed to files whose path contains ``only``, with ``since``
    (``changed_lines``) to those whose span touches a changed line, and with ``lines`` (first,
    last) to those whose span touches that range."""
    out = []
    for f in target_files(target, repo):
        rel = f.relative_to(repo).as_posix()
        if (only and only not in rel) or (since is not None and rel not in since):
            continue
        for m in enumerate_mutants(f, repo):
            if since is not None and not since[rel].intersection(range(m.line, m.end_line + 1)):
                continue
            if lines is not None and not (m.line <= lines[1] and m.end_line >= lines[0]):
                continue
            out.append(m)
    return out


def parse_lines(text: str) -> tuple[int, int]:
    """``--lines FIRST-LAST`` (either end may be left out: ``300-``, ``-120``)."""
    first, sep, last = text.partition("-")
    try:
        span = (int(first) if first else 1, int(last) if last else sys.maxsize)
    except ValueError:
        span = None
    if not sep or span is None or span[0] < 1 or span[0] > span[1]:
        raise ValueError(f"--lines {text!r} is not FIRST-LAST (line numbers from 1, FIRST <= LAST)")
    return span


# -- running ---------------------------------------------------------------------------------


def _copy_repo(dest: Path) -> None:
    ignore = shutil.ignore_patterns(
        ".git", "__pycache__", "*.pyc", ".pytest_cache", ".hypothesis", "*.egg-info", "build"
    )
    shutil.copytree(REPO, dest, ignore=ignore, dirs_exist_ok=True)


def _spawn(scratch: Path, tests: list[str]) -> int:
    """Fork a child of this (pre-imported) process that runs pytest with cwd and sys.path at
    ``scratch``; returns its pid."""
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.chdir(scratch)
            sys.path.insert(0, str(scratch))
            for name in list(sys.modules):
                if name.split(".")[0] in ("atom", "contracts", "checkers", "hooks", "tests"):
                    del sys.modules[name]
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            import pytest

            code = pytest.main(["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tests])
            os._exit(int(code))
        except BaseException:  # a child must never return into the parent's loop
            os._exit(99)
    return pid


def _run_tests(scratch: Path, tests: list[str], timeout: float | None) -> tuple[int, float]:
    """pytest in a forked child; returns (exit status, seconds), a timeout counting as a kill
    (status -9)."""
    start = time.perf_counter()
    pid = _spawn(scratch, tests)
    deadline = None if timeout is None else start + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), time.perf_counter() - start
        if deadline is not None and time.perf_counter() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -9, time.perf_counter() - start
        time.sleep(0.02)


#: ``--tests`` replaces every target's subset (a recheck needs only the tests added since).
_OVERRIDE: list[str] = []


def _tests_for(target: str, rel: str) -> list[str]:
    if _OVERRIDE:
        return list(_OVERRIDE)
    table = TARGETS[target]
    # A repository-relative path first (a target listing files of several folders), then the
    # bare name (the rule modules), then the target's default.
    tests = table.get(rel, table.get(Path(rel).name, table["*"]))
    # A test path that does not exist (yet) is dropped; pytest options ("-k", its expression)
    # pass through.
    return [t for t in tests if not t.startswith("tests/") or (REPO / t.split("::")[0]).exists()]


def _preimport() -> None:
    """What every child would import anyway, imported once in the parent (the fork shares it)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    # The derandomized ci profile (tests/conftest.py): the property tests draw the same cases
    # for every mutant, so a verdict does not depend on the luck of a draw, and rerunning a
    # survivor gives the same answer.
    os.environ["HYPOTHESIS_PROFILE"] = "ci"
    sys.dont_write_bytecode = True
    import hypothesis  # noqa: F401
    import pytest  # noqa: F401

    with contextlib.suppress(ImportError):
        import torch  # noqa: F401


_PROGRESS = re.compile(
    r"^\s+\[\d+/\d+\] ([.TSe]) +[\d.]+s (?P<path>[^:]+):(?P<line>\d+): (?P<rest>.*)$"
)


def _previous_kills(log: Path) -> Counter:
    """(path, line, mutant text) of every mutant an earlier run's output shows killed, counted
    (two identical mutants of one line): a mutant is carried only if one identical in file, line
    and text was killed then, so a line that changed or moved since (or a new one) is run
    again. Without the line, a kill of one ``[const] 1 -> 2`` was credited to another site of
    the same text, and a mutant run again in a later log was counted twice."""
    kills: Counter = Counter()
    for line in log.read_text(encoding="utf-8").splitlines():
        m = _PROGRESS.match(line)
        if m and m.group(1) in ".T":
            kills[(m.group("path"), int(m.group("line")), m.group("rest"))] += 1
    return kills


def run_target(
    target: str,
    *,
    scratches: list[Path],
    timeout_factor: float,
    only: str | None,
    log,
    recheck: Counter | None = None,
    score_only: bool = False,
    skip_equivalent: bool = False,
    since: dict[str, set[int]] | None = None,
    lines: tuple[int, int] | None = None,
) -> dict:
    mutants = select_mutants(target, only=only, since=since, lines=lines)
    results = {"target": target, "killed": [], "survived": [], "equivalent": [], "timeout": []}
    if recheck is not None:
        # An earlier full run killed every mutant but these; tests only grew since, so only
        # its survivors are run again, and the rest are counted as that run's kills.
        # Kills are matched by file, line and text; two mutants of one line can still share a
        # text, so an equivalent mutant must not take one: it would be scored killed, and the
        # same-text mutant it took it from, run and killed, would be scored a survivor.
        carried, rerun = [], []
        for m in mutants:
            text = (m.path, m.line, m.describe().split(": ", 1)[1])
            if m.key not in EQUIVALENT and recheck[text] > 0:
                recheck[text] -= 1
                carried.append(m)
            else:
                rerun.append(m)
        results["killed"].extend(carried)
        mutants = rerun
        print(
            f"  recheck: {len(mutants)} to run, {len(carried)} killed by the earlier run", file=log
        )
    if skip_equivalent:
        # Argued in docs/testing.md and out of the denominator either way: not worth a run.
        results["equivalent"].extend(m for m in mutants if m.key in EQUIVALENT)
        mutants = [m for m in mutants if m.key not in EQUIVALENT]
    if score_only:
        # Nothing is run: a mutant no earlier log shows killed counts against the score.
        for m in mutants:
            results["equivalent" if m.key in EQUIVALENT else "survived"].append(m)
        return results
    if not mutants:
        return results
    # Every file about to be mutated, in every scratch copy, with its own subset: proof that
    # the children import the copy, and that the subset imports that module at all.
    for path in dict.fromkeys(m.path for m in mutants):
        for scratch in scratches:
            _planted_kill(target, scratch, path)
    baseline: dict[str, float] = {}
    for tests in {tuple(_tests_for(target, m.path)) for m in mutants}:
        code, secs = _run_tests(scratches[0], list(tests), None)
        if code != 0:
            raise SystemExit(
                f"baseline tests {list(tests)} fail unmutated (exit {code}); fix first"
            )
        baseline[" ".join(tests)] = secs
        print(f"  baseline {' '.join(tests)}: {secs:.1f} s", file=log, flush=True)
    # One scratch copy per job: a child only ever sees its own copy's one mutated file.
    free = list(scratches)
    running: dict[int, tuple[Path, Mutant, str, float, float, int]] = {}
    pending = list(enumerate(mutants, 1))[::-1]
    total = len(mutants)
    while pending or running:
        while pending and free:
            i, m = pending.pop()
            slot = free.pop()
            path = slot / m.path
            original = path.read_text(encoding="utf-8")
            tests = _tests_for(target, m.path)
            budget = max(10.0, timeout_factor * baseline[" ".join(tests)])
            path.write_text(m.apply(original), encoding="utf-8")
            pid = _spawn(slot, tests)
            running[pid] = (slot, m, original, time.perf_counter(), budget, i)
        for pid, (slot, m, original, start, budget, i) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            secs = time.perf_counter() - start
            if done:
                code = os.waitstatus_to_exitcode(status)
            elif secs > budget:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                code = -9
            else:
                continue
            del running[pid]
            (slot / m.path).write_text(original, encoding="utf-8")
            free.append(slot)
            if code == 0:
                bucket = "equivalent" if m.key in EQUIVALENT else "survived"
            elif code == -9:
                bucket = "timeout"
            else:
                bucket = "killed"
            results[bucket].append(m)
            mark = {"killed": ".", "timeout": "T", "survived": "S", "equivalent": "e"}[bucket]
            print(f"  [{i}/{total}] {mark} {secs:5.1f}s {m.describe()}", file=log, flush=True)
        time.sleep(0.02)
    return results


def _planted_kill(target: str, scratch: Path, rel: str) -> None:
    """Refuse to score a file whose tests do not see the scratch copy: plant a line that raises
    on import into it and require its subset to fail."""
    planted = scratch / rel
    original = planted.read_text(encoding="utf-8")
    planted.write_text('raise RuntimeError("planted by bench/mutation.py")\n' + original)
    try:
        code, _ = _run_tests(scratch, _tests_for(target, rel), None)
    finally:
        planted.write_text(original, encoding="utf-8")
    if code == 0:
        raise SystemExit(
            f"a planted import error in {planted} went unnoticed: its tests do not import the "
            "scratch copy of it, so no score of it would mean anything"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/mutation.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--target",
        action="append",
        choices=sorted(TARGETS),
        help="package to mutate (repeatable; default: every target that exists)",
    )
    parser.add_argument("--only", help="mutate only files whose path contains this")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument(
        "--timeout-factor", type=float, default=5.0, help="kill a run past this x baseline"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="mutants run at once, each in its own scratch copy (default 1; the baseline and the "
        "timeout budget are measured alone, so a loaded machine times out sooner with more)",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--recheck",
        type=Path,
        nargs="+",
        metavar="LOG",
        help="carry the kills an earlier run printed to LOG (same file, same mutant text) and "
        "run the rest: after adding tests, only survivors and changed lines need running",
    )
    parser.add_argument(
        "--skip-equivalent",
        action="store_true",
        help="do not run the mutants EQUIVALENT lists (they are out of the score either way; "
        "a full run without this flag is what shows each still survives)",
    )
    parser.add_argument(
        "--score",
        action="store_true",
        help="with --recheck: run nothing, score from the logs alone (a mutant no log shows "
        "killed is a survivor, or equivalent if listed), against the current source",
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        default=[],
        help="run these tests for every mutant instead of the target's subset (with --recheck: "
        "the tests added since the earlier run, which the rest already failed to kill with)",
    )
    parser.add_argument(
        "--since",
        metavar="REV",
        help="mutate only the lines `git diff REV -U0` shows added or changed in the working "
        "tree (and untracked Python files): a change proved without re-scoring its package",
    )
    parser.add_argument(
        "--lines",
        metavar="FIRST-LAST",
        help="mutate only spans touching these lines (with --only: one long file's run split "
        "across sittings or machines, the logs scored together with --recheck)",
    )
    args = parser.parse_args(argv)
    lines = None
    if args.lines is not None:
        try:
            lines = parse_lines(args.lines)
        except ValueError as e:
            parser.error(str(e))
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.score and not args.recheck:
        parser.error("--score needs --recheck LOG: the logs are what it scores")
    _OVERRIDE[:] = args.tests
    targets = args.target or [t for t in TARGETS if target_files(t)]
    for t in targets:
        if not target_files(t):
            parser.error(f"target {t!r} has no module in {REPO}")
    since = None
    if args.since is not None:
        try:
            since = changed_lines(args.since)
        except ValueError as e:
            parser.error(f"--since: {e}")
    if args.list:
        for t in targets:
            for m in select_mutants(t, only=args.only, since=since, lines=lines):
                print(m.describe())
        return 0
    if not args.score:
        _preimport()
    summary = []
    stale = set(EQUIVALENT)
    with tempfile.TemporaryDirectory(prefix="atom-mutation-") as tmp:
        scratches = [Path(tmp) / f"repo{j}" for j in range(args.jobs)]
        for scratch in [] if args.score else scratches:
            _copy_repo(scratch)
        for t in targets:
            print(f"{t}:", flush=True)
            r = run_target(
                t,
                scratches=scratches,
                timeout_factor=args.timeout_factor,
                only=args.only,
                log=sys.stdout,
                # The most kills any one log shows per mutant, never their sum: a mutant that
                # two logs both killed is one kill.
                recheck=functools.reduce(operator.or_, map(_previous_kills, args.recheck))
                if args.recheck
                else None,
                score_only=args.score,
                skip_equivalent=args.skip_equivalent,
                since=since,
                lines=lines,
            )
            summary.append(r)
            stale -= {m.key for m in r["equivalent"]}
    print("\nkill rate (killed + timeout) / (all - equivalent):")
    failed = False
    for r in summary:
        scored = len(r["killed"]) + len(r["timeout"]) + len(r["survived"])
        rate = (len(r["killed"]) + len(r["timeout"])) / scored if scored else 1.0
        print(
            f"  {r['target']:<20} {rate:6.1%}  killed {len(r['killed'])}, timeout "
            f"{len(r['timeout'])}, survived {len(r['survived'])}, equivalent {len(r['equivalent'])}"
        )
        per_file: dict[str, Counter] = {}
        for bucket in ("killed", "timeout", "survived", "equivalent"):
            for m in r[bucket]:
                per_file.setdefault(m.path, Counter())[bucket] += 1
        for path, c in sorted(per_file.items()):
            n = c["killed"] + c["timeout"] + c["survived"]
            file_rate = (c["killed"] + c["timeout"]) / n if n else 1.0
            print(
                f"    {path:<44} {file_rate:6.1%}  killed {c['killed'] + c['timeout']}, "
                f"survived {c['survived']}, equivalent {c['equivalent']}"
            )
        for m in r["survived"]:
            print(f"    survivor {m.describe()}\n             key {m.key}")
    if stale and not args.only and args.target is None:
        print("\nEQUIVALENT keys that match no surviving mutant (remove or re-argue them):")
        for k in sorted(stale):
            print(f"  {k}")
        failed = True
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        k: ([m.describe() for m in v] if isinstance(v, list) else v)
                        for k, v in r.items()
                    }
                    for r in summary
                ],
                indent=2,
            )
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
