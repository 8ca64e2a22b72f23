/* proc.h - which process wrote a run, and whether it is still there: the
 * store records host, pid and start time with each run, and readers show a
 * 'running' run whose process is gone as 'killed'. */
#ifndef FP_PROC_H
#define FP_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* Write process pid's identity to buf (n bytes): "<boot id> <start>", the
 * kernel's boot id (/proc/sys/kernel/random/boot_id) and the process's
 * start time in clock ticks since boot (field 22 of /proc/PID/stat). A pid
 * names one process only between its start and its end; with the start
 * time and the boot it names one process for good. Returns 0, or -1 (no
 * message) where /proc does not tell, or the process does not exist. */
int proc_start(pid_t pid, char *buf, size_t n);

/* This machine's host name into buf (n bytes; "" when unknown). */
void proc_host(char *buf, size_t n);

/* The status to show for a run stored with status, host, pid and
 * proc_start (any may be NULL or 0): status itself, except that a
 * 'running' run started on this host whose process is gone (no such pid,
 * or a process with another start time holds the pid now, or the machine
 * rebooted) is "killed". A run from another host, or one without a pid,
 * stays 'running': nothing here can tell. Reads /proc and calls kill(pid,
 * 0); writes nothing. The result is status or a static string. */
const char *proc_run_status(const char *status, const char *host,
			    long long pid, const char *start);

#endif
