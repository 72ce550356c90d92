# kradar_plugin: every target builds what it needs on a fresh machine.
PY        ?= python3
VENV      ?= .venv
LIGHT     ?= .venv-light
GPUS      ?= 2
CORE_TESTS = tests/ops tests/evaluation tests/doctor tests/test_py37_syntax.py tests/test_import_light.py

.PHONY: env env-light demo demo-tiny test test-full test-light bench doctor clean
PROJECT    = examples/echofusion_project
PROJECT_CFG = projects/configs/kradar/pointpillars_kradar_radar.py

env:
	@PYTHON=$(PY) tools/setup_env.sh full $(VENV)

env-light:
	@PYTHON=$(PY) tools/setup_env.sh light $(LIGHT)

## The main job: eval-only launch of the EchoFusion-shaped project (real mmdet3d detector, 2 gloo processes on
## CPU) from the project's own directory, on a checkpoint trained once by a 2-process run (cached in
## $(PROJECT)/work_dirs/demo_train; DEMO_TRAIN=0 evaluates the initial weights instead). The eval-only run logs
## the project's own (EchoFusion-flow) AP table; kradar-eval then prints legacy/revised/fixed side by side on the
## predictions that run saved.
DEMO_TRAIN ?= 1
DEMO_CKPT   = work_dirs/demo_train/latest.pth
demo: env
	@$(VENV)/bin/python tools/create_demo_data.py --out $(PROJECT)/data/kradar --frames 100 --train-frames 400
	@if [ "$(DEMO_TRAIN)" = 1 ] && [ ! -f $(PROJECT)/$(DEMO_CKPT) ]; then \
		echo "[demo] training the demo checkpoint once (6 epochs of 400 frames, 2 processes, ~3-4 min)"; \
		cd $(PROJECT) && mkdir -p work_dirs && PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(CURDIR)/tools/dist_train.sh \
			$(PROJECT_CFG) $(GPUS) --work-dir work_dirs/demo_train --no-validate > work_dirs/demo_train.log 2>&1 \
			|| { tail -40 work_dirs/demo_train.log; exit 1; }; fi
	@cd $(PROJECT) && rm -rf work_dirs/demo && PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(CURDIR)/tools/dist_train.sh \
		$(PROJECT_CFG) $(GPUS) --eval-only --work-dir work_dirs/demo \
		$$( [ "$(DEMO_TRAIN)" = 1 ] && echo --cfg-options load_from=$(DEMO_CKPT) )
	@cd $(PROJECT) && $(CURDIR)/$(VENV)/bin/kradar-eval --infos data/kradar/kradar_infos_val.pkl \
		--results work_dirs/demo/eval_results/results_epoch_0.pkl --classes Sedan --protocol all

## The earlier, smaller demo: kradar_plugin's own dataset and a tiny detector (no mmdet3d).
demo-tiny: env
	@$(VENV)/bin/python tools/create_demo_data.py --out data/demo
	@PATH=$(CURDIR)/$(VENV)/bin:$$PATH tools/dist_train.sh configs/kradar/demo_eval_only.py $(GPUS) --eval-only

## The whole suite: full stack (torch + mmcv-full + mmdet) and the core again on numpy 2.x.
test: test-full test-light

test-full: env
	$(VENV)/bin/python -m pytest -q tests

test-light: env-light
	$(LIGHT)/bin/python -m pytest -q $(CORE_TESTS)

bench: env
	$(VENV)/bin/python benchmarks/bench_rotate_iou.py
	$(VENV)/bin/python benchmarks/bench_kradar_eval.py
	$(VENV)/bin/python benchmarks/bench_eval_only.py

doctor: env
	$(VENV)/bin/kradar-doctor

clean:
	rm -rf $(VENV) $(LIGHT) work_dirs data/demo $(PROJECT)/work_dirs $(PROJECT)/data
