/* cmd-merge.c - `fuseprof merge OUT.db IN.db...`: one database from many
 * (one a rank, one a machine, one a night); the rows and their rules are
 * store/merge.c's. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "merge.h"
#include "store.h"
#include "util.h"

#define DEFAULT_JOIN_WINDOW_S 60

static void help(void)
{
	printf("Usage: fuseprof merge [OPTION]... OUT.db IN.db...\n"
	       "Add every run of each IN.db to OUT.db (created when missing): runs,\n"
	       "devices, ceilings, ops, samples, kernels, counters, and a profiled\n"
	       "run's processes, NVTX ranges and launches, with new ids. Each IN.db\n"
	       "is read, never written, and goes in whole in one transaction, or not\n"
	       "at all.\n"
	       "\n"
	       "What is there already is not added again, so merging a file twice,\n"
	       "or two copies of one run, adds nothing the second time:\n"
	       "  a run        the same kind, start time, host, pid, process start\n"
	       "               time and command line (the process that made it);\n"
	       "               a profiled run adds only its processes not there yet\n"
	       "  a device     the same uuid, driver and clocks\n"
	       "  a ceiling    the same device, name, unit, provenance, value, method,\n"
	       "               time of measurement and run\n"
	       "\n"
	       "Ranks: profiled runs ('fuseprof profile') with the same command line\n"
	       "and tag that started at most --join-window seconds apart are one run\n"
	       "of several ranks: 'srun fuseprof profile --db run-%%r.db -- ...' gives\n"
	       "every rank the same command line. Each joins the run in OUT.db of\n"
	       "that command line and tag that started nearest, as if all had written\n"
	       "into one file: one run holding every rank's processes (table procs:\n"
	       "pid, host, rank), an op a range path with the samples of every rank,\n"
	       "a kernel slot a name and launch configuration, their medians\n"
	       "recomputed. The run keeps the first rank's status, device and note.\n"
	       "Ranks on two hosts may share a pid: rows name their process by its\n"
	       "row, not its pid. Runs of 'fuseprof run' never join.\n"
	       "\n"
	       "An IN.db of an older schema is read as its migrations would make it;\n"
	       "one of a newer schema, one that is not a fuseprof database or not\n"
	       "SQLite, or one damaged, is named on one line and skipped: the others\n"
	       "are merged, and merge exits 1. Fix it and merge again: nothing is\n"
	       "added twice. Memory stays bounded however large the inputs: rows\n"
	       "stream from file to file.\n"
	       "\n"
	       "Prints a line an input: what it added and what was there already.\n"
	       "\n"
	       "Options:\n"
	       "      --join-window S  profiled runs started at most S seconds apart\n"
	       "                       join (default %d; 0: never)\n"
	       "  -h, --help           show this help and exit\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof merge all.db node1.db node2.db       # runs of two machines\n"
	       "  fuseprof merge all.db /tmp/*-r*.db            # a profile of every rank\n"
	       "  fuseprof merge --join-window 0 all.db a.db b.db   # ranks stay runs\n"
	       "  fuseprof report --db all.db --run latest\n"
	       "\n"
	       "Exit status: 0 every input merged, 1 an input or OUT.db refused,\n"
	       "2 usage error.\n", DEFAULT_JOIN_WINDOW_S);
}

static int same_file(const char *a, const struct stat *sa, const char *b)
{
	struct stat sb;

	return !strcmp(a, b) || (sa && stat(b, &sb) == 0 && sa->st_dev == sb.st_dev &&
				 sa->st_ino == sb.st_ino);
}

static void print_stats(const char *in, const struct store_merge_stats *n)
{
	printf("%s: %lld run%s added, %lld joined, %lld already there", in,
	       n->runs_added, n->runs_added == 1 ? "" : "s", n->runs_joined,
	       n->runs_present);
	printf(" (%lld ops, %lld samples, %lld kernels, %lld counters", n->ops,
	       n->samples, n->kernels, n->counters);
	if (n->procs || n->launches || n->ranges)
		printf(", %lld processes, %lld ranges, %lld launches", n->procs,
		       n->ranges, n->launches);
	printf("; %lld devices, %lld ceilings)\n", n->devices, n->ceilings);
}

static int cmd_merge(int argc, char **argv)
{
	enum { OPT_WINDOW = 256 };
	static const struct option opts[] = {
		{ "join-window", required_argument, NULL, OPT_WINDOW },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_merge_opts o = { .join_window_s = DEFAULT_JOIN_WINDOW_S };
	struct store *st = NULL;
	struct stat out_sb;
	const char *out;
	int c, failed = 0, have_out, tty = isatty(STDERR_FILENO);
	long v;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_WINDOW:
			if (parse_long(optarg, &v) || v < 0 || v > 86400 * 365)
				return usage_error("merge", "merge: bad --join-window '%s' "
						   "(seconds, 0 or more)", optarg);
			o.join_window_s = (double)v;
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return usage_error("merge", "merge: unknown or incomplete option "
					   "'%s'", argv[optind - 1]);
		}
	}
	if (argc - optind < 2)
		return usage_error("merge", "merge: give OUT.db and at least one IN.db");
	out = argv[optind];
	if (!*out)
		return usage_error("merge", "merge: OUT.db: empty path");
	have_out = stat(out, &out_sb) == 0;
	for (int i = optind + 1; i < argc; i++) {
		if (!*argv[i])
			return usage_error("merge", "merge: IN.db: empty path");
		if (same_file(out, have_out ? &out_sb : NULL, argv[i]))
			return usage_error("merge", "merge: '%s' is OUT.db itself",
					   argv[i]);
	}
	if (store_open(&st, out, STORE_CREATE))
		return EXIT_FAIL;
	for (int i = optind + 1; i < argc; i++) {
		struct store_merge_stats n;

		/* The cursor back at the line's start: an error line, longer,
		 * overwrites it. */
		if (tty)
			fprintf(stderr, "\r\033[K[merging %d/%d] %s\r", i - optind,
				argc - optind - 1, argv[i]);
		if (store_merge(st, argv[i], &o, &n)) {
			failed++;
			continue;
		}
		if (tty)
			fprintf(stderr, "\r\033[K");
		print_stats(argv[i], &n);
		fflush(stdout);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	store_close(st);
	return failed ? EXIT_FAIL : EXIT_OK;
}

const struct cmd_entry cmd_merge_entry = {
	"merge", "one database from many: runs of other files, ranks joined", cmd_merge
};
