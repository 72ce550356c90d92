"""Named presets: the published K-Radar scoring settings as rows of one table.

A preset bundles a protocol of ``protocols.PROTOCOLS`` with the region (xyz and azimuth of the box centres),
the classes, the label version it is defined on and the confidence thresholds, each read from the paper's
own configuration file (``sources``). Explicit options given beside a preset override it; :func:`apply` says
which. Numpy-free and import-light: ``kradar-eval --list-presets`` reads it alone.
"""
import collections

PRESET_FIELDS = ('name', 'title', 'protocol', 'pcd_limit_range', 'azimuth_range', 'classes', 'label_versions',
                 'score_thresholds', 'sources', 'note')

Preset = collections.namedtuple('Preset', PRESET_FIELDS)
Preset.__doc__ = ("One published setting: ``protocol`` name, ``pcd_limit_range`` (x_min, y_min, z_min, x_max, "
                  "y_max, z_max; m), ``azimuth_range`` (deg; (-180, 180): no limit), ``classes``, "
                  "``label_versions`` it is defined on (first: the one it uses), ``score_thresholds`` "
                  "(None: every detection), ``sources`` (repository @commit: file: what), ``note``.")

_V1_REGION = (0.0, -6.4, -2.0, 72.0, 6.4, 6.0)
_V2_REGION = (0.0, -16.0, -2.0, 72.0, 16.0, 7.6)
_NO_AZIMUTH_LIMIT = (-180.0, 180.0)

#: the table (read 2026-11-27 from the snapshots named in ``sources``)
PRESETS = collections.OrderedDict((p.name, p) for p in (
    Preset('kradar-v1', "K-Radar v1.0 benchmark (RTNH, K-Radar paper)", 'kradar', _V1_REGION, (-50.0, 50.0),
           ('Sedan',), ('v1.0',), (0.3,),
           ('kaist-avelab/K-Radar @97fe0a6: configs/cfg_RTNH.yml: KRadarDetection_v1_0 (info_label, v1.0), '
            'LABEL.MAX_AZIMUTH_DEGREE [-50, 50] on the centre, RDR_SP_CUBE.ROI x 0-72 y -6.4-6.4 z -2-6, '
            'VAL.LIST_CARE_VAL [Sedan] (Bus or Truck: CLASS_ID -1), VAL.LIST_VAL_CONF_THR [0.3], '
            'no is_validation_updated: utils/kitti_eval/eval.py',),
           'K-Radar #28/#36: the mixed 11/41 interpolation and z_center 1.0 of eval.py'),
    Preset('kradar-v2', "K-Radar v2.0 benchmark, RTNH-wide", 'revised', _V2_REGION, (-53.0, 53.0),
           ('Sedan', 'Bus or Truck'), ('v2.0', 'v2.1'), (0.3, 0.5, 0.7),
           ('kaist-avelab/K-Radar @97fe0a6: configs/cfg_RTNH_wide.yml: label_version v2_0, roi.xyz '
            '[0, -16, -2, 72, 16, 7.6], check_azimuth_for_rdr True with azimuth_deg [-53, 53] (the dataset '
            'applies it to the labels too), LIST_CARE_VAL [Sedan, Bus or Truck], LIST_VAL_CONF_THR '
            '[0.3, 0.5, 0.7], is_validation_updated True: eval_revised.py',),
           ''),
    Preset('asf', "K-Radar v2.0 benchmark as ASF reports it", 'revised', _V2_REGION, _NO_AZIMUTH_LIMIT,
           ('Sedan', 'Bus or Truck'), ('v2.0', 'v2.1'), (0.0, 0.3),
           ('kaist-avelab/K-Radar @97fe0a6: configs/ASF_v2_0_final.yml: label_version v2_0, roi.xyz '
            '[0, -16, -2, 72, 16, 7.6], check_azimuth_for_rdr False (azimuth_deg [-55, 55] unused), '
            'LIST_VAL_CONF_THR [0.0, 0.3], is_validation_updated True: eval_revised.py',
            'kaist-avelab/K-Radar @97fe0a6: main_cond_0_args.py: --conf_thr default [0.0] with '
            'ASF_v2_0_final.yml'),
           'differs from kradar-v2 by the azimuth limit (none) and the thresholds'),
    Preset('4drmr', "4DR-MR (2026)", '4drmr', _V2_REGION, (-53.0, 53.0), ('Sedan', 'Bus or Truck'),
           ('v2.0', 'v2.1'), (0.3, 0.5, 0.7),
           ('kaist-avelab/4DR-MR @e7aac90: utils/kitti_eval/eval.py: K-Radar eval.py with z_center=0.5',
            'kaist-avelab/4DR-MR @e7aac90: configs/cfg_RTNH_wide_CL_student.yml: label_version v2_0, roi.xyz '
            '[0, -16, -2, 72, 16, 7.6], check_azimuth_for_rdr True, azimuth_deg [-53, 53], LIST_CARE_VAL '
            '[Sedan, Bus or Truck]',
            'kaist-avelab/4DR-MR @e7aac90: main_cond_C_L.py: list_conf_thr [0.3, 0.5, 0.7]'),
           ''),
    Preset('l4dr', "L4DR", 'kradar', _V2_REGION, _NO_AZIMUTH_LIMIT, ('Sedan', 'Bus or Truck'), ('v2.1',),
           (0.1, 0.2, 0.3),
           ('ylwhxht/L4DR @926fece: K-Radar-main-repo/configs/cfg_PP_L4DR.yml: label_version v2_1, roi.xyz '
            '[0, -16, -2, 72, 16, 7.6], check_azimuth_for_rdr False (azimuth_deg [-180, 180]), LIST_CARE_VAL '
            '[Sedan, Bus or Truck], onlyR False',
            'ylwhxht/L4DR @926fece: K-Radar-main-repo/utils/kitti_eval/eval.py: identical to K-Radar eval.py',
            'ylwhxht/L4DR @926fece: K-Radar-main-repo/main_cond_0.py: list_conf_thr [0.1, 0.2, 0.3] (its '
            'config lists [0.3, 0.5, 0.7]; the paper reports 0.3)'),
           'the v2.1 labels (visibility flags) with onlyR off: the same boxes as v2.0'),
    Preset('echofusion', "EchoFusion", 'legacy', _V1_REGION, (-50.0, 50.0), ('Sedan',), ('v1.0',), None,
           ('tusen-ai/EchoFusion @445f6b2: projects/mmdet3d_plugin/datasets/kradar_dataset.py: CLASSES '
            '(Sedan,), pcd_limit_range [0, -6.4, -2, 72, 6.4, 6], azi_limit_range [-50, 50]; '
            'tools/kradar/create_data.py: v1.0 labels, sequences 1-20 (its ImageSets)',
            'tusen-ai/EchoFusion @445f6b2: .../utils/evaluate_kradar.py: Bus or Truck GT ignored for Sedan; '
            'no score threshold in the evaluator (the NMSFreeCoder keeps score > 0.3 before it)'),
           'EchoFusion evaluates sequences 1-20 only: give infos of those frames'),
))

PRESET_NAMES = tuple(PRESETS)

#: the evaluator settings a preset fixes, in the order they are reported
SETTINGS = ('protocol', 'pcd_limit_range', 'azimuth_range', 'classes', 'score_thresholds')


def get_preset(name):
    """The :class:`Preset` of ``name`` (a Preset passes through); ValueError naming the known ones."""
    if isinstance(name, Preset):
        return name
    if name not in PRESETS:
        raise ValueError('unknown preset {!r}; choose one of {} (kradar-eval --list-presets)'.format(
            name, list(PRESET_NAMES)))
    return PRESETS[name]


def _same(a, b):
    if isinstance(a, (list, tuple)) and len(a) == 1 and isinstance(b, str):   # ['4drmr'] is '4drmr'
        a = a[0]
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return float(a) == float(b)


def apply(preset, **given):
    """(settings, overridden): the preset's value of each of :data:`SETTINGS`, replaced by ``given`` values
    that are not None; ``overridden`` lists ``'name=value (preset: value)'`` for each given value that differs
    from the preset's."""
    preset = get_preset(preset)
    unknown = sorted(set(given) - set(SETTINGS))
    if unknown:
        raise ValueError('preset settings are {}, not {}'.format(SETTINGS, unknown))
    settings, overridden = {}, []
    for key in SETTINGS:
        mine = getattr(preset, key)
        value = given.get(key)
        if value is None:
            settings[key] = mine
            continue
        settings[key] = value
        if not _same(value, mine):
            overridden.append('{}={} (preset: {})'.format(key, _text(value), _text(mine)))
    return settings, overridden


def _text(value):
    if value is None:
        return 'every detection'
    if isinstance(value, (list, tuple)):
        return ' '.join(_text(v) for v in value)
    return '{:g}'.format(value) if isinstance(value, float) else str(value)


def label_warning(preset, versions, benchmark=None):
    """A one-line warning when the GT's recorded label ``versions`` (None: unknown) are not those the
    ``benchmark`` (``label_versions.benchmark_label_warning``) or else the preset (None: none) is defined on, or
    None. Only presets on the refined labels (v2.x) warn, as ``--benchmark v2`` does: v1.0 is what most
    pipelines hold, and unknown labels under a v1.0 preset are usually v1.0."""
    from .label_versions import HOW_TO, benchmark_label_warning, other_labels
    message = benchmark_label_warning(benchmark, versions)
    if message is not None or preset is None:
        return message
    preset = get_preset(preset)
    named = other_labels(versions, preset.label_versions)
    if named is None or not any(v.startswith('v2') for v in preset.label_versions):
        return None
    return ('preset {} is defined on K-Radar\'s {} labels, but these labels are {}: the numbers are not {} '
            'numbers; {}'.format(preset.name, '/'.join(preset.label_versions), named, preset.title,
                                 HOW_TO.replace('v2.0', preset.label_versions[0])))


def describe(preset):
    """A few lines: what the preset fixes and where each value was read."""
    p = get_preset(preset)
    r = p.pcd_limit_range
    lines = ['{}: {}'.format(p.name, p.title),
             '  protocol {}; classes {}; labels {}; confidence {}'.format(
                 p.protocol, ', '.join(p.classes), ' or '.join(p.label_versions),
                 'every detection' if p.score_thresholds is None else
                 ', '.join('> {:g}'.format(t) for t in p.score_thresholds)),
             '  region x {:g}..{:g}, y {:g}..{:g}, z {:g}..{:g} m; azimuth {}'.format(
                 r[0], r[3], r[1], r[4], r[2], r[5], azimuth_text(p.azimuth_range))]
    lines += ['  source: {}'.format(s) for s in p.sources]
    if p.note:
        lines.append('  note: {}'.format(p.note))
    return '\n'.join(lines)


def azimuth_text(azimuth_range):
    """``'-50..50 deg'``, or ``'no limit'`` for (-180, 180) or None."""
    if azimuth_range is None or (float(azimuth_range[0]) <= -180 and float(azimuth_range[1]) >= 180):
        return 'no limit'
    return '{:g}..{:g} deg'.format(float(azimuth_range[0]), float(azimuth_range[1]))


def list_text():
    """``kradar-eval --list-presets``: every preset, described."""
    return '\n\n'.join(describe(name) for name in PRESET_NAMES) + '\n'
