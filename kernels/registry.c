/* registry.c - the list of workloads, and lookups over the contract. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

/* Each workload family lives in a folder of its own, kernels/NAME/, whose
 * contract defines its workloads; add them here too. */
/* @workload-externs@ */
extern const struct workload wl_ln_gelu_fwd, wl_ln_gelu_bwd;
extern const struct workload wl_softmax_fwd, wl_softmax_masked_fwd, wl_softmax_bwd;
extern const struct workload wl_ln_linear_fwd, wl_ln_linear_bwd;
extern const struct workload wl_bias_dropout_add_fwd, wl_bias_dropout_add_bwd;
extern const struct workload wl_bias_relu_fwd, wl_bias_relu_bwd;
extern const struct workload wl_rmsnorm_fwd, wl_rmsnorm_bwd;
extern const struct workload wl_swiglu_fwd, wl_swiglu_bwd;
extern const struct workload wl_softplus_chain_fwd, wl_softplus_chain_bwd;
extern const struct workload wl_attn_res_ln_fwd;

const struct workload *const fp_workloads[] = {
	/* @workload-entries@ */
	&wl_ln_gelu_fwd,
	&wl_ln_gelu_bwd,
	&wl_softmax_fwd,
	&wl_softmax_masked_fwd,
	&wl_softmax_bwd,
	&wl_ln_linear_fwd,
	&wl_ln_linear_bwd,
	&wl_bias_dropout_add_fwd,
	&wl_bias_dropout_add_bwd,
	&wl_bias_relu_fwd,
	&wl_bias_relu_bwd,
	&wl_rmsnorm_fwd,
	&wl_rmsnorm_bwd,
	&wl_swiglu_fwd,
	&wl_swiglu_bwd,
	&wl_softplus_chain_fwd,
	&wl_softplus_chain_bwd,
	&wl_attn_res_ln_fwd,
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

int workload_parse_shape(const struct workload *w, const char *spec,
			 struct fp_shape *s, char *why, size_t whylen)
{
	int np = workload_nparams(w), seen[FP_MAX_PARAMS] = { 0 };
	const char *p = spec;

	for (int i = 0; i < np; i++)
		s->v[i] = w->params[i].def;
	while (*p) {
		const char *eq = strchr(p, '='), *end = strchr(p, ',');
		char *num_end;
		size_t len;
		long v;
		int i;

		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end) {
			snprintf(why, whylen, "'%.*s' is not NAME=VALUE", (int)(end - p), p);
			return -1;
		}
		len = (size_t)(eq - p);
		for (i = 0; i < np; i++)
			if (strlen(w->params[i].name) == len &&
			    !strncmp(w->params[i].name, p, len))
				break;
		if (i == np) {
			char names[128] = "";
			for (int j = 0; j < np; j++)
				snprintf(names + strlen(names), sizeof names - strlen(names),
					 "%s%s", j ? ", " : "", w->params[j].name);
			snprintf(why, whylen, "unknown parameter '%.*s' (%s takes %s)",
				 (int)len, p, w->name, names);
			return -1;
		}
		if (seen[i]++) {
			snprintf(why, whylen, "parameter '%s' given twice", w->params[i].name);
			return -1;
		}
		errno = 0;
		v = strtol(eq + 1, &num_end, 10);
		if (errno || num_end == eq + 1 || num_end != end) {
			snprintf(why, whylen, "%s: '%.*s' is not a whole number",
				 w->params[i].name, (int)(end - eq - 1), eq + 1);
			return -1;
		}
		if (v < w->params[i].min || v > w->params[i].max) {
			snprintf(why, whylen, "%s=%ld is out of range [%ld, %ld]",
				 w->params[i].name, v, w->params[i].min, w->params[i].max);
			return -1;
		}
		s->v[i] = v;
		p = *end ? end + 1 : end;
	}
	for (int i = 0; i < np; i++) {
		if (s->v[i] == FP_REQUIRED) {
			snprintf(why, whylen, "missing parameter '%s' (%s)",
				 w->params[i].name, w->params[i].help);
			return -1;
		}
	}
	return 0;
}

int workload_nkopts(const struct workload *w)
{
	int n = 0;

	while (w->kopts && w->kopts[n].name)
		n++;
	return n;
}

int workload_kopt(const struct workload *w, const char *name)
{
	for (int i = 0; w->kopts && w->kopts[i].name; i++)
		if (!strcmp(w->kopts[i].name, name))
			return i;
	return -1;
}

/* Append name to the list "a, b, c" in buf (n bytes), for error messages. */
static void list_add(char *buf, size_t n, const char *name)
{
	size_t len = strlen(buf);

	if (len + 1 < n)
		snprintf(buf + len, n - len, "%s%s", len ? ", " : "", name);
}

int workload_set_kopt(const struct workload *w, struct fp_kopts *ko,
		      const char *key, const char *value, char *why, size_t whylen)
{
	int k = workload_kopt(w, key);
	char names[256];

	if (k < 0) {
		if (!workload_nkopts(w)) {
			snprintf(why, whylen, "%s has no kernel options ('%s' given)",
				 w->name, key);
			return -1;
		}
		names[0] = '\0';
		for (int i = 0; w->kopts[i].name; i++)
			list_add(names, sizeof names, w->kopts[i].name);
		snprintf(why, whylen, "%s: unknown kernel option '%s' (options: %s)",
			 w->name, key, names);
		return -1;
	}
	for (int i = 0; w->kopts[k].values[i]; i++) {
		if (!strcmp(w->kopts[k].values[i], value)) {
			ko->v[k] = (unsigned char)i;
			return 0;
		}
	}
	names[0] = '\0';
	for (int i = 0; w->kopts[k].values[i]; i++)
		list_add(names, sizeof names, w->kopts[k].values[i]);
	snprintf(why, whylen, "%s: '%s' is not one of %s", key, value, names);
	return -1;
}

int workload_parse_kopts(const struct workload *w, const char *spec,
			 struct fp_kopts *ko, char *why, size_t whylen)
{
	char key[64], value[64];
	const char *p = spec;

	while (p && *p) {
		const char *eq = strchr(p, '='), *end = strchr(p, ',');

		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end || eq == p || eq + 1 == end) {
			snprintf(why, whylen, "'%.*s' is not KEY=VALUE", (int)(end - p), p);
			return -1;
		}
		if ((size_t)(eq - p) >= sizeof key || (size_t)(end - eq - 1) >= sizeof value) {
			snprintf(why, whylen, "'%.*s' is too long", (int)(end - p), p);
			return -1;
		}
		snprintf(key, sizeof key, "%.*s", (int)(eq - p), p);
		snprintf(value, sizeof value, "%.*s", (int)(end - eq - 1), eq + 1);
		if (workload_set_kopt(w, ko, key, value, why, whylen))
			return -1;
		p = *end ? end + 1 : end;
	}
	return 0;
}

void workload_format_kopts(const struct workload *w, const struct fp_kopts *ko,
			   char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; w->kopts && w->kopts[i].name && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", i ? "," : "",
					w->kopts[i].name,
					w->kopts[i].values[ko ? ko->v[i] : 0]);
}

int workload_split_kopt(const char *pair, char *scope, char *key, char *value,
			size_t n)
{
	const char *eq = strchr(pair, '='), *colon = strchr(pair, ':');

	if (!eq)
		return -1;
	scope[0] = '\0';
	if (colon && colon < eq) {
		snprintf(scope, n, "%.*s", (int)(colon - pair), pair);
		pair = colon + 1;
	}
	snprintf(key, n, "%.*s", (int)(eq - pair), pair);
	snprintf(value, n, "%s", eq + 1);
	return 0;
}
