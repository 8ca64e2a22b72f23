/* registry.c - the list of workloads, and lookups over the contract. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "workload.h"

/* Each workload is defined in its own kernels/NAME.cu; add it here too. */
/* @workload-externs@ */

const struct workload *const fp_workloads[] = {
	/* @workload-entries@ */
	NULL
};

static const char *const dtype_names[FP_NDTYPES] = { "fp32", "bf16" };

const char *fp_dtype_name(enum fp_dtype dt)
{
	return (unsigned)dt < FP_NDTYPES ? dtype_names[dt] : "?";
}

int fp_dtype_parse(const char *s, enum fp_dtype *out)
{
	for (int i = 0; i < FP_NDTYPES; i++) {
		if (!strcmp(s, dtype_names[i])) {
			*out = (enum fp_dtype)i;
			return 0;
		}
	}
	return -1;
}

size_t fp_dtype_size(enum fp_dtype dt)
{
	return dt == FP_BF16 ? 2 : 4;
}

const char *fp_role_name(enum fp_role r)
{
	switch (r) {
	case FP_FUSED:
		return "fused";
	case FP_NAIVE:
		return "naive";
	default:
		return "unfused";
	}
}

const struct workload *workload_find(const char *name)
{
	for (const struct workload *const *w = fp_workloads; *w; w++)
		if (!strcmp((*w)->name, name))
			return *w;
	return NULL;
}

int workload_variant(const struct workload *w, const char *name)
{
	for (int i = 0; w->variants[i].name; i++)
		if (!strcmp(w->variants[i].name, name))
			return i;
	return -1;
}

int workload_nvariants(const struct workload *w)
{
	int n = 0;

	while (w->variants[n].name)
		n++;
	return n;
}

int workload_nparams(const struct workload *w)
{
	int n = 0;

	while (w->params[n].name)
		n++;
	return n;
}

int workload_nprofiles(const struct workload *w)
{
	int n = 0;

	while (w->profiles && w->profiles[n])
		n++;
	return n;
}

void workload_format_shape(const struct workload *w, const struct fp_shape *s,
			   char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; w->params[i].name && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s=%ld",
					i ? "," : "", w->params[i].name, s->v[i]);
}
