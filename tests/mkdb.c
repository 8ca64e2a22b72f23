/* mkdb.c - test and benchmark helper: writes a synthetic run into a
 * fuseprof database (see tests/synth.h for what it contains).
 *
 * Usage: mkdb [-s SEED] [-w N] [-t TAG] [-S STATUS] [-C] [-K] DB NOPS
 *   -w N  every Nth op is stored as wrong     -C  no ceilings
 *   -K    no counters (timing only)           -S  final run status
 * Prints the run id. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "synth.h"
#include "util.h"

int main(int argc, char **argv)
{
	struct synth_opts o = { .seed = 1, .ceilings = 1, .counters = 1 };
	long long id;
	long v;
	int c;

	while ((c = getopt(argc, argv, "s:w:t:S:CK")) != -1) {
		switch (c) {
		case 's':
			if (parse_long(optarg, &v))
				goto usage;
			o.seed = (unsigned long long)v;
			break;
		case 'w':
			if (parse_long(optarg, &v) || v < 0)
				goto usage;
			o.wrong_every = (int)v;
			break;
		case 't':
			o.tag = optarg;
			break;
		case 'S':
			o.status = optarg;
			break;
		case 'C':
			o.ceilings = 0;
			break;
		case 'K':
			o.counters = 0;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || parse_long(argv[optind + 1], &o.nops) || o.nops < 0)
		goto usage;
	id = synth_build(argv[optind], &o);
	if (id < 0)
		return 1;
	printf("%lld\n", id);
	return 0;
usage:
	fprintf(stderr, "usage: mkdb [-s SEED] [-w N] [-t TAG] [-S STATUS] [-C] [-K] DB NOPS\n");
	return 2;
}
