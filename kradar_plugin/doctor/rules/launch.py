"""Rules of launching a distributed job: the train script's --local-rank spelling (``local-rank``) and the
process-group timeout against a rank-0 evaluation (``dist-timeout``)."""
from ... import facts as F
from ...facts.versions import parse_version
from ..result import CheckResult, skip


def local_rank(facts):
    script = facts.get('script-facts')
    if not script:
        return skip('local-rank', 'no --train-script given')
    torch_v = parse_version(facts.get('torch'))
    if torch_v is None:
        return skip('local-rank', 'torch not installed')
    declares = set(script['declares'])
    passed = '--local-rank' if torch_v >= F.TORCH_LOCAL_RANK_DASH else '--local_rank'
    if passed in declares or script['known-args']:
        return []
    name = script['script']
    if declares:
        return [CheckResult('local-rank', 'FAIL',
                            "%s declares only %s but torch %s's torch.distributed.launch passes %s=N: "
                            "\"unrecognized arguments\" (exit code 2)"
                            % (name, '/'.join(sorted(declares)), facts['torch'], passed),
                            "in %s: parser.add_argument('--local_rank', '--local-rank', type=int, default=0) "
                            "(or launch with torchrun)" % name)]
    if script['reads-env']:
        return [CheckResult('local-rank', 'WARN',
                            '%s reads LOCAL_RANK but declares no %s: works with torchrun only, not with '
                            'python -m torch.distributed.launch' % (name, passed),
                            "launch with torchrun, or add parser.add_argument('--local_rank', '--local-rank', "
                            "type=int, default=0)")]
    return [CheckResult('local-rank', 'WARN',
                        '%s neither declares %s nor reads LOCAL_RANK' % (name, passed),
                        "add parser.add_argument('--local_rank', '--local-rank', type=int, default=0) and pass it "
                        "to init_dist, or read os.environ['LOCAL_RANK']")]


def dist_timeout(facts):
    invalid = facts.get('dist-timeout-invalid')
    if invalid:
        return [CheckResult('dist-timeout', 'FAIL',
                            'dist_params timeout=%s is neither seconds nor a timedelta '
                            '(init_process_group raises)' % invalid,
                            'dist_params = dict(backend=\'nccl\', timeout=5400)  # seconds')]
    timeout = facts.get('dist-timeout')
    eval_minutes = facts.get('eval-minutes')
    if timeout is None and eval_minutes is None:
        if facts.get('config'):
            return [] if not facts.get('evaluation') else \
                skip('dist-timeout',
                     'default %d min timeout; give --assume eval-minutes=N to compare a long evaluation'
                     % (F.DEFAULT_PG_TIMEOUT_S // 60))
        return skip('dist-timeout',
                    'no --config (default process-group timeout %d min)' % (F.DEFAULT_PG_TIMEOUT_S // 60))
    timeout = F.DEFAULT_PG_TIMEOUT_S if timeout is None else timeout
    if eval_minutes is None:
        return []
    eval_s = eval_minutes * 60.0
    fix = "dist_params = dict(backend='nccl', timeout=%d)  # seconds, > evaluation time" % int(max(2 * eval_s, 3600))
    if eval_s >= timeout:
        return [CheckResult('dist-timeout', 'FAIL',
                            'evaluation (%g min, rank 0 only) outlasts the process-group timeout (%g min): '
                            'the other ranks hit "Watchdog caught collective operation timeout"'
                            % (eval_minutes, timeout / 60.0), fix)]
    if eval_s >= 0.8 * timeout:
        return [CheckResult('dist-timeout', 'WARN',
                            'evaluation (%g min) is close to the process-group timeout (%g min)'
                            % (eval_minutes, timeout / 60.0), fix)]
    return []
