/* main.c - the fuseprof program: global options and the command table. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "error.h"
#include "util.h"

/* In the order `fuseprof --help` lists them. This file builds two programs:
 * `fuseprof`, whose run and ceilings entries (src/gpu-exec.c) hand over to
 * `fuseprof-gpu` (built with FP_GPU_PROGRAM), which has the GPU commands.
 * `profile` stays in `fuseprof`: it only starts the program, whose CUDA
 * loads the collector. */
static const struct cmd_entry *const commands[] = {
	&cmd_run_entry,
	&cmd_ceilings_entry,
#ifndef FP_GPU_PROGRAM
	&cmd_profile_entry,
#endif
	&cmd_list_entry,
#ifndef FP_GPU_PROGRAM
	&cmd_compare_entry,
	&cmd_query_entry,
	&cmd_report_entry,
	&cmd_export_entry,
	&cmd_merge_entry,
#endif
	NULL
};

const char *default_db_path(void)
{
	const char *p = getenv("FUSEPROF_DB");

	return p && *p ? p : "fuseprof.db";
}

int check_default_db(const char *db)
{
	const char *env = getenv("FUSEPROF_DB");
	struct stat sb;

	if ((env && *env) || strcmp(db, "fuseprof.db") ||
	    stat(db, &sb) == 0 || errno != ENOENT)
		return 0;
	return error("no database here: './fuseprof.db' does not exist; record one "
		     "with 'fuseprof run' on a GPU machine, or name one with --db "
		     "PATH or $FUSEPROF_DB (samples: --db examples/h200-sample.db "
		     "in fuseprof's source tree)");
}

char *command_line(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;

	strbuf_addstr(&sb, "fuseprof");
	for (int i = 0; i < argc; i++)
		strbuf_addf(&sb, " %s", argv[i]);
	s = xstrdup(strbuf_str(&sb));
	strbuf_release(&sb);
	return s;
}

int format_option(const char *cmd, const char *arg, enum table_format *fmt)
{
	if (table_format_parse(arg, fmt) == 0)
		return 0;
	usage_error(cmd, "%s: unknown format '%s' (use table, csv, json or md)",
		    cmd, arg);
	return -1;
}

static const struct cmd_entry *find_command(const char *name)
{
	for (const struct cmd_entry *const *c = commands; *c; c++)
		if (!strcmp((*c)->name, name))
			return *c;
	return NULL;
}

static void print_help(FILE *f)
{
	fprintf(f,
		"Usage: fuseprof COMMAND [OPTION]...\n"
		"Measure fused and unfused GPU kernels, store every number in SQLite,\n"
		"and turn the database into rooflines, tables and regression verdicts.\n"
		"\n"
		"Commands:\n");
	for (const struct cmd_entry *const *c = commands; *c; c++)
		fprintf(f, "  %-10s %s\n", (*c)->name, (*c)->summary);
	fprintf(f,
		"  %-10s %s\n"
		"\n"
		"Options:\n"
		"  -h, --help     show this help and exit\n"
		"  -V, --version  show the version and exit\n"
		"\n"
		"Each command has its own help: 'fuseprof COMMAND --help' or\n"
		"'fuseprof help COMMAND'. The database is ./fuseprof.db unless --db PATH\n"
		"or $FUSEPROF_DB names another.\n"
		"\n"
		"Exit status: 0 success, 1 failure (or a regression found by compare),\n"
		"2 usage error.\n",
		"help", "show help for fuseprof or one command");
}

static int run_help(int argc, char **argv)
{
	const struct cmd_entry *c;
	char *hargv[] = { NULL, "--help", NULL };

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_help(stdout);
		return EXIT_OK;
	}
	if (argc > 2)
		return usage_error("help", "help: too many arguments");
	c = find_command(argv[1]);
	if (!c)
		return usage_error(NULL, "help: unknown command '%s'", argv[1]);
	hargv[0] = (char *)c->name;
	return c->exec(2, hargv);
}

/* An option before the command: fuseprof has none but --help and
 * --version, so name the command's own place for it ("fuseprof --db x
 * query runs" -> "fuseprof query --db x ..."). Returns 2. */
static int misplaced_option(int argc, char **argv)
{
	int i = 2;

	while (i < argc && !find_command(argv[i]))
		i++;
	if (i == argc)
		return usage_error(NULL, "unknown option '%s' (a command's options "
				   "follow the command: fuseprof COMMAND %s ...)",
				   argv[1], argv[1]);
	return usage_error(argv[i], "unknown option '%s' before the command: "
			   "options follow it (fuseprof %s %s%s%s ...)", argv[1],
			   argv[i], argv[1], i > 2 ? " " : "", i > 2 ? argv[2] : "");
}

int main(int argc, char **argv)
{
	const struct cmd_entry *c;

	if (argc < 2)
		return usage_error(NULL, "no command given");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_help(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("fuseprof %s\n", PACKAGE_VERSION);
		return EXIT_OK;
	}
	if (argv[1][0] == '-')
		return misplaced_option(argc, argv);
	if (!strcmp(argv[1], "help"))
		return run_help(argc - 1, argv + 1);
	c = find_command(argv[1]);
	if (!c)
		return usage_error(NULL, "unknown command '%s'", argv[1]);
	/* getopt_long in each command starts from argv[1] of its own vector. */
	return c->exec(argc - 1, argv + 1);
}
