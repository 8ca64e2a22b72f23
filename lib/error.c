/* error.c - the diagnostics every fuseprof module reports through. */
#include "config.h"

#include <stdio.h>

#include "error.h"

const char *error_progname = "fuseprof";
void (*error_sink)(const char *message, int is_warning);

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	/* One fprintf per line, so concurrent writers do not interleave. */
	char buf[2048];

	vsnprintf(buf, sizeof buf, fmt, ap);
	if (error_sink) {
		error_sink(buf, *prefix != '\0');
		return;
	}
	fprintf(stderr, "%s: %s%s\n", error_progname, prefix, buf);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	if (cmd)
		fprintf(stderr, "Try '%s %s --help' for more information.\n",
			error_progname, cmd);
	else
		fprintf(stderr, "Try '%s --help' for more information.\n",
			error_progname);
	return 2;
}
