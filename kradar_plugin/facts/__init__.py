"""The one table of version facts shared by kradar-doctor, the numba gate and compat, one module per family.

Sources: /work/shared/reference/rotate-iou.md and environment.md (numba's CHANGE_LOG and issues, mmdet/mmdet3d
``__init__.py`` asserts, mmcv PR #2944, mmengine PR #1365), NVIDIA's CUDA release notes, and the public sources
named next to each fact. Each module holds data, then small functions that read it; a ``*_findings`` function
returns a list of ``CheckResult`` (``result.py``) named after its doctor check. Numpy-only, Python 3.7 syntax
(``kradar_plugin.ops`` imports this package); ``facts.X`` works for every name below.
"""
from .box_convention import MMDET3D_FIRST_MMENGINE, box_convention_findings
from .cuda import CUDA_MIN_DRIVER, TORCH_CUDA_MAX_CC, driver_max_cuda, torch_cuda_max_cc
from .launch import (DEFAULT_PG_TIMEOUT_S, NOFILE_MIN, SHM_NO_CONFIG_MIN, SHM_PER_WORKER_MIN,
                     SHM_PER_WORKER_OK, TORCH_EXIT_RELEASES_WRAPPERS, TORCH_LOCAL_RANK_DASH)
from .mmcv_wheels import (MMCV_WHEEL_TORCH_MAX, MMENGINE_NEEDS_PKG_RESOURCES, SETUPTOOLS_WITHOUT_PKG_RESOURCES,
                          TRIMESH_WITHOUT_PKG_RESOURCES, UPSTREAM_MMCV_NEEDS_PKG_RESOURCES, mmcv_build_command,
                          mmcv_index_serves, mmcv_wheel_findings)
from .mmengine_torch import (MMENGINE_WEIGHTS_ONLY_FIXED, TORCH_WEIGHTS_ONLY_DEFAULT,
                             mmengine_torch_load_findings)
from .numba import (DRIVER_SEGFAULT, NUMBA_CTK_LISTED_MAX, NUMBA_CUDA_DEPRECATED, NUMBA_DRIVER_580_FIX,
                    NUMBA_DTYPE_FIX, NUMBA_NUMPY2, NUMBA_SERIES, NUMPY_DTYPE_BREAK, NumbaSeries,
                    numba_cpu_findings, numba_cuda_findings, numba_driver_findings, numba_numpy_findings,
                    numba_python_findings, numba_series, numba_toolkit_findings)
from .numpy_aliases import (MMDET3D_ALIASES_FIXED, MMDET3D_IN1D_LAST, MMDET3D_NP_LONG_LAST, NUMPY_ALIASES_REMOVED,
                            NUMPY_BOOL_LONG_BACK, NUMPY_IN1D_REMOVED, numpy_alias_findings)
from .openmmlab import (MMDET3D_GATE_REPAIR, MMDET3D_LAST_RELEASE, OPENMMLAB_RANGES, OPENMMLAB_SECOND_GENERATION,
                        OPENMMLAB_STACKS, generation_mix_findings, openmmlab_asserts, openmmlab_generation,
                        openmmlab_ranges, range_findings)
from .yapf import YAPF_FIXED_IN, YAPF_VERIFY_REMOVED, yapf_findings

__all__ = ['MMDET3D_FIRST_MMENGINE', 'box_convention_findings', 'CUDA_MIN_DRIVER', 'TORCH_CUDA_MAX_CC',
           'driver_max_cuda', 'torch_cuda_max_cc', 'DEFAULT_PG_TIMEOUT_S', 'NOFILE_MIN', 'SHM_NO_CONFIG_MIN',
           'SHM_PER_WORKER_MIN', 'SHM_PER_WORKER_OK', 'TORCH_LOCAL_RANK_DASH', 'MMCV_WHEEL_TORCH_MAX',
           'MMENGINE_NEEDS_PKG_RESOURCES', 'SETUPTOOLS_WITHOUT_PKG_RESOURCES', 'TRIMESH_WITHOUT_PKG_RESOURCES',
           'UPSTREAM_MMCV_NEEDS_PKG_RESOURCES',
           'mmcv_build_command', 'mmcv_index_serves', 'mmcv_wheel_findings', 'MMENGINE_WEIGHTS_ONLY_FIXED',
           'TORCH_WEIGHTS_ONLY_DEFAULT', 'mmengine_torch_load_findings', 'DRIVER_SEGFAULT', 'NUMBA_CTK_LISTED_MAX',
           'NUMBA_CUDA_DEPRECATED', 'NUMBA_DRIVER_580_FIX', 'NUMBA_DTYPE_FIX', 'NUMBA_NUMPY2', 'NUMBA_SERIES',
           'NUMPY_DTYPE_BREAK', 'NumbaSeries', 'numba_cpu_findings', 'numba_cuda_findings', 'numba_driver_findings',
           'numba_numpy_findings', 'numba_python_findings', 'numba_series', 'numba_toolkit_findings',
           'MMDET3D_ALIASES_FIXED', 'MMDET3D_IN1D_LAST', 'MMDET3D_NP_LONG_LAST', 'NUMPY_IN1D_REMOVED',
           'NUMPY_ALIASES_REMOVED', 'NUMPY_BOOL_LONG_BACK', 'numpy_alias_findings', 'MMDET3D_GATE_REPAIR',
           'MMDET3D_LAST_RELEASE', 'OPENMMLAB_RANGES', 'OPENMMLAB_SECOND_GENERATION', 'OPENMMLAB_STACKS',
           'generation_mix_findings', 'openmmlab_asserts', 'openmmlab_generation', 'openmmlab_ranges', 'range_findings',
           'YAPF_FIXED_IN', 'YAPF_VERIFY_REMOVED', 'yapf_findings']
