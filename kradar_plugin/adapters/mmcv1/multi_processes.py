"""``setup_multi_processes(cfg)`` for mmdet < 2.20 (EchoFusion's mmdet 2.19 has none).

The same settings as mmdet's own function, so that ``tools/train.py`` behaves alike on every mmdet 2.x:
the DataLoader workers' start method (``cfg.mp_start_method``, default ``fork``), OpenCV's thread count
(``cfg.opencv_num_threads``, default 0) and, with several workers per process, one OMP/MKL thread each
unless the user set them.
"""
import os
import platform
import warnings


def setup_multi_processes(cfg):
    """Apply the config's multi-process settings (a no-op for keys the config leaves out)."""
    import multiprocessing as mp
    if platform.system() != 'Windows':
        method = cfg.get('mp_start_method', 'fork')
        current = mp.get_start_method(allow_none=True)
        if current is not None and current != method:
            warnings.warn('Multi-processing start method {!r} differs from the previous setting {!r}; it '
                          'is forced to {!r}. Set `mp_start_method` in the config to change it.'.format(
                              method, current, method))
        mp.set_start_method(method, force=True)
    try:
        import cv2
        cv2.setNumThreads(cfg.get('opencv_num_threads', 0))
    except ImportError:
        pass
    workers = cfg.get('data', {}).get('workers_per_gpu', 1)
    if workers > 1:
        for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
            if var not in os.environ:
                warnings.warn('Setting {} to 1 for each process to avoid overloading the system; tune it '
                              'for your application.'.format(var))
                os.environ[var] = '1'
