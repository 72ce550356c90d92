"""Judges of the host's resources for DataLoader workers: /dev/shm size (``shm``) and tensor sharing
(``sharing-strategy``: the strategy, the fd limit, leaked torch_shm_manager daemons)."""
from ... import facts as F
from ..report import Finding


def _mib(n):
    return '%d MiB' % (n // 2 ** 20)


def shm(facts):
    size = facts.get('shm')
    if size is None:
        return Finding('SKIP', 'no /dev/shm here')
    workers = facts.get('workers-per-gpu')
    if workers is None:
        if size < F.SHM_NO_CONFIG_MIN:
            return Finding('WARN', '/dev/shm is only %s (Docker default 64 MiB); DataLoader workers die with '
                                   'SIGBUS (exit -7) at the train->val switch' % _mib(size),
                           'docker run --ipc=host (or --shm-size=8g); check a config with --config')
        return None
    gpus = facts.get('gpus-for-run') or facts.get('gpus') or 1
    total = workers * gpus
    if total == 0:
        return None
    what = '%d workers_per_gpu x %d GPU(s) = %d workers' % (workers, gpus, total)
    size_g = max(1, -(-total * F.SHM_PER_WORKER_OK // 2 ** 30))  # the --shm-size to suggest, in GiB
    if size < total * F.SHM_PER_WORKER_MIN:
        return Finding('FAIL', '/dev/shm is %s, too small for %s (>= %s needed): bus error / DataLoader worker '
                               'killed by signal 7' % (_mib(size), what, _mib(total * F.SHM_PER_WORKER_MIN)),
                       'docker run --ipc=host or --shm-size=%dg (or lower data.workers_per_gpu)' % size_g)
    if size < total * F.SHM_PER_WORKER_OK:
        return Finding('WARN', '/dev/shm is %s for %s (%s recommended)'
                       % (_mib(size), what, _mib(total * F.SHM_PER_WORKER_OK)),
                       'docker run --ipc=host or --shm-size=%dg' % size_g)
    return None


def sharing_strategy(facts):
    strategy = facts.get('sharing-strategy')
    findings = []
    if strategy == 'file_system':
        findings.append(Finding('WARN', "sharing strategy 'file_system' is prone to shared-memory leaks and starts "
                                        "torch_shm_manager daemons that outlive the run",
                                "use the default 'file_descriptor' (remove set_sharing_strategy('file_system')) "
                                "and raise the fd limit: ulimit -n 65536"))
    elif strategy in (None, 'file_descriptor'):
        nofile = facts.get('nofile')
        if nofile is not None and nofile < F.NOFILE_MIN:
            findings.append(Finding('WARN', "ulimit -n is %d: 'file_descriptor' sharing needs one fd per shared "
                                            "tensor (\"received 0 items of ancdata\" / Too many open files)" % nofile,
                                    'ulimit -n 65536 before launching (not set_sharing_strategy(\'file_system\'))'))
    managers = facts.get('shm-managers') or 0
    if managers:
        findings.append(Finding('WARN', '%d torch_shm_manager process(es) running (leaked by earlier runs with '
                                        "'file_system' sharing?)" % managers,
                                'pgrep -a torch_shm_manager; kill the ones of finished runs'))
    return findings
