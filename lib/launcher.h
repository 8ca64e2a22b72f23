/* launcher.h - where a process stands in a multi-process job, from the
 * variables its launcher sets (torchrun, Open MPI, MPICH/Intel MPI's PMI,
 * Slurm), and the placeholders of a per-process file name. */
#ifndef FP_LAUNCHER_H
#define FP_LAUNCHER_H

#include <stddef.h>

struct launcher_rank {
	const char *launcher;  /* "torchrun", "openmpi", "pmi", "slurm"; NULL:
	                          none of them set a rank */
	long rank, local_rank, world_size;  /* -1 where unknown */
};

/* Fill *r from getenv: the first launcher whose rank variable is set to a
 * non-negative integer, in this order: torchrun (RANK, LOCAL_RANK,
 * WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE), PMI
 * (PMI_RANK, MPI_LOCALRANKID, PMI_SIZE), Slurm (SLURM_PROCID,
 * SLURM_LOCALID, SLURM_NTASKS). A launcher's other variables that are
 * missing or not numbers read -1. Returns 1 when a rank was found, else 0
 * (all fields -1, launcher NULL). */
int launcher_rank(struct launcher_rank *r);

/* path with its placeholders replaced: %h the host name, %p pid, %r rank
 * (0 when the launcher set none), %% a '%'. Returns a new string, or NULL
 * with why (n bytes) saying what was wrong: an unknown placeholder ("%x")
 * or a '%' ending the path. */
char *launcher_expand(const char *path, const char *host, long pid, long rank,
		      char *why, size_t n);

#endif
