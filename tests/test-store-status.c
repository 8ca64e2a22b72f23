/* test-store-status.c - a run whose process is gone reads 'killed': the
 * store records host, pid and process start time with each run, and a
 * reader's v_runs judges them, without writing to the file. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "store.h"
#include "test.h"
#include "util.h"

static char dir[] = "/tmp/fuseprof-test-status.XXXXXX";

static char *query_text(struct store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;
	char *v = NULL;

	ASSERT_EQ(sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		v = xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return v;
}

static void exec_ok(struct store *st, const char *sql)
{
	if (sqlite3_exec(store_db(st), sql, NULL, NULL, NULL) != SQLITE_OK)
		FAIL("%s: %s", sql, sqlite3_errmsg(store_db(st)));
}

static void assert_status(struct store *st, long long run, const char *want)
{
	char sql[128], *got;

	snprintf(sql, sizeof sql, "SELECT status FROM v_runs WHERE run_id = %lld", run);
	got = query_text(st, sql);
	if (!got || strcmp(got, want))
		FAIL("run %lld reads '%s', wanted '%s'", run, got ? got : "(none)", want);
	free(got);
}

/* A pid that was alive a moment ago and is gone now. */
static pid_t dead_pid(void)
{
	pid_t p = fork();

	ASSERT(p >= 0);
	if (p == 0)
		_exit(0);
	ASSERT_EQ(waitpid(p, NULL, 0), p);
	return p;
}

int main(void)
{
	struct store_run r = { .tool_version = PACKAGE_VERSION, .command_line = "t" };
	struct store *st = NULL;
	char path[256], mine[128], theirs[128], earlier[160], host[256], sql[512];
	long long id;
	pid_t child, gone;
	struct stat before, after;
	char *v;

	if (proc_start(getpid(), mine, sizeof mine))
		SKIP("no /proc/PID/stat here: the start time cannot be read");
	proc_host(host, sizeof host);
	if (!host[0])
		SKIP("no host name");
	ASSERT(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/status.db", dir);

	/* The writer records this process: host, pid and start time. */
	ASSERT_EQ(store_open(&st, path, STORE_CREATE), 0);
	ASSERT_EQ(store_begin_run(st, &r, &id), 0);
	ASSERT_EQ(id, 1);
	v = query_text(st, "SELECT host FROM runs WHERE id = 1");
	ASSERT_STR_EQ(v, host);
	free(v);
	v = query_text(st, "SELECT pid FROM runs WHERE id = 1");
	ASSERT_EQ(atoll(v), getpid());
	free(v);
	v = query_text(st, "SELECT proc_start FROM runs WHERE id = 1");
	ASSERT_STR_EQ(v, mine);
	free(v);
	v = query_text(st, "PRAGMA user_version");
	ASSERT_EQ(atoll(v), STORE_SCHEMA_VERSION);
	free(v);

	/* A live process with another start time than ours. */
	child = fork();
	ASSERT(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	ASSERT_EQ(proc_start(child, theirs, sizeof theirs), 0);
	/* What a process that held the child's pid before it recorded: the
	 * same boot, an earlier start (tick 1). */
	snprintf(earlier, sizeof earlier, "%.*s 1", (int)strcspn(theirs, " "), theirs);
	ASSERT(strcmp(earlier, theirs));
	gone = dead_pid();

	/* Runs 2..8, each 'running' unless said otherwise. */
	for (int i = 2; i <= 8; i++)
		ASSERT_EQ(store_begin_run(st, &r, &id), 0);
	/* 2: the pid now belongs to another process (the child): killed. */
	snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld, proc_start = '%s' "
		 "WHERE id = 2", (long)child, earlier);
	exec_ok(st, sql);
	/* 3: the child's own run, still going. */
	snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld, proc_start = '%s' "
		 "WHERE id = 3", (long)child, theirs);
	exec_ok(st, sql);
	/* 4: an older run with no start time and a live pid: cannot tell. */
	snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld, proc_start = NULL "
		 "WHERE id = 4", (long)child);
	exec_ok(st, sql);
	/* 5: a process that is gone: killed, with or without a start time. */
	snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld WHERE id = 5", (long)gone);
	exec_ok(st, sql);
	snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld, proc_start = NULL "
		 "WHERE id = 6", (long)gone);
	exec_ok(st, sql);
	/* 7: another host's run, its pid gone here: nothing can tell. */
	snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld, host = 'elsewhere.' || "
		 "host WHERE id = 7", (long)gone);
	exec_ok(st, sql);
	/* 8: finished runs keep their status, process or not. */
	snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld, status = 'aborted' "
		 "WHERE id = 8", (long)gone);
	exec_ok(st, sql);
	store_close(st);

	ASSERT_EQ(stat(path, &before), 0);
	ASSERT_EQ(store_open(&st, path, STORE_READONLY), 0);
	assert_status(st, 1, "running");  /* this process */
	assert_status(st, 2, "killed");
	assert_status(st, 3, "running");
	assert_status(st, 4, "running");
	assert_status(st, 5, "killed");
	assert_status(st, 6, "killed");
	assert_status(st, 7, "running");
	assert_status(st, 8, "aborted");
	/* The file keeps what was stored: the judgement is the reader's. */
	v = query_text(st, "SELECT group_concat(status, ',') FROM "
			   "(SELECT status FROM runs ORDER BY id)");
	ASSERT_STR_EQ(v, "running,running,running,running,running,running,running,aborted");
	free(v);
	store_close(st);
	ASSERT_EQ(stat(path, &after), 0);
	ASSERT_EQ(after.st_size, before.st_size);
	ASSERT_EQ(after.st_mtime, before.st_mtime);

	/* Once the child is gone, its run is killed too. */
	kill(child, SIGKILL);
	ASSERT_EQ(waitpid(child, NULL, 0), child);
	ASSERT_EQ(store_open(&st, path, STORE_READONLY), 0);
	assert_status(st, 3, "killed");
	store_close(st);

	snprintf(sql, sizeof sql, "rm -rf '%s'", dir);
	return system(sql) == 0 ? 0 : TEST_HARD_ERROR;
}
