"""The distributed-training pitfalls, judged on the real data loaders (and the model, when asked), by
``kradar-doctor --config`` (``probes/loader_probe``) and the eval-only preflight
(``kradar_plugin.adapters.mmcv1.preflight``). One module per check: ``judge_*`` functions are pure and return
one ``CheckResult`` with the fix, ``probe_*`` functions measure one fact on a live object; torch is imported
inside them, so importing this package stays cheap. ``P.judge_sampler(...)`` & co. reach every public name.

- ``sampler``: every rank draws its own share; ``worker-pickle`` (pickling.py): what spawn/forkserver
  workers receive pickles; ``worker-cuda`` / ``import-cuda`` (worker_cuda.py): no CUDA in workers or at
  import; ``ddp-inplace-view`` (ddp_view.py): torch 1.10's DDP outputs are views; ``unused-params``:
  parameters without a gradient vs ``find_unused_parameters``; ``leftovers``: processes, daemons and
  /dev/shm segments of earlier runs; ``shm-batch`` (shm.py): /dev/shm against the batches in flight.
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
