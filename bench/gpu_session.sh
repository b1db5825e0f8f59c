#!/usr/bin/env bash
# One device call: the GPU tests, then the transfer bench, everything printed and kept under $OUT.
# Usage (on the GPU machine, from the repository root): bash bench/gpu_session.sh [bench args...]
# TEST_TIMEOUT (seconds, default 300) bounds the tests so the bench always gets its turn.
set -o pipefail
OUT=${OUT:-/tmp/gpu_session}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
# The device's copy of .git can be stale: the hashes of the sources are what says what ran.
(git log -1 --oneline 2>/dev/null || echo "no .git here") | tee "$OUT/version.txt"
sha1sum atom/kernels/*.py bench/gpu_transfer.py bench/gpu_session.sh \
  tests/atom/kernels/test_triton_block_transfer.py tests/atom/kernels/transfer_support.py \
  | tee -a "$OUT/version.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
# The GPU-only tests (CI runs the rest); the torch reference's CPU tests run in the ordinary suite.
started=$SECONDS
timeout "${TEST_TIMEOUT:-300}" python3 -m pytest -q -p no:cacheprovider --durations=5 \
  tests/atom/kernels/test_triton_block_transfer.py tests/atom/kernels/test_triton_store.py \
  tests/atom/pool_layout/test_cuda_views.py 2>&1 | tee "$OUT/pytest.log" | tail -25
echo "tests: $((SECONDS - started)) s"
python3 bench/gpu_transfer.py "$@" 2>&1 | tee "$OUT/bench.log"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
