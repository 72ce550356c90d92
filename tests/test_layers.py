"""The package's import graph, read from the source: the core (ops, evaluation, distributed, files, loading)
imports only the core and the foundation below it (settings, progress, the version facts), also inside
functions; the foundation imports nothing above itself; and no two modules import each other, directly or
through others, at module level or inside functions; and no module over 450 lines."""
import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, 'kradar_plugin')
CORE = ('kradar_plugin.ops', 'kradar_plugin.evaluation', 'kradar_plugin.distributed', 'kradar_plugin.files',
        'kradar_plugin.loading')
FOUNDATION = ('kradar_plugin.settings', 'kradar_plugin.runner_options', 'kradar_plugin.version',
              'kradar_plugin.progress', 'kradar_plugin.facts')


def _within(name, prefixes):
    return any(name == p or name.startswith(p + '.') for p in prefixes)


def _modules():
    for base, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(base, name)
                dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, '.')
                is_package = name == '__init__.py'
                yield (dotted[:-len('.__init__')] if is_package else dotted), is_package, path


def _imports(module, is_package, path):
    """[(imported kradar_plugin module or name, at module level?)]"""
    package = module if is_package else module.rsplit('.', 1)[0]
    with open(path) as f:
        tree = ast.parse(f.read())
    top = set(id(n) for n in tree.body)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = package.split('.')
                base = '.'.join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            names = [base + '.' + a.name for a in node.names]   # a submodule, or a name in ``base``
        else:
            continue
        out.extend((n, id(node) in top) for n in names if n.startswith('kradar_plugin'))
    return out


def test_core_imports_nothing_above_it():
    bad = []
    for module, is_package, path in _modules():
        if _within(module, CORE) or _within(module, FOUNDATION):
            allowed = FOUNDATION if _within(module, FOUNDATION) else CORE + FOUNDATION
            bad += ['{} -> {}'.format(module, n) for n, _ in _imports(module, is_package, path)
                    if not _within(n, allowed) and n != 'kradar_plugin']
    assert bad == []


def _cycles(lazy_too):
    modules = {m: (p, path) for m, p, path in _modules()}

    def resolve(name):   # 'pkg.mod.NAME' -> the module that defines it
        while name and name not in modules:
            name = name.rsplit('.', 1)[0] if '.' in name else ''
        return name

    graph = {}
    for module, (is_package, path) in modules.items():
        targets = set()
        for name, top in _imports(module, is_package, path):
            target = resolve(name)
            # a submodule reading its own package's __init__ is how packages work, not a cycle
            if (top or lazy_too) and target and target != module and not module.startswith(target + '.'):
                targets.add(target)
        graph[module] = targets
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return cycles


def test_no_import_cycle_at_module_level():
    assert _cycles(lazy_too=False) == []


def test_no_import_cycle_inside_functions_either():
    """A lazy import that closes a circle is still a circle: the two modules are one concept split in two."""
    assert _cycles(lazy_too=True) == []


def test_no_module_over_450_lines():
    """The cap holds for the whole package, not only the doctor: a module past it holds two concepts."""
    paths = glob.glob(os.path.join(PACKAGE, '**', '*.py'), recursive=True)
    sizes = dict((os.path.relpath(p, ROOT), sum(1 for _ in open(p))) for p in paths)
    assert len(sizes) > 150
    assert dict((p, n) for p, n in sizes.items() if n > 450) == {}
