"""``atom-contracts layout`` and ``atom-contracts models``: the engine's pools, printed.

The contract CLI (``checkers.cli``) imports this module lazily, only when one of these two
commands runs, and passes the remaining argv; the static commands never load torch. Run on its
own as ``python -m atom.layout_command layout MODEL ...`` or ``... models``.

``--pp N --pp-rank R`` lays out one pipeline stage: its own layers' rows, and on the last stage
the MTP layers and a draft.

The EAGLE3 draft is attached explicitly, ``--draft eagle3-draft-llama`` (a registry stem or a
config path): a draft is a separate model whose pairing with a target is a deployment choice,
not something a target config declares. Its flavour comes from its own config; an MHA draft gets
its own sibling pool, blocked at the target builder's block. MTP layers, which a config does
declare, are built by default and bind into the target's pool; ``--no-spec`` leaves them out.

``--manifest`` prints the wire manifest instead: the transfer regions the pools export, in order,
each by role, dtype, span and stride, with the header and the digest both ends of a P/D transfer
compare (``atom.runner.kv_transfer``); nothing is allocated (the pools are carved on torch's
``meta`` device). ``--block-sizes`` prints every scheduler block size the model, and the draft when
one is given, accept together, with each side's rule (``atom.runner.block_sizes``); when none is
accepted it says so and exits 1.

A config that cannot be priced -- a missing field, a head count that does not divide across
``--tp``, a block the scheduler's block is not a multiple of -- is an error on stderr naming it,
exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import warnings

# torch's CPU wheel warns at import when numpy is absent. These commands never hand a tensor to
# numpy, so a user asking for a layout would read a warning about nothing they did.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)

from atom.engine_config import INDEX_CACHE_DTYPES, KV_DTYPES, MHA_BACKENDS, EngineConfig  # noqa: E402

EXIT_OK = 0
#: ``--block-sizes`` answered, and the answer is that no size is accepted.
EXIT_NONE = 1
EXIT_ERROR = 2

_DEFAULT = EngineConfig()


def _layout_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="atom-contracts layout",
        description=(
            "Print what one entry of each class costs for a model, and its pools, fields, rows, "
            "offsets and padding. Nothing is allocated: every number comes from the same walk "
            "and declarations the engine sizes and carves with."
        ),
        epilog=(
            "examples:\n"
            "  atom-contracts layout deepseek-r1 --kv-dtype fp8\n"
            "  atom-contracts layout qwen3.5-27b --tp 2 --kv-dtype fp8 --format json\n"
            "  atom-contracts layout minimax-m2 --draft eagle3-draft-llama\n"
            "  atom-contracts layout gemma-3-27b --budget 60GiB --max-model-len 131072 "
            "--max-num-seqs 64\n"
            "  atom-contracts layout llama-3.1-8b --kv-dtype fp8 --manifest\n"
            "  atom-contracts layout minimax-m3 --draft minimax-m3-eagle3 --block-sizes\n"
            "  atom-contracts layout --config path/to/config.json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "model", nargs="?", help="a registry model (file stem; see `atom-contracts models`)"
    )
    src.add_argument(
        "--config", metavar="FILE", help="any HF config.json (or a directory holding one)"
    )
    # Every engine choice is an EngineConfig field: its flag's dest is the field's name, its
    # default and choices the field's own (torch-free, so `--help` answers without torch).
    p.add_argument(
        "--tp",
        dest="tp_size",
        type=int,
        default=_DEFAULT.tp_size,
        metavar="N",
        help="tensor-parallel ranks (default %(default)s)",
    )
    p.add_argument(
        "--pp",
        dest="pp_size",
        type=int,
        default=_DEFAULT.pp_size,
        metavar="N",
        help="pipeline stages (default %(default)s)",
    )
    p.add_argument(
        "--pp-rank",
        dest="pp_rank",
        type=int,
        default=_DEFAULT.pp_rank,
        metavar="R",
        help="which stage to lay out (default %(default)s; MTP layers and a draft live on the last)",
    )
    p.add_argument(
        "--kv-dtype",
        dest="kv_dtype",
        choices=tuple(KV_DTYPES),
        default=_DEFAULT.kv_dtype,
        help="KV cache dtype (default %(default)s)",
    )
    p.add_argument(
        "--block-size",
        dest="scheduler_block_size",
        type=int,
        default=_DEFAULT.scheduler_block_size,
        metavar="N",
        help="scheduler block, in tokens: one PAGE entry (default %(default)s)",
    )
    p.add_argument(
        "--no-spec",
        dest="include_mtp",
        action="store_false",
        default=_DEFAULT.include_mtp,
        help="leave out the MTP layers the config declares (built by default)",
    )
    p.add_argument(
        "--draft",
        metavar="MODEL|FILE",
        help="attach a separate draft model, e.g. eagle3-draft-llama (none by default)",
    )
    p.add_argument(
        "--num-speculative-tokens",
        dest="num_speculative_tokens",
        type=int,
        default=_DEFAULT.num_speculative_tokens,
        metavar="N",
        help="draft tokens per speculative step, which V4's per-request rings hold "
        "(default %(default)s)",
    )
    p.add_argument(
        "--index-cache-dtype",
        dest="index_cache_dtype",
        choices=INDEX_CACHE_DTYPES,
        default=_DEFAULT.index_cache_dtype,
        help="DeepSeek-V4's indexer key-cache dtype (default %(default)s)",
    )
    p.add_argument(
        "--mha-backend",
        dest="mha_backend",
        choices=MHA_BACKENDS,
        default=_DEFAULT.mha_backend,
        help="MHA backend: aiter binds the SHUFFLE layout, triton NHD (default %(default)s)",
    )
    _add_capacity_arguments(p)
    _add_transfer_arguments(p)
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="output (default text)"
    )
    return p


#: How window classes may be allocated (`pool_layout.capacity.WindowPages`), spelled here so
#: `--help` answers without torch.
WINDOW_PAGES = ("reserved", "shared")


def _add_capacity_arguments(p: argparse.ArgumentParser) -> None:
    """The budget plan: what a byte budget holds, per class, and what it refuses."""
    g = p.add_argument_group(
        "capacity",
        "With --budget, also plan what the budget holds: the STATE floor (one entry a\n"
        "request slot), the window floor (each sliding or chunked row's blocks a slot) and\n"
        "the rest in full-reach blocks; refused by name when a floor or one --max-model-len\n"
        "request does not fit.",
    )
    g.add_argument(
        "--budget",
        metavar="SIZE",
        help="bytes for the KV pools: 60GiB, 80GB, or a byte count",
    )
    g.add_argument(
        "--max-model-len",
        dest="max_model_len",
        type=int,
        metavar="N",
        help="tokens of the longest request (required with --budget)",
    )
    g.add_argument(
        "--max-num-seqs",
        dest="max_num_seqs",
        type=int,
        metavar="S",
        help="request slots: the STATE and window floors buy this many (required with --budget)",
    )
    g.add_argument(
        "--step-tokens",
        dest="step_tokens",
        type=int,
        metavar="T",
        help="tokens a request writes in one step, held by a window row beyond its window "
        "(default one scheduler block; a chunked prefill's chunk holds more)",
    )
    g.add_argument(
        "--window-pages",
        dest="window_pages",
        choices=WINDOW_PAGES,
        default=WINDOW_PAGES[0],
        help="reserved: each window class its own pool (this engine, ATOM); shared: one pool of "
        "one page size for every class, padded by vLLM's rule (default %(default)s)",
    )


def _add_transfer_arguments(p: argparse.ArgumentParser) -> None:
    """What a P/D transfer needs to know instead of the layout report: exclusive of each other
    and of a budget plan."""
    g = p.add_argument_group("transfer").add_mutually_exclusive_group()
    g.add_argument(
        "--manifest",
        action="store_true",
        help="print the wire manifest (transfer regions, header, digest) both P/D ends compare",
    )
    g.add_argument(
        "--block-sizes",
        dest="block_sizes",
        action="store_true",
        help="list every scheduler block size the model (and --draft) accept together",
    )


def _capacity_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the capacity flags as given, or None."""
    plan_flags = ("max_model_len", "max_num_seqs", "step_tokens")
    if args.budget is not None and (args.manifest or args.block_sizes):
        other = "--manifest" if args.manifest else "--block-sizes"
        return f"{other} prints instead of the layout report; --budget plans that report"
    if args.budget is None:
        given = [f"--{f.replace('_', '-')}" for f in plan_flags if getattr(args, f) is not None]
        if given:
            return f"{', '.join(given)} plan a budget; give --budget SIZE too"
        return None
    missing = [f"--{f.replace('_', '-')}" for f in plan_flags[:2] if getattr(args, f) is None]
    if missing:
        return f"--budget plans for a request length and a slot count; give {' and '.join(missing)}"
    return None


def _capacity(args: argparse.Namespace, runner: object) -> dict | None:
    """The capacity section of the report, or None without --budget (raises by name)."""
    if args.budget is None:
        return None
    from atom.capacity_report import capacity_report, parse_bytes

    return capacity_report(
        runner,
        budget=parse_bytes(args.budget),
        max_model_len=args.max_model_len,
        max_num_seqs=args.max_num_seqs,
        step_tokens=args.step_tokens,
        window_pages=args.window_pages,
    )


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """The EngineConfig a parsed command line asks for: every field the parser names, by name."""
    given = vars(args)
    return EngineConfig(
        **{f.name: given[f.name] for f in dataclasses.fields(EngineConfig) if f.name in given}
    )


def _error(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def layout_main(argv: list[str]) -> int:
    parser = _layout_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help is 0, a bad command line is 2
        return int(exc.code or 0)
    # Imported here so `--help` and argument errors answer without loading torch.
    from atom.layout_report import format_text, layout_report
    from atom.models.hf_config import HfConfig
    from atom.models.registry import load_config, load_model_config
    from atom.runner.model_runner import ModelRunner

    if not args.include_mtp and args.draft:
        return _error(parser.prog, "--no-spec leaves speculative decoding out; --draft attaches it")
    problem = _capacity_problem(args)
    if problem:
        return _error(parser.prog, problem)
    try:
        config = HfConfig.from_file(args.config) if args.config else load_model_config(args.model)
        draft = load_config(args.draft) if args.draft else None
        engine = engine_config(args)
        if args.block_sizes:
            return _print_block_sizes(config, draft, engine, args.format)
        runner = ModelRunner(config, engine, draft_config=draft)
        report = layout_report(runner)
    except (ValueError, TypeError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        return _error(parser.prog, f"cannot price this configuration: {message}")
    if args.manifest:
        return _print_manifest(parser.prog, runner, args.format)
    try:
        capacity = _capacity(args, runner)
    except (ValueError, TypeError) as exc:
        return _error(parser.prog, f"cannot plan this budget: {exc}")
    if capacity is not None:
        report["capacity"] = capacity
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        sys.stdout.write(format_text(report))
        if capacity is not None:
            from atom.capacity_report import format_capacity

            sys.stdout.write("\n" + format_capacity(capacity))
    return EXIT_OK


def _print_manifest(prog: str, runner, fmt: str) -> int:
    """The wire manifest of one scheduler block and the engine's request slots, carved on the
    ``meta`` device: the layout is what the manifest describes, and no byte is allocated."""
    from atom.runner.kv_transfer import wire_manifest

    try:
        runner.initialize(1, device="meta")
        manifest = wire_manifest(runner)
    except (ValueError, TypeError) as exc:
        return _error(prog, f"cannot describe this configuration's transfer: {exc}")
    sys.stdout.write(manifest.to_json(indent=2) + "\n" if fmt == "json" else manifest.format_text())
    return EXIT_OK


def _print_block_sizes(config, draft, engine, fmt: str) -> int:
    """Every scheduler block size accepted, with each side's rule; exit 1 when none is."""
    from atom.runner.block_sizes import accepted_block_sizes

    answer = accepted_block_sizes(config, draft, engine=engine)
    if fmt == "json":
        print(json.dumps(answer.to_dict(), indent=2))
    else:
        sys.stdout.write(answer.format_text())
    return EXIT_OK if answer.accepted else EXIT_NONE


def _models_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="atom-contracts models",
        description=(
            "List the models whose configs ship with the engine (atom/models/configs/). A name "
            "here is what `atom-contracts layout MODEL` and `--draft` take."
        ),
    )
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="output (default text)"
    )
    return p


def models_main(argv: list[str]) -> int:
    parser = _models_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    from atom.models.family import attn_family, has_mla_indexer
    from atom.models.registry import is_draft_head, load_model_config, model_names
    from atom.models.skeleton import layer_types, mtp_layer_count

    rows = []
    for name in model_names():
        cfg = load_model_config(name)
        text = cfg.text_config()
        try:
            kinds = layer_types(text)
            mtp = mtp_layer_count(text)
            family = attn_family(text).value
        except (ValueError, TypeError) as exc:
            return _error(parser.prog, f"{name}: {exc}")
        rows.append(
            {
                "name": name,
                "model_type": text.model_type,
                "family": family,
                "layers": len(kinds),
                "mtp_layers": mtp,
                "indexer": has_mla_indexer(text),
                "draft_head": is_draft_head(cfg),
                "model": cfg.get("_model", ""),
            }
        )
    if args.format == "json":
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    print(f"{'name':<22} {'model_type':<15} {'family':<8} {'layers':>6} {'mtp':>4}  notes")
    for r in rows:
        notes = []
        if r["indexer"]:
            notes.append("sparse indexer")
        if r["draft_head"]:
            notes.append("draft head: use with --draft")
        print(
            f"{r['name']:<22} {r['model_type']:<15} {r['family']:<8} {r['layers']:>6} "
            f"{r['mtp_layers']:>4}  {', '.join(notes)}"
        )
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """``python -m atom.layout_command [layout|models] ...``; a bare model name means layout."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "models":
        return models_main(argv[1:])
    if argv and argv[0] == "layout":
        argv = argv[1:]
    return layout_main(argv)


if __name__ == "__main__":
    sys.exit(main())
