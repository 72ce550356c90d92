"""Judges of launching a distributed job: the train script's --local-rank spelling (``local-rank``), the
process-group timeout against a rank-0 evaluation (``dist-timeout``) and the host of a Slurm or multi-node
launch (``multi-node-host``)."""
from ... import facts as F
from ...facts.versions import parse_version
from ..report import Finding


def local_rank(facts):
    script = facts['script-facts']
    declares = set(script['declares'])
    passed = '--local-rank' if parse_version(facts['torch']) >= F.TORCH_LOCAL_RANK_DASH else '--local_rank'
    if passed in declares or script['known-args']:
        return None
    name = script['script']
    if declares:
        return Finding('FAIL', "%s declares only %s but torch %s's torch.distributed.launch passes %s=N: "
                               "\"unrecognized arguments\" (exit code 2)"
                       % (name, '/'.join(sorted(declares)), facts['torch'], passed),
                       "in %s: parser.add_argument('--local_rank', '--local-rank', type=int, default=0) "
                       "(or launch with torchrun)" % name)
    if script['reads-env']:
        return Finding('WARN', '%s reads LOCAL_RANK but declares no %s: works with torchrun only, not with '
                               'python -m torch.distributed.launch' % (name, passed),
                       "launch with torchrun, or add parser.add_argument('--local_rank', '--local-rank', "
                       "type=int, default=0)")
    return Finding('WARN', '%s neither declares %s nor reads LOCAL_RANK' % (name, passed),
                   "add parser.add_argument('--local_rank', '--local-rank', type=int, default=0) and pass it "
                   "to init_dist, or read os.environ['LOCAL_RANK']")


def dist_timeout(facts):
    invalid = facts.get('dist-timeout-invalid')
    if invalid:
        return Finding('FAIL', 'dist_params timeout=%s is neither seconds nor a timedelta (init_process_group '
                               'raises)' % invalid, 'dist_params = dict(backend=\'nccl\', timeout=5400)  # seconds')
    timeout = facts.get('dist-timeout')
    eval_minutes = facts.get('eval-minutes')
    default_min = F.DEFAULT_PG_TIMEOUT_S // 60
    if timeout is None and eval_minutes is None:
        if not facts.get('config'):
            return Finding('SKIP', 'no --config (default process-group timeout %d min)' % default_min)
        if facts.get('evaluation'):
            return Finding('SKIP', 'default %d min timeout; give --assume eval-minutes=N to compare a long '
                                   'evaluation' % default_min)
        return None
    timeout = F.DEFAULT_PG_TIMEOUT_S if timeout is None else timeout
    if eval_minutes is None:
        return None
    eval_s = eval_minutes * 60.0
    fix = "dist_params = dict(backend='nccl', timeout=%d)  # seconds, > evaluation time" % int(max(2 * eval_s, 3600))
    if eval_s >= timeout:
        return Finding('FAIL', 'evaluation (%g min, rank 0 only) outlasts the process-group timeout (%g min): '
                               'the other ranks hit "Watchdog caught collective operation timeout"'
                       % (eval_minutes, timeout / 60.0), fix)
    if eval_s >= 0.8 * timeout:
        return Finding('WARN', 'evaluation (%g min) is close to the process-group timeout (%g min)'
                       % (eval_minutes, timeout / 60.0), fix)
    return None


def multi_node_host(facts):
    """A Slurm or multi-node launch from this host: its name must not resolve to loopback only (gloo would
    advertise 127.x to the other nodes: "Connection refused"), and a Slurm init without MASTER_ADDR needs
    scontrol (mmcv asks ``scontrol show hostname`` for the master node; containers often lack it, mmcv#700)."""
    launch = facts['launch']
    host = facts.get('host-network') or {}
    found = []
    if host.get('loopback') and not facts.get('gloo-ifname'):
        routable = host.get('interfaces') or []
        example = routable[0] if routable else ('<interface>', '<its address>')
        found.append(Finding('WARN', "this host's name %r resolves to %s (loopback only): in a %s launch gloo "
                                     "advertises it to the other nodes, whose ranks are refused at init "
                                     "(\"connect [%s]:N: Connection refused\")"
                             % (host.get('name'), ', '.join(host.get('addresses') or ()), launch,
                                (host.get('addresses') or ['127.0.1.1'])[0]),
                             'export GLOO_SOCKET_IFNAME=%s on every node (the interface the nodes reach each other '
                             'by), or make the host name resolve to its address (/etc/hosts: "%s %s")'
                             % (example[0], example[1], host.get('name'))))
    if launch == 'slurm' and not facts.get('scontrol') and not facts.get('master-addr'):
        found.append(Finding('WARN', 'scontrol is not on PATH: the Slurm init asks `scontrol show hostname '
                                     '$SLURM_NODELIST` for the master node and cannot start',
                             'set MASTER_ADDR (the first node\'s address) and PORT in the job, or make Slurm\'s '
                             'client commands available (in a container: mount them)'))
    return found
