# test-profile-cli.sh - `fuseprof profile` without a GPU: usage errors, a
# command that is missing, not found or not executable, another profiler
# attached, a missing collector (each one line, and no run written), the
# environment the program gets, its stdout, stderr and exit status passed
# through, and a program with no CUDA work (a warning, the run marked
# failed). The program's side with a GPU is test-profile-gpu.sh's.
. "$srcdir/tests/setup"

db="$tmp/p.db"
q() { "$FUSEPROF" query --db "$db" --format csv "$1" | tail -n 1 | tr -d '\r'; }

# Usage errors: exit 2, one line, nothing written.
expect_exit 2 "$FUSEPROF" profile --db "$db"
one_line_error "no COMMAND"
expect_exit 2 "$FUSEPROF" profile --db "$db" --kernel-filter '(gemm' -- true
one_line_error "bad --kernel-filter" "(gemm"
expect_exit 2 "$FUSEPROF" profile --db "$db" --max-kernels 0 -- true
one_line_error "bad --max-kernels" "'0'"
expect_exit 2 "$FUSEPROF" profile --db "$db" --nvtx-include '' -- true
one_line_error "bad --nvtx-include"
expect_exit 2 "$FUSEPROF" profile --db "$db" --device -1 -- true
one_line_error "bad --device" "'-1'"
expect_exit 2 "$FUSEPROF" profile --db "$db" --device gpu0 -- true
one_line_error "bad --device" "'gpu0'"
expect_exit 2 "$FUSEPROF" profile --db "$tmp/x%q.db" -- true
one_line_error "bad --db" "'%q'"
[ ! -e "$tmp/x%q.db" ] && [ ! -e "$tmp/xq.db" ] || fail "a refused --db left a file"
expect_exit 2 "$FUSEPROF" profile --db "$db" --bogus -- true
one_line_error "--bogus"
[ ! -e "$db" ] || fail "a usage error created the database"

# A command that cannot be run: 127 not found, 126 not executable, as a
# shell says; one line naming it; no run.
expect_exit 127 "$FUSEPROF" profile --db "$db" -- "$tmp/no-such-program"
one_line_error "$tmp/no-such-program"
expect_exit 127 "$FUSEPROF" profile --db "$db" -- fuseprof-no-such-command-xyz
one_line_error "fuseprof-no-such-command-xyz" "not found"
printf '#!/bin/sh\necho hi\n' >"$tmp/notexec"
chmod 644 "$tmp/notexec"
if [ "$(id -u)" != 0 ] || ! [ -x "$tmp/notexec" ]; then
	expect_exit 126 "$FUSEPROF" profile --db "$db" -- "$tmp/notexec"
	one_line_error "$tmp/notexec" "not executable"
fi
expect_exit 126 "$FUSEPROF" profile --db "$db" -- "$tmp"
one_line_error "is a directory"
[ ! -e "$db" ] || fail "a command that cannot run left a database"

# Another profiler's injection in the environment: refused before anything.
CUDA_INJECTION64_PATH=/opt/other/libinject.so expect_exit 1 "$FUSEPROF" profile --db "$db" -- true
one_line_error "another profiler" "CUDA_INJECTION64_PATH" "/opt/other/libinject.so"
NVTX_INJECTION64_PATH=/opt/nsys/libnvtx.so expect_exit 1 "$FUSEPROF" profile --db "$db" -- true
one_line_error "another profiler" "NVTX_INJECTION64_PATH"
# No collector where FUSEPROF_EXEC_PATH says.
mkdir "$tmp/empty"
FUSEPROF_EXEC_PATH="$tmp/empty" expect_exit 1 "$FUSEPROF" profile --db "$db" -- true
one_line_error "libfuseprof-inject.so" "FUSEPROF_EXEC_PATH"
[ ! -e "$db" ] || fail "a refusal left a database"

# The environment the program runs in: the collector for CUDA and NVTX,
# the database by absolute path, the run, the filter and the limit.
# Options after COMMAND are the program's, with or without '--'.
cd "$tmp"
expect_exit 0 "$FUSEPROF" profile --db p.db --tag envcheck --kernel-filter 'gemm|ln_' \
	--max-kernels 7 --nvtx-include 'train/*' --nvtx-include eval --device 1 \
	sh -c 'printf "%s\n" "$CUDA_INJECTION64_PATH" "$NVTX_INJECTION64_PATH" "$FUSEPROF_PROFILE_DB" "$FUSEPROF_PROFILE_RUN" "$FUSEPROF_PROFILE_KERNEL_FILTER" "$FUSEPROF_PROFILE_MAX_KERNELS" "$1" "$FUSEPROF_PROFILE_DEVICE" "$FUSEPROF_PROFILE_NVTX_INCLUDE"' sh --tag
cd - >/dev/null
lib=$(sed -n 1p "$tmp/out")
case $lib in /*/libfuseprof-inject.so) ;; *) fail "CUDA_INJECTION64_PATH: '$lib'" ;; esac
[ -f "$lib" ] || fail "the collector '$lib' does not exist"
[ "$(sed -n 2p "$tmp/out")" = "$lib" ] || fail "NVTX_INJECTION64_PATH: $(sed -n 2p "$tmp/out")"
[ "$(sed -n 3p "$tmp/out")" = "$tmp/p.db" ] || fail "the database is not absolute: $(sed -n 3p "$tmp/out")"
run=$(sed -n 4p "$tmp/out")
[ "$(sed -n 5,7p "$tmp/out" | tr '\n' ' ')" = "gemm|ln_ 7 --tag " ] ||
	fail "filter, limit or the program's own option: $(sed -n 5,7p "$tmp/out")"
[ "$(sed -n 8,10p "$tmp/out" | tr '\n' ' ')" = "1 train/* eval " ] ||
	fail "device or range patterns: $(sed -n 8,10p "$tmp/out")"
# fuseprof's own options are the run's record
[ "$(q "SELECT command_line LIKE 'fuseprof profile --db p.db --tag envcheck --kernel-filter gemm|ln_ --max-kernels 7 --nvtx-include train/* --nvtx-include eval --device 1 sh -c %' FROM runs WHERE id = $run")" = 1 ] ||
	fail "the run's command line: $(q "SELECT command_line FROM runs WHERE id = $run")"
[ "$(q "SELECT kind || ' ' || tag FROM v_runs WHERE run_id = $run")" = "profile envcheck" ] ||
	fail "run $run is not the profile run: $(q "SELECT kind, tag FROM v_runs WHERE run_id = $run")"

# --db placeholders: the rank from the launcher's variables (torchrun's
# before Slurm's), the host, the pid, '%%'.
(RANK=3 SLURM_PROCID=9 && export RANK SLURM_PROCID &&
	expect_exit 0 "$FUSEPROF" profile --db "$tmp/r%r-%%.db" -- true) || fail "--db r%r-%%.db"
[ -f "$tmp/r3-%.db" ] || fail "--db r%r-%%.db under RANK=3: $(ls "$tmp")"
(SLURM_PROCID=9 && export SLURM_PROCID &&
	expect_exit 0 "$FUSEPROF" profile --db "$tmp/s%r.db" -- true) || fail "--db s%r.db"
[ -f "$tmp/s9.db" ] || fail "--db s%r.db under SLURM_PROCID=9: $(ls "$tmp")"
expect_exit 0 "$FUSEPROF" profile --db "$tmp/h-%h-p%p.db" -- true
ls "$tmp" | grep -q "^h-$(hostname)-p[0-9][0-9]*\.db$" || fail "--db h-%h-p%p.db: $(ls "$tmp")"

# No CUDA work: the program's status, a warning, the run marked failed.
expect_exit 0 "$FUSEPROF" profile --db "$db" -- true
grep -q "^fuseprof: warning: profile: 'true' ran no CUDA kernel" "$tmp/err" ||
	fail "no warning for a program without CUDA work: $(cat "$tmp/err")"
grep -q "^fuseprof: profile: 'true' exited with status 0$" "$tmp/err" ||
	fail "no exit note: $(cat "$tmp/err")"
[ "$(q "SELECT status FROM v_runs ORDER BY run_id DESC LIMIT 1")" = failed ] ||
	fail "the run of a program without CUDA work is not failed"
q "SELECT note FROM v_runs ORDER BY run_id DESC LIMIT 1" | grep -q "no CUDA work" ||
	fail "the run's note does not say why"

# stdout and stderr pass untouched; the exit status is the program's.
expect_exit 3 "$FUSEPROF" profile --db "$db" -- sh -c 'echo out-line; echo err-line >&2; exit 3'
[ "$(cat "$tmp/out")" = out-line ] || fail "stdout changed: $(cat "$tmp/out")"
[ "$(head -n 1 "$tmp/err")" = err-line ] || fail "the program's stderr is not first: $(cat "$tmp/err")"
grep -q "exited with status 3" "$tmp/err" || fail "no note of status 3"
expect_exit 143 "$FUSEPROF" profile --db "$db" -- sh -c 'kill -TERM $$'
grep -q "killed by signal 15" "$tmp/err" || fail "no note of the signal: $(cat "$tmp/err")"

# --baseline: the program alone first (no collector in its environment),
# then under the collector; the summary and the run's note give both wall
# times. A baseline that fails goes on to the profile with a warning; one
# ended by a signal ends the command, the run aborted, profiled never.
expect_exit 0 "$FUSEPROF" profile --db "$db" --baseline -- \
	sh -c 'echo "run ${CUDA_INJECTION64_PATH:+collector}"; sleep 0.3'
[ "$(tr '\n' '|' <"$tmp/out")" = "run |run collector|" ] ||
	fail "--baseline: not once plain, then once under the collector: $(cat "$tmp/out")"
plain=$(sed -n 's/.*, [0-9.]* s (\([0-9.]*\) s without the collector: [-+][0-9]* %)$/\1/p' "$tmp/err")
[ -n "$plain" ] && awk -v p="$plain" 'BEGIN { exit !(p >= 0.3 && p < 30) }' ||
	fail "--baseline: the summary's wall time without the collector: $(cat "$tmp/err")"
q "SELECT note FROM v_runs ORDER BY run_id DESC LIMIT 1" | grep -q "no CUDA work" ||
	fail "--baseline: the run's note"
grep -q "without the collector" "$tmp/err" || fail "no baseline in the summary"
expect_exit 0 "$FUSEPROF" profile --db "$db" --baseline -- \
	sh -c '[ -n "$CUDA_INJECTION64_PATH" ] || exit 4'
grep -q "^fuseprof: warning: profile: 'sh' exited with status 4 in its run without the collector (--baseline); profiling it all the same$" "$tmp/err" ||
	fail "--baseline: a failing baseline: $(cat "$tmp/err")"
: >"$tmp/count"
expect_exit 143 "$FUSEPROF" profile --db "$db" --baseline -- \
	sh -c 'echo x >>"$1"; kill -TERM $$' sh "$tmp/count"
[ "$(wc -l <"$tmp/count")" = 1 ] || fail "--baseline: killed, the program still ran again"
one_line_error "killed by signal 15" "in its run without the collector (--baseline): nothing profiled"
[ "$(q "SELECT status FROM v_runs ORDER BY run_id DESC LIMIT 1")" = aborted ] ||
	fail "--baseline killed: the run is not aborted"
q "SELECT note FROM v_runs ORDER BY run_id DESC LIMIT 1" | grep -q "(--baseline) was killed by signal 15" ||
	fail "--baseline killed: the run's note: $(q "SELECT note FROM v_runs ORDER BY run_id DESC LIMIT 1")"

# Every run above is finished, none left running.
[ "$(q "SELECT count(*) FROM runs WHERE status = 'running'")" = 0 ] || fail "a run is left running"
[ "$(q "PRAGMA integrity_check")" = ok ] || fail "integrity check"
exit 0
