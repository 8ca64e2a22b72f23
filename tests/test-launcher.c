/* test-launcher.c - a process's rank from each launcher's variables
 * (torchrun, Open MPI, PMI, Slurm; the first one set wins; bad values
 * read as unset), and per-process file name placeholders (%h %p %r %%;
 * an unknown one or a trailing '%' refused). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "launcher.h"
#include "test.h"

static const char *const vars[] = {
	"RANK", "LOCAL_RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
	"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
	"MPI_LOCALRANKID", "PMI_SIZE", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
};

static void clear(void)
{
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
}

static void expect(const char *launcher, long rank, long local, long world)
{
	struct launcher_rank r;

	ASSERT_EQ(launcher_rank(&r), launcher != NULL);
	if (launcher)
		ASSERT_STR_EQ(r.launcher, launcher);
	else
		ASSERT(r.launcher == NULL);
	ASSERT_EQ(r.rank, rank);
	ASSERT_EQ(r.local_rank, local);
	ASSERT_EQ(r.world_size, world);
}

int main(void)
{
	char *s, why[160];

	clear();
	expect(NULL, -1, -1, -1);
	setenv("SLURM_PROCID", "5", 1);
	setenv("SLURM_LOCALID", "1", 1);
	setenv("SLURM_NTASKS", "8", 1);
	expect("slurm", 5, 1, 8);
	setenv("PMI_RANK", "6", 1);
	setenv("PMI_SIZE", "16", 1);
	expect("pmi", 6, -1, 16);             /* before Slurm; no local rank */
	setenv("OMPI_COMM_WORLD_RANK", "7", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "32", 1);
	expect("openmpi", 7, 3, 32);
	setenv("RANK", "2", 1);
	setenv("LOCAL_RANK", "0", 1);
	setenv("WORLD_SIZE", "4", 1);
	expect("torchrun", 2, 0, 4);          /* torchrun first */
	setenv("RANK", "two", 1);
	expect("openmpi", 7, 3, 32);          /* not a number: unset */
	setenv("RANK", "-1", 1);
	expect("openmpi", 7, 3, 32);
	setenv("OMPI_COMM_WORLD_SIZE", "", 1);
	expect("openmpi", 7, 3, -1);
	clear();

	s = launcher_expand("/scratch/%h/run-%r-%p.db", "node7", 4242, 3, why, sizeof why);
	ASSERT_STR_EQ(s, "/scratch/node7/run-3-4242.db");
	free(s);
	s = launcher_expand("plain.db", "h", 1, -1, why, sizeof why);
	ASSERT_STR_EQ(s, "plain.db");
	free(s);
	s = launcher_expand("r%r-100%%.db", "h", 1, -1, why, sizeof why);  /* no rank: 0 */
	ASSERT_STR_EQ(s, "r0-100%.db");
	free(s);
	ASSERT(launcher_expand("a%x.db", "h", 1, 0, why, sizeof why) == NULL);
	ASSERT(strstr(why, "'%x'") != NULL);
	ASSERT(launcher_expand("a.db%", "h", 1, 0, why, sizeof why) == NULL);
	ASSERT(strstr(why, "ends it") != NULL);
	return 0;
}
