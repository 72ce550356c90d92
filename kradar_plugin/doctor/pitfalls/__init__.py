"""The distributed-training pitfalls, judged on the real data loaders (and the model, when asked).

Shared by ``kradar-doctor --config`` (``loader_probe`` builds the loaders in a real 2-process gloo group) and
the eval-only preflight (``kradar_plugin.adapters.mmcv1.preflight``, on the job's own loaders before the first
evaluation). One module per check; in each, ``judge_*`` functions are pure and return one ``CheckResult``
(OK/WARN/FAIL with the fix) and ``probe_*`` functions measure one fact on a live object. torch is imported
inside the functions that need it, so importing this package stays cheap.

Checks (names as in the report) and their modules:

- ``sampler`` (sampler.py): every rank must draw its own share of the dataset.
- ``worker-pickle`` (pickling.py): what spawn/forkserver workers receive must pickle.
- ``worker-cuda`` / ``import-cuda`` (worker_cuda.py): no CUDA in DataLoader workers or at import.
- ``ddp-inplace-view`` (ddp_view.py): torch 1.10's DDP returns its outputs as views.
- ``unused-params`` (unused_params.py): parameters without a gradient vs ``find_unused_parameters``.
- ``leftovers`` (leftovers.py): processes, daemons and /dev/shm segments of earlier runs.
- ``shm-batch`` (shm.py): /dev/shm against the batches the workers keep in flight.

``from kradar_plugin.doctor import pitfalls as P; P.judge_sampler(...)`` reaches every public name.
"""
from .ddp_view import judge_ddp_view
from .leftovers import judge_leftovers, own_process_tree, probe_leftovers
from .pickling import (SPAWN_METHODS, find_unpicklable, judge_pickling, pickled_size, start_method,
                       where_defined, worker_payload)
from .sampler import (describe_sampler, endless_limit, judge_sampler, judge_val_sampler,
                      loader_batch_size, sampler_draws, sampler_of)
from .shm import batch_nbytes, first_batch, judge_shm_batch, loader_shm_demand, shm_space
from .unused_params import judge_unused, probe_unused_parameters
from .worker_cuda import (cuda_state, install_cuda_tracer, judge_import_cuda, judge_worker_cuda,
                          probe_failed, probe_worker_cuda)

__all__ = ['judge_ddp_view', 'judge_leftovers', 'own_process_tree', 'probe_leftovers',
           'SPAWN_METHODS', 'find_unpicklable', 'judge_pickling', 'pickled_size', 'start_method', 'where_defined',
           'worker_payload', 'describe_sampler', 'endless_limit', 'judge_sampler', 'judge_val_sampler',
           'loader_batch_size', 'sampler_draws', 'sampler_of', 'batch_nbytes', 'first_batch', 'judge_shm_batch',
           'loader_shm_demand', 'shm_space', 'judge_unused', 'probe_unused_parameters', 'cuda_state',
           'install_cuda_tracer', 'judge_import_cuda', 'judge_worker_cuda', 'probe_failed', 'probe_worker_cuda']

# The checks, in report order (the preflight sorts its findings by it).
NAMES = ('sampler', 'worker-pickle', 'worker-cuda', 'import-cuda', 'ddp-inplace-view', 'unused-params',
         'leftovers', 'shm-batch')
