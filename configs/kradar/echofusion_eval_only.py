# What an EchoFusion (mmdet3d 0.17 / mmcv 1.x) user adds to their own config to evaluate with kradar_plugin.
# Copy these lines into the config, or add this file to its `_base_` list: mmcv merges dicts key by key, but a
# LIST in your config replaces the base's list. So if your config has its own `custom_imports`, add the three
# module names below to ITS `imports` list (otherwise `kradar_plugin` silently drops out).
# This file loads on its own with mmcv's Config.fromfile; it bases nothing.

# 1. Import the plugin. `projects.mmdet3d_plugin` (EchoFusion's plugin, importable when the repository root
#    is on PYTHONPATH, as its dist_train.sh arranges) must come BEFORE the patch module, which replaces the
#    registered 'KRadarDataset' by a subclass whose evaluate() is kradar_plugin's (raw results saved first,
#    EchoFusion's ROI filter and frame policy, fixed IoU, the protocol below). Other dataset names:
#    KRADAR_PATCH_DATASETS=Name1,Name2 in the environment.
custom_imports = dict(
    imports=['projects.mmdet3d_plugin', 'kradar_plugin', 'kradar_plugin.adapters.mmcv1.patch_echofusion'],
    allow_failed_imports=False)

# 2. Eval-only: evaluate once before training, then stop (no iteration, no checkpoint). Equivalent without
#    touching the config, with an unmodified tools/train.py:
#      --cfg-options runner.constructor=EvalOnlyRunnerConstructor
#    or KRADAR_EVAL_ONLY=1 in the environment, or kradar_plugin's tools/dist_train.sh CONFIG GPUS --eval-only.
#    eval_mode='first' evaluates once and then trains; eval_samples=N evaluates the first N val frames only.
#    Use load_from=<checkpoint> (not resume_from) to evaluate trained weights.
runner = dict(constructor='EvalOnlyRunnerConstructor', eval_mode='only')

# 3. The evaluator (metric keys as EchoFusion's, so save_best settings keep working): 'legacy' reproduces
#    EchoFusion's numbers with a correct IoU; 'kradar' is K-Radar's eval.py and 'revised' its eval_revised.py;
#    'fixed' is the corrected protocol (yaw, height origin, the 40-recall-point average, empty-frame false
#    positives, distance bins). Protocols, options and K-Radar's per-condition tables: docs/evaluation.md.
#    pklfile_prefix: where the raw results are pickled before evaluating (default: the work dir).
evaluation = dict(interval=1, protocol='legacy')

# 4. Distributed settings: keep your own dist_params. No `timeout` is set here on purpose: torch's default
#    collective timeout (30 min) stays, since a long evaluation can legitimately exceed a short one; with
#    kradar_plugin's evaluation guards a failing rank ends the job within seconds anyway. A `timeout` you set
#    (in seconds) is converted for init_process_group.
dist_params = dict(backend='nccl')
