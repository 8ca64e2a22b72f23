/* cmd-run.c - `fuseprof run`: option parsing for the measurement run; the
 * protocol itself is in runloop.c. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "runloop.h"
#include "util.h"

#define DEFAULT_REPS 50
#define QUICK_REPS 20
#define DEFAULT_GROUP "roofline"

static void help(void)
{
	printf("Usage: fuseprof run [OPTION]...\n"
	       "Measure every selected op (workload x variant x dtype x shape) on the GPU\n"
	       "and store it: a correctness check against the CPU reference, warm-up,\n"
	       "timed repetitions from CUPTI Activity kernel records, then hardware counters\n"
	       "from the CUPTI Range Profiler (one range per kernel). Each op is stored in\n"
	       "one transaction and runs inside an NVTX range 'workload/variant/dtype/shape'.\n"
	       "The variants of one workload, dtype and shape are timed in interleaved turns\n"
	       "of 10 repetitions (each after untimed ones that fill L2 with its own data),\n"
	       "so their ratios are taken under the same clocks.\n"
	       "Ceilings are measured once per device, driver and clocks, and reused.\n"
	       "On an H100 machine (16 CPU cores) the default suite (194 ops, counters on,\n"
	       "a fresh database: ceilings measured) took 94 s, its first op stored after\n"
	       "5 s, and --quick (116 ops) 33 s; naive variants run at their workload's\n"
	       "smallest suite shape only ('fuseprof list workloads' says which).\n"
	       "\n"
	       "Options:\n"
	       "      --db PATH          database file (default: $FUSEPROF_DB or fuseprof.db)\n"
	       "  -w, --workload LIST    only these workloads (comma-separated)\n"
	       "  -v, --variant LIST     only these variants (comma-separated)\n"
	       "  -t, --dtype LIST       only these dtypes: fp32, bf16\n"
	       "  -s, --shape SPEC       shapes instead of the suite; sweeps allowed:\n"
	       "                         'M=16384,N=768|4096', 'N=768:4096:x2' (geometric),\n"
	       "                         'N=1024:4096:+1024' (arithmetic), ';' between shapes\n"
	       "  -r, --reps N           timed repetitions per op (default %d, %d with --quick);\n"
	       "                         a repetition slower than 50 ms gets only as many\n"
	       "                         as fit in 2 s (at least 3), and one warm-up\n"
	       "      --warmup N         untimed repetitions first (default 5)\n"
	       "      --no-counters      timing only: no Range Profiler pass\n"
	       "  -m, --metrics GROUP    counter group (default '%s'; a name from the\n"
	       "                         groups directory or a file path)\n"
	       "      --replay MODE      how the counter passes are replayed: 'op'\n"
	       "                         (default: the op runs once per pass, L2 flushed\n"
	       "                         before and after it inside the profiled region,\n"
	       "                         so the dirty lines it leaves are written back and\n"
	       "                         charged to it; instruction counts come from one\n"
	       "                         launch an op under kernel replay, the first\n"
	       "                         case's first, then every other op's) or\n"
	       "                         'kernel' (CUPTI saves and restores memory around\n"
	       "                         each kernel and replays it: slower, and it counts\n"
	       "                         the restore's dirty L2 lines as the kernel's writes)\n"
	       "      --flush WHEN       op replay: flush L2 before each pass ('op', the\n"
	       "                         default: the cache state flows from one kernel of\n"
	       "                         the op to the next, as in a real run) or before\n"
	       "                         every kernel ('kernel': as ncu --cache-control all,\n"
	       "                         each kernel is charged its own traffic only)\n"
	       "  -d, --device N|LIST|all  GPU index (default 0); a comma list of\n"
	       "                         distinct indices ('0,2') or 'all': one measuring\n"
	       "                         process a GPU, all in one run, each op stored\n"
	       "                         with its device, ceilings measured per device\n"
	       "      --tag TEXT         label the run (compare and report accept tags)\n"
	       "  -q, --quick            the quick suite: every op at small shapes\n"
	       "      --remeasure-ceilings  measure the ceilings again even if stored\n"
	       "      --check-all        check each op with every input profile of its\n"
	       "                         workload (offsets, extremes), not only with the\n"
	       "                         plain random inputs that timing uses\n"
	       "  -o, --kernel-opt [WORKLOAD:]KEY=VALUE\n"
	       "                         steer a workload's kernel choice (repeatable; a\n"
	       "                         comma list 'K=V,K=V' gives several): the option\n"
	       "                         applies to every selected workload that declares\n"
	       "                         KEY, or only to WORKLOAD; 'fuseprof list workloads\n"
	       "                         --options' lists them with their values. An\n"
	       "                         option nobody selected declares, or a value it\n"
	       "                         does not allow, is a usage error. Each op stores\n"
	       "                         the options in force and the kernels picked\n"
	       "  -n, --dry-run          check everything a run checks before it touches\n"
	       "                         the GPU (options, op list, counter group, database),\n"
	       "                         print the ops that would run, one a line, and on\n"
	       "                         stderr their count and an estimated time; exit\n"
	       "  -h, --help             show this help and exit\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof run --quick\n"
	       "  fuseprof run --workload ln_gelu_fwd --shape 'M=16384,N=768:4096:x2' --tag baseline\n"
	       "  fuseprof run --no-counters --reps 200 --dtype bf16\n"
	       "  fuseprof run --metrics roofline --device 1 --db gpu1.db\n"
	       "  fuseprof run --quick --device all             # every GPU, one run\n"
	       "  fuseprof run --workload ln_linear_fwd --kernel-opt clusters=2 --tag c2\n"
	       "\n"
	       "The dry run's estimate assumes a nominal GPU: each repetition (warm-up,\n"
	       "settling, timed, and 4 counter passes) moves the variant's modelled bytes\n"
	       "at 3 TB/s or does its FLOPs at 50 TFLOP/s (a naive variant 0.1 TFLOP/s),\n"
	       "whichever is longer; each check runs the CPU reference at 4 GFLOP/s (at\n"
	       "most 2 GFLOP a check: large references are sampled) and 2 GB/s; counters\n"
	       "add 0.15 s an op. Those figures come from an H100 machine; a GPU\n"
	       "or CPU unlike theirs, or a kernel far from its model, moves the real time.\n"
	       "\n"
	       "Progress goes to stderr when it is a terminal; a table of the ops goes to\n"
	       "stdout. Ctrl-C finishes the op in flight, marks the run 'aborted' and\n"
	       "exits 130. If counters are not permitted, the run goes on timing only\n"
	       "(runs.counters = 'denied').\n"
	       "\n"
	       "Exit status: 0 every op ok, 1 failure or a wrong op, 2 usage error,\n"
	       "130 interrupted.\n", DEFAULT_REPS, QUICK_REPS, DEFAULT_GROUP);
}

/* Positive integer option value, or a usage error. */
static int int_opt(const char *name, const char *arg, long lo, long hi, int *out)
{
	long v;

	if (parse_long(arg, &v) || v < lo || v > hi)
		return usage_error("run", "run: %s: '%s' is not a whole number in "
				   "[%ld, %ld]", name, arg, lo, hi);
	*out = (int)v;
	return 0;
}

/* Add the pairs of one --kernel-opt argument "[W:]K=V,[W:]K=V" to kopts
 * (each a malloc'd "[W:]K=V"). Checks the syntax only; which workload
 * takes which key and value is the run loop's to check, against the
 * workloads selected. */
static int add_kopts(const char *arg, char **kopts, int *n)
{
	const char *p = arg;

	if (!*arg)
		return usage_error("run", "run: --kernel-opt: empty option (KEY=VALUE)");
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *pair = xasprintf("%.*s", (int)len, p), *eq = strchr(pair, '=');
		char *colon = strchr(pair, ':');

		if (!eq || eq == pair || !eq[1] || colon == pair ||
		    (colon && colon < eq && colon + 1 == eq) || strlen(pair) >= 63 ||
		    strchr(eq + 1, ':') || strchr(eq + 1, '=')) {
			usage_error("run", "run: --kernel-opt: '%s' is not "
				    "[WORKLOAD:]KEY=VALUE", pair);
			free(pair);
			return EXIT_USAGE;
		}
		if (*n == RUN_MAX_KOPTS) {
			free(pair);
			return usage_error("run", "run: --kernel-opt: more than %d "
					   "options", RUN_MAX_KOPTS);
		}
		kopts[(*n)++] = pair;
		p += len + (end ? 1 : 0);
		if (end && !*p)
			return usage_error("run", "run: --kernel-opt: '%s' ends in a "
					   "comma", arg);
	}
	return 0;
}

/* --device: "all", one index, or a comma list of two or more distinct
 * indices into o (a list of one is one index). Returns 0, or a usage
 * error naming what is wrong. */
static int parse_devices(const char *arg, struct run_opts *o)
{
	const char *p = arg;

	o->all_devices = 0;
	o->ndevices = 0;
	if (!strcmp(arg, "all")) {
		o->all_devices = 1;
		return 0;
	}
	for (;;) {
		const char *end = strchr(p, ',');
		char *item = end ? xasprintf("%.*s", (int)(end - p), p) : xstrdup(p);
		long v;
		int bad = parse_long(item, &v) || v < 0 || v > 1023;

		free(item);
		if (bad)
			return usage_error("run", "run: --device: '%s' is not 'all', a "
					   "device index (0 to 1023) or a comma list of "
					   "them", arg);
		for (int i = 0; i < o->ndevices; i++)
			if (o->devices[i] == v)
				return usage_error("run", "run: --device: '%s' names "
						   "device %ld twice", arg, v);
		if (o->ndevices == RUN_MAX_DEVICES)
			return usage_error("run", "run: --device: more than %d devices",
					   RUN_MAX_DEVICES);
		o->devices[o->ndevices++] = (int)v;
		if (!end)
			break;
		p = end + 1;
	}
	o->device = o->devices[0];
	if (o->ndevices == 1)
		o->ndevices = 0;
	return 0;
}

enum { OPT_DB = 256, OPT_WARMUP, OPT_NO_COUNTERS, OPT_TAG, OPT_REMEASURE,
       OPT_CHECK_ALL, OPT_REPLAY, OPT_FLUSH, OPT_INTO_RUN, OPT_RUN_DEVICE };

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "workload", required_argument, NULL, 'w' },
		{ "variant", required_argument, NULL, 'v' },
		{ "dtype", required_argument, NULL, 't' },
		{ "shape", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "no-counters", no_argument, NULL, OPT_NO_COUNTERS },
		{ "metrics", required_argument, NULL, 'm' },
		{ "replay", required_argument, NULL, OPT_REPLAY },
		{ "flush", required_argument, NULL, OPT_FLUSH },
		{ "device", required_argument, NULL, 'd' },
		{ "tag", required_argument, NULL, OPT_TAG },
		{ "quick", no_argument, NULL, 'q' },
		{ "remeasure-ceilings", no_argument, NULL, OPT_REMEASURE },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "check-all", no_argument, NULL, OPT_CHECK_ALL },
		{ "kernel-opt", required_argument, NULL, 'o' },
		/* Not for users: a measuring process of run_devices(). */
		{ "into-run", required_argument, NULL, OPT_INTO_RUN },
		{ "run-device", no_argument, NULL, OPT_RUN_DEVICE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct run_opts o;
	const char *kargs[RUN_MAX_KOPTS];
	char *kopts[RUN_MAX_KOPTS];
	int c, reps = 0, rc = EXIT_USAGE, replay_set = 0, flush_set = 0;
	int nkargs = 0, nkopts = 0;

	memset(&o, 0, sizeof o);
	o.db = default_db_path();
	o.counters = 1;
	o.replay = COUNTERS_REPLAY_OP;
	o.group = DEFAULT_GROUP;
	o.warmup = 5;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+w:v:t:s:r:m:d:o:qnh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			o.db = optarg;
			break;
		case 'w':
			o.workloads = optarg;
			break;
		case 'v':
			o.variants = optarg;
			break;
		case 't':
			o.dtypes = optarg;
			break;
		case 's':
			o.shape = optarg;
			break;
		case 'r':
			if (int_opt("--reps", optarg, 1, 100000, &reps))
				return EXIT_USAGE;
			break;
		case OPT_WARMUP:
			if (int_opt("--warmup", optarg, 1, 10000, &o.warmup))
				return EXIT_USAGE;
			break;
		case OPT_NO_COUNTERS:
			o.counters = 0;
			break;
		case 'm':
			o.group = optarg;
			break;
		case OPT_REPLAY:
			if (!strcmp(optarg, "op"))
				o.replay = COUNTERS_REPLAY_OP;
			else if (!strcmp(optarg, "kernel"))
				o.replay = COUNTERS_REPLAY_KERNEL;
			else
				return usage_error("run", "run: --replay: '%s' is not "
						   "'op' or 'kernel'", optarg);
			replay_set = 1;
			break;
		case OPT_FLUSH:
			if (!strcmp(optarg, "op"))
				o.flush_each_kernel = 0;
			else if (!strcmp(optarg, "kernel"))
				o.flush_each_kernel = 1;
			else
				return usage_error("run", "run: --flush: '%s' is not "
						   "'op' or 'kernel'", optarg);
			flush_set = 1;
			break;
		case 'd':
			if (parse_devices(optarg, &o))
				return EXIT_USAGE;
			break;
		case OPT_INTO_RUN: {
			long v;

			if (parse_long(optarg, &v) || v <= 0)
				return usage_error("run", "run: --into-run: '%s' is not "
						   "a run id", optarg);
			o.into_run = v;
			break;
		}
		case OPT_RUN_DEVICE:
			o.run_device = 1;
			break;
		case OPT_TAG:
			o.tag = optarg;
			break;
		case 'q':
			o.quick = 1;
			break;
		case OPT_REMEASURE:
			o.remeasure = 1;
			break;
		case 'n':
			o.dry_run = 1;
			break;
		case OPT_CHECK_ALL:
			o.check_all = 1;
			break;
		case 'o':
			if (nkargs == RUN_MAX_KOPTS)
				return usage_error("run", "run: more than %d --kernel-opt",
						   RUN_MAX_KOPTS);
			kargs[nkargs++] = optarg;
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return usage_error("run", "run: unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("run", "run: unexpected argument '%s' (shapes go "
				   "with --shape)", argv[optind]);
	if (!*o.db)
		return usage_error("run", "run: --db: empty path");
	if (!o.counters && o.group != (const char *)DEFAULT_GROUP &&
	    strcmp(o.group, DEFAULT_GROUP))
		return usage_error("run", "run: --metrics and --no-counters contradict "
				   "each other");
	if (!o.counters && (replay_set || flush_set))
		return usage_error("run", "run: --%s and --no-counters contradict "
				   "each other", replay_set ? "replay" : "flush");
	if (flush_set && o.replay == COUNTERS_REPLAY_KERNEL)
		return usage_error("run", "run: --flush is for op replay (kernel "
				   "replay restores memory before each pass instead)");
	if (o.shape && !*o.shape)
		return usage_error("run", "run: --shape: empty spec");
	o.reps = reps ? reps : o.quick ? QUICK_REPS : DEFAULT_REPS;
	for (int i = 0; i < nkargs; i++)
		if (add_kopts(kargs[i], kopts, &nkopts))
			goto out;
	o.kopts = (const char *const *)kopts;
	o.nkopts = nkopts;
	if (o.into_run && (o.all_devices || o.ndevices))
		return usage_error("run", "run: --into-run takes one device");
	o.command_line = command_line(argc, argv);
	if ((o.all_devices || o.ndevices) && !o.dry_run)
		rc = run_devices(&o, argc, argv);
	else
		rc = run_suite(&o);
	free((char *)o.command_line);
out:
	for (int i = 0; i < nkopts; i++)
		free(kopts[i]);
	return rc;
}

const struct cmd_entry cmd_run_entry = {
	"run", "measure ops on the GPU and store the results", cmd_run
};
