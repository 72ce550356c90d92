"""Judges: pure functions of a facts dict, one per check. No probing, no imports of the frameworks.

A judge runs only when the facts its check needs are there (the row in ``doctor/checks.py`` names them; the
runner answers "numba not installed" for it) and returns what it found, without the check's name: nothing
(None or [], the check passed and the runner writes its OK line), one ``Finding`` (status, reason, fix; e.g.
a SKIP with the reason why the check does not apply) or a list of them; the version facts' ``*_findings``
(kradar_plugin.facts, shared with the rotated-IoU backend choice) and the pitfalls' CheckResults are
returned as they are. The facts a judge may read are declared in ``doctor/fact_names.py``. One module per
check family:

- numba.py: numba-python, numba-numpy, numba-cuda, numba-driver, libnvvm, cuda-compile
- mmcv.py: mmcv-full, mmcv-wheel, mmcv-torch (and the mmcv builds that checks need: ``mmcv_version``,
  ``full_build``, ``full_build_2x``)
- openmmlab.py: mmcv-range, openmmlab-mix, mmdet3d-numpy, mmengine-torch, yapf, package-owners
- imports.py: imports, probe
- numpy_base.py: numpy-base
- gpu.py: torch-gpu (and ``has_gpu``)
- system.py: shm, sharing-strategy
- launch.py: local-rank, dist-timeout
- nccl.py: nccl-failfast
- checkpoint.py: box-convention
- dist_pitfalls.py: sampler, worker-pickle, worker-cuda, import-cuda, ddp-inplace-view, unused-params,
  shm-batch, leftovers
"""
from .checkpoint import box_convention
from .dist_pitfalls import ddp_inplace_view, leftovers, pitfall, shm_batch
from .gpu import has_gpu, torch_gpu
from .imports import imports, probe_errors
from .launch import dist_timeout, local_rank
from .mmcv import full_build, full_build_2x, mmcv_full, mmcv_torch, mmcv_version, mmcv_wheel
from .nccl import nccl_failfast
from .numba import compile_test, libnvvm, numba_cuda, numba_driver, numba_numpy, numba_python
from .numpy_base import numpy_base
from .openmmlab import mmdet3d_numpy, mmengine_torch, openmmlab_mix, openmmlab_ranges, package_owners, yapf
from .system import sharing_strategy, shm

__all__ = ['box_convention', 'ddp_inplace_view', 'leftovers', 'pitfall', 'shm_batch', 'has_gpu', 'torch_gpu',
           'imports', 'probe_errors', 'dist_timeout', 'local_rank', 'full_build', 'full_build_2x', 'mmcv_full',
           'mmcv_torch', 'mmcv_version', 'mmcv_wheel', 'nccl_failfast', 'compile_test', 'libnvvm', 'numba_cuda',
           'numba_driver', 'numba_numpy', 'numba_python', 'numpy_base', 'mmdet3d_numpy', 'mmengine_torch',
           'openmmlab_mix', 'openmmlab_ranges', 'package_owners', 'yapf', 'sharing_strategy', 'shm']
