"""Which K-Radar label version an evaluation's GT is, and the warning when a benchmark is defined on other
labels: the v2.0 benchmark (``benchmark='v2'``) is defined on K-Radar's refined v2.0 labels, so its region and
classes applied to v1.0 labels (EchoFusion's infos) give numbers that look like v2.0-benchmark numbers and are
not. Infos made by ``kradar-create-data`` (or relabelled) record ``label_version``; others are unknown."""

class LabelVersionWarning(UserWarning):
    """A benchmark evaluated on labels it is not defined on."""


#: the label versions each benchmark is defined on (v2.1 is v2.0 with visibility flags)
BENCHMARK_LABELS = {'v1': ('v1.0', 'v1.1'), 'v2': ('v2.0', 'v2.1')}
HOW_TO = ("get them with `kradar-create-data --label-version v2.0 --labels-dir <unzipped K-Radar "
          "tools/revise_label/kradar_revised_label_v2_0.zip>` or score saved predictions against them with "
          "`kradar-eval --infos I --results R --kradar-root ROOT --label-version v2.0 --labels-dir D`")


def label_versions(infos):
    """The sorted label versions the infos record (None for frames that record none)."""
    seen = set(info.get('label_version') if isinstance(info, dict) else None for info in infos)
    return sorted(seen, key=lambda v: (v is None, v or ''))


def other_labels(versions, wanted):
    """The recorded ``versions`` as text ('unknown version' for None) when one is not in ``wanted``, else None."""
    versions = list(versions) or [None]
    if all(v in wanted for v in versions):
        return None
    return ', '.join('unknown version' if v is None else v for v in versions)


def benchmark_label_warning(benchmark, versions):
    """The one-line warning for ``benchmark`` on labels of ``versions``, or None when they fit. Only the v2
    benchmark warns: v1.0 labels are the v1 benchmark's and what most pipelines hold."""
    named = other_labels(versions, BENCHMARK_LABELS['v2']) if benchmark == 'v2' else None
    if named is None:
        return None
    return ('--benchmark v2 is defined on K-Radar\'s v2.0 labels, but these labels are {}: the numbers are not '
            'v2.0-benchmark numbers; {}'.format(named, HOW_TO))
