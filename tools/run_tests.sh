#!/usr/bin/env bash
# `make test`: the suite on the five environments, building what is missing.
#   .venv       OpenMMLab 1.x stack (mmcv-full 1.7, mmdet 2.28, mmdet3d 1.0.0rc6): pytest $FULL_TESTS (the
#               adapters, the project, datasets, models, compat, packaging and the core tests that use the 1.x
#               frameworks; the numpy-only core is the two stacks' below)
#   .venv-light numpy 2.x core:                                             pytest $CORE_TESTS
#   .venv-echofusion  EchoFusion's own stack (CPython 3.7, torch 1.10, mmcv-full 1.4.0, mmdet 2.19, mmdet3d
#               0.17.3, numba 0.48, numpy 1.19.5):                         pytest tests (the core included; not
#               the `slow` comparisons with K-Radar's evaluators under the CUDA simulator: the numpy-2 core has them)
#   .venv-mm2   OpenMMLab 2.0 stack (mmengine, mmcv 2.1, mmdet 3.3, mmdet3d 1.4): pytest tests/adapters/mmengine
#   .venv-latest today's stack (torch 2.13 CPU, numpy 2.2, onedl-mmengine/-mmcv/-mmdetection, mmdet3d 1.4):
#               pytest $LATEST_TESTS (the 2.0 adapters' tests that launch nothing, the doctor, the teardown) and
#               the launches $LATEST_LAUNCHES: the routes whose torch code differs from torch 2.0.1 (torchrun's
#               elastic agent and error files, torch.distributed.launch's --local-rank, the exit teardown,
#               checkpoint loading) and mmdet3d's own train.py with 1 and 2 processes on onedl-mmcv's ops
# Each part is two pytest runs: the tests that launch nothing, then the `launch` tests one at a time (each starts
# several processes; their time checks assume the launches do not compete with each other). Cases marked `bench`
# (kept for a benchmark's measurement) are left out. The schedule on 2 cores, where the launches are the
# critical path and leave about a core idle (process start-up, rendezvous, the launchers' polling):
#   foreground  build .venv, .venv-light; the 1.x tests that launch nothing (pytest-xdist, -n $TEST_WORKERS,
#               default 2; --dist loadgroup keeps each group of tests/conftest.py on one worker); then the
#               launches of the 1.x, EchoFusion and 2.0 stacks, one stack after the other
#   background  the .venv-echofusion, .venv-mm2, then .venv-latest builds (from the wheel cache, else
#               mmcv-full 1.4.0, mmdet3d 0.17.3's ops, mmcv 2.1 and onedl-mmcv 2.3.6 compiled from source), under
#               `nice -n 19`; and under `nice -n 10` on $TEST_WORKERS xdist workers, one part after the other: the
#               numpy-2 core, the EchoFusion stack's, the 2.0 stack's and today's stack's tests that launch nothing
#               (each when its environment is built): beside a launch they take the idle core, once the launches
#               have ended both cores
# Every part runs even when an earlier one failed; the exit status is non-zero if any failed. Phase times are
# printed as "[test] M min S s: ...", the background parts' logs at the end.
#
# tools/run_tests.sh PART runs one part alone in its built environment (full, light, echofusion, mm2, latest):
# what `make test-full` / `test-light` / `test-echofusion` / `test-mm2` / `test-latest` do.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
VENV=${VENV:-.venv}
LIGHT=${LIGHT:-.venv-light}
VENV_MM2=${VENV_MM2:-.venv-mm2}
VENV_EF=${VENV_EF:-.venv-echofusion}
VENV_LATEST=${VENV_LATEST:-.venv-latest}
PY=${PY:-python3}
PYTEST_FLAGS=${PYTEST_FLAGS:--q --durations=15}
WORKERS=${TEST_WORKERS:-2}
CORE_TESTS=${CORE_TESTS:?CORE_TESTS must name the core test paths}
FULL_TESTS=${FULL_TESTS:?FULL_TESTS must name the 1.x stack test paths}
EF_TESTS=${EF_TESTS:-tests}
MM2_TESTS=${MM2_TESTS:-tests/adapters/mmengine}
# today's stack: the tests that launch nothing of the 2.0 adapters, the doctor and the core tests that judge the
# installed stack (the numpy-only core is bounded by numpy 2.4 on .venv-light and 1.19 on EchoFusion's stack)
M=tests/adapters/mmengine
LATEST_TESTS=${LATEST_TESTS:-$M tests/doctor tests/distributed/test_group_teardown.py tests/loading}
# its launches: the routes whose torch code differs from torch 2.0.1 (docs/development.md), and mmdet3d 1.4's own
# train.py on onedl-mmcv's compiled ops; the other 2.0 routes run on .venv-mm2
LATEST_LAUNCHES=${LATEST_LAUNCHES:-$M/test_eval_only_launch.py::test_eval_only_one_and_two_processes_identical \
$M/test_toy_launch.py::test_metric_failure_ends_the_job_with_its_traceback \
$M/test_toy_launch.py::test_inference_failure_on_rank_1_is_blamed_on_rank_1 \
$M/test_launch_routes.py $M/test_sweep_mm2.py::test_our_train_entry_checkpoints_flag \
$M/test_checkpoint_launch.py::test_payload_checkpoint_as_load_from_is_refused_and_never_runs}
log_dir=${KRADAR_TEST_LOGS:-$root/work_dirs/test_logs}
mkdir -p "$log_dir"
t0=$(date +%s)
stamp() { echo "[test] $(( ($(date +%s) - t0) / 60 )) min $(( ($(date +%s) - t0) % 60 )) s: $*"; }
failed=()

# parallel NAME PYTHON PATHS...: the tests that launch nothing, on $WORKERS xdist workers; launches NAME
# PYTHON PATHS...: the launch tests, one at a time; suite: both. pytest's exit status 5 (nothing selected: a
# part without launches) is no failure; a failure is recorded under NAME.
passed() { [ "$1" -eq 0 ] || [ "$1" -eq 5 ]; }
# no_launch PYTHON PATHS...: pytest on the tests that launch nothing, on $WORKERS xdist workers (under
# `nice -n $NICE` when NICE is set); SKIP_MARK (a pytest marker expression, default none) leaves more out.
no_launch() {
  local py=$1 marks="not launch and not bench${SKIP_MARK:+ and not ($SKIP_MARK)}"
  shift
  # shellcheck disable=SC2086
  ${NICE:+nice -n $NICE} "$py" -m pytest $PYTEST_FLAGS -n "$WORKERS" --dist loadgroup -m "$marks" "$@"
}
parallel() {
  local name=$1 py=$2 rc
  shift 2
  stamp "$name: the tests that launch nothing (-n $WORKERS${SKIP_MARK:+, not $SKIP_MARK})"
  no_launch "$py" "$@"; rc=$?
  passed $rc || failed+=("$name: the tests that launch nothing")
  passed $rc
}
launches() {
  local name=$1 py=$2 rc
  shift 2
  stamp "$name: the launches, one at a time"
  # shellcheck disable=SC2086
  "$py" -m pytest $PYTEST_FLAGS -m "launch and not bench" "$@"; rc=$?
  passed $rc || failed+=("$name: the launches")
  passed $rc
}
suite() {
  local status=0
  parallel "$@" || status=1
  launches "$@" || status=1
  return $status
}
# latest_suite: today's stack's two runs (its launches are a selection: LATEST_LAUNCHES)
latest_suite() {
  local status=0 name="today's stack ($VENV_LATEST)"
  # shellcheck disable=SC2086
  parallel "$name" "$VENV_LATEST/bin/python" $LATEST_TESTS || status=1
  # shellcheck disable=SC2086
  launches "$name" "$VENV_LATEST/bin/python" $LATEST_LAUNCHES || status=1
  return $status
}

# shellcheck disable=SC2086
case "${1:-all}" in
  full) suite "1.x suite ($VENV)" "$VENV/bin/python" $FULL_TESTS; exit ;;
  light) suite "numpy 2.x core ($LIGHT)" "$LIGHT/bin/python" $CORE_TESTS; exit ;;
  echofusion) suite "EchoFusion stack suite ($VENV_EF)" "$VENV_EF/bin/python" $EF_TESTS; exit ;;
  mm2) suite "2.0 suite ($VENV_MM2)" "$VENV_MM2/bin/python" $MM2_TESTS; exit ;;
  latest) latest_suite; exit ;;
  all) ;;
  *) echo "usage: $0 [all|full|light|echofusion|mm2|latest]" >&2; exit 2 ;;
esac

stamp "building $VENV and $LIGHT"
PYTHON=$PY tools/setup_env.sh full "$VENV" || exit 1
PYTHON=$PY tools/setup_env.sh light "$LIGHT" || exit 1

stamp "building $VENV_EF, $VENV_MM2, then $VENV_LATEST, in the background (nice 19; logs: $log_dir/env-*.log)"
rm -f "$log_dir"/env-*.ended "$log_dir"/background-*.status
# build KIND VENV: one background build; its end time goes to env-KIND.ended (printed when it is waited for)
build() {
  PYTHON=$PY nice -n 19 tools/setup_env.sh "$1" "$2" > "$log_dir/env-$1.log" 2>&1; local rc=$?
  stamp "$2 built (exit status $rc)" > "$log_dir/env-$1.ended"
  return $rc
}
( build echofusion "$VENV_EF" ) &
ef_build=$!
wait_for() { while kill -0 "$1" 2>/dev/null; do sleep 5; done; }
( wait_for $ef_build; build mm2 "$VENV_MM2" ) &
mm2_build=$!
( wait_for $mm2_build; build latest "$VENV_LATEST" ) &
latest_build=$!
# built KIND: waits for a background build (from any process: the build's .ended file says it ended) and says
# whether it succeeded
built() {
  while [ ! -s "$log_dir/env-$1.ended" ]; do sleep 5; done
  grep -q '(exit status 0)' "$log_dir/env-$1.ended"
}

# shellcheck disable=SC2086
parallel "1.x suite ($VENV)" "$VENV/bin/python" $FULL_TESTS

# From here the launches run in the foreground, one at a time, and leave about a core idle (process start-up,
# rendezvous, the launchers' polling). Every stack's tests that launch nothing run one part after the other in
# the background beside them, niced below the launches and above the builds: the numpy-2 core, then the
# EchoFusion stack's once it is built, then the 2.0 stack's. Each writes its log and exit status; they are
# waited for and summarised at the end.
# background NAME LOG PYTHON PATHS...: one part's tests that launch nothing, on $WORKERS xdist workers under
# nice 10: beside a launch they take the idle core; once the launches have ended, both
background() {
  local name=$1 log=$2 py=$3 rc
  shift 3
  stamp "$name: the tests that launch nothing, in the background (-n $WORKERS; log: $log)" > "$log"
  NICE=10 no_launch "$py" "$@" >> "$log" 2>&1; rc=$?
  stamp "$name: the tests that launch nothing ended (exit status $rc)" >> "$log"
  echo "$rc" > "$log.status"
}
light_log=$log_dir/background-light.log
ef_log=$log_dir/background-echofusion.log
mm2_log=$log_dir/background-mm2.log
latest_log=$log_dir/background-latest.log
# The `slow` tests (K-Radar's and 4DR-MR's own evaluators under numba's CUDA simulator, 100 s each, compared
# with ours per condition) run in the numpy-2 core only; on EchoFusion's stack they would hold the suite.
# shellcheck disable=SC2086
( background "numpy 2.x core ($LIGHT)" "$light_log" "$LIGHT/bin/python" $CORE_TESTS
  if built echofusion; then
    SKIP_MARK=slow background "EchoFusion stack suite ($VENV_EF)" "$ef_log" "$VENV_EF/bin/python" $EF_TESTS
  fi
  if built mm2; then
    background "2.0 suite ($VENV_MM2)" "$mm2_log" "$VENV_MM2/bin/python" $MM2_TESTS
  fi
  if built latest; then
    background "today's stack ($VENV_LATEST)" "$latest_log" "$VENV_LATEST/bin/python" $LATEST_TESTS
  fi ) &
queue=$!
stamp "the tests that launch nothing of every other part run in the background from here on (nice 10; logs: $log_dir/background-*.log)"

# shellcheck disable=SC2086
launches "1.x suite ($VENV)" "$VENV/bin/python" $FULL_TESTS

# after_build KIND VENV PID NAME PATHS...: waits for KIND's background build (process PID), then runs NAME's
# launches of PATHS in VENV; a failed build is recorded, with the end of its log
after_build() {
  local kind=$1 venv=$2 pid=$3 name=$4
  shift 4
  stamp "waiting for the $venv build"
  if wait "$pid"; then
    cat "$log_dir/env-$kind.ended"; tail -n 1 "$log_dir/env-$kind.log"
    launches "$name" "$venv/bin/python" "$@"
  else
    tail -n 40 "$log_dir/env-$kind.log"
    failed+=("$venv build")
  fi
}
# shellcheck disable=SC2086
after_build echofusion "$VENV_EF" "$ef_build" "EchoFusion stack suite ($VENV_EF)" $EF_TESTS
# shellcheck disable=SC2086
after_build mm2 "$VENV_MM2" "$mm2_build" "2.0 suite ($VENV_MM2)" $MM2_TESTS
# shellcheck disable=SC2086
after_build latest "$VENV_LATEST" "$latest_build" "today's stack ($VENV_LATEST)" $LATEST_LAUNCHES

stamp "waiting for the tests that launch nothing in the background"
wait "$queue"
for part in light:"numpy 2.x core ($LIGHT)" echofusion:"EchoFusion stack suite ($VENV_EF)" mm2:"2.0 suite ($VENV_MM2)" \
            latest:"today's stack ($VENV_LATEST)"; do
  log=$log_dir/background-${part%%:*}.log
  [ -f "$log" ] || continue     # its build failed: said above
  head -n 1 "$log"; tail -n 1 "$log"
  if grep -q 'slowest' "$log"; then sed -n '/slowest/,$p' "$log" | sed '$d'; fi
  rc=$(cat "$log.status" 2>/dev/null || echo 1)
  passed "$rc" || { tail -n 60 "$log"; failed+=("${part#*:}: the tests that launch nothing"); }
done

stamp "done"
if [ ${#failed[@]} -gt 0 ]; then
  printf '[test] FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "[test] all parts passed"
