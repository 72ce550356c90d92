#!/usr/bin/env bash
# Build (or refresh) a virtual environment for kradar_plugin.
#   tools/setup_env.sh full  [.venv]        torch 2.0.1 + mmcv-full 1.7.0 (CPU ops) + mmdet 2.28.2 + mmdet3d
#                                            1.0.0rc6 + numba (numpy 1.23.5: mmdet3d rc6 uses np.bool/np.int)
#   tools/setup_env.sh light [.venv-light]  newest numpy 2.x + numba, no torch/mmcv (core tests)
#   tools/setup_env.sh mm2   [.venv-mm2]    OpenMMLab 2.0: torch 2.0.1 + mmengine 0.10.7 + mmcv 2.1.0 (CPU ops,
#                                            compiled like mmcv-full) + mmdet 3.3.0 + mmdet3d 1.4.0, numpy 1.26.4
#   tools/setup_env.sh echofusion [.venv-echofusion]  EchoFusion's own stack on CPython 3.7.16 (pyenv): torch
#                                            1.10.0 + mmcv-full 1.4.0 (CPU ops) + mmdet 2.19.0 + mmseg 0.20.0 +
#                                            mmdet3d 0.17.3 (unmodified Python, CPU-built ops: build_mmdet3d_cpu.py)
#                                            + numba 0.48.0 + numpy 1.19.5 + yapf 0.40.1
#   tools/setup_env.sh latest [.venv-latest]  today's stack: torch 2.13.0 CPU + numpy 2.2 + onedl-mmengine 0.10.12
#                                            + onedl-mmcv 2.3.6 (CPU ops, compiled with torch present) +
#                                            onedl-mmdetection 3.5.1 + mmdet3d 1.4.0 (its version gate raised by
#                                            kradar_plugin.compat.mmdet3d_version_gate); setuptools as torch pulls it
# Idempotent: a stamp keyed by the requirement files makes a second run take seconds.
# mmcv-full / mmcv is compiled once and the wheel kept in a cache keyed by the torch version and Python tag
# (the file name carries the mmcv version), so a later torch pin can never load an ABI-mismatched mmcv._ext.
# The compile uses CFLAGS="$KRADAR_MMCV_CFLAGS" (default "-O1 -g0": no debug info, light optimisation; the
# flags come after Python's "-g -O3" and win): mmcv 2.1.0 builds in 16 CPU-min instead of 33, and the CPU
# ops are only run on test-sized inputs here. Set KRADAR_MMCV_CFLAGS="" for the stock flags.
set -euo pipefail
kind=${1:-full}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "$kind" in
  full)  venv=${2:-.venv};       reqs="requirements/stack.txt requirements/mmcv.txt requirements/mmdet3d.txt requirements/mmdet3d-runtime.txt requirements/tests.txt requirements/runtime.txt setup.py" ;;
  light) venv=${2:-.venv-light}; reqs="requirements/light.txt requirements/tests.txt requirements/runtime.txt setup.py" ;;
  echofusion) venv=${2:-.venv-echofusion}; reqs="requirements/echofusion-stack.txt requirements/echofusion-mmcv.txt requirements/echofusion-mmdet3d.txt requirements/echofusion-mmdet3d-runtime.txt tools/mmdet3d_cpu/include/* requirements/tests.txt requirements/runtime.txt tools/build_mmdet3d_cpu.py setup.py" ;;
  mm2)   venv=${2:-.venv-mm2};   reqs="requirements/mm2-stack.txt requirements/mm2-mmcv.txt requirements/mm2-mmdet3d.txt requirements/mm2-runtime.txt requirements/tests.txt requirements/runtime.txt setup.py" ;;
  latest) venv=${2:-.venv-latest}; reqs="requirements/latest-stack.txt requirements/latest-mmcv.txt requirements/latest-mmdet3d.txt requirements/mm2-runtime.txt requirements/tests.txt requirements/runtime.txt kradar_plugin/compat/mmdet3d_version_gate.py setup.py" ;;
  *) echo "usage: $0 full|light|mm2|echofusion|latest [VENV]" >&2; exit 2 ;;
esac
PY=${PYTHON:-python3}
if [ "$kind" = echofusion ]; then  # EchoFusion's interpreter, whatever python3 is
  PY=${PYTHON37:-$(pyenv root 2>/dev/null)/versions/3.7.16/bin/python}
  [ -x "$PY" ] || PY=$(command -v python3.7 || true)
  [ -n "$PY" ] && [ -x "$PY" ] || { echo "[env] echofusion needs CPython 3.7 (pyenv install 3.7.16, or PYTHON37=...)" >&2; exit 1; }
fi
mmcv_cflags=${KRADAR_MMCV_CFLAGS--O1 -g0}
key=$(cat $reqs tools/setup_env.sh | sha256sum | cut -c1-16)
stamp="$venv/.kradar-env-$kind-$key"
if [ -f "$stamp" ]; then
  echo "[env] $venv is up to date ($kind)"; exit 0
fi
[ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
pip="$venv/bin/python -m pip"
export PIP_DISABLE_PIP_VERSION_CHECK=1
if [ "$kind" = echofusion ]; then $pip install -q --upgrade "pip<24"; else $pip install -q --upgrade "pip<25"; fi
# install_mmcv REQUIREMENTS PACKAGE: PACKAGE (mmcv-full or mmcv) at the version REQUIREMENTS pins, with its
# compiled ops: from the wheel cache, else compiled once into it (CPU ops, $mmcv_cflags); nothing when the
# venv already has that version with mmcv._ext.
install_mmcv() {
  local spec ver torch_ver py_tag cache whl prefix=${2//-/_}
  spec=$(grep -E "^$2==" "$1")
  ver=${spec#*==}
  if "$venv/bin/python" -c "import mmcv, mmcv._ext, sys; sys.exit(mmcv.__version__ != '$ver')" 2>/dev/null; then
    return 0
  fi
  torch_ver=$("$venv/bin/python" -c 'import torch; print(torch.__version__)')
  py_tag=$("$venv/bin/python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  cache=${KRADAR_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kradar_plugin/wheels}/torch-$torch_ver-$py_tag
  whl=$(ls "$cache/$prefix-$ver"-*.whl 2>/dev/null | head -n1 || true)
  if [ -z "$whl" ]; then
    echo "[env] compiling $spec with CPU ops against torch $torch_ver (7-10 min on 2 cores, once)"
    mkdir -p "$cache"
    CFLAGS="${CFLAGS:-} $mmcv_cflags" MMCV_WITH_OPS=1 FORCE_CUDA=0 MAX_JOBS=${MAX_JOBS:-$(nproc)} \
      $pip wheel --no-deps --no-build-isolation --no-binary "$2" -w "$cache" "$spec"
    whl=$(ls "$cache/$prefix-$ver"-*.whl | head -n1)
  fi
  $pip install -q --no-deps --force-reinstall "$whl"
}
if [ "$kind" = light ]; then
  $pip install -q --upgrade -r requirements/light.txt -r requirements/tests.txt
  $pip install -q --no-deps -e .
  rm -f "$venv"/.kradar-env-light-*; touch "$stamp"
  echo "[env] $venv ready (light): $("$venv/bin/python" -c 'import numpy, numba; print("numpy", numpy.__version__, "numba", numba.__version__)')"
  exit 0
fi
if [ "$kind" = echofusion ]; then
  $pip install -q -r requirements/echofusion-stack.txt -r requirements/tests.txt
  install_mmcv requirements/echofusion-mmcv.txt mmcv-full
  $pip install -q $(grep -E '^mm(det|segmentation)==' requirements/echofusion-mmcv.txt) -r requirements/echofusion-stack.txt
  # mmdet3d 0.17.3: its sdist's Python files as released, its 11 extension modules compiled for the CPU (the
  # CUDA-only entry points raise "needs CUDA"); the wheel is cached beside mmcv-full's
  if ! "$venv/bin/python" -c "import mmdet3d, sys; sys.exit(mmdet3d.__version__ != '0.17.3')" 2>/dev/null; then
    cache=${KRADAR_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kradar_plugin/wheels}/torch-$("$venv/bin/python" -c 'import torch; print(torch.__version__)')-cp37
    whl=$(ls "$cache"/mmdet3d-0.17.3-*.whl 2>/dev/null | head -n1 || true)
    if [ -z "$whl" ]; then
      echo "[env] building mmdet3d 0.17.3 with CPU ops (once)"
      MAX_JOBS=${MAX_JOBS:-$(nproc)} "$venv/bin/python" tools/build_mmdet3d_cpu.py --out "$cache"
      whl=$(ls "$cache"/mmdet3d-0.17.3-*.whl | head -n1)
    fi
    $pip install -q --no-deps --force-reinstall "$whl"
  fi
  $pip install -q --no-deps -r requirements/echofusion-mmdet3d.txt
  $pip install -q -r requirements/echofusion-mmdet3d-runtime.txt -r requirements/echofusion-stack.txt
  $pip install -q --no-deps -e .
  # the blog's two drifted packages, for tests/doctor/test_drift_in_environment.py (never installed here)
  $pip download -q --no-deps -d "$venv/drift-wheels" yapf==0.43.0 numpy==1.20.3
  "$venv/bin/python" - <<'PY'
import sys, numpy, torch, torchvision, mmcv, mmcv._ext, mmdet, mmseg, mmdet3d, numba, yapf
from mmdet3d.apis import train_model  # noqa: F401  (mmdet3d's whole import chain, its 11 extensions included)
print('[env] ready (echofusion): python', sys.version.split()[0], 'torch', torch.__version__, 'torchvision',
      torchvision.__version__, 'numpy', numpy.__version__, 'numba', numba.__version__, 'mmcv-full',
      mmcv.__version__, 'mmdet', mmdet.__version__, 'mmseg', mmseg.__version__, 'mmdet3d', mmdet3d.__version__,
      'yapf', yapf.__version__)
assert sys.version_info[:2] == (3, 7) and numpy.__version__ == '1.19.5' and numba.__version__ == '0.48.0', \
    'EchoFusion stack pins drifted'
PY
  rm -f "$venv"/.kradar-env-echofusion-*; touch "$stamp"
  exit 0
fi
if [ "$kind" = mm2 ]; then
  $pip install -q -r requirements/mm2-stack.txt -r requirements/tests.txt
  install_mmcv requirements/mm2-mmcv.txt mmcv
  $pip install -q "$(grep -E '^mmdet==' requirements/mm2-mmcv.txt)" -r requirements/mm2-stack.txt
  # mmdet3d and the packages whose own pins are not needed: no dependency resolution (see the file)
  $pip install -q --no-deps --no-build-isolation -r requirements/mm2-mmdet3d.txt
  $pip install -q -r requirements/mm2-runtime.txt -r requirements/mm2-stack.txt
  $pip install -q --no-deps --no-build-isolation -e .
  "$venv/bin/python" - <<'PY'
import numpy, torch, mmengine, mmcv, mmcv._ext, mmdet, mmdet3d, numba
import mmdet3d.models, mmdet3d.datasets, mmdet3d.evaluation  # noqa: F401  (mmdet3d's whole import chain)
print('[env] ready (mm2): torch', torch.__version__, 'numpy', numpy.__version__, 'numba', numba.__version__,
      'mmengine', mmengine.__version__, 'mmcv', mmcv.__version__, 'mmdet', mmdet.__version__,
      'mmdet3d', mmdet3d.__version__)
assert numpy.__version__.startswith('1.'), 'numpy %s: torch 2.0/2.1 need numpy 1.x' % numpy.__version__
PY
  rm -f "$venv"/.kradar-env-mm2-*; touch "$stamp"
  exit 0
fi
if [ "$kind" = latest ]; then
  # torch==2.13.0 resolves to the +cpu wheel; setuptools is what torch pulls (>= 77, no pkg_resources from 82)
  $pip install -q -r requirements/latest-stack.txt -r requirements/tests.txt
  install_mmcv requirements/latest-mmcv.txt onedl-mmcv
  $pip install -q "$(grep -E '^onedl-mmdetection==' requirements/latest-mmcv.txt)" -r requirements/latest-stack.txt
  # mmdet3d 1.4.0 as in .venv-mm2 but a trimesh without pkg_resources (no dependency resolution: see the file),
  # then what its imports need
  $pip install -q --no-deps --no-build-isolation -r requirements/latest-mmdet3d.txt
  $pip install -q -r requirements/mm2-runtime.txt -r requirements/latest-stack.txt
  $pip install -q --no-deps --no-build-isolation -e .
  # mmdet3d 1.4.0 asserts mmcv<2.2.0 and mmdet<3.4.0: the documented repair raises the two maxima it refuses
  "$venv/bin/python" -m kradar_plugin.compat.mmdet3d_version_gate
  "$venv/bin/python" - <<'PY'
import numpy, torch, setuptools, mmengine, mmcv, mmcv._ext, mmdet, mmdet3d, numba
import mmdet3d.models, mmdet3d.datasets, mmdet3d.evaluation, mmdet3d.visualization  # noqa: F401  (its whole chain)
print('[env] ready (latest): torch', torch.__version__, 'numpy', numpy.__version__, 'numba', numba.__version__,
      'setuptools', setuptools.__version__, 'mmengine', mmengine.__version__, 'mmcv', mmcv.__version__,
      'mmdet', mmdet.__version__, 'mmdet3d', mmdet3d.__version__)
assert torch.__version__ == '2.13.0+cpu', 'torch %s: the pinned CPU wheel was not installed' % torch.__version__
assert numpy.__version__.startswith('2.'), 'numpy %s: this stack is the numpy-2 one' % numpy.__version__
PY
  rm -f "$venv"/.kradar-env-latest-*; touch "$stamp"
  exit 0
fi
$pip install -q -r requirements/stack.txt -r requirements/tests.txt
install_mmcv requirements/mmcv.txt mmcv-full
$pip install -q "$(grep -E '^mmdet' requirements/mmcv.txt)"
# mmdet3d and the packages whose own pins cannot install here: no dependency resolution (see the file)
$pip install -q --no-deps --no-build-isolation -r requirements/mmdet3d.txt
$pip install -q -r requirements/mmdet3d-runtime.txt -r requirements/stack.txt
$pip install -q --no-deps --no-build-isolation -e .
# the blog's yapf drift, for tests/doctor/test_drift_in_environment.py (never installed here)
$pip download -q --no-deps -d "$venv/drift-wheels" yapf==0.43.0
"$venv/bin/python" - <<'PY'
import numpy, torch, torchvision, mmcv, mmcv._ext, mmdet, mmdet3d, numba
from mmdet3d.apis import train_model  # noqa: F401  (mmdet3d's whole import chain, mmseg included)
print('[env] ready: torch', torch.__version__, 'torchvision', torchvision.__version__, 'numpy', numpy.__version__,
      'numba', numba.__version__, 'mmcv-full', mmcv.__version__, 'mmdet', mmdet.__version__,
      'mmdet3d', mmdet3d.__version__)
assert tuple(int(v) for v in numpy.__version__.split('.')[:2]) < (1, 24), \
    'numpy %s: mmdet3d 1.0.0rc6 needs numpy < 1.24 (np.bool, np.int)' % numpy.__version__
PY
rm -f "$venv"/.kradar-env-full-*; touch "$stamp"
