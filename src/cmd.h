/* cmd.h - the command table: each command lives in src/cmd-NAME.c and exports
 * one `const struct cmd_entry cmd_NAME_entry`, listed in src/main.c. */
#ifndef FP_CMD_H
#define FP_CMD_H

#include "table.h"

struct cmd_entry {
	const char *name;     /* "query" */
	const char *summary;  /* one line for `fuseprof --help` */
	/* Runs the command; argv[0] is the command's name. Returns the exit
	 * status: 0 success, 1 failure, 2 usage error (130 interrupted). */
	int (*exec)(int argc, char **argv);
};

/* Exit statuses, as documented in fuseprof(1). */
#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

/* The database a command uses when --db is not given: $FUSEPROF_DB, else
 * "fuseprof.db". */
const char *default_db_path(void);

/* For a command about to read db: when db is the default ./fuseprof.db
 * ($FUSEPROF_DB unset) and there is no such file, say how to make one and
 * where the samples are, and return -1; else 0 (store_open reports any
 * other problem). */
int check_default_db(const char *db);

/* "fuseprof CMD ARG...", argv (argv[0] the command's name) as typed: what
 * a run records as its command line. A new string. */
char *command_line(int argc, char **argv);

/* Parse the argument of a command's --format into *fmt. Returns 0, or -1
 * after a usage error naming cmd and the accepted formats. */
int format_option(const char *cmd, const char *arg, enum table_format *fmt);

/* The GPU commands live in a second program, fuseprof-gpu (installed in
 * $(pkglibexecdir)), so that the others start without loading CUDA,
 * cuBLAS and CUPTI (src/gpu-exec.c). */
#define FP_GPU_PROGRAM_NAME "fuseprof-gpu"

/* In `fuseprof`, replace this process by fuseprof-gpu with the command's
 * argv (argv[0] is the command's name); returns only on failure: 1, after
 * an error naming the program it could not run. */
int gpu_exec(int argc, char **argv);

/* Where a file of fuseprof's own (fuseprof-gpu, the profiler's injection
 * library) is: in $FUSEPROF_EXEC_PATH when set; else beside this program
 * when it is there (a build tree, or everything installed in one folder);
 * else in installed_dir. Returns a new string; the file may not exist. */
char *own_file_path(const char *name, const char *installed_dir);

extern const struct cmd_entry cmd_query_entry;
extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_ceilings_entry;
extern const struct cmd_entry cmd_list_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_compare_entry;
extern const struct cmd_entry cmd_profile_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_merge_entry;

#endif
