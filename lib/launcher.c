/* launcher.c - a process's rank from its launcher's variables, and the
 * placeholders of per-process file names. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher.h"
#include "util.h"

/* The value of a variable holding a non-negative integer, else -1. */
static long env_index(const char *name)
{
	const char *v = getenv(name);
	long n;

	if (!v || !*v || parse_long(v, &n) || n < 0)
		return -1;
	return n;
}

int launcher_rank(struct launcher_rank *r)
{
	static const struct {
		const char *launcher, *rank, *local, *world;
	} known[] = {
		{ "torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE" },
		{ "openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
		  "OMPI_COMM_WORLD_SIZE" },
		{ "pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE" },
		{ "slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS" },
	};

	r->launcher = NULL;
	r->rank = r->local_rank = r->world_size = -1;
	for (size_t i = 0; i < ARRAY_SIZE(known); i++) {
		long rank = env_index(known[i].rank);

		if (rank < 0)
			continue;
		r->launcher = known[i].launcher;
		r->rank = rank;
		r->local_rank = env_index(known[i].local);
		r->world_size = env_index(known[i].world);
		return 1;
	}
	return 0;
}

char *launcher_expand(const char *path, const char *host, long pid, long rank,
		      char *why, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;

	for (const char *p = path; *p; p++) {
		if (*p != '%') {
			strbuf_addf(&sb, "%c", *p);
			continue;
		}
		switch (p[1]) {
		case 'h':
			strbuf_addstr(&sb, host);
			break;
		case 'p':
			strbuf_addf(&sb, "%ld", pid);
			break;
		case 'r':
			strbuf_addf(&sb, "%ld", rank < 0 ? 0 : rank);
			break;
		case '%':
			strbuf_addstr(&sb, "%");
			break;
		case '\0':
			strbuf_release(&sb);
			snprintf(why, n, "a '%%' ends it (%%h host, %%p pid, %%r rank, "
				 "%%%% a '%%')");
			return NULL;
		default:
			strbuf_release(&sb);
			snprintf(why, n, "unknown placeholder '%%%c' (%%h host, %%p pid, "
				 "%%r rank, %%%% a '%%')", p[1]);
			return NULL;
		}
		p++;
	}
	s = xstrdup(strbuf_str(&sb));
	strbuf_release(&sb);
	return s;
}
