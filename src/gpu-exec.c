/* gpu-exec.c - the commands that need the GPU libraries, as seen from the
 * `fuseprof` program: each one hands its command line to the program
 * fuseprof-gpu, which links CUDA, cuBLAS and CUPTI. Loading those libraries
 * takes about 0.1 s of CPU time at start-up, which every other command
 * (report, compare, query, list runs) would pay for nothing. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "util.h"

#ifndef FP_PKGLIBEXECDIR
#define FP_PKGLIBEXECDIR "/usr/local/libexec/fuseprof"
#endif


/* The folder of the running program, or "" when unknown. */
static const char *self_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	char *slash;

	if (n <= 0)
		return "";
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (!slash)
		return "";
	*slash = 0;
	return dir;
}

char *own_file_path(const char *name, const char *installed_dir)
{
	const char *env = getenv("FUSEPROF_EXEC_PATH");
	char *p;

	if (env && *env)
		return xasprintf("%s/%s", env, name);
	p = xasprintf("%s/%s", self_dir(), name);
	if (access(p, F_OK) == 0)
		return p;
	free(p);
	return xasprintf("%s/%s", installed_dir, name);
}

int gpu_exec(int argc, char **argv)
{
	/* The installed one is in $(pkglibexecdir). */
	char *prog = own_file_path(FP_GPU_PROGRAM_NAME, FP_PKGLIBEXECDIR);
	char **args = xcalloc((size_t)argc + 2, sizeof *args);
	int err;

	args[0] = prog;
	for (int i = 0; i < argc; i++)
		args[i + 1] = argv[i];
	fflush(NULL);
	execv(prog, args);
	err = errno;
	error("cannot run '%s': '%s': %s (set FUSEPROF_EXEC_PATH to the folder "
	      "holding " FP_GPU_PROGRAM_NAME ", or reinstall fuseprof)", argv[0], prog,
	      strerror(err));
	free(args);
	free(prog);
	return EXIT_FAIL;
}

/* The summaries must read as fuseprof-gpu's own (tests/test-cli.sh
 * compares the two --help listings). */
const struct cmd_entry cmd_run_entry = {
	"run", "measure ops on the GPU and store the results", gpu_exec
};

const struct cmd_entry cmd_ceilings_entry = {
	"ceilings", "measure or show the bandwidth and FLOP ceilings of a GPU", gpu_exec
};
