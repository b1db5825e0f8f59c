#!/usr/bin/env bash
# One device call: the GPU tests, the launch-variant sweep (and the one for transfers of 8-32
# MiB), the GPU round trips again under the variant the sweep picked, then the per-model table
# under both picks; everything printed and kept under $OUT. Every pool is sized from the device's
# free memory before it is allocated, and a row that cannot fit is skipped by name, so the same
# call runs on an 80 GB card and a 141 GB one. Usage (on the GPU machine, from the repository root):
#   bash bench/gpu_session.sh [table args...]      e.g. --reps 10
# SWEEP=0 skips the sweep (the table then runs the library's default launch); TABLE=0 the table;
# TESTS=0 the GPU tests; PICKED=0 keeps the sweep's pick out of the rest (no second test run, the
# table at the defaults), PICKED_SMALL=0 its pick for 8-32 MiB; SWEEP_REPS the sweep's repetitions
# (15).
# Each part has a time limit (seconds: TEST_TIMEOUT 150, SWEEP_TIMEOUT 240, TABLE_TIMEOUT 330),
# so one that runs long still leaves the others their turn and its own output so far.
set -o pipefail
OUT=${OUT:-/tmp/gpu_session}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
# The device's copy of .git can be stale: the hashes of the sources are what says what ran.
(git log -1 --oneline 2>/dev/null || echo "no .git here") | tee "$OUT/version.txt"
sha1sum atom/kernels/*.py atom/backends/deepseek_v4.py bench/gpu_transfer.py bench/gpu_session.sh \
  tests/atom/kernels/test_triton_block_transfer.py tests/atom/kernels/transfer_support.py \
  | tee -a "$OUT/version.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
gpu_tests() {  # $1: log name; the GPU-only tests (CI runs the rest on the CPU)
  local started=$SECONDS
  echo "== GPU tests, ATOM_TEST_KERNEL='${ATOM_TEST_KERNEL:-}' (empty: the default launch)"
  timeout "${TEST_TIMEOUT:-150}" python3 -m pytest -q -p no:cacheprovider --durations=3 \
    tests/atom/kernels/test_triton_block_transfer.py tests/atom/kernels/test_triton_store.py \
    tests/atom/pool_layout/test_cuda_views.py 2>&1 | tee "$OUT/$1" | tail -8
  echo "tests: $((SECONDS - started)) s"
}
[ "${TESTS:-1}" != 0 ] && gpu_tests pytest.log
picked=""
picked_small=""
if [ "${SWEEP:-1}" != 0 ]; then
  timeout "${SWEEP_TIMEOUT:-240}" python3 bench/gpu_transfer.py --variants --no-table --reps "${SWEEP_REPS:-15}" \
    --pick "$OUT/picked.txt" --pick-small "$OUT/picked_small.txt" 2>&1 | tee "$OUT/sweep.log"
  [ "${PICKED:-1}" != 0 ] && picked=$(cat "$OUT/picked.txt" 2>/dev/null)
  [ "${PICKED_SMALL:-1}" != 0 ] && picked_small=$(cat "$OUT/picked_small.txt" 2>/dev/null)
  if [ -n "$picked" ] && [ "${TESTS:-1}" != 0 ]; then
    ATOM_TEST_KERNEL=$picked gpu_tests pytest_picked.log
  fi
fi
if [ "${TABLE:-1}" != 0 ]; then
  timeout "${TABLE_TIMEOUT:-330}" python3 bench/gpu_transfer.py --kernel "$picked" \
    --small-kernel "$picked_small" "$@" 2>&1 | tee "$OUT/bench.log"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
