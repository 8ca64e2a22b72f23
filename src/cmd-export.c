/* cmd-export.c - `fuseprof export --format perfetto RUN`: a run as a trace
 * that Perfetto (ui.perfetto.dev) and chrome://tracing open; the trace
 * itself is reports/trace.c's. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "store.h"
#include "trace.h"
#include "util.h"

static void help(void)
{
	printf("Usage: fuseprof export [OPTION]... [RUN]\n"
	       "Write run RUN (default: latest; an id, 'latest', 'latest~N' or a tag)\n"
	       "to stdout as a trace that Perfetto (ui.perfetto.dev) and\n"
	       "chrome://tracing open: the Trace Event Format's JSON object form,\n"
	       "{\"traceEvents\": [...], \"displayTimeUnit\": \"ns\", \"otherData\": {...}},\n"
	       "every slice a complete event (\"ph\": \"X\") with \"ts\" and \"dur\" in\n"
	       "microseconds (3 decimals: exact to the ns).\n"
	       "\n"
	       "A profiled run ('fuseprof profile'): each profiled process is a\n"
	       "process of the trace; each GPU stream a track of its kernels (args:\n"
	       "op, correlation id, grid, block, registers, shared bytes); each thread\n"
	       "that opened NVTX ranges a track of its range instances, nested as\n"
	       "they were (args: path, domain). Timestamps are the collector's one\n"
	       "clock for every process of the host, counted from the run's first\n"
	       "event (otherData.t0_ns, ns since the epoch). A slice that would\n"
	       "overlap another of its track without nesting in it (kernels of one\n"
	       "stream overlapping under programmatic launch, start/end ranges)\n"
	       "goes on a track of its own beside it, named with ' (2)'.\n"
	       "\n"
	       "A 'fuseprof run' stores no launch times, only each op's samples and\n"
	       "each kernel's median: its ops are laid end to end on one track, each\n"
	       "a slice as long as its median time (or its kernels', if longer)\n"
	       "holding its kernels one after the other, each launch at its median\n"
	       "duration. Lengths are measured; positions are not when they ran\n"
	       "(otherData.timeline says 'laid out').\n"
	       "\n"
	       "Options:\n"
	       "      --db PATH       database file (default: $FUSEPROF_DB or fuseprof.db)\n"
	       "  -f, --format FMT    perfetto (the only one, and the default)\n"
	       "  -h, --help          show this help and exit\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof export --format perfetto latest > trace.json\n"
	       "  fuseprof export --db results.db eager > eager.json   # a tag\n"
	       "\n"
	       "Exit status: 0 success, 1 failure (no such run, unreadable database),\n"
	       "2 usage error.\n");
}

static int cmd_export(int argc, char **argv)
{
	enum { OPT_DB = 256 };
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *db = default_db_path(), *ref = "latest";
	struct trace_counts n;
	struct store *st = NULL;
	long long run;
	int c, rc = EXIT_FAIL;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			db = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "perfetto"))
				return usage_error("export", "export: unknown format '%s' "
						   "(use perfetto)", optarg);
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return usage_error("export", "export: unknown or incomplete "
					   "option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return usage_error("export", "export: give one run, got %d",
				   argc - optind);
	if (optind < argc)
		ref = argv[optind];
	if (!*db)
		return usage_error("export", "export: --db: empty path");
	if (check_default_db(db) || store_open(&st, db, STORE_READONLY) ||
	    store_resolve_run(st, ref, &run))
		goto out;
	if (trace_write(st, run, stdout, &n) == 0 && fflush(stdout) == 0 &&
	    !ferror(stdout))
		rc = EXIT_OK;
	else if (ferror(stdout))
		error("export: cannot write the trace: stdout failed");
out:
	store_close(st);
	return rc;
}

const struct cmd_entry cmd_export_entry = {
	"export", "write a run as a Perfetto / Chrome trace (JSON)", cmd_export
};
