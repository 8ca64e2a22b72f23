/* error.h - one-line diagnostics on stderr, in the form "fuseprof: <what>: <why>". */
#ifndef FP_ERROR_H
#define FP_ERROR_H

#include <stdarg.h>

#if defined(__GNUC__)
#define FP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FP_PRINTF(a, b)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Print "fuseprof: <message>" to stderr and return -1, so library code can
 * write `return error("cannot open '%s': %s", path, why);`. */
int error(const char *fmt, ...) FP_PRINTF(1, 2);

/* Print "fuseprof: warning: <message>" to stderr. */
void warning(const char *fmt, ...) FP_PRINTF(1, 2);

/* Print "fuseprof: <message>" and "Try 'fuseprof <cmd> --help'." to stderr
 * and return 2, the usage-error exit status. cmd may be NULL. */
int usage_error(const char *cmd, const char *fmt, ...) FP_PRINTF(2, 3);

/* Name used as the message prefix; "fuseprof" unless changed (tests). */
extern const char *error_progname;

/* When set, error() and warning() hand their message (without the prefix)
 * to this function instead of printing it: the kernels library keeps it
 * for fpk_last_error() (kernels/api). */
extern void (*error_sink)(const char *message, int is_warning);

#ifdef __cplusplus
}
#endif
#endif
