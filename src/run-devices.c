/* run-devices.c - `fuseprof run --device all` (or a list): one run over
 * several GPUs, one measuring process a GPU (this program again, with
 * --device N --into-run RUN), all writing one database; this process
 * starts the run, waits for them, and finishes it. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "probes.h"
#include "run-ops.h"
#include "runloop.h"
#include "store.h"
#include "util.h"

/* The indices to measure on, checked against the n devices present.
 * Returns their number (into idx), or -1 after one line naming the first
 * index that is not there. */
static int device_list(const struct run_opts *o, int n, int *idx)
{
	if (o->all_devices) {
		for (int i = 0; i < n && i < RUN_MAX_DEVICES; i++)
			idx[i] = i;
		return n < RUN_MAX_DEVICES ? n : RUN_MAX_DEVICES;
	}
	for (int i = 0; i < o->ndevices; i++) {
		if (o->devices[i] >= n)
			return error("run: --device: no device %d: this machine has %d "
				     "(indices 0 to %d)", o->devices[i], n, n - 1);
		idx[i] = o->devices[i];
	}
	return o->ndevices;
}

/* Start one measuring process for device dev: argv (the command's own
 * vector) with --device dev --into-run run appended, which override any
 * --device before them, and for the first device --run-device (its
 * device becomes the run's). Returns its pid, or -1 (reported). */
static pid_t spawn(int argc, char **argv, int dev, long long run, int first)
{
	char **args = xcalloc((size_t)argc + 7, sizeof *args);
	char devs[16], runs[32];
	pid_t pid;

	snprintf(devs, sizeof devs, "%d", dev);
	snprintf(runs, sizeof runs, "%lld", run);
	args[0] = "/proc/self/exe";
	for (int i = 0; i < argc; i++)
		args[i + 1] = argv[i];
	args[argc + 1] = "--device";
	args[argc + 2] = devs;
	args[argc + 3] = "--into-run";
	args[argc + 4] = runs;
	args[argc + 5] = first ? "--run-device" : NULL;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		execv(args[0], args);
		fprintf(stderr, "fuseprof: cannot run the measuring process of "
			"device %d: %s\n", dev, strerror(errno));
		_exit(EXIT_FAIL);
	}
	free(args);
	if (pid < 0)
		return error("cannot start the measuring process of device %d: %s",
			     dev, strerror(errno));
	return pid;
}

/* How many devices the run's ops ran on; -1 on error (reported). */
static long long stored_devices(struct store *st, long long run)
{
	sqlite3_stmt *s = NULL;
	long long n = -1;

	if (sqlite3_prepare_v2(store_db(st), "SELECT count(DISTINCT device_id) "
			       "FROM ops WHERE run_id = ?1", -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot read ops from");
	sqlite3_bind_int64(s, 1, run);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	else
		store_error(st, "cannot read ops from");
	sqlite3_finalize(s);
	return n;
}

/* Whether a measuring process marked the run failed. */
static int run_failed(struct store *st, long long run)
{
	sqlite3_stmt *s = NULL;
	int yes = 0;

	if (sqlite3_prepare_v2(store_db(st), "SELECT status = 'failed' FROM runs "
			       "WHERE id = ?1", -1, &s, NULL) != SQLITE_OK)
		return 1;
	sqlite3_bind_int64(s, 1, run);
	if (sqlite3_step(s) == SQLITE_ROW)
		yes = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return yes;
}

int run_devices(const struct run_opts *o, int argc, char **argv)
{
	int idx[RUN_MAX_DEVICES], n = 0, ndev, status = EXIT_OK;
	pid_t pids[RUN_MAX_DEVICES];
	struct store *st = NULL;
	struct store_run sr;
	struct sigaction ign, old_int;
	long long run_id = 0;
	int interrupted = 0, failed = 0;
	struct strbuf note = STRBUF_INIT;
	char host[256] = "";

	/* What a run checks before it touches a GPU, here once: a bad op
	 * list or counter group is one line, and no run is started. */
	{
		struct op_list ops = { NULL, 0, 0 };
		struct counter_group group;
		int rc = build_ops(o, &ops);

		free(ops.v);
		if (rc)
			return rc;
		memset(&group, 0, sizeof group);
		if (o->counters && group_load(&group, o->group))
			return EXIT_FAIL;
		if (o->counters)
			group_release(&group);
	}
	if (probe_device_count(&n))
		return EXIT_FAIL;
	ndev = device_list(o, n, idx);
	if (ndev < 0)
		return EXIT_FAIL;
	if (ndev == 0) {
		error("run: --device all: no device found");
		return EXIT_FAIL;
	}
	if (store_open(&st, o->db, STORE_CREATE))
		return EXIT_FAIL;
	gethostname(host, sizeof host - 1);
	memset(&sr, 0, sizeof sr);
	sr.tool_version = PACKAGE_VERSION;
	sr.host = host;
	sr.command_line = o->command_line;
	sr.tag = o->tag;
	sr.counters = o->counters ? NULL : "none";
	if (store_begin_run(st, &sr, &run_id))
		goto out_fail;
	fprintf(stderr, "fuseprof: run %lld on %d devices:", run_id, ndev);
	for (int i = 0; i < ndev; i++)
		fprintf(stderr, " %d", idx[i]);
	fputc('\n', stderr);

	/* Ctrl-C reaches every process of the terminal's group: the
	 * measuring ones finish their op and exit 130; this one waits for
	 * them and marks the run. */
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	for (int i = 0; i < ndev; i++) {
		pids[i] = spawn(argc, argv, idx[i], run_id, i == 0);
		if (pids[i] < 0) {
			failed = 1;
			strbuf_addf(&note, "%sdevice %d: not started", note.len ? "; " : "",
				    idx[i]);
		}
	}
	for (int i = 0; i < ndev; i++) {
		int ws = 0, rc;
		pid_t got;

		if (pids[i] < 0)
			continue;
		while ((got = waitpid(pids[i], &ws, 0)) < 0 && errno == EINTR)
			;
		if (got < 0) {
			warning("run %lld: cannot wait for the process of device %d: %s",
				run_id, idx[i], strerror(errno));
			failed = 1;
			continue;
		}
		rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		if (rc == 130 || (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGINT))
			interrupted = 1;
		else if (rc == EXIT_FAIL && WIFEXITED(ws))
			status = status == EXIT_OK ? EXIT_FAIL : status;
		else if (rc != EXIT_OK)
			failed = 1;
		strbuf_addf(&note, "%sdevice %d: %s %d", note.len ? "; " : "", idx[i],
			    WIFEXITED(ws) ? "exit" : "signal",
			    WIFEXITED(ws) ? rc : WTERMSIG(ws));
	}
	sigaction(SIGINT, &old_int, NULL);
	/* A device that stored no op failed outside its ops (its GPU could
	 * not be opened, say), whatever its exit status; a process that
	 * failed to store an op marked the run failed already. */
	if (!interrupted && (stored_devices(st, run_id) < ndev ||
			     run_failed(st, run_id)))
		failed = 1;
	if (store_finish_run(st, run_id, interrupted ? "aborted" : failed ? "failed"
			     : "complete", strbuf_str(&note)))
		failed = 1;
	run_print_summary(st, run_id);
	fprintf(stderr, "fuseprof: run %lld: %s\n", run_id, strbuf_str(&note));
	if (interrupted)
		status = 130;
	else if (failed)
		status = EXIT_FAIL;
	store_close(st);
	strbuf_release(&note);
	return status;

out_fail:
	if (run_id)
		store_finish_run(st, run_id, "failed", "could not start the devices");
	store_close(st);
	strbuf_release(&note);
	return EXIT_FAIL;
}
