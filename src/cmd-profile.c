/* cmd-profile.c - `fuseprof profile -- COMMAND`: run any CUDA program
 * under fuseprof's collector (libfuseprof-inject.so, inject/) and store
 * what its GPU ran as a run of kind 'profile'. This process starts the
 * run, sets the environment through which the program's CUDA and NVTX
 * load the collector and the collector finds the run, waits, and ends
 * the run from what the program's processes committed. The program's
 * stdout and stderr are its own; its exit status is this command's. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "inject.h"
#include "launcher.h"
#include "probes.h"
#include "proc.h"
#include "profile.h"
#include "store.h"
#include "util.h"

#ifndef FP_PKGLIBEXECDIR
#define FP_PKGLIBEXECDIR "/usr/local/libexec/fuseprof"
#endif
#ifndef FP_PKGLIBDIR
#define FP_PKGLIBDIR "/usr/local/lib/fuseprof"
#endif

/* Exit statuses of a command that could not be run, as shells give. */
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

static void help(void)
{
	printf("Usage: fuseprof profile [OPTION]... -- COMMAND [ARG]...\n"
	       "Run COMMAND, any CUDA program (a binary fuseprof did not build, a\n"
	       "Python script), under fuseprof's collector and store what its GPU ran\n"
	       "in the database as a run of kind 'profile', which report, compare,\n"
	       "query and export read as any run.\n"
	       "\n"
	       "What becomes an op: each innermost NVTX range (nvtxRangePush/Pop and\n"
	       "nvtxRangeStart/End in C, torch.cuda.nvtx.range in PyTorch), named by\n"
	       "its range path, the names of the ranges open on the launching thread,\n"
	       "outermost first, joined by '/' ('train/step/LayerNorm'); a kernel\n"
	       "launched outside any range is an op of its own, named by the kernel.\n"
	       "Each instance of a range is one sample: the summed GPU time of the\n"
	       "kernels launched in it. An op's time is the median of its samples,\n"
	       "as a run op's is of its repetitions; its kernels (by name and launch\n"
	       "configuration) have their median duration and launches per sample.\n"
	       "A start/end range counts on the thread that started it. A thread\n"
	       "with no range open of its own takes the main thread's: PyTorch's\n"
	       "autograd launches the backward from a thread of its own while the\n"
	       "main thread waits in its 'backward' range. A kernel outside every\n"
	       "range is named short: no 'void ', no parameter list, a long name\n"
	       "cut with a hash of the whole.\n"
	       "workload = the range path, variant = --tag (default 'profiled'),\n"
	       "dtype and shape empty, role fused; no model bytes or FLOPs. Every\n"
	       "launch and range instance is kept for 'fuseprof export'.\n"
	       "\n"
	       "The program may fork, spawn workers or use several GPUs: each process\n"
	       "that initialises CUDA records into the same run (samples and launches\n"
	       "name its row in procs, with its pid, host and the rank, local rank and\n"
	       "world size its launcher set; 'fuseprof query \"SELECT * FROM procs\"'\n"
	       "lists them) and\n"
	       "commits every %d s or %d kernels, whichever comes first, so a\n"
	       "process killed with SIGKILL loses at most that much; its row then\n"
	       "reads 'killed' and says when it last committed.\n"
	       "\n"
	       "Options:\n"
	       "      --db PATH            database file (default: $FUSEPROF_DB or\n"
	       "                           fuseprof.db; created when missing); %%h, %%p\n"
	       "                           and %%r in it become the host name, this\n"
	       "                           process's pid and its rank (from torchrun's\n"
	       "                           RANK, Open MPI's, PMI's or Slurm's variables;\n"
	       "                           0 without), %%%% a '%%': one file a rank where\n"
	       "                           the launcher starts fuseprof once a rank\n"
	       "  -t, --tag T              tag the run, and name its ops' variant\n"
	       "      --metrics GROUP      also read the hardware counters of GROUP\n"
	       "                           (roofline, memory, flops; 'fuseprof run\n"
	       "                           --help' says what each holds) on every\n"
	       "                           kernel, one kernel at a time: bytes in one\n"
	       "                           pass as the program runs it (no replay), L2\n"
	       "                           flushed before each kernel and after it (the\n"
	       "                           flush after measures its write-back); FLOPs\n"
	       "                           (instruction counts) under kernel replay;\n"
	       "                           each launch's device pointer arguments\n"
	       "                           (launches.ptrs); slow (a few ms a kernel),\n"
	       "                           and its timings are of cold caches:\n"
	       "                           profile once without it for time\n"
	       "      --no-counters        timing only (the default; cancels --metrics)\n"
	       "      --kernel-filter REGEX  record only kernels whose demangled name\n"
	       "                           matches the POSIX extended REGEX (the others\n"
	       "                           are counted as filtered)\n"
	       "      --max-kernels N      record at most N kernel launches in each\n"
	       "                           process (the rest are counted, not stored)\n"
	       "      --nvtx-include GLOB  record only kernels launched in a range whose\n"
	       "                           path, or the path of a range around it,\n"
	       "                           matches GLOB ('train', 'train/step*': '*'\n"
	       "                           crosses '/'); repeat for several; kernels\n"
	       "                           outside every range are then left out; the\n"
	       "                           others are counted as filtered\n"
	       "      --device N           record only the kernels of CUDA device N (the\n"
	       "                           program's ordinal); the others are counted as\n"
	       "                           filtered\n"
	       "      --baseline           run COMMAND once without the collector first\n"
	       "                           and time it: the summary then gives the wall\n"
	       "                           time with and without the collector (the\n"
	       "                           program runs twice: for programs that can)\n"
	       "  -h, --help               show this help and exit\n"
	       "Options end at COMMAND or '--'; what follows is the program's.\n"
	       "\n"
	       "At the end a summary goes to stderr: processes, ops, kernels seen,\n"
	       "recorded, filtered, over the limit and dropped (CUPTI's buffers full:\n"
	       "never silently), with --metrics how many were counted, and the wall\n"
	       "time (with --baseline also without the collector, and the difference);\n"
	       "then how the program exited.\n"
	       "A program that ran no CUDA kernel leaves its run marked failed\n"
	       "('no CUDA work'), as does one where another profiler held CUPTI.\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof profile --tag eager -- python3 train.py\n"
	       "  fuseprof profile --tag compiled -- python3 train.py --compile\n"
	       "  fuseprof compare eager compiled          # ops matched by range path\n"
	       "  fuseprof profile --tag counted --metrics roofline -- python3 train.py --steps 5\n"
	       "  fuseprof query opportunities counted     # what fusing would buy there\n"
	       "  fuseprof profile --baseline -- ./app   # what the collector costs ./app\n"
	       "  fuseprof profile --kernel-filter 'gemm|layer_norm' -- ./app input.bin\n"
	       "  fuseprof profile --nvtx-include 'train/step*' --device 0 -- python3 train.py\n"
	       "  srun fuseprof profile --db /tmp/%%h-r%%r.db -- python3 train.py   # a file a rank\n"
	       "  torchrun --nproc_per_node 8 --no-python fuseprof profile --db 'prof-%%h-%%r.db' \\\n"
	       "      python3 train.py                  # the same under torchrun; then merge\n"
	       "  fuseprof export --format perfetto latest > trace.json\n"
	       "\n"
	       "Exit status: the program's (128 + N when signal N ended it); 2 usage\n"
	       "error; 1 when nothing could be profiled (no collector, another\n"
	       "profiler attached, a database problem); 126 COMMAND cannot be run,\n"
	       "127 COMMAND not found.\n",
	       FP_COMMIT_SECONDS, FP_COMMIT_KERNELS);
}

/* The program to run: COMMAND itself when it has a '/', else the first
 * executable file of that name along $PATH, as execvp finds it. Returns
 * a new string, or NULL after an error with *status 126 or 127. */
static char *resolve_command(const char *cmd, int *status)
{
	struct stat sb;
	const char *path = getenv("PATH");
	char *found = NULL, *dirs, *save = NULL;
	int seen = 0;

	if (strchr(cmd, '/')) {
		if (stat(cmd, &sb) != 0) {
			*status = errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
			error("profile: cannot run '%s': %s", cmd, strerror(errno));
			return NULL;
		}
		if (S_ISDIR(sb.st_mode) || access(cmd, X_OK) != 0) {
			*status = EXIT_CANNOT_RUN;
			error("profile: cannot run '%s': %s", cmd,
			      S_ISDIR(sb.st_mode) ? "is a directory" : "not executable");
			return NULL;
		}
		return xstrdup(cmd);
	}
	dirs = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *d ? d : ".", cmd);

		if (stat(p, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
			seen = 1;
			if (access(p, X_OK) == 0) {
				found = p;
				continue;
			}
		}
		free(p);
	}
	free(dirs);
	if (!found) {
		*status = seen ? EXIT_CANNOT_RUN : EXIT_NOT_FOUND;
		error("profile: cannot run '%s': %s", cmd,
		      seen ? "not executable" : "command not found in $PATH");
	}
	return found;
}

/* path made absolute against the current folder: the program may change
 * folders before its CUDA loads the collector. Returns a new string. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
		return xstrdup(path);
	return xasprintf("%s/%s", cwd, path);
}

/* The program, while this process waits: SIGTERM and SIGHUP sent to
 * fuseprof go on to it, so that the run still gets its ending. */
static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* Start prog with argv in the collector's environment. Returns the pid,
 * or -1 after an error (*err: the exec's errno, 0 for a fork failure). */
static pid_t start(const char *prog, char **argv, int *err)
{
	int fds[2];
	pid_t pid;
	ssize_t n;

	*err = 0;
	if (pipe(fds) != 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		int e;

		close(fds[0]);
		/* The pipe closes on exec: EOF in the parent means it ran. */
		if (fcntl(fds[1], F_SETFD, FD_CLOEXEC) != 0)
			_exit(EXIT_CANNOT_RUN);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execv(prog, argv);
		e = errno;
		if (write(fds[1], &e, sizeof e) < 0)
			_exit(EXIT_CANNOT_RUN);
		_exit(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
	}
	close(fds[1]);
	while ((n = read(fds[0], err, sizeof *err)) < 0 && errno == EINTR)
		;
	close(fds[0]);
	if (n == (ssize_t)sizeof *err) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	*err = 0;
	return pid;
}

/* What the run's processes left: totals, and rows of processes killed
 * before they finished marked so. */
struct tally {
	long long procs, complete, killed, busy, failed;
	long long seen, recorded, filtered, over_limit, dropped, ops, counted;
	long long slots, partial;  /* kernel slots counted; of them with only
				      some of the group's metrics */
	char *last_killed;  /* "pid 123, last commit 2025-..." */
};

static int tally_run(struct store *st, long long run, struct tally *t)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *s = NULL, *u = NULL;
	int rc;

	memset(t, 0, sizeof *t);
	if (sqlite3_prepare_v2(db, "SELECT id, pid, host, proc_start, status, "
			       "kernels_seen, kernels_recorded, kernels_filtered, "
			       "kernels_over_limit, records_dropped, committed_at "
			       "FROM procs WHERE run_id = ?1", -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "UPDATE procs SET status = 'killed', note = "
			       "coalesce(note, ?2) WHERE id = ?1", -1, &u, NULL) != SQLITE_OK)
		goto out_sql;
	sqlite3_bind_int64(s, 1, run);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *status = (const char *)sqlite3_column_text(s, 4);
		const char *shown = proc_run_status(status,
			(const char *)sqlite3_column_text(s, 2), sqlite3_column_int64(s, 1),
			(const char *)sqlite3_column_text(s, 3));
		const char *committed = (const char *)sqlite3_column_text(s, 10);

		t->procs++;
		t->seen += sqlite3_column_int64(s, 5);
		t->recorded += sqlite3_column_int64(s, 6);
		t->filtered += sqlite3_column_int64(s, 7);
		t->over_limit += sqlite3_column_int64(s, 8);
		t->dropped += sqlite3_column_int64(s, 9);
		if (!strcmp(shown, "killed")) {
			char *note = xasprintf("killed before it finished: what it "
					       "committed up to %s is kept",
					       committed ? committed : "its start (nothing)");

			t->killed++;
			free(t->last_killed);
			t->last_killed = xasprintf("pid %lld, last commit %s",
						   sqlite3_column_int64(s, 1),
						   committed ? committed : "none");
			sqlite3_bind_int64(u, 1, sqlite3_column_int64(s, 0));
			sqlite3_bind_text(u, 2, note, -1, SQLITE_TRANSIENT);
			rc = sqlite3_step(u);
			sqlite3_reset(u);
			free(note);
			if (rc != SQLITE_DONE)
				goto out_sql;
		} else if (!strcmp(status, "complete")) {
			t->complete++;
		} else if (!strcmp(status, "busy")) {
			t->busy++;
		} else if (!strcmp(status, "failed")) {
			t->failed++;
		}
	}
	if (rc != SQLITE_DONE)
		goto out_sql;
	sqlite3_finalize(s);
	sqlite3_finalize(u);
	s = u = NULL;
	/* The ops, the counted launches, and the counted kernel slots, of
	 * which those with only some of the group's metrics: collectors take
	 * turns of launches, so a slot launched less often than the turns go
	 * round has some of them only. */
	if (sqlite3_prepare_v2(db, "WITH s AS (SELECT k.id, count(DISTINCT c.metric) AS n "
			       "FROM kernels k JOIN ops o ON o.id = k.op_id JOIN counters c "
			       "ON c.kernel_id = k.id AND c.metric NOT LIKE 'fuseprof.%' "
			       "WHERE o.run_id = ?1 GROUP BY k.id) "
			       "SELECT (SELECT count(*) FROM ops WHERE run_id = ?1), "
			       "(SELECT coalesce(sum(c.value), 0) FROM counters c JOIN kernels k "
			       "ON k.id = c.kernel_id JOIN ops o ON o.id = k.op_id WHERE "
			       "o.run_id = ?1 AND c.metric = '" STORE_COUNTED "'), "
			       "(SELECT count(*) FROM s), "
			       "(SELECT coalesce(sum(n < (SELECT max(n) FROM s)), 0) FROM s)",
			       -1, &s, NULL) != SQLITE_OK)
		goto out_sql;
	sqlite3_bind_int64(s, 1, run);
	if (sqlite3_step(s) == SQLITE_ROW) {
		t->ops = sqlite3_column_int64(s, 0);
		t->counted = sqlite3_column_int64(s, 1);
		t->slots = sqlite3_column_int64(s, 2);
		t->partial = sqlite3_column_int64(s, 3);
	}
	sqlite3_finalize(s);
	return 0;

out_sql:
	store_error(st, "cannot read the profiled processes from");
	sqlite3_finalize(s);
	sqlite3_finalize(u);
	return -1;
}

/* Start prog with argv and wait for it; SIGTERM and SIGHUP go on to it
 * meanwhile (forward). Returns 0 with its wait status in *wstatus, or -1
 * after an error, with the status a shell would give in *code and the
 * run's note in *note (what: "" or " (--baseline)", the run it names). */
static int run_waited(const char *prog, char **argv, const char *what, int *wstatus,
		      int *code, char **note)
{
	int err;
	pid_t pid = start(prog, argv, &err);

	if (pid < 0) {
		const char *why = err ? strerror(err) : "cannot start a process";

		*code = err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
		error("profile: cannot run '%s'%s: %s", prog, what, why);
		*note = xasprintf("cannot run '%s'%s: %s", prog, what, why);
		return -1;
	}
	child_pid = pid;
	while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;
	return 0;
}

/* A counted run's roofline needs its GPU's ceilings: when the database
 * has no measured one for the run's device, measure them now, after the
 * program (the GPU is its own while it runs), with `fuseprof-gpu
 * ceilings`, outside the collector. Returns 1 when it measured, 0 when
 * there was nothing to do, -1 after a warning. */
static int ensure_ceilings(struct store *st, long long run, const char *dbabs)
{
	static const char *const env[] = {
		"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", FP_ENV_PROFILE_DB,
		FP_ENV_PROFILE_RUN, FP_ENV_PROFILE_FILTER, FP_ENV_PROFILE_MAX,
		FP_ENV_PROFILE_NVTX, FP_ENV_PROFILE_DEVICE, FP_ENV_PROFILE_COUNTERS
	};
	sqlite3_stmt *s = NULL;
	char *uuid = NULL, *name = NULL, *prog = NULL;
	long long measured = 1;
	int wstatus = 0, rc = 0;
	pid_t pid;

	if (sqlite3_prepare_v2(store_db(st), "SELECT d.uuid, d.name, (SELECT count(*) "
			       "FROM ceilings c WHERE c.device_id = d.id AND "
			       "c.provenance = 'measured') FROM runs r JOIN devices d "
			       "ON d.id = r.device_id WHERE r.id = ?1", -1, &s,
			       NULL) != SQLITE_OK)
		goto out_sql;
	sqlite3_bind_int64(s, 1, run);
	if (sqlite3_step(s) == SQLITE_ROW) {
		uuid = xstrdup((const char *)sqlite3_column_text(s, 0));
		name = xstrdup((const char *)sqlite3_column_text(s, 1));
		measured = sqlite3_column_int64(s, 2);
	}
	sqlite3_finalize(s);
	if (measured)   /* stored, or no device recorded */
		goto out;
	fprintf(stderr, "fuseprof: profile: measuring the ceilings of %s (%s), "
		"which the database has none of, for the roofline\n", name, uuid);
	prog = own_file_path(FP_GPU_PROGRAM_NAME, FP_PKGLIBEXECDIR);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		char *args[] = { prog, "ceilings", "--db", (char *)dbabs, "--device",
				 uuid, NULL };

		/* its table is not the program's output */
		if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
			_exit(EXIT_FAIL);
		for (size_t i = 0; i < ARRAY_SIZE(env); i++)
			unsetenv(env[i]);
		execv(prog, args);
		_exit(EXIT_CANNOT_RUN);
	}
	if (pid > 0)
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
	rc = 1;
	if (pid < 0 || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
		warning("profile: could not measure the ceilings of %s: the roofline "
			"has no roofs until 'fuseprof ceilings --db %s --device %s' "
			"runs on this machine", name, dbabs, uuid);
		rc = -1;
	}
	goto out;

out_sql:
	warning("profile: cannot read the run's device from '%s': %s", dbabs,
		sqlite3_errmsg(store_db(st)));
	sqlite3_finalize(s);
	rc = -1;
out:
	free(uuid);
	free(name);
	free(prog);
	return rc;
}

/* "exited with status 3" / "was killed by signal 9 (Killed)". */
static char *how_it_ended(int wstatus, int *exit_code)
{
	if (WIFSIGNALED(wstatus)) {
		*exit_code = 128 + WTERMSIG(wstatus);
		return xasprintf("was killed by signal %d (%s)", WTERMSIG(wstatus),
				 strsignal(WTERMSIG(wstatus)));
	}
	*exit_code = WEXITSTATUS(wstatus);
	return xasprintf("exited with status %d", *exit_code);
}

static int cmd_profile(int argc, char **argv)
{
	enum { OPT_DB = 256, OPT_NO_COUNTERS, OPT_FILTER, OPT_MAX, OPT_NVTX, OPT_DEVICE,
	       OPT_METRICS, OPT_BASELINE };
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "tag", required_argument, NULL, 't' },
		{ "no-counters", no_argument, NULL, OPT_NO_COUNTERS },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "kernel-filter", required_argument, NULL, OPT_FILTER },
		{ "max-kernels", required_argument, NULL, OPT_MAX },
		{ "nvtx-include", required_argument, NULL, OPT_NVTX },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "baseline", no_argument, NULL, OPT_BASELINE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *db = default_db_path(), *tag = NULL, *filter = NULL, *metrics = NULL;
	struct counter_group group = { 0 };
	struct strbuf counters = STRBUF_INIT;
	char *lib = NULL, *prog = NULL, *dbabs = NULL, *cmdline = NULL, *ended = NULL;
	char *note = NULL, *dbx = NULL, runbuf[32], maxbuf[32], devbuf[32];
	struct strbuf nvtx = STRBUF_INIT;
	const char *nvtx_pat[64];
	size_t nnvtx = 0;
	long device = -1;
	struct sigaction ign, old_int, old_quit, fwd, old_term, old_hup;
	struct store *st = NULL;
	struct store_run r = { .counters = "none", .kind = "profile" };
	struct tally t = { 0 };
	long max_kernels = 0;
	long long run = 0;
	const char *status;
	double t0, wall, plain_s = -1;
	int baseline = 0;
	int c, wstatus = 0, code = EXIT_FAIL;

	opterr = 0;
	optind = 1;
	/* '+': stop at COMMAND, whose options are its own. */
	while ((c = getopt_long(argc, argv, "+t:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			db = optarg;
			break;
		case 't':
			tag = optarg;
			break;
		case OPT_NO_COUNTERS:
			metrics = NULL;
			break;
		case OPT_METRICS:
			if (!*optarg)
				return usage_error("profile", "profile: --metrics: empty "
						   "group name (roofline, memory, flops)");
			metrics = optarg;
			break;
		case OPT_FILTER:
			filter = optarg;
			break;
		case OPT_MAX:
			if (parse_long(optarg, &max_kernels) || max_kernels <= 0)
				return usage_error("profile", "profile: bad --max-kernels "
						   "'%s' (a number of launches, 1 or more)",
						   optarg);
			break;
		case OPT_NVTX:
			if (!*optarg || strchr(optarg, '\n'))
				return usage_error("profile", "profile: bad --nvtx-include "
						   "'%s' (a glob on range paths, such as "
						   "'train/*')", optarg);
			if (nnvtx == ARRAY_SIZE(nvtx_pat))
				return usage_error("profile", "profile: more than %zu "
						   "--nvtx-include patterns",
						   ARRAY_SIZE(nvtx_pat));
			nvtx_pat[nnvtx++] = optarg;
			break;
		case OPT_DEVICE:
			if (parse_long(optarg, &device) || device < 0 || device >= 1024)
				return usage_error("profile", "profile: bad --device '%s' (a "
						   "CUDA device ordinal, 0 or more)", optarg);
			break;
		case OPT_BASELINE:
			baseline = 1;
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return usage_error("profile", "profile: unknown or incomplete "
					   "option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_error("profile", "profile: no COMMAND to run (fuseprof "
				   "profile [OPTION]... -- COMMAND [ARG]...)");
	if (!*db)
		return usage_error("profile", "profile: --db: empty path");
	if (metrics) {
		if (group_load(&group, metrics))
			return EXIT_USAGE;
		for (int i = 0; i < group.ncounters; i++)
			strbuf_addf(&counters, "%s%s", i ? "\n" : "", group.counters[i]);
		r.counters = group.name;
	}
	if (tag && !*tag)
		return usage_error("profile", "profile: --tag: empty tag");
	{
		/* %h, %p, %r: one file per host, process or rank */
		struct launcher_rank lr;
		char host[256] = "localhost", why[160];

		launcher_rank(&lr);
		if (gethostname(host, sizeof host) != 0)
			snprintf(host, sizeof host, "localhost");
		host[sizeof host - 1] = '\0';
		if (!(dbx = launcher_expand(db, host, (long)getpid(), lr.rank, why, sizeof why)))
			return usage_error("profile", "profile: bad --db '%s': %s", db, why);
	}
	if (filter) {
		regex_t re;
		char why[256];
		int e = regcomp(&re, filter, REG_EXTENDED | REG_NOSUB);

		if (e) {
			regerror(e, &re, why, sizeof why);
			free(dbx);
			return usage_error("profile", "profile: bad --kernel-filter "
					   "'%s': %s", filter, why);
		}
		regfree(&re);
	}
	/* Checked before anything is written: a refusal leaves no run. */
	{
		static const char *const taken[] = { "CUDA_INJECTION64_PATH",
						     "NVTX_INJECTION64_PATH" };

		for (size_t i = 0; i < ARRAY_SIZE(taken); i++) {
			const char *v = getenv(taken[i]);

			if (v && *v) {
				error("profile: another profiler is attached: %s is "
				      "set ('%s'); run fuseprof profile outside it",
				      taken[i], v);
				free(dbx);
				return EXIT_FAIL;
			}
		}
	}
	{
		/* Absolute, as the database: the program may change folders. */
		char *found = own_file_path(FP_INJECT_LIB, FP_PKGLIBDIR);

		lib = absolute(found);
		free(found);
	}
	if (access(lib, R_OK) != 0) {
		error("profile: cannot use the collector '%s': %s (set "
		      "FUSEPROF_EXEC_PATH to the folder holding " FP_INJECT_LIB
		      ", or reinstall fuseprof)", lib, strerror(errno));
		goto out;
	}
	prog = resolve_command(argv[optind], &code);
	if (!prog)
		goto out;

	dbabs = absolute(dbx);
	/* fuseprof's own options are part of the run's record */
	cmdline = command_line(argc, argv);
	r.command_line = cmdline;
	r.tag = tag;
	if (store_open(&st, dbabs, STORE_CREATE) || store_begin_run(st, &r, &run)) {
		code = EXIT_FAIL;
		goto out;
	}
	/* As system(3) does: Ctrl-C and Ctrl-\ are the program's to take;
	 * this process lives on to end the run. */
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	memset(&fwd, 0, sizeof fwd);
	fwd.sa_handler = forward;
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);
	if (baseline) {
		/* The program alone first, in fuseprof's environment (no
		 * collector is set yet): its wall time is the summary's
		 * "without the collector". */
		double b0 = now_seconds();
		char *how;

		if (run_waited(prog, argv + optind, " (--baseline)", &wstatus, &code, &note)) {
			store_finish_run(st, run, "failed", note);
			goto out_signals;
		}
		plain_s = now_seconds() - b0;
		how = how_it_ended(wstatus, &code);
		if (WIFSIGNALED(wstatus)) {
			/* Ctrl-C or a kill meant for the whole command. */
			error("profile: '%s' %s in its run without the collector "
			      "(--baseline): nothing profiled", argv[optind], how);
			note = xasprintf("the run without the collector (--baseline) %s; "
					 "nothing profiled", how);
			store_finish_run(st, run, "aborted", note);
			free(how);
			goto out_signals;
		}
		if (code)
			warning("profile: '%s' %s in its run without the collector "
				"(--baseline); profiling it all the same", argv[optind], how);
		free(how);
		code = EXIT_FAIL;
	}
	snprintf(runbuf, sizeof runbuf, "%lld", run);
	snprintf(maxbuf, sizeof maxbuf, "%ld", max_kernels);
	snprintf(devbuf, sizeof devbuf, "%ld", device);
	for (size_t i = 0; i < nnvtx; i++)
		strbuf_addf(&nvtx, "%s%s", i ? "\n" : "", nvtx_pat[i]);
	if (setenv("CUDA_INJECTION64_PATH", lib, 1) ||
	    setenv("NVTX_INJECTION64_PATH", lib, 1) ||
	    setenv(FP_ENV_PROFILE_DB, dbabs, 1) || setenv(FP_ENV_PROFILE_RUN, runbuf, 1) ||
	    (filter && setenv(FP_ENV_PROFILE_FILTER, filter, 1)) ||
	    (max_kernels && setenv(FP_ENV_PROFILE_MAX, maxbuf, 1)) ||
	    (nvtx.len && setenv(FP_ENV_PROFILE_NVTX, strbuf_str(&nvtx), 1)) ||
	    (device >= 0 && setenv(FP_ENV_PROFILE_DEVICE, devbuf, 1)) ||
	    (counters.len && setenv(FP_ENV_PROFILE_COUNTERS, strbuf_str(&counters), 1))) {
		error("profile: cannot set the program's environment: %s", strerror(errno));
		store_finish_run(st, run, "failed", "cannot set the environment");
		code = EXIT_FAIL;
		goto out_signals;
	}

	t0 = now_seconds();
	if (run_waited(prog, argv + optind, "", &wstatus, &code, &note)) {
		store_finish_run(st, run, "failed", note);
		goto out_signals;
	}
	ended = how_it_ended(wstatus, &code);

	if (tally_run(st, run, &t)) {
		store_finish_run(st, run, "failed", "cannot read what the processes recorded");
		goto out_signals;
	}
	if (t.busy && !t.complete && !t.killed) {
		error("profile: another profiler held CUPTI in '%s': nothing "
		      "recorded", argv[optind]);
		status = "failed";
		note = xasprintf("another profiler held CUPTI; the program %s", ended);
	} else if (t.failed && t.seen == 0) {
		error("profile: the collector could not start in '%s' (see its "
		      "message above): nothing recorded", argv[optind]);
		status = "failed";
		note = xasprintf("the collector failed to start; the program %s", ended);
	} else if (t.seen == 0) {
		warning("profile: '%s' ran no CUDA kernel%s: nothing to record",
			argv[optind], t.procs ? "" : " (no process initialised CUDA)");
		status = "failed";
		note = xasprintf("no CUDA work; the program %s", ended);
	} else {
		status = WIFSIGNALED(wstatus) ? "aborted" : "complete";
		char plain[64] = "";

		if (plain_s >= 0)
			snprintf(plain, sizeof plain, " (%.1f s without the collector)",
				 plain_s);
		note = xasprintf("the program %s after %.1f s%s; %lld process%s, "
				 "%lld kernels seen, %lld recorded, %lld filtered, "
				 "%lld over --max-kernels, %lld dropped%s%s",
				 ended, now_seconds() - t0, plain, t.procs,
				 t.procs == 1 ? "" : "es", t.seen, t.recorded,
				 t.filtered, t.over_limit, t.dropped,
				 t.killed ? "; killed: " : "",
				 t.killed ? t.last_killed : "");
	}
	if (metrics && t.counted)
		ensure_ceilings(st, run, dbabs);
	if (store_finish_run(st, run, status, note))
		code = code ? code : EXIT_FAIL;
	fprintf(stderr, "fuseprof: profile: run %lld%s%s%s: %lld process%s, %lld ops, "
		"%lld kernels seen, %lld recorded (%lld filtered, %lld over "
		"--max-kernels), %lld dropped", run, tag ? " ('" : "",
		tag ? tag : "", tag ? "')" : "", t.procs, t.procs == 1 ? "" : "es",
		t.ops, t.seen, t.recorded, t.filtered, t.over_limit, t.dropped);
	if (metrics)
		fprintf(stderr, ", %lld counted (%s)", t.counted, group.name);
	wall = now_seconds() - t0;
	fprintf(stderr, ", %.1f s", wall);
	if (plain_s > 0)
		fprintf(stderr, " (%.1f s without the collector: %+.0f %%)", plain_s,
			100.0 * (wall - plain_s) / plain_s);
	else if (plain_s == 0)
		fprintf(stderr, " (%.1f s without the collector)", plain_s);
	fputc('\n', stderr);
	if (metrics && t.counted < t.recorded)
		warning("profile: %lld of %lld recorded kernels have no counters (graph "
			"launches, launches fuseprof cannot intercept, or counting "
			"stopped: see 'fuseprof query \"SELECT pid, note FROM procs "
			"WHERE run_id = %lld\"')", t.recorded - t.counted, t.recorded, run);
	if (metrics && t.partial)
		warning("profile: %lld of %lld counted kernel slots have only some of "
			"%s's metrics (collectors take turns of launches; a kernel "
			"launched fewer times than the turns go round misses some): "
			"run more iterations for all of them", t.partial, t.slots,
			group.name);
	if (t.dropped)
		warning("profile: %lld records were dropped (CUPTI's buffers were "
			"full, or a commit failed): the ops miss them", t.dropped);
	if (t.killed)
		warning("profile: %lld process%s killed before finishing (%s): "
			"what it committed is kept", t.killed,
			t.killed == 1 ? " was" : "es were", t.last_killed);
	fprintf(stderr, "fuseprof: profile: '%s' %s\n", argv[optind], ended);

out_signals:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
out:
	strbuf_release(&nvtx);
	strbuf_release(&counters);
	group_release(&group);
	store_close(st);
	free(t.last_killed);
	free(note);
	free(ended);
	free(cmdline);
	free(dbabs);
	free(dbx);
	free(prog);
	free(lib);
	return code;
}

const struct cmd_entry cmd_profile_entry = {
	"profile", "run any CUDA program under the collector; its NVTX ranges become ops",
	cmd_profile
};
