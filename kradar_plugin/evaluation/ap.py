"""Average precision from matching counts: KITTI's 41 score thresholds, the 11-of-41 and all-41
averages of the legacy/revised K-Radar evaluators, and an exact 40-recall-position (R40) average."""
import numpy as np


N_SAMPLE_PTS = 41


def get_thresholds(tp_scores, num_gt, num_sample_pts=N_SAMPLE_PTS):
    """KITTI's score thresholds (descending): walking the TP scores from the highest, keep a score each
    time the recall it reaches is nearest to the next of ``num_sample_pts`` evenly spaced recall values.

    With fewer GT boxes than sample points there are fewer thresholds than points, which is why
    index-based averages undercount small sets (K-Radar #28).

    The legacy loop skips score ``i`` while ``(r_i - c) < (c - l_i)`` (``l_i = (i + 1) / num_gt``,
    ``r_i = (i + 2) / num_gt``, the last score never skipped) and adds ``1 / (num_sample_pts - 1)`` to
    ``c`` at each kept score. Here each kept score is found by evaluating that same float64 test on a
    window of the scores after the previous one: the same thresholds, without a Python loop per score.
    """
    scores = np.sort(np.asarray(tp_scores, dtype=np.float64))[::-1]
    n = scores.shape[0]
    if n == 0 or num_gt <= 0:
        return np.zeros(0, dtype=np.float64)
    index = np.arange(n, dtype=np.int64)
    left = (index + 1) / int(num_gt)
    right = (index + 2) / int(num_gt)
    right[n - 1] = left[n - 1]
    step = 1 / (num_sample_pts - 1.0)
    kept = []
    current = 0.0
    start = 0
    window = max(64, n // (num_sample_pts - 1) + 2)
    while start < n:
        stop = min(n, start + window)
        skip = (right[start:stop] - current) < (current - left[start:stop])
        if stop == n:
            skip[-1] = False
        found = np.flatnonzero(~skip)
        if len(found) == 0:
            start = stop
            continue
        start += int(found[0])
        kept.append(start)
        current += step
        start += 1
    return scores[kept]


def ratios(numerator, denominator):
    """numerator / denominator elementwise as float64, 0 where the denominator is 0 (never nan)."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(num.shape, dtype=np.float64)
    ok = den != 0
    out[ok] = num[ok] / den[ok]
    return out


def precision_at_sample_points(precision_per_threshold, num_points=N_SAMPLE_PTS):
    """The legacy 41-entry precision array: entry i is the precision at the i-th threshold, then every
    entry takes the maximum of itself and the entries after it."""
    prec = np.zeros(num_points, dtype=np.float64)
    n = min(len(precision_per_threshold), num_points)
    prec[:n] = np.asarray(precision_per_threshold, dtype=np.float64)[:n]
    return np.maximum.accumulate(prec[::-1])[::-1].copy()


def _sequential_sum(values):
    total = 0.0
    for v in values:
        total = total + float(v)
    return total


def ap_11_of_41(prec41):
    """Legacy K-Radar/EchoFusion average: entries 0, 4, ..., 40 of the 41-point array, / 11, in %."""
    return _sequential_sum(prec41[0::4]) / 11 * 100


def ap_all_41(prec41):
    """K-Radar eval_revised average: all 41 entries (recall 0 included) / 41, in %."""
    return _sequential_sum(prec41) / 41 * 100


def interpolated_precision(recall, precision, positions):
    """max{precision_t : recall_t >= r} for each recall position r (0 where no threshold reaches r)."""
    recall = np.asarray(recall, dtype=np.float64)
    precision = np.asarray(precision, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    if recall.shape[0] == 0:
        return np.zeros(positions.shape[0], dtype=np.float64)
    if np.all(recall[1:] >= recall[:-1]):      # the usual case: recall grows as the threshold falls
        rec_sorted, prec_sorted = recall, precision
    else:
        order = np.argsort(recall, kind='mergesort')
        rec_sorted, prec_sorted = recall[order], precision[order]
    best_after = np.maximum.accumulate(prec_sorted[::-1])[::-1]
    idx = np.searchsorted(rec_sorted, positions, side='left')
    out = np.zeros(positions.shape[0], dtype=np.float64)
    ok = idx < rec_sorted.shape[0]
    out[ok] = best_after[idx[ok]]
    return out


CURVE_POSITIONS = np.arange(0, 41, dtype=np.float64) / 40.0


def r40_from_curve(curve_precision):
    """R40 from the interpolated precision at ``CURVE_POSITIONS`` (0, 1/40, ..., 1): entries 1..40."""
    return _sequential_sum(curve_precision[1:]) / 40 * 100


def curve_ap(interpolation, recall, precision, orientation, envelope, compute_aos):
    """(AP, AOS or None, curve recall, curve precision) of one precision-recall curve under a protocol's
    ``interpolation``: ``r40`` reads the interpolated precision at ``CURVE_POSITIONS`` (``envelope`` =
    (precision, orientation) there when the caller has it exactly, else None), ``11of41`` / ``all41``
    average the legacy 41-entry array (whose entries the legacy evaluators plot against i / 40)."""
    aos = None
    if interpolation == 'r40':
        if envelope is None:
            envelope = (interpolated_precision(recall, precision, CURVE_POSITIONS),
                        interpolated_precision(recall, orientation, CURVE_POSITIONS))
        value = r40_from_curve(envelope[0])
        if compute_aos:
            aos = r40_from_curve(envelope[1])
        return value, aos, CURVE_POSITIONS, envelope[0]
    average = ap_11_of_41 if interpolation == '11of41' else ap_all_41
    prec41 = precision_at_sample_points(precision)
    if compute_aos:
        aos = average(precision_at_sample_points(orientation))
    return average(prec41), aos, CURVE_POSITIONS, prec41
