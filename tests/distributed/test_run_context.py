"""The run context (one per run, reached through run_context.current()) and failure notes that travel with
the exception (PEP 678 ``__notes__``, also on Python < 3.11)."""
from kradar_plugin.distributed import failfast, run_context


def test_one_context_per_run_and_an_empty_one_outside():
    first = run_context.start()
    assert run_context.current() is first
    first.saved_results = '/tmp/x.pkl'
    assert first.take_saved_results() == '/tmp/x.pkl' and first.take_saved_results() is None
    second = run_context.start()
    assert run_context.current() is second and second is not first
    assert (second.checkpoint_meta, second.checkpoint_report, second.checkpoint_ema, second.saved_results,
            second.checked_loading) == (None, None, {}, None, False)


def test_notes_travel_with_the_exception_and_are_printed_once():
    try:
        try:
            raise RuntimeError('planted')
        except RuntimeError as exc:
            failfast.add_note(exc, 'predictions saved in /tmp/p.pkl')
            failfast.add_note(exc, 'kradar-eval --results /tmp/p.pkl')
            raise
    except RuntimeError as exc:
        assert failfast.notes_text(exc) == 'predictions saved in /tmp/p.pkl\nkradar-eval --results /tmp/p.pkl'
        text = failfast._format_exc_with_notes(exc)
        notes = getattr(exc, '__notes__', None)
    assert text.count('predictions saved in /tmp/p.pkl') == 1, text   # Python >= 3.11 prints notes itself
    assert text.index('RuntimeError: planted') < text.index('kradar-eval --results /tmp/p.pkl')
    assert failfast.notes_text(ValueError('no notes')) == ''
    assert isinstance(notes, list) and len(notes) == 2   # the PEP 678 attribute on every Python


def test_one_process_failure_shows_its_note_once():
    """An uncaught failure of a guarded one-process evaluation: the note appears once on stderr, whether the
    interpreter prints notes itself (>= 3.11) or the guard does."""
    import os
    import subprocess
    import sys
    import textwrap
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = textwrap.dedent('''
        from kradar_plugin.distributed.eval_support import fail_fast
        from kradar_plugin.distributed.failfast import add_note

        def evaluate():
            try:
                raise RuntimeError('planted')
            except RuntimeError as exc:
                add_note(exc, 'predictions saved in /tmp/p.pkl')
                raise

        fail_fast(evaluate, 'evaluation')()
    ''')
    proc = subprocess.run([sys.executable, '-c', code], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600)
    assert proc.returncode == 1 and 'RuntimeError: planted' in proc.stderr, proc.stderr
    assert proc.stderr.count('predictions saved in /tmp/p.pkl') == 1, proc.stderr
