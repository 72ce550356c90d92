"""The checkpoint report on real modules and real files: wrapper prefixes at any depth (a DataParallel around
a submodule, DDP-style nesting), nested entries, truncated and corrupted files, a renamed head, shape
mismatches, the threshold and its settings. Everything is loaded through mmcv's own load_state_dict."""
import json
import logging
import os
from collections import OrderedDict

import pytest
import torch
import torch.nn as nn

from kradar_plugin.distributed import checkpoint_report as cr
from kradar_plugin.adapters.mmcv1.checkpoint_loading import load_checked

from .fixture_components import ToyRegressor
from .fixture_pitfalls import ToyTwoHeadRegressor


class ListHandler(logging.Handler):
    def __init__(self):
        super(ListHandler, self).__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


def make_logger(name):
    logger = logging.getLogger('kradar_test_ckpt_' + name)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = ListHandler()
    logger.handlers = [handler]
    return logger, handler


def trained(model_cls=ToyRegressor, seed=0):
    torch.manual_seed(seed)
    model = model_cls()
    for p in model.parameters():
        p.data.normal_()
    return model


def same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_nested_entries_and_module_prefix_repaired_with_one_warning(tmp_path):
    source = trained()
    wrapped = OrderedDict(('module.' + k, v) for k, v in source.state_dict().items())
    path = tmp_path / 'nested.pth'
    torch.save({'meta': {'epoch': 3}, 'model': {'state_dict': wrapped}}, str(path))
    target = ToyRegressor()
    logger, handler = make_logger('nested')
    checkpoint, report, _ = load_checked(target, str(path), logger=logger, work_dir=str(tmp_path / 'wd'))
    assert same_weights(source, target)
    assert checkpoint['meta'] == {'epoch': 3}  # the whole checkpoint is returned, as mmcv does
    warnings_ = [r for r in handler.records if r.levelno == logging.WARNING]
    assert len(warnings_) == 1, [r.getMessage() for r in warnings_]
    text = warnings_[0].getMessage()
    assert "['model']['state_dict']" in text and "'module.' wrapper prefix from 2 keys" in text
    assert report['loaded_fraction'] == 1.0 and len(report['repairs']) == 2
    info = '\n'.join(r.getMessage() for r in handler.records if r.levelno == logging.INFO)
    assert 'loaded 100.0% of 5 parameters (2/2 parameter tensors, 0/0 buffers) from ' + str(path) in info
    saved = json.loads((tmp_path / 'wd' / cr.REPORT_FILE).read_text())
    assert saved['parameters'] == {'loaded': 2, 'total': 2, 'loaded_elements': 5, 'total_elements': 5}
    assert saved['checkpoint'] == str(path) and saved['ok'] is True


class Net(nn.Module):
    def __init__(self, wrap_head=False):
        super(Net, self).__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        head = nn.Linear(4, 2)
        self.head = nn.DataParallel(head) if wrap_head else head  # on CPU DataParallel just wraps


def test_wrapper_prefix_inside_a_submodule_and_doubled_at_the_top(tmp_path):
    source = Net(wrap_head=True)
    for p in source.parameters():
        p.data.normal_()
    keys = list(source.state_dict())
    assert 'head.module.weight' in keys  # a real wrapper one level down
    doubled = OrderedDict(('module.module.' + k, v) for k, v in source.state_dict().items())
    path = tmp_path / 'deep.pth'
    torch.save({'state_dict': doubled}, str(path))
    target = Net()
    _, report, _ = load_checked(target, str(path), logger=make_logger('deep')[0])
    assert report['loaded_fraction'] == 1.0 and report['unexpected'] == []
    assert torch.equal(target.head.weight, source.head.module.weight)
    assert report['buffers']['loaded'] == report['buffers']['total'] == 3  # BatchNorm stats
    # module.module.head.module.weight: 'module' components at positions 0, 1 and 3
    assert 'depth 0/1/3' in report['repairs'][0]


def test_a_model_that_owns_a_submodule_named_module_keeps_its_keys():
    class Owner(nn.Module):
        def __init__(self):
            super(Owner, self).__init__()
            self.module = nn.Linear(2, 2)
    state = Owner().state_dict()
    fixed, repairs = cr.prepare_state_dict({'state_dict': state}, list(state))
    assert list(fixed) == ['module.weight', 'module.bias'] and repairs == []


def test_truncated_and_corrupted_files_name_the_file(tmp_path):
    path = tmp_path / 'epoch_1.pth'
    torch.save({'state_dict': trained().state_dict(), 'meta': {}}, str(path))
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(cr.CheckpointReadError) as err:
        load_checked(ToyRegressor(), str(path))
    text = str(err.value)
    assert str(path) in text and '(%d bytes)' % (len(data) // 2) in text and 'the file is truncated' in text
    assert 'Traceback' not in text
    garbage = tmp_path / 'garbage.pth'
    garbage.write_bytes(b'not a checkpoint at all' * 10)
    with pytest.raises(cr.CheckpointReadError, match='garbage.pth'):
        load_checked(ToyRegressor(), str(garbage))
    empty = tmp_path / 'empty.pth'
    empty.write_bytes(b'')
    with pytest.raises(cr.CheckpointReadError, match=r'empty\.pth \(0 bytes\)'):
        load_checked(ToyRegressor(), str(empty))
    with pytest.raises(FileNotFoundError):
        load_checked(ToyRegressor(), str(tmp_path / 'missing.pth'))


def test_renamed_head_is_refused_with_modules_and_cause(tmp_path):
    renamed = OrderedDict(('fc.' + k.split('.', 1)[1], v) for k, v in trained().state_dict().items())
    path = tmp_path / 'renamed.pth'
    torch.save({'state_dict': renamed}, str(path))
    model = ToyRegressor()
    with pytest.raises(cr.CheckpointLoadError) as err:
        load_checked(model, str(path), logger=make_logger('renamed')[0], work_dir=str(tmp_path))
    text = str(err.value)
    assert 'only 0.0% of the model\'s 5 parameter elements (0/2 parameter tensors) were loaded' in text
    assert 'linear (0/2 tensors loaded, 2 missing)' in text and 'fc (0/0 tensors loaded, 2 unexpected' in text
    assert "renamed module: checkpoint 'fc' = model 'linear'" in text
    assert 'runner.min_loaded=0' in text and 'KRADAR_MIN_LOADED=0' in text
    report = json.loads((tmp_path / cr.REPORT_FILE).read_text())  # written before refusing
    assert report['ok'] is False and report['missing'] == ['linear.weight', 'linear.bias']
    # min_loaded=0: loads what it can and goes on
    _, report, _ = load_checked(ToyRegressor(), str(path), logger=make_logger('renamed0')[0], min_loaded=0)
    assert report['loaded_fraction'] == 0.0


def test_shape_mismatch_and_elements_count(tmp_path):
    source = trained(ToyTwoHeadRegressor)
    state = source.state_dict()
    state['aux_head.weight'] = torch.zeros(5, 4)
    state['aux_head.bias'] = torch.zeros(5)
    path = tmp_path / 'other_head.pth'
    torch.save(state, str(path))
    with pytest.raises(cr.CheckpointLoadError) as err:
        load_checked(ToyTwoHeadRegressor(), str(path), logger=make_logger('shape')[0])
    text = str(err.value)
    # linear: 4 + 1 elements loaded; aux_head: 12 + 3 elements mismatched -> 5 / 20 = 25.0 %
    assert "only 25.0% of the model's 20 parameter elements (2/4 parameter tensors)" in text
    assert 'aux_head.weight model (3, 4) vs checkpoint (5, 4)' in text
    assert 'different architecture: 2 entries have other shapes' in text


def test_prefix_cause_is_named(tmp_path):
    prefixed = OrderedDict(('detector.' + k, v) for k, v in trained().state_dict().items())
    model = ToyRegressor()
    _, report = __import__('kradar_plugin.adapters.mmcv1.checkpoint_loading', fromlist=['report_for']).report_for(
        model, {'state_dict': prefixed}, 'x.pth')
    assert report['loaded_fraction'] == 0.0
    assert report['cause'].startswith("prefix: the checkpoint's keys carry the extra prefix 'detector.'")


def test_summary_percent_is_floored():
    assert cr.percent(1.0) == '100.0' and cr.percent(0.99999) == '99.9' and cr.percent(0.0) == '0.0'


def test_not_a_checkpoint_dict(tmp_path):
    path = tmp_path / 'list.pth'
    torch.save([1, 2, 3], str(path))
    with pytest.raises(cr.CheckpointReadError, match='holds a list, not a dict of weights'):
        load_checked(ToyRegressor(), str(path))
    path = tmp_path / 'meta_only.pth'
    torch.save({'meta': {'epoch': 1}, 'optimizer': {}}, str(path))
    with pytest.raises(cr.CheckpointReadError, match="has no weights"):
        load_checked(ToyRegressor(), str(path))
    assert os.path.isfile(str(path))


def test_a_uri_that_cannot_be_read_is_one_error_naming_it():
    """A URI goes to the framework's CheckpointLoader; its failure (here: nothing listens on the port) is one
    CheckpointReadError naming the URI and the error, like a local file's."""
    uri = 'http://127.0.0.1:9/kradar_never_there_{}.pth'.format(os.getpid())
    with pytest.raises(cr.CheckpointReadError, match=r'^\[rank 1\] cannot read checkpoint {}: \w+'.format(
            uri.replace('.', r'\.'))):
        cr.read_checkpoint(uri, rank_tag='[rank 1]')
