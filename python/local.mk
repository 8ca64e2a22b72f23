## python/local.mk - fuseprof_torch, the PyTorch package over
## libfuseprof-kernels (run from the tree: nothing here is built), its
## check script and training example, and their tests (which skip without
## python3 and torch, and on a machine without a GPU).

EXTRA_DIST += python/fuseprof_torch/__init__.py python/fuseprof_torch/_lib.py \
	python/fuseprof_torch/ops.py python/fuseprof_torch/modules.py \
	python/check_ln_linear.py python/examples/train_block.py python/bench_ln_linear.py \
	python/bench_host.py \
	tests/torch_ops.py tests/test-torch-args.sh tests/test-torch-gpu.sh
TESTS += tests/test-torch-args.sh tests/test-torch-gpu.sh
