"""Static facts about a training script's distributed launch handling (parsed, never executed).

torch.distributed.launch passes ``--local-rank=N`` from torch 2.0 on and ``--local_rank=N`` before; torchrun
passes neither and sets LOCAL_RANK. A script must accept the spelling its launcher passes.
"""
import ast
import io

LOCAL_RANK_OPTIONS = ('--local_rank', '--local-rank')


def _strings(node):
    """The string constants in ``node`` (ast.Str on Python 3.7, ast.Constant later)."""
    return [n.s if n.__class__.__name__ == 'Str' else n.value for n in ast.walk(node)
            if n.__class__.__name__ == 'Str' or (isinstance(n, ast.Constant) and isinstance(n.value, str))]


def script_facts(path):
    """{'declares': sorted option strings, 'reads-env': bool, 'known-args': bool,
    'sharing-strategy': value passed to set_sharing_strategy or None, 'sets-start-method': whether it sets
    the multiprocessing start method (mmdet's setup_multi_processes or set_start_method; otherwise mmcv's
    init_dist sets 'spawn' in a distributed run), 'script': path}.

    ValueError names the file when it cannot be read or parsed."""
    try:
        with io.open(path, encoding='utf-8') as f:
            source = f.read()
        tree = ast.parse(source, filename=path)
    except (OSError, IOError) as e:
        raise ValueError('--train-script: cannot read %r: %s' % (path, e))
    except SyntaxError as e:
        raise ValueError('--train-script: %s does not parse as Python (line %s): %s' % (path, e.lineno, e.msg))
    declares, reads_env, known_args, strategy, start_method = set(), False, False, None, False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, 'attr', None) or getattr(node.func, 'id', None)
            if name == 'add_argument':
                for arg in node.args:
                    for s in _strings(arg):
                        if s in LOCAL_RANK_OPTIONS:
                            declares.add(s)
            elif name == 'parse_known_args':
                known_args = True
            elif name in ('setup_multi_processes', 'set_start_method'):
                start_method = True
            elif name == 'set_sharing_strategy' and node.args:
                values = _strings(node.args[0])
                strategy = values[0] if values else strategy
        for s in _strings(node) if isinstance(node, (ast.Subscript, ast.Call)) else ():
            if s == 'LOCAL_RANK':
                reads_env = True
    return {'script': path, 'declares': sorted(declares), 'reads-env': reads_env, 'known-args': known_args,
            'sharing-strategy': strategy, 'sets-start-method': start_method}
