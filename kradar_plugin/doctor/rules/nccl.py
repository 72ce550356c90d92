"""The judge of a NCCL launch ending fast when a rank is lost (``nccl-failfast``).

With NCCL the process-group ``timeout`` holds only with asynchronous error handling (or blocking wait) on:
NCCL's watchdog then aborts a collective that waits longer; with it off, the ranks that wait for a lost peer
wait for ever. torchrun and ``torch.distributed.launch`` set ``NCCL_ASYNC_ERROR_HANDLING=1`` for their
workers; ``srun``, ``mpirun`` and ``python`` do not. torch >= 2.2 reads ``TORCH_NCCL_ASYNC_ERROR_HANDLING``
(the old name still works) and documents 3 as the default of recent releases.
"""
from ...facts.versions import parse_version
from ..report import Finding

ASYNC = ('TORCH_NCCL_ASYNC_ERROR_HANDLING', 'NCCL_ASYNC_ERROR_HANDLING')
BLOCKING = ('TORCH_NCCL_BLOCKING_WAIT', 'NCCL_BLOCKING_WAIT')
FIX = ('export TORCH_NCCL_ASYNC_ERROR_HANDLING=1 NCCL_ASYNC_ERROR_HANDLING=1 (every node, before the launcher; '
       'both names: torch < 2.2 reads the second) and dist_params = dict(backend=\'nccl\', timeout=<seconds>) '
       'above the longest rank-0 evaluation')


def _first(env, names):
    return next(((n, env[n].strip()) for n in names if env.get(n) not in (None, '')), (None, None))


def nccl_failfast(facts):
    backend = facts.get('dist-backend')
    if not backend:
        return Finding('SKIP', 'dist_params names no backend')
    if backend != 'nccl':
        return Finding('SKIP', "the config's backend is {}".format(backend))
    env = facts.get('nccl-env') or {}
    timeout = facts.get('dist-timeout')
    timeout_text = 'the {:g} s timeout of dist_params'.format(timeout) if timeout else \
        'the default 30 min timeout (dist_params has none)'
    name, value = _first(env, ASYNC)
    blocking, blocking_value = _first(env, BLOCKING)
    if blocking and blocking_value not in ('0',):
        return None
    if name and value not in ('0',):
        return None if timeout else Finding(
            'WARN', '{}={}: NCCL aborts a stuck collective after {}: a lost rank holds the others that '
            'long'.format(name, value, timeout_text), FIX)
    if name:
        return Finding('FAIL', '{}=0: NCCL never aborts a collective, so the ranks that wait for a lost rank '
                               '(OOM-killed, node failure) hang for ever, whatever the timeout'.format(name), FIX)
    torch_v = parse_version(facts.get('torch'))
    recent = torch_v is not None and torch_v >= parse_version('2.2')
    return Finding(
        'WARN',
        'no TORCH_NCCL_ASYNC_ERROR_HANDLING / NCCL_ASYNC_ERROR_HANDLING in this environment: torchrun and '
        'torch.distributed.launch set it for their workers, srun/mpirun/python do not; {}'.format(
            "torch {}'s own default then decides".format(facts['torch']) if recent else
            'then ranks waiting for a lost rank ignore {} and hang'.format(timeout_text)), FIX)
