"""Kernels over carved views against the same kernels over dense tensors, on a GPU.

The GPU target: a kernel handed a view the runner bound runs at 95% or more of the same
kernel over a dense tensor of the same shape, and nothing between bind and kernel densifies. This
script measures both in one run on one device, so the ratio, not the absolute time, is the result:

- the Triton store kernel (``atom.kernels.triton_store``) writing a prefill's tokens through a
  module's bound NHD ``k_cache``/``v_cache``, against the same kernel on ``torch.empty`` tensors;
- a block gather (``index_select`` over backend blocks, the read a paged attention does first)
  through each bound view the builder declares, both layouts, against a dense copy of it.

"No densifying copy" is checked, not assumed: every bound view must share the pool's storage
(its data pointer lies inside the one paged buffer) and a store through it must change the
pool's bytes.

Usage (GPU machine): ``python bench/gpu_views.py [--tokens 32768] [--blocks 4096] [--reps 200]``
"""

from __future__ import annotations

import argparse
import statistics
import sys

import torch


def _time_pair_ms(view_fn, dense_fn, reps: int) -> tuple[float, float]:
    """Medians of the two, launched alternately so clock and thermal drift hit both alike."""
    for _ in range(5):  # warm-up: compile and cache
        view_fn()
        dense_fn()
    torch.cuda.synchronize()
    times: dict[int, list[float]] = {0: [], 1: []}
    for _ in range(reps):
        for which, fn in ((0, view_fn), (1, dense_fn)):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[which].append(start.elapsed_time(end))
    return statistics.median(times[0]), statistics.median(times[1])


def _inside(view: torch.Tensor, buf: torch.Tensor) -> bool:
    lo, hi = buf.data_ptr(), buf.data_ptr() + buf.numel() * buf.element_size()
    return (
        lo <= view.data_ptr() < hi
        and view.untyped_storage().data_ptr() == buf.untyped_storage().data_ptr()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="llama-3.1-8b")
    parser.add_argument("--tokens", type=int, default=32768, help="tokens stored per launch")
    parser.add_argument("--blocks", type=int, default=4096, help="scheduler blocks in the pool")
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("needs a CUDA device", file=sys.stderr)
        return 2

    from atom.engine_config import EngineConfig
    from atom.models.registry import load_model_config
    from atom.runner.model_runner import ModelRunner

    rows = []
    ok = True
    for backend in ("triton", "aiter"):  # triton binds NHD; aiter binds the SHUFFLE layout
        runner = ModelRunner(
            load_model_config(args.model), EngineConfig(mha_backend=backend)
        ).initialize(args.blocks, device="cuda")
        buf = runner.paged_buf
        module = runner.bound_modules()[len(runner.bound_modules()) // 2]
        views = module.kv_views
        for name, view in views.items():
            if not _inside(view, buf):
                print(f"FAIL {backend} {name}: bound view does not share the pool's storage")
                ok = False
        gen = torch.Generator(device="cuda").manual_seed(0)
        for name, view in views.items():
            blocks_in_view = view.shape[0]
            # Every block gathered twice over: enough bytes a launch that timing is not noise.
            ids = torch.randint(
                0, blocks_in_view, (2 * blocks_in_view,), device="cuda", generator=gen
            )
            dense = torch.empty(view.shape, dtype=view.dtype, device="cuda")
            t_view, t_dense = _time_pair_ms(
                lambda v=view, i=ids: v.index_select(0, i),
                lambda d=dense, i=ids: d.index_select(0, i),
                args.reps,
            )
            rows.append((backend, f"gather {name}", tuple(view.shape), t_view, t_dense))
        if backend == "triton":
            from atom.kernels.triton_store import reshape_and_cache_nhd

            k, v = views["k_cache"], views["v_cache"]
            heads, head_dim = k.shape[2], k.shape[3]
            key = torch.randn(args.tokens, heads, head_dim, device="cuda", dtype=k.dtype)
            value = torch.randn_like(key)
            slots_total = k.shape[0] * k.shape[1]
            slots = torch.randperm(slots_total, device="cuda")[: args.tokens]
            before = k.clone()  # one row's bytes: a whole-pool checksum would not fit beside it
            reshape_and_cache_nhd(key, value, k, v, slots)
            torch.cuda.synchronize()
            if torch.equal(k, before):
                print("FAIL triton store through the bound view did not change the pool's bytes")
                ok = False

            def store(kc, vc, key=key, value=value, slots=slots):
                return lambda: reshape_and_cache_nhd(key, value, kc, vc, slots)

            t_view, t_dense = _time_pair_ms(
                store(k, v), store(torch.empty_like(k), torch.empty_like(v)), args.reps
            )
            rows.append((backend, "triton store k+v", tuple(k.shape), t_view, t_dense))
        runner.release()

    print(
        f"{'backend':8} {'kernel':22} {'view shape':34} {'view ms':>9} {'dense ms':>9} {'dense/view':>10}"
    )
    for backend, kernel, shape, tv, td in rows:
        ratio = td / tv
        flag = "" if ratio >= 0.95 else "  < 0.95"
        ok &= ratio >= 0.95
        print(f"{backend:8} {kernel:22} {shape!s:34} {tv:9.4f} {td:9.4f} {ratio:10.3f}{flag}")
    print("all views share the pool's storage; every ratio >= 0.95" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
