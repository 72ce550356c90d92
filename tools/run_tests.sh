#!/usr/bin/env bash
# `make test`: the whole suite on the three environments, building what is missing.
#   .venv       OpenMMLab 1.x stack (mmcv-full 1.7, mmdet 2.28, mmdet3d 1.0.0rc6): pytest tests
#   .venv-light numpy 2.x core:                                             pytest $CORE_TESTS
#   .venv-echofusion  EchoFusion's own stack (CPython 3.7, torch 1.10, mmcv-full 1.4.0, mmdet 2.19, mmdet3d
#               0.17.3, numba 0.48, numpy 1.19.5):                         pytest tests
#   .venv-mm2   OpenMMLab 2.0 stack (mmengine, mmcv 2.1, mmdet 3.3, mmdet3d 1.4): pytest tests/adapters/mmengine
# The EchoFusion and 2.0 stacks' builds (mmcv-full 1.4.0, mmdet3d 0.17.3's ops and mmcv 2.1 compiled from
# source) run one after the other under `nice -n 19` while the 1.x suite runs: its launch tests leave about
# one of two cores idle, so the builds cost little extra wall time; the 2.0 build goes on while the
# EchoFusion suite runs. Every part runs even when an earlier one failed; the exit status is non-zero if any
# failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
VENV=${VENV:-.venv}
LIGHT=${LIGHT:-.venv-light}
VENV_MM2=${VENV_MM2:-.venv-mm2}
VENV_EF=${VENV_EF:-.venv-echofusion}
PY=${PY:-python3}
PYTEST_FLAGS=${PYTEST_FLAGS:--q --durations=15}
CORE_TESTS=${CORE_TESTS:?CORE_TESTS must name the core test paths}
log_dir=${KRADAR_TEST_LOGS:-$root/work_dirs/test_logs}
mkdir -p "$log_dir"
t0=$(date +%s)
stamp() { echo "[test] $(( ($(date +%s) - t0) / 60 )) min $(( ($(date +%s) - t0) % 60 )) s: $*"; }
failed=()

stamp "building $VENV and $LIGHT"
PYTHON=$PY tools/setup_env.sh full "$VENV" || exit 1
PYTHON=$PY tools/setup_env.sh light "$LIGHT" || exit 1

stamp "building $VENV_EF, then $VENV_MM2, in the background (nice 19; logs: $log_dir/env-*.log)"
( nice -n 19 tools/setup_env.sh echofusion "$VENV_EF" > "$log_dir/env-echofusion.log" 2>&1 ) &
ef_build=$!
( wait_for() { while kill -0 "$1" 2>/dev/null; do sleep 5; done; }; wait_for $ef_build
  PYTHON=$PY nice -n 19 tools/setup_env.sh mm2 "$VENV_MM2" > "$log_dir/env-mm2.log" 2>&1 ) &
mm2_build=$!

stamp "OpenMMLab 1.x suite ($VENV)"
# shellcheck disable=SC2086
"$VENV/bin/python" -m pytest $PYTEST_FLAGS tests || failed+=("1.x suite ($VENV)")

stamp "numpy 2.x core ($LIGHT)"
# shellcheck disable=SC2086
"$LIGHT/bin/python" -m pytest $PYTEST_FLAGS $CORE_TESTS || failed+=("numpy 2.x core ($LIGHT)")

stamp "waiting for the $VENV_EF build"
if wait "$ef_build"; then
  tail -n 1 "$log_dir/env-echofusion.log"
  stamp "EchoFusion stack suite ($VENV_EF)"
  # shellcheck disable=SC2086
  "$VENV_EF/bin/python" -m pytest $PYTEST_FLAGS tests || failed+=("EchoFusion stack suite ($VENV_EF)")
else
  tail -n 40 "$log_dir/env-echofusion.log"
  failed+=("$VENV_EF build")
fi

stamp "waiting for the $VENV_MM2 build"
if wait "$mm2_build"; then
  tail -n 1 "$log_dir/env-mm2.log"
  stamp "OpenMMLab 2.0 suite ($VENV_MM2)"
  # shellcheck disable=SC2086
  "$VENV_MM2/bin/python" -m pytest $PYTEST_FLAGS tests/adapters/mmengine || failed+=("2.0 suite ($VENV_MM2)")
else
  tail -n 40 "$log_dir/env-mm2.log"
  failed+=("$VENV_MM2 build")
fi

stamp "done"
if [ ${#failed[@]} -gt 0 ]; then
  printf '[test] FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "[test] all parts passed"
