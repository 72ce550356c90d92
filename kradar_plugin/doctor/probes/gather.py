"""``gather``: every live fact, from the probes of this package, as one {fact: value} dict."""
import os
import platform

from ...facts.versions import normalize_name
from ..pitfalls.shm import shm_space
from .cuda import probe_cuda_toolkit, probe_driver, probe_gpu_count, probe_libnvvm
from .framework import framework_probe, loaded_framework_facts
from .imports import IMPORT_MODULES, import_probe
from .openmmlab import probe_installed_ranges, probe_mmcv_ext_file
from .packages import conda_meta_dir, fork_facts, probe_conda_packages, probe_distributions, probe_providers
from .system import (probe_host_network, probe_launch, probe_nccl_env, probe_nofile, probe_scontrol,
                     probe_shm_managers)


def gather(quick=False, skip=()):
    """All live facts as {key: value}. ``skip``: fact groups that --assume replaces (not probed)."""
    dists = probe_distributions()
    conda = probe_conda_packages()
    facts = {'python': platform.python_version(), 'conda': bool(conda_meta_dir())}
    for name, version in dists.items():
        facts[normalize_name(name)] = version
    facts.update(fork_facts(dists, probe_providers()))  # onedl-mmcv & co: judged as the package they replace
    if conda.get('numpy'):
        facts['numpy'] = conda['numpy']  # what conda says is installed; numpy-base is what imports
    facts['numpy-base'] = conda.get('numpy-base')
    if 'cuda' not in skip:
        facts['cuda'], facts['cuda-source'] = probe_cuda_toolkit(conda)
        facts['libnvvm'] = probe_libnvvm()
    facts['driver'] = probe_driver()
    facts['gpus'] = probe_gpu_count()
    facts['shm'], facts['shm-free'] = shm_space()
    facts['nofile'] = probe_nofile()
    facts['shm-managers'] = probe_shm_managers()
    facts['nccl-env'] = probe_nccl_env()
    facts['launch'] = probe_launch()
    facts['host-network'] = probe_host_network()
    facts['scontrol'] = probe_scontrol()
    facts['master-addr'] = os.environ.get('MASTER_ADDR')
    facts['gloo-ifname'] = os.environ.get('GLOO_SOCKET_IFNAME')
    try:
        from ..pitfalls.leftovers import probe_leftovers
        facts['leftovers'] = probe_leftovers()
    except OSError:
        facts['leftovers'] = None
    facts['mmcv-ext-file'] = probe_mmcv_ext_file()
    facts['installed-ranges'] = probe_installed_ranges()
    facts.update(loaded_framework_facts())
    if not quick:
        want = set()
        if facts.get('numpy') and 'numpy' not in skip:
            want.add('numpy')
        if facts.get('numba') and 'numba' not in skip:
            want.update(('numba', 'numpy'))
        if facts.get('torch') and 'torch' not in skip:
            want.add('torch')
        if (facts.get('mmcv-full') or facts.get('mmcv')) and 'mmcv' not in skip:
            want.add('mmcv')
        packages = set(p for p, _ in IMPORT_MODULES if facts.get(p) or (p == 'mmcv' and (
            facts.get('mmcv-full') or facts.get('mmcv-lite'))))
        if 'imports' in skip:
            packages, facts['imports-skipped'] = set(), 'assumed versions are judged, not the installed packages'
        elif not packages:
            facts['imports-skipped'] = 'no OpenMMLab package installed'
        # The two probe interpreters run side by side: each spends most of its time importing torch & co.
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=2) as pool:
            framework = pool.submit(framework_probe, want)
            imported = pool.submit(import_probe, packages) if packages else None
            found = [framework.result()] + ([imported.result()] if imported is not None else [])
        errors = [f.pop('probe-error') for f in found if f.get('probe-error')]
        for f in found:
            facts.update(f)
        if errors:
            facts['probe-error'] = '; '.join(errors)
    else:
        facts['imports-skipped'] = 'not probed in quick mode (kradar-doctor without --quick imports them)'
    return facts
