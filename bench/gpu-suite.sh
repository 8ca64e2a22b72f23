#!/bin/sh
# gpu-suite.sh - on a GPU machine: build out of tree, run the quick suite and
# the memory-bound part of the default suite under the collector, and leave
# the databases and logs in $OUT (default ./gpu-out).
#   sh bench/gpu-suite.sh [SECONDS-FOR-THE-SUITE]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/gpu-out}
limit=${1:-240}
mkdir -p "$out"
build=$(mktemp -d /tmp/fuseprof-build.XXXXXX)
export PATH=/usr/local/cuda/bin:$PATH
[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >/dev/null)
cd "$build"
"$src/configure" -q >/dev/null
make -j"$(nproc)" fuseprof >"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$out/device.txt"
git -C "$src" describe --always --dirty --abbrev=7 2>/dev/null | tee -a "$out/device.txt" || true

start=$(date +%s)
./fuseprof run --quick --tag quick --db "$out/quick.db" >"$out/quick.txt" 2>"$out/quick.err" || echo "quick run exit $?"
echo "quick suite: $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
tail -n 3 "$out/quick.err" || true

start=$(date +%s)
timeout -s INT "$limit" ./fuseprof run --tag suite --db "$out/suite.db" \
	--workload ln_gelu_fwd,ln_gelu_bwd,softmax_fwd,softmax_masked_fwd,softmax_bwd \
	>"$out/suite.txt" 2>"$out/suite.err" || echo "suite run exit $?"
echo "memory-bound default suite: $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
tail -n 3 "$out/suite.err" || true
./fuseprof list runs --db "$out/suite.db" || true
./fuseprof query --db "$out/suite.db" "SELECT workload, variant, dtype, shape, status, round(time_ns/1000.0, 1) AS us, round(model_min_bytes/time_ns, 0) AS gbps_min, round(dram_bytes/model_min_bytes, 3) AS traffic FROM v_ops WHERE variant = 'fused' ORDER BY workload, dtype, shape" || true
