/* cmd-ceilings.c - `fuseprof ceilings`: measure the ceilings of a GPU (or
 * show those stored for it) and print them as a table. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "probes.h"
#include "run-ceilings.h"
#include "store.h"
#include "table.h"
#include "util.h"

static void help(void)
{
	printf("Usage: fuseprof ceilings [OPTION]...\n"
	       "Show the ceilings of a GPU: what the hardware allows, measured by\n"
	       "micro-kernels (DRAM copy and read bandwidth over buffers far larger than\n"
	       "L2, L2 bandwidth, FP32/FP64 FMA peaks, cuBLAS bf16/tf32 GEMM peaks) and\n"
	       "quoted by CUPTI (*.peak_sustained x clock, provenance 'theoretical').\n"
	       "They are measured once per device, driver and clocks and stored; later\n"
	       "calls (and 'fuseprof run') reuse them.\n"
	       "\n"
	       "Options:\n"
	       "      --db PATH      database file (default: $FUSEPROF_DB or fuseprof.db)\n"
	       "  -d, --device N     GPU index (default 0), or its UUID (GPU-..., as\n"
	       "                     nvidia-smi -L lists them)\n"
	       "      --remeasure    measure again even if ceilings are stored\n"
	       "  -a, --all          print the stored ceilings of every device; no GPU needed\n"
	       "  -f, --format FMT   table (default), csv, json or md\n"
	       "  -h, --help         show this help and exit\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof ceilings\n"
	       "  fuseprof ceilings --remeasure --device 1\n"
	       "  fuseprof ceilings --device GPU-5a3c6b1e-0e7f-2d4a-9c1b-7f00d2a1e9b4\n"
	       "  fuseprof ceilings --all --format csv --db results.db\n"
	       "\n"
	       "Exit status: 0 success, 1 failure (no GPU, unreadable database),\n"
	       "2 usage error.\n");
}

enum { OPT_DB = 256, OPT_REMEASURE };

static int cmd_ceilings(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "device", required_argument, NULL, 'd' },
		{ "remeasure", no_argument, NULL, OPT_REMEASURE },
		{ "all", no_argument, NULL, 'a' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *db = default_db_path(), *uuid = NULL;
	enum table_format fmt = TABLE_TEXT;
	struct probe_device dev;
	struct store_device sd;
	struct store *st = NULL;
	struct ceiling ceil[32];
	long long device_id = 0, missing = 0;
	char names[256];
	int c, device = 0, remeasure = 0, all = 0, n, rc = EXIT_FAIL;
	long v;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+d:af:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			db = optarg;
			break;
		case 'd':
			if (!strncmp(optarg, "GPU-", 4) && optarg[4]) {
				uuid = optarg;
				break;
			}
			if (parse_long(optarg, &v) || v < 0 || v > 1023)
				return usage_error("ceilings", "ceilings: --device: '%s' is "
						   "not a GPU index or UUID (GPU-...)", optarg);
			device = (int)v;
			uuid = NULL;
			break;
		case OPT_REMEASURE:
			remeasure = 1;
			break;
		case 'a':
			all = 1;
			break;
		case 'f':
			if (format_option("ceilings", optarg, &fmt))
				return EXIT_USAGE;
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return usage_error("ceilings", "ceilings: unknown or incomplete "
					   "option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("ceilings", "ceilings: unexpected argument '%s'",
				   argv[optind]);
	if (all && remeasure)
		return usage_error("ceilings", "ceilings: --all shows stored ceilings; "
				   "it cannot --remeasure");
	if (all) {
		if (check_default_db(db) || store_open(&st, db, STORE_READONLY))
			return EXIT_FAIL;
		rc = ceilings_print(st, 0, fmt) ? EXIT_FAIL : EXIT_OK;
		store_close(st);
		return rc;
	}
	if ((uuid && probe_device_find(uuid, &device)) || probe_device_open(device, &dev))
		return EXIT_FAIL;
	if (store_open(&st, db, STORE_CREATE))
		return EXIT_FAIL;
	device_to_store(&dev, &sd);
	if (store_upsert_device(st, &sd, &device_id) ||
	    ceilings_missing(st, device_id, &missing, names, sizeof names))
		goto out_close;
	if (!remeasure && missing > 0 && missing < PROBE_NMEASURED)
		fprintf(stderr, "fuseprof: measuring the ceilings of %s again: none "
			"stored for %s\n", dev.name, names);
	if (remeasure || missing > 0) {
		n = ceilings_collect(&dev, ceil, (int)ARRAY_SIZE(ceil), 1);
		if (n < 0 || ceilings_save(st, device_id, 0, ceil, n))
			goto out_close;
	}
	rc = ceilings_print(st, device_id, fmt) ? EXIT_FAIL : EXIT_OK;
out_close:
	store_close(st);
	return rc;
}

const struct cmd_entry cmd_ceilings_entry = {
	"ceilings", "measure or show the bandwidth and FLOP ceilings of a GPU",
	cmd_ceilings
};
