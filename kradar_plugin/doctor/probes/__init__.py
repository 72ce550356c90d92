"""Probes: gather the facts of the live environment without importing the frameworks.

Every probe tolerates a missing package (None) and is cheap: distribution metadata, conda-meta, /proc,
/dev/shm, CUDA directories. What needs torch/mmcv/numba imported comes from a SUBPROCESS (framework.py,
imports.py: a broken build or a segfault cannot take the doctor down) or, in quick mode, from modules the
caller already imported. gather.py puts them all in one facts dict (declared in ``doctor/fact_names.py``).
``checks.collect_facts`` imports the input probes on demand: config_facts.py, script_facts.py and
checkpoint_meta.py (files read, nothing run), loader_probe.py (the loaders of ``--config`` built in a real
2-process gloo group) and compile_test.py (``--compile-test``).
"""
from .cuda import probe_cuda_toolkit, probe_driver, probe_gpu_count, toolkit_version_from_home
from .framework import framework_probe, loaded_framework_facts
from .gather import gather
from .imports import IMPORT_MODULES, import_probe
from .openmmlab import package_dir, parse_version_asserts, probe_installed_ranges
from .packages import fork_facts, probe_conda_packages, probe_distributions, probe_providers
from .system import probe_shm

__all__ = ['probe_cuda_toolkit', 'probe_driver', 'probe_gpu_count', 'toolkit_version_from_home', 'framework_probe',
           'loaded_framework_facts', 'gather', 'IMPORT_MODULES', 'import_probe', 'package_dir',
           'parse_version_asserts', 'probe_installed_ranges', 'fork_facts', 'probe_conda_packages',
           'probe_distributions', 'probe_providers', 'probe_shm']
