"""Judges: pure functions of a facts dict, one per check; no probing, no framework imports.

A judge runs only when its check's needs are met (its row in ``doctor/checks.py``) and returns what it found,
without the check's name: nothing (passed: the runner writes the OK line), one ``Finding`` (e.g. a SKIP saying
why the check does not apply), a list of them, or the CheckResults of the version facts' ``*_findings`` and of
the pitfalls as they are. The facts it may read are declared in ``doctor/fact_names.py``. One module per check
family: numba (numba-*, libnvvm, cuda-compile), mmcv (mmcv-full, mmcv-wheel, mmcv-torch and the mmcv builds
the needs use), openmmlab (mmcv-range, openmmlab-mix, mmdet3d-numpy, mmengine-torch, yapf, setuptools,
package-owners),
imports (imports, probe), numpy_base, gpu (torch-gpu, ``has_gpu``), system (shm, sharing-strategy), launch
(local-rank, dist-timeout, multi-node-host), nccl (nccl-failfast), checkpoint (checkpoint-load, box-convention), dist_pitfalls
(the rest).
"""
from .checkpoint import box_convention, checkpoint_load
from .dist_pitfalls import ddp_inplace_view, leftovers, pitfall, shm_batch
from .gpu import has_gpu, torch_gpu
from .imports import imports, probe_errors
from .launch import dist_timeout, local_rank, multi_node_host
from .mmcv import full_build, full_build_2x, mmcv_full, mmcv_torch, mmcv_version, mmcv_wheel
from .nccl import nccl_failfast
from .numba import compile_test, libnvvm, numba_cuda, numba_driver, numba_numpy, numba_python
from .numpy_base import numpy_base
from .openmmlab import (mmdet3d_numpy, mmengine_torch, openmmlab_mix, openmmlab_ranges, package_owners,
                        setuptools, yapf)
from .system import sharing_strategy, shm

__all__ = ['box_convention', 'checkpoint_load', 'ddp_inplace_view', 'leftovers', 'pitfall', 'shm_batch', 'has_gpu', 'torch_gpu',
           'imports', 'probe_errors', 'dist_timeout', 'local_rank', 'multi_node_host', 'full_build', 'full_build_2x',
           'mmcv_full',
           'mmcv_torch', 'mmcv_version', 'mmcv_wheel', 'nccl_failfast', 'compile_test', 'libnvvm', 'numba_cuda',
           'numba_driver', 'numba_numpy', 'numba_python', 'numpy_base', 'mmdet3d_numpy', 'mmengine_torch',
           'openmmlab_mix', 'openmmlab_ranges', 'package_owners', 'setuptools', 'yapf', 'sharing_strategy', 'shm']
