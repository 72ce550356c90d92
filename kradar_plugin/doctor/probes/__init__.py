"""Probes: gather version facts from the live environment without importing the frameworks.

Every probe tolerates a missing package (returns None) and is cheap: distribution metadata, files under
conda-meta, /proc, /dev/shm, CUDA install directories. Facts that need torch/mmcv/numba imported come from
``framework_probe`` which imports them in a SUBPROCESS (a broken build or segfault cannot take the doctor
down), or from modules the caller already imported (``sys.modules``) in quick mode. Every fact a probe
produces is declared in ``doctor/fact_names.py``. One module per family:

- packages.py: distribution metadata and conda-meta records; openmmlab.py: OpenMMLab packages read as files
- cuda.py: toolkit, libNVVM, driver, GPUs; system.py: /dev/shm, fd limit, torch_shm_manager daemons
- framework.py / imports.py: the two probe subprocesses; gather.py: all of them into one facts dict
- config_facts.py, script_facts.py, checkpoint_meta.py: the facts of ``--config``, ``--train-script`` and
  ``--checkpoint`` (read as files, nothing run); loader_probe.py: the loaders of ``--config`` built in a real
  2-process gloo group; compile_test.py: ``--compile-test``. ``checks.collect_facts`` imports these five on
  demand, not this package.
"""
from .cuda import (cuda_home_candidates, probe_cuda_toolkit, probe_driver, probe_gpu_count,
                   probe_libnvvm, toolkit_version_from_home)
from .framework import framework_probe, loaded_framework_facts
from .gather import gather
from .imports import IMPORT_MODULES, import_probe
from .openmmlab import (package_dir, parse_version_asserts, probe_installed_ranges,
                        probe_mmcv_ext_file)
from .packages import (DISTRIBUTION_NAMES, DISTRIBUTIONS, OPENMMLAB_PACKAGES, conda_meta_dir, fork_facts,
                       metadata_version, probe_conda_packages, probe_distributions, probe_providers, probe_python)
from .system import SHM_MANAGER_COMM, probe_nofile, probe_shm, probe_shm_free, probe_shm_managers

__all__ = ['cuda_home_candidates', 'probe_cuda_toolkit', 'probe_driver', 'probe_gpu_count', 'probe_libnvvm',
           'toolkit_version_from_home', 'framework_probe', 'loaded_framework_facts', 'gather', 'IMPORT_MODULES',
           'import_probe', 'package_dir', 'parse_version_asserts', 'probe_installed_ranges', 'probe_mmcv_ext_file',
           'DISTRIBUTION_NAMES', 'DISTRIBUTIONS', 'OPENMMLAB_PACKAGES', 'conda_meta_dir', 'fork_facts',
           'metadata_version', 'probe_conda_packages', 'probe_distributions', 'probe_providers', 'probe_python',
           'SHM_MANAGER_COMM', 'probe_nofile', 'probe_shm', 'probe_shm_free', 'probe_shm_managers']
