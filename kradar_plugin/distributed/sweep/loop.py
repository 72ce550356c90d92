"""The checkpoint sweep's loop, the same for every runner: take the checkpoints of the plan in order, have
the adapter load and evaluate each one on every rank, keep the record, and write the summary.

An adapter (mmcv 1.x ``EvalOnlyHook``, mmengine's eval-only loop) calls ``CheckpointSweep(request, work_dir,
logger).run(load, evaluate)`` on EVERY rank, after it built the runner, model, DDP wrapper and loaders once:

- ``load(path)`` loads the checkpoint into the model (the checked loading: report, refusal) and returns a
  dict ``epoch`` (from the checkpoint's meta, or None) and ``loaded_fraction``; it raises when the file
  cannot be loaded;
- ``evaluate(path, epoch, tag)`` runs the real distributed evaluation, with the predictions saved as
  ``results_<tag>.pkl`` first, and returns ``(metrics, error)`` -- on rank 0 the metric dict (or the error
  text of a failed ``dataset.evaluate``), on the other ranks ``({}, None)``.

Every rank takes the same decisions: rank 0 lists (or watches) the checkpoints and broadcasts each one; a load
counts as failed when it failed on any rank (all ranks skip that checkpoint); rank 0 broadcasts the outcome of each
evaluation. A failure is recorded and the sweep goes on unless ``stop_on_error``; in a multi-process job a failure
inside inference or result collection ends the job at once (the evaluation guard), ``sweep.json`` keeping the
finished checkpoints. torch is imported only inside the functions that need the process group.
"""
import os.path as osp
import time
import traceback

from . import plan as sweep_plan
from ..eval_support import broadcast, dist_info, gather
from ..failfast import notes_text, rank_tag
from .plot import PLOT_FILE, plot_sweep
from .record import SWEEP_FILE, SweepRecord
from .summary import best_line, failure_lines, headline_keys, summarize, table


def error_text(exc):
    """``Type: message`` and the notes the guards attached (what to do with the saved predictions)."""
    text = '{}: {}'.format(type(exc).__name__, exc)
    notes = notes_text(exc)
    return text + ('\n' + notes if notes else '')


class CheckpointSweep(object):
    """One sweep (see the module docstring); ``outcome`` after :meth:`run`: (evaluated, failed) counts,
    the same on every rank."""

    def __init__(self, request, work_dir, logger=None, sleep=time.sleep, clock=time.time, resume=False,
                 evaluation=None):
        self.request, self.work_dir, self.logger = request, work_dir or '.', logger
        self.sleep, self.clock = sleep, clock
        # resume: a relaunched list skips the checkpoints sweep.json holds as evaluated (same file, same
        # ``evaluation``: datasets and pipelines, JSON-able); a half-done one continues from its partial record
        self.resume, self.evaluation = bool(resume), evaluation
        self.rank = dist_info()[0]
        path = osp.join(self.work_dir, SWEEP_FILE)
        # a watcher keeps its record across restarts; a list of checkpoints starts a new one
        self.record = SweepRecord.load(path) if ((request.watch or resume) and self.rank == 0) else SweepRecord(path)
        self.outcome = self.summary = self.stopped_early = None

    def info(self, text):
        if self.rank != 0:
            return
        if self.logger is not None:
            self.logger.info(text)
        else:
            print(text)

    def run(self, load, evaluate):
        """The whole sweep; returns the record (complete on rank 0)."""
        if self.request.watch:
            self._watch(load, evaluate)
        else:
            paths = broadcast(_planned(self.request.checkpoints) if self.rank == 0 else None)
            if isinstance(paths, str):  # every rank stops with rank 0's reason (no rank left in a collective)
                raise ValueError(paths)
            self.info('kradar_plugin sweep: {} checkpoint(s) in epoch order: {}'.format(
                len(paths), ', '.join(osp.basename(p) for p in paths)))
            if self.rank == 0 and self.resume:
                self.record.keep([osp.abspath(p) for p in paths] + list(paths))
            for number, path in enumerate(paths, 1):
                if broadcast(self.finished(path) if self.rank == 0 else None):
                    self.info('kradar_plugin sweep [{}/{}]: {} already evaluated (in {}): skipped'.format(
                        number, len(paths), sweep_plan.stem(path), self.record.path))
                    continue
                if not self.one(path, '{}/{}'.format(number, len(paths)), load, evaluate):
                    self.stopped_early = 'stopped at the first failure (stop_on_error)'
                    break
        self.finish()
        return self.record

    def finished(self, path, state=None):
        """Whether the record holds ``path`` as evaluated, by this evaluation (resume only; rank 0)."""
        state = state or sweep_plan.file_state(path)
        return self.resume and state is not None and self.record.is_done(path, state, self.evaluation)

    def _watch(self, load, evaluate):
        watcher = None
        if self.rank == 0:
            watcher = sweep_plan.Watcher(self.request.watch, self.request.watch_idle_s, self.request.final_epoch,
                                         done=lambda path, state: self.record.is_done(path, state, self.evaluation),
                                         clock=self.clock, settle_s=self.request.watch_poll_s)
            skipped = len(self.record.ok)
            self.info('kradar_plugin sweep: watching {} (every {:.0f} s; stop after {:.0f} s idle{}){}'.format(
                self.request.watch, self.request.watch_poll_s, self.request.watch_idle_s,
                '' if self.request.final_epoch is None else ' or at epoch {}'.format(self.request.final_epoch),
                '; {} checkpoint(s) already evaluated in {}'.format(skipped, self.record.path) if skipped else ''))
        number = 0
        while True:
            decision = broadcast(watcher.next_due() if self.rank == 0 else None)
            if decision[0] == 'stop':
                self.info('kradar_plugin sweep: stopped watching: {}'.format(decision[1]))
                return
            if decision[0] == 'wait':
                self.sleep(self.request.watch_poll_s)
                continue
            number += 1
            ok = self.one(decision[1], 'watch #{}'.format(number), load, evaluate)
            if watcher is not None:
                watcher.mark_done(decision[1])
            if not ok:
                self.stopped_early = 'stopped at the first failure (stop_on_error)'
                return

    def one(self, path, position, load, evaluate):
        """Load and evaluate one checkpoint on every rank; record it. False: stop the sweep."""
        start = time.time()
        state = sweep_plan.file_state(path)
        tag = sweep_plan.stem(path)
        epoch = sweep_plan.checkpoint_epoch(path)
        self.info('kradar_plugin sweep [{}]: loading {}'.format(position, path))
        loaded, error = None, None
        try:
            loaded = load(path) or {}
        except Exception as exc:
            error = '{} {}'.format(rank_tag(), error_text(exc))
        errors = [e for e in gather(error) if e]
        if errors:
            self._record(path, 'failed', epoch, state, stage='load', error=errors[0], seconds=time.time() - start)
            self.info('kradar_plugin sweep [{}]: {} not evaluated: could not load it: {}'.format(
                position, tag, errors[0]))
            return not self.request.stop_on_error
        if epoch is None:
            epoch = loaded.get('epoch')
        metrics, eval_error = {}, None
        try:
            metrics, eval_error = evaluate(path, epoch, tag)
        except Exception as exc:  # one process only: a multi-process failure here ends the job (fail-fast)
            eval_error = error_text(exc)
            if self.rank == 0:
                traceback.print_exc()
        eval_error, metrics = broadcast((eval_error, metrics) if self.rank == 0 else None)
        results = osp.join(osp.abspath(self.work_dir), 'eval_results', 'results_{}.pkl'.format(tag))
        entry = self._record(path, 'failed' if eval_error else 'ok', epoch, state, metrics=metrics,
                             stage='evaluate' if eval_error else None, error=eval_error,
                             results_file=results if osp.isfile(results) else None,
                             loaded_fraction=loaded.get('loaded_fraction'), seconds=time.time() - start)
        if eval_error:
            self.info('kradar_plugin sweep [{}]: {} failed to evaluate: {}'.format(position, tag, eval_error))
            return not self.request.stop_on_error
        heads = headline_keys(entry['metrics'])
        self.info('kradar_plugin sweep [{}]: {} (epoch {}) evaluated in {:.1f} s: {}'.format(
            position, tag, epoch, entry['seconds'],
            ', '.join('{} {:.4f}'.format(name, entry['metrics'][key]) for name, key in heads.items())))
        return True

    def _record(self, path, status, epoch, state, **fields):
        entry = self.record.add(path, status, epoch=epoch, state=state, evaluation=self.evaluation, **fields)
        if self.rank == 0:
            self.record.save(request=self.request.as_dict())
        return entry

    def finish(self):
        """The summary: the table in the log, sweep.json, the plot; ``outcome`` on every rank."""
        if self.rank == 0:
            entries = self.record.entries
            self.summary = summarize(entries, self.request.eval_key)
            lines = ['kradar_plugin sweep: {} checkpoint(s), {} failed{}'.format(
                len(entries), len(self.record.failed), '; ' + self.stopped_early if self.stopped_early else '')]
            if entries:
                lines.append(table(entries, self.summary))
            lines.append(best_line(self.summary))
            lines += failure_lines(entries)
            plot, why = None, None
            try:
                plot, why = plot_sweep(entries, self.summary, osp.join(self.work_dir, PLOT_FILE))
            except Exception as exc:  # a plot must never fail the sweep
                why = error_text(exc)
            self.summary['plot'] = plot
            lines.append('plot: {}'.format(plot) if plot else 'plot not written: {}'.format(why))
            lines.append('record: {}'.format(self.record.save(self.summary, self.request.as_dict())))
            self.info('\n'.join(lines))
        counts = (len(self.record.entries), len(self.record.failed)) if self.rank == 0 else None
        self.outcome = broadcast(counts)
        return self.outcome

    @property
    def all_succeeded(self):
        return self.outcome is not None and self.outcome[0] > 0 and self.outcome[1] == 0

    def exit_message(self):
        """None when every checkpoint succeeded, else the one-line reason for a non-zero exit."""
        if self.all_succeeded:
            return None
        evaluated, failed = self.outcome or (0, 0)
        if evaluated == 0:
            return 'kradar_plugin sweep: no checkpoint was evaluated'
        return 'kradar_plugin sweep: {} of {} checkpoint(s) failed (see {})'.format(
            failed, evaluated, osp.join(self.work_dir, SWEEP_FILE))


def _planned(specs):
    """The checkpoint list, or the text of the error that prevents one (sent to every rank)."""
    try:
        return sweep_plan.expand(specs)
    except ValueError as exc:
        return 'kradar_plugin sweep: {}'.format(exc)
