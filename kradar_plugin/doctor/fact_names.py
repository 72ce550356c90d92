"""The declared set of facts: every key the probes, the inputs (--config, --train-script, --checkpoint,
--assume) and ``environment.derive`` put into the facts dict, and that the checks' needs and judges may read:
its name, where it comes from, what it means (versions are strings, None when not installed).
tests/doctor/test_fact_names.py checks that every key read or produced is declared and nothing declared is
unused.
"""
import collections

Fact = collections.namedtuple('Fact', 'name source meaning')

FACTS = (
    # ---- installed versions (probes/packages.py: distribution metadata, conda-meta; never imported)
    Fact('python', 'probe', 'CPython version running the doctor'),
    Fact('conda', 'probe', 'True in a conda environment (a conda-meta directory)'),
    Fact('numba', 'probe', 'numba version'),
    Fact('numba-cuda', 'probe', 'version of the separate numba-cuda package'),
    Fact('numpy', 'probe', "numpy version (in conda: the 'numpy' record the user pinned)"),
    Fact('numpy-base', 'probe', "conda's numpy-base record: the numpy that really imports (conda#7481)"),
    Fact('torch', 'probe', 'torch version (a +cuXXX tag names its CUDA)'),
    Fact('mmcv', 'probe', "distribution 'mmcv': the lite build if 1.x, the full build if 2.x"),
    Fact('mmcv-full', 'probe', 'mmcv-full version (1.x with compiled ops)'),
    Fact('mmcv-lite', 'probe', 'mmcv-lite version (2.x without compiled ops)'),
    Fact('mmdet', 'probe', 'mmdet version'),
    Fact('mmdet3d', 'probe', 'mmdet3d version'),
    Fact('mmseg', 'probe', 'mmsegmentation version'),
    Fact('mmengine', 'probe', 'mmengine version'),
    Fact('yapf', 'probe', 'yapf version (formats configs in cfg.dump())'),
    Fact('setuptools', 'probe', 'setuptools version (82 on has no pkg_resources)'),
    Fact('trimesh', 'probe', 'trimesh version (mmdet3d.visualization imports it; 2.x imports pkg_resources)'),
    Fact('providers', 'probe', "{fact: distribution} for a package installed by a fork, e.g. {'mmcv': "
                               "'onedl-mmcv'}: the fact holds the fork's version"),
    Fact('package-owners', 'probe', "{package: ['dist version', ...]} where a fork and another distribution "
                                    "install the same package"),
    # ---- OpenMMLab packages read as files (probes/openmmlab.py)
    Fact('mmcv-ext-file', 'probe', 'whether mmcv/_ext*.so is on disk (None without mmcv)'),
    Fact('installed-ranges', 'probe',
         "{package: {dependency: (min, max, max_inclusive, enforced)}} from each package's __init__.py"),
    # ---- CUDA, driver, GPUs (probes/cuda.py)
    Fact('cuda', 'probe', 'the CUDA toolkit version numba finds'),
    Fact('cuda-source', 'probe', "where that toolkit was found ('conda:cudatoolkit', a directory, ...)"),
    Fact('libnvvm', 'probe', 'path of the libNVVM numba can load, None when there is none'),
    Fact('driver', 'probe', 'NVIDIA driver version, None without a driver'),
    Fact('gpus', 'probe', 'number of NVIDIA GPUs on this node'),
    # ---- host resources (probes/system.py, pitfalls/leftovers.py)
    Fact('shm', 'probe', '/dev/shm size in bytes, None without one'),
    Fact('shm-free', 'probe', 'free bytes of /dev/shm'),
    Fact('nofile', 'probe', 'soft limit of open file descriptors (ulimit -n)'),
    Fact('shm-managers', 'probe', 'number of torch_shm_manager processes running'),
    Fact('nccl-env', 'probe', '{name: value} of the NCCL error-handling variables set in the environment'),
    Fact('launch', 'probe', "'slurm' in a Slurm job, 'multi-node' for a launch over several nodes, else None"),
    Fact('host-network', 'probe', "{'name', 'addresses', 'loopback', 'interfaces'}: the host name, what it "
                                  'resolves to, loopback only?, the other interfaces (name, IPv4)'),
    Fact('scontrol', 'probe', "path of Slurm's scontrol, None without one"),
    Fact('master-addr', 'probe', 'MASTER_ADDR of the environment'),
    Fact('gloo-ifname', 'probe', 'GLOO_SOCKET_IFNAME of the environment'),
    Fact('leftovers', 'probe', "{'processes', 'shm-managers', 'shm-segments'} left by earlier runs"),
    # ---- frameworks imported in a subprocess, or already imported by the caller (probes/framework.py)
    Fact('numpy-runtime', 'framework probe', 'numpy.__version__ of the numpy that imports'),
    Fact('numpy-import', 'framework probe', 'the error line of import numpy, when it fails'),
    Fact('numba-runtime', 'framework probe', 'numba.__version__'),
    Fact('numba-import', 'framework probe', "'ok' or the error line of import numba"),
    Fact('torch-runtime', 'framework probe', 'torch.__version__'),
    Fact('torch-import', 'framework probe', 'the error line of import torch, when it fails'),
    Fact('torch-cuda', 'framework probe', "CUDA version torch was built with ('cpu' for a CPU build)"),
    Fact('torch-cuda-available', 'framework probe', 'False when torch.cuda.is_available() is False'),
    Fact('torch-arch', 'framework probe', "torch.cuda.get_arch_list() (['sm_80', 'compute_90', ...])"),
    Fact('gpu-cc', 'framework probe', "compute capability of each GPU (['8.6', ...])"),
    Fact('sharing-strategy', 'framework probe',
         "torch.multiprocessing sharing strategy (a --config's or --train-script's wins)"),
    Fact('mmcv-ext', 'framework probe', "'ok' or the error line of import mmcv._ext"),
    Fact('mmcv-cuda', 'framework probe', "CUDA mmcv's ops were compiled with ('not available': CPU build)"),
    Fact('probe-error', 'framework probe', 'why a probe subprocess gave no answer'),
    # ---- OpenMMLab packages imported in a subprocess (probes/imports.py)
    Fact('import-errors', 'import probe', '{package: (first failing module, error line)}'),
    Fact('imports-checked', 'import probe', 'the modules that imported'),
    Fact('imports-skipped', 'import probe', 'why the import probe did not run'),
    # ---- --config (probes/config_facts.py; gpus there becomes gpus-for-run)
    Fact('config', '--config', 'the config path'),
    Fact('workers-per-gpu', '--config', 'data.workers_per_gpu (or train_dataloader.num_workers)'),
    Fact('samples-per-gpu', '--config', 'data.samples_per_gpu'),
    Fact('gpus-for-run', '--config', "GPUs per node of the run (config's gpus/gpu_ids, else this node's, else 1)"),
    Fact('dist-timeout', '--config', 'process-group timeout in seconds (dist_params / env_cfg.dist_cfg)'),
    Fact('dist-timeout-invalid', '--config', 'repr of a timeout that is neither seconds nor a timedelta'),
    Fact('dist-backend', '--config', 'dist_params.backend (or env_cfg.dist_cfg.backend)'),
    Fact('evaluation', '--config', 'whether the config evaluates during training'),
    Fact('pipeline', '--config', "sorted transform types of the config's pipelines"),
    Fact('find-unused-parameters', '--config', "the DDP wrapper's find_unused_parameters"),
    # ---- --config without --quick: the loaders built in a 2-process gloo group (probes/loader_probe.py)
    Fact('pitfalls', 'loader probe', "the distributed pitfalls' CheckResults of rank 0"),
    Fact('loader-demands', 'loader probe', "[{'name', 'workers', 'prefetch', 'batch-bytes'}] per loader"),
    Fact('loader-flow', 'loader probe', "which train flow built the loaders ('mmdet3d', 'mmdet', ...)"),
    Fact('loader-world-size', 'loader probe', 'number of processes the loaders were built in'),
    Fact('loader-probe-error', 'loader probe', 'why the loaders could not be built'),
    Fact('loader-probe-skipped', 'loader probe', 'why the loader probe did not run (--quick)'),
    # ---- --train-script (probes/script_facts.py)
    Fact('script-facts', '--train-script',
         "{'script', 'declares', 'reads-env', 'known-args', 'sharing-strategy', 'sets-start-method'}"),
    # ---- --checkpoint (probes/checkpoint_meta.py)
    Fact('checkpoint', '--checkpoint', "the checkpoint's meta: {'path', 'format', 'meta', '<pkg>_version'} or "
                                       "{'path', 'error'}"),
    Fact('checkpoint-mmdet3d', '--checkpoint', "mmdet3d version recorded in the checkpoint's meta"),
    # ---- only from --assume
    Fact('mmcv-torch', '--assume', 'torch version mmcv-full was compiled with'),
    Fact('eval-minutes', '--assume', 'expected duration of one rank-0 evaluation in minutes'),
    # ---- derived (environment.merge/derive, checks.collect_facts)
    Fact('assumed', 'derived', 'sorted keys that came from --assume'),
    Fact('numpy-effective', 'derived', 'the numpy that imports: numpy-runtime, else numpy-base, else numpy'),
    Fact('compile-test', '--compile-test', "the compile child's report ({'status', 'numba', 'toolkit', 'rows', "
                                           "'gpu-run', ...}, probes/compile_test.py), or ('skip', why)"),
    Fact('gpu-arch', '--compile-test', "['sm_80', ...]: the GPU architectures compiled for (--gpu-arch, else the "
                                       "GPU's, else sm_70/sm_80/sm_90); GPU nodes are asked about"),
)

NAMES = frozenset(f.name for f in FACTS)
_MEANING = dict((f.name, f.meaning) for f in FACTS)


def meaning(name):
    """The one-line meaning of fact ``name`` (KeyError for an undeclared one)."""
    return _MEANING[name]


def undeclared(keys):
    """The sorted keys of ``keys`` that are not declared facts."""
    return sorted(k for k in keys if k not in NAMES)
