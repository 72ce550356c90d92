# One short epoch of SGD on the demo's learnable box parameters.
optimizer = dict(type='SGD', lr=0.01, momentum=0.9, weight_decay=0.0)
optimizer_config = dict(grad_clip=None)
lr_config = dict(policy='fixed')
runner = dict(type='EpochBasedRunner', max_epochs=1)
