/* proc.c - which process wrote a run, and whether it is still there. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

/* The first line of a small file, without its newline; -1 when unreadable. */
static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	int rc = -1;

	if (!f)
		return -1;
	if (fgets(buf, (int)n, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		rc = 0;
	}
	fclose(f);
	return rc;
}

int proc_start(pid_t pid, char *buf, size_t n)
{
	char path[64], stat[1024], boot[64];
	unsigned long long ticks;
	const char *p;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (read_line(path, stat, sizeof stat))
		return -1;
	/* The command name (field 2) is in parentheses and may hold spaces
	 * and parentheses itself: count fields from the last ')'. After it
	 * come field 3 (state) onwards; the start time is field 22. */
	p = strrchr(stat, ')');
	if (!p)
		return -1;
	for (int field = 2; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	if (sscanf(p + 1, "%llu", &ticks) != 1)
		return -1;
	if (read_line("/proc/sys/kernel/random/boot_id", boot, sizeof boot))
		boot[0] = '\0';
	if ((size_t)snprintf(buf, n, "%s %llu", boot[0] ? boot : "-", ticks) >= n)
		return -1;
	return 0;
}

void proc_host(char *buf, size_t n)
{
	if (n == 0)
		return;
	if (gethostname(buf, n - 1) != 0)
		buf[0] = '\0';
	buf[n - 1] = '\0';
}

const char *proc_run_status(const char *status, const char *host,
			    long long pid, const char *start)
{
	char here[256], now[128];

	if (!status || strcmp(status, "running") || !host || pid <= 0 ||
	    pid != (pid_t)pid)
		return status;
	proc_host(here, sizeof here);
	if (!here[0] || strcmp(host, here))
		return status;  /* another machine's process: cannot tell */
	/* EPERM: a process of another user holds the pid; only ESRCH says
	 * there is none. */
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return "killed";
	/* The pid is taken; by the run's process only if it started when the
	 * run's did (same boot, same tick). */
	if (start && *start && proc_start((pid_t)pid, now, sizeof now) == 0 &&
	    strcmp(start, now))
		return "killed";
	return status;
}
