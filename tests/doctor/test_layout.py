"""The doctor's layout: one module per check family, every relative import (the lazy ones inside functions
too) resolvable; and the rules and version facts importable without torch or mmcv."""
import ast
import glob
import importlib
import os
import subprocess
import sys
import textwrap

import kradar_plugin

PACKAGE = os.path.dirname(os.path.abspath(kradar_plugin.__file__))
ROOT = os.path.dirname(PACKAGE)
TREES = ('doctor', 'facts')


def modules():
    for tree in TREES:
        for path in sorted(glob.glob(os.path.join(PACKAGE, tree, '**', '*.py'), recursive=True)):
            yield path


def module_name(path):
    rel = os.path.relpath(path, ROOT)[:-len('.py')].split(os.sep)
    return '.'.join(rel[:-1] if rel[-1] == '__init__' else rel)


def test_every_relative_import_resolves():
    """Also the imports inside functions (torch-dependent helpers import lazily), which importing the
    package does not run."""
    checked = 0
    for path in modules():
        name = module_name(path)
        package = name if path.endswith('__init__.py') else name.rsplit('.', 1)[0]
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.ImportFrom) and node.level:
                target = importlib.util.resolve_name('.' * node.level + (node.module or ''), package)
                spec = importlib.util.find_spec(target)
                assert spec is not None, (path, node.lineno, target)
                for alias in node.names if node.module else ():
                    module = importlib.import_module(target)
                    assert hasattr(module, alias.name) or importlib.util.find_spec(
                        target + '.' + alias.name) is not None, (path, node.lineno, target, alias.name)
                checked += 1
    assert checked > 50


def test_rules_facts_and_probes_import_without_the_frameworks():
    code = textwrap.dedent('''
        import sys
        BLOCKED = ('torch', 'mmcv', 'mmdet', 'mmdet3d', 'mmengine', 'numba')
        class Block(object):
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in BLOCKED:
                    raise ImportError('blocked: ' + name)
        sys.meta_path.insert(0, Block())
        from kradar_plugin import facts
        from kradar_plugin.doctor import checks, pitfalls, probes, rules, report, fact_names
        print(len(checks.evaluate(checks.collect_facts(quick=True))) > 20)
    ''')
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, '-c', code], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ['True']
