# kradar_plugin: every target builds what it needs on a fresh machine.
PY        ?= python3
VENV      ?= .venv
LIGHT     ?= .venv-light
GPUS      ?= 2
# The numpy-only core: run on numpy 2 (.venv-light) and on EchoFusion's stack (whose `tests` holds it), not on .venv.
CORE_TESTS = tests/ops tests/evaluation tests/files tests/loading tests/doctor tests/distributed tests/test_py37_syntax.py tests/test_import_light.py tests/test_settings.py tests/test_layers.py
# The core's tests that judge the installed 1.x stack itself (they skip on .venv-light): also on .venv. (The
# loader probe and pitfall tests run on EchoFusion's stack; on .venv the preflight launches meet the same pitfalls.)
FRAMEWORK_CORE_TESTS = tests/doctor/test_current_environment.py tests/doctor/test_drift_in_environment.py \
	tests/doctor/test_probes.py tests/distributed/test_group_teardown.py tests/evaluation/test_box_convention_mmdet3d.py \
	tests/loading tests/doctor/test_cuda_compile.py::test_this_numba_against_each_toolkit \
	tests/doctor/test_cuda_compile.py::test_mmdet3d_kernels_are_found_where_that_version_keeps_them \
	tests/doctor/test_cuda_compile.py::test_every_numba_row_says_where_its_cuda_facts_come_from
# .venv's part of make test: every test folder and file but the core, plus the tests above.
FULL_TESTS = $(filter-out $(CORE_TESTS) tests/fixtures tests/__pycache__,$(patsubst %/,%,$(wildcard tests/*/)) \
	$(wildcard tests/test_*.py)) $(FRAMEWORK_CORE_TESTS)

.PHONY: env env-light demo demo-tiny test test-full test-light bench doctor clean
PROJECT    = examples/echofusion_project
PROJECT_CFG = projects/configs/kradar/pointpillars_kradar_radar.py

env:
	@PYTHON=$(PY) tools/setup_env.sh full $(VENV)

env-light:
	@PYTHON=$(PY) tools/setup_env.sh light $(LIGHT)

## The main job: a small K-Radar dataset tree in K-Radar's own file formats (tools/create_demo_data.py
## --kradar-tree) -> kradar-create-data -> EchoFusion-layout infos -> eval-only launch of the EchoFusion-shaped
## project (real mmdet3d detector, 2 gloo processes on CPU) from the project's own directory, on a checkpoint trained once by a 2-process run (cached in
## $(PROJECT)/work_dirs/demo_train; DEMO_TRAIN=0 evaluates the initial weights instead). The eval-only run logs
## the project's own (EchoFusion-flow) AP table; kradar-eval then prints legacy/kradar/revised/fixed side by side
## on the predictions that run saved, and K-Radar's per-weather paper table (kradar protocol, score > 0.3, IoU
## 0.3, bootstrap intervals over sequences), then the same predictions scored against the tree's v2.0 labels.
DEMO_TRAIN ?= 1
DEMO_CKPT   = work_dirs/demo_train/latest.pth
demo: env
	@$(VENV)/bin/python tools/create_demo_data.py --out $(PROJECT)/data/kradar --frames 100 --train-frames 400 --kradar-tree
	@$(VENV)/bin/kradar-create-data --root-path $(PROJECT)/data/kradar --split-dir $(PROJECT)/data/kradar/ImageSets \
		--out-dir $(PROJECT)/data/kradar --radar-path 'bev_path=radar_bev/bev_{rdr}.npy' --no-progress
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
	@cd $(PROJECT) && $(CURDIR)/$(VENV)/bin/kradar-eval --infos data/kradar/kradar_infos_val.pkl \
		--results work_dirs/demo/eval_results/results_epoch_0.pkl --classes Sedan --protocol kradar \
		--score-threshold 0.3 --iou-mode easy --table markdown --bootstrap 50 --no-progress | sed -n '/per condition/,$$p'
	@echo "[demo] the same predictions against K-Radar's refined v2.0 labels (the v2.0 benchmark's), read from the tree:"
	@cd $(PROJECT) && $(CURDIR)/$(VENV)/bin/kradar-eval --infos data/kradar/kradar_infos_val.pkl \
		--results work_dirs/demo/eval_results/results_epoch_0.pkl --kradar-root data/kradar --label-version v2.0 \
		--labels-dir data/kradar/revised_labels --benchmark v2 --classes Sedan --protocol revised --no-progress

## The earlier, smaller demo: kradar_plugin's own dataset and a tiny detector (no mmdet3d).
demo-tiny: env
	@$(VENV)/bin/python tools/create_demo_data.py --out data/demo
	@PATH=$(CURDIR)/$(VENV)/bin:$$PATH tools/dist_train.sh configs/kradar/demo_eval_only.py $(GPUS) --eval-only

## The whole suite: the OpenMMLab 1.x stack (torch + mmcv-full + mmdet + mmdet3d rc6), the core again on
## numpy 2.x, EchoFusion's stack, the 2.0 stack (mmengine + mmcv 2.1 + mmdet 3.3 + mmdet3d 1.4: tests/adapters/mmengine)
## and today's stack (.venv-latest), whose builds run niced in the background during the 1.x suite
## (tools/run_tests.sh). Each part prints its 15 slowest tests.
PYTEST_FLAGS ?= -q --durations=15
RUN_TESTS = PY=$(PY) VENV=$(VENV) LIGHT=$(LIGHT) VENV_MM2=$(VENV_MM2) VENV_EF=$(VENV_EF) VENV_LATEST=$(VENV_LATEST) \
	CORE_TESTS="$(CORE_TESTS)" \
	FULL_TESTS="$(FULL_TESTS)" PYTEST_FLAGS="$(PYTEST_FLAGS)" tools/run_tests.sh
test:
	@$(RUN_TESTS)

test-full: env
	@$(RUN_TESTS) full

test-light: env-light
	@$(RUN_TESTS) light

## OpenMMLab 2.0 stack (.venv-mm2: mmengine, mmcv 2.1 with CPU ops, mmdet 3.3, mmdet3d 1.4); test-mm2 (part of
## `make test`) runs tests/adapters/mmengine there. demo-mm2: K-Radar-format data, PointPillars (VoxelNet) trained
## once for 6 epochs by mmdet3d's own tools/train.py with 2 gloo processes (cached in work_dirs/demo_mm2_train), then an
## eval-only launch of that checkpoint (--cfg-options runner_type=EvalOnlyRunner), then kradar-eval prints
## legacy/revised/fixed side by side on the predictions that run saved.
## EchoFusion's own stack (.venv-echofusion: CPython 3.7.16, torch 1.10.0, mmcv-full 1.4.0, mmdet 2.19.0, mmseg
## 0.20.0, mmdet3d 0.17.3 with CPU-built ops, numba 0.48.0, numpy 1.19.5, yapf 0.40.1); test-echofusion (part of
## `make test`) runs the whole suite there. demo-echofusion: the main demo launched the way EchoFusion users
## launch (the project's tools/dist_train.sh = mmdet3d 0.17.3's: python -m torch.distributed.launch, its
## unmodified tools/train.py), eval-only through KRADAR_EVAL_ONLY=1, then kradar-eval on the saved predictions.
.PHONY: env-echofusion test-echofusion demo-echofusion
VENV_EF ?= .venv-echofusion
EF_CKPT  = work_dirs/demo_ef_train/latest.pth

env-echofusion:
	@tools/setup_env.sh echofusion $(VENV_EF)

test-echofusion: env-echofusion
	@$(RUN_TESTS) echofusion

demo-echofusion: env-echofusion
	@$(VENV_EF)/bin/python tools/create_demo_data.py --out $(PROJECT)/data/kradar --frames 100 --train-frames 400 --kradar-tree
	@$(VENV_EF)/bin/kradar-create-data --root-path $(PROJECT)/data/kradar --split-dir $(PROJECT)/data/kradar/ImageSets \
		--out-dir $(PROJECT)/data/kradar --radar-path 'bev_path=radar_bev/bev_{rdr}.npy' --no-progress
	@rm -rf $(PROJECT)/tools && cp -r "$$($(VENV_EF)/bin/python -c 'import importlib.util as u, os; print(os.path.join(u.find_spec("mmdet3d").submodule_search_locations[0], ".mim", "tools"))')" $(PROJECT)/tools
	@if [ "$(DEMO_TRAIN)" = 1 ] && [ ! -f $(PROJECT)/$(EF_CKPT) ]; then \
		echo "[demo-echofusion] training the demo checkpoint once (6 epochs of 400 frames, 2 processes)"; \
		cd $(PROJECT) && mkdir -p work_dirs && PATH=$(CURDIR)/$(VENV_EF)/bin:$$PATH PORT=$$(shuf -i 20000-40000 -n 1) \
			bash tools/dist_train.sh $(PROJECT_CFG) $(GPUS) --work-dir work_dirs/demo_ef_train --no-validate \
			> work_dirs/demo_ef_train.log 2>&1 || { tail -40 work_dirs/demo_ef_train.log; exit 1; }; fi
	@cd $(PROJECT) && rm -rf work_dirs/demo_ef && PATH=$(CURDIR)/$(VENV_EF)/bin:$$PATH PORT=$$(shuf -i 20000-40000 -n 1) \
		KRADAR_EVAL_ONLY=1 bash tools/dist_train.sh $(PROJECT_CFG) $(GPUS) --work-dir work_dirs/demo_ef \
		$$( [ "$(DEMO_TRAIN)" = 1 ] && echo --cfg-options load_from=$(EF_CKPT) )
	@cd $(PROJECT) && $(CURDIR)/$(VENV_EF)/bin/kradar-eval --infos data/kradar/kradar_infos_val.pkl \
		--results work_dirs/demo_ef/eval_results/results_epoch_0.pkl --classes Sedan --protocol all
	@cd $(PROJECT) && $(CURDIR)/$(VENV_EF)/bin/kradar-eval --infos data/kradar/kradar_infos_val.pkl \
		--results work_dirs/demo_ef/eval_results/results_epoch_0.pkl --classes Sedan --protocol kradar \
		--score-threshold 0.3 --iou-mode easy --table markdown --bootstrap 50 --no-progress | sed -n '/per condition/,$$p'

.PHONY: env-mm2 test-mm2 demo-mm2
VENV_MM2  ?= .venv-mm2
MM2_DATA   = data/kradar_mm2
MM2_CFG    = configs/mm2/pointpillars_kradar_radar.py
MM2_CKPT   = work_dirs/demo_mm2_train/epoch_6.pth
MM2_TRAIN  = $$($(VENV_MM2)/bin/python -c 'import mmdet3d, os; print(os.path.join(os.path.dirname(mmdet3d.__file__), ".mim", "tools", "train.py"))')
MM2_RUN    = OMP_NUM_THREADS=1 $(VENV_MM2)/bin/python -m torch.distributed.run --standalone --nproc_per_node=$(GPUS)

env-mm2:
	@PYTHON=$(PY) tools/setup_env.sh mm2 $(VENV_MM2)

test-mm2: env-mm2
	@$(RUN_TESTS) mm2

demo-mm2: env-mm2
	@$(VENV_MM2)/bin/python tools/create_demo_data.py --out $(MM2_DATA) --frames 100 --train-frames 400
	@if [ ! -f $(MM2_CKPT) ]; then \
		echo "[demo-mm2] training the demo checkpoint once (6 epochs of 400 frames, 2 processes, ~3 min)"; \
		mkdir -p work_dirs && $(MM2_RUN) $(MM2_TRAIN) $(MM2_CFG) --launcher pytorch --work-dir work_dirs/demo_mm2_train \
			--cfg-options runner_type=EvalOnlyRunner eval_mode=off train_cfg.max_epochs=6 train_cfg.val_interval=6 \
			> work_dirs/demo_mm2_train.log 2>&1 || { tail -40 work_dirs/demo_mm2_train.log; exit 1; }; fi
	@rm -rf work_dirs/demo_mm2 && $(MM2_RUN) $(MM2_TRAIN) $(MM2_CFG) --launcher pytorch --work-dir work_dirs/demo_mm2 \
		--cfg-options runner_type=EvalOnlyRunner load_from=$(MM2_CKPT)
	@$(VENV_MM2)/bin/kradar-eval --infos $(MM2_DATA)/kradar_infos_val.pkl --results work_dirs/demo_mm2/eval_results/results_epoch_0.pkl \
		--classes Sedan --protocol all --box-convention='mmdet3d<1.0' --dt-z-is-bottom

## Today's stack (.venv-latest: torch 2.13 CPU, numpy 2.2, onedl-mmengine 0.10.12, onedl-mmcv 2.3.6 with CPU ops,
## onedl-mmdetection 3.5.1, mmdet3d 1.4.0 with its version gate repaired; docs/development.md); test-latest (part
## of `make test`) runs the 2.0 adapters' tests, the doctor's and the launches whose torch routes differ there.
.PHONY: env-latest test-latest
VENV_LATEST ?= .venv-latest

env-latest:
	@PYTHON=$(PY) tools/setup_env.sh latest $(VENV_LATEST)

test-latest: env-latest
	@$(RUN_TESTS) latest

bench: env
	$(VENV)/bin/python benchmarks/bench_rotate_iou.py
	$(VENV)/bin/python benchmarks/bench_kradar_eval.py
	$(VENV)/bin/python benchmarks/bench_eval_only.py
	$(VENV)/bin/python benchmarks/bench_doctor.py
	$(VENV)/bin/python benchmarks/bench_tiny_radar.py
	$(VENV)/bin/python benchmarks/bench_preflight.py

doctor: env
	$(VENV)/bin/kradar-doctor

clean:
	rm -rf $(VENV) $(LIGHT) $(VENV_LATEST) work_dirs data/demo $(PROJECT)/work_dirs $(PROJECT)/data $(PROJECT)/tools
