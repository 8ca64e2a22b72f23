/* test-kopts.c - kernel options in the registry (kernels/registry.c)
 * through a test-only workload: setting one option, the errors that name
 * the allowed keys and values, parsing a list, the canonical text the
 * store keeps. `fuseprof run --kernel-opt` and fpbench -o report these
 * errors word for word; tests/test-kopts-cli.sh drives them through the
 * workloads that are built in. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "test.h"
#include "workload.h"

static const char *const tile_values[] = { "auto", "64", "128", NULL };
static const char *const path_values[] = { "auto", "simt", "mma", "wgmma", NULL };
static const struct fp_kopt kopts[] = {
	{ "tile", tile_values, "rows per block: auto picks by N" },
	{ "path", path_values, "the GEMM main loop" },
	{ NULL, NULL, NULL }
};
static const struct workload with = { .name = "test_wl", .kopts = kopts };
static const struct workload without = { .name = "plain_wl" };

/* why must hold each needle (NULL-terminated). */
static void mentions(const char *why, const char *const *needles)
{
	for (; *needles; needles++)
		if (!strstr(why, *needles))
			FAIL("'%s' does not mention '%s'", why, *needles);
	if (strchr(why, '\n'))
		FAIL("'%s' is more than one line", why);
}

static void set_errors(void)
{
	struct fp_kopts ko;
	char why[256];

	memset(&ko, 0, sizeof ko);
	ASSERT_EQ(workload_set_kopt(&with, &ko, "tiles", "64", why, sizeof why), -1);
	mentions(why, (const char *const[]){ "test_wl", "'tiles'", "tile, path", NULL });
	ASSERT_EQ(workload_set_kopt(&with, &ko, "tile", "96", why, sizeof why), -1);
	mentions(why, (const char *const[]){ "tile", "'96'", "auto, 64, 128", NULL });
	ASSERT_EQ(workload_set_kopt(&with, &ko, "path", "AUTO", why, sizeof why), -1);
	mentions(why, (const char *const[]){ "auto, simt, mma, wgmma", NULL });
	ASSERT_EQ(workload_set_kopt(&without, &ko, "tile", "64", why, sizeof why), -1);
	mentions(why, (const char *const[]){ "plain_wl", "no kernel options", NULL });
	/* A refused value leaves what was set. */
	for (int i = 0; i < FP_MAX_KOPTS; i++)
		ASSERT_EQ(ko.v[i], 0);
}

static void set_and_format(void)
{
	struct fp_kopts ko;
	char why[256] = "", buf[128];

	ASSERT_EQ(workload_nkopts(&with), 2);
	ASSERT_EQ(workload_nkopts(&without), 0);
	ASSERT_EQ(workload_kopt(&with, "path"), 1);
	ASSERT_EQ(workload_kopt(&with, "nope"), -1);
	ASSERT_EQ(workload_kopt(&without, "tile"), -1);

	/* Zero is every default, and so is NULL. */
	memset(&ko, 0, sizeof ko);
	workload_format_kopts(&with, &ko, buf, sizeof buf);
	ASSERT_STR_EQ(buf, "tile=auto,path=auto");
	workload_format_kopts(&with, NULL, buf, sizeof buf);
	ASSERT_STR_EQ(buf, "tile=auto,path=auto");
	workload_format_kopts(&without, &ko, buf, sizeof buf);
	ASSERT_STR_EQ(buf, "");

	ASSERT_EQ(workload_set_kopt(&with, &ko, "path", "wgmma", why, sizeof why), 0);
	ASSERT_EQ(ko.v[1], 3);
	workload_format_kopts(&with, &ko, buf, sizeof buf);
	ASSERT_STR_EQ(buf, "tile=auto,path=wgmma");
	/* The last pair for a key wins, in the order given. */
	ASSERT_EQ(workload_parse_kopts(&with, "tile=64,path=simt,tile=128", &ko, why,
				       sizeof why), 0);
	workload_format_kopts(&with, &ko, buf, sizeof buf);
	ASSERT_STR_EQ(buf, "tile=128,path=simt");
	/* The canonical text parses back to the same choice. */
	{
		struct fp_kopts back;
		char again[128];

		memset(&back, 0, sizeof back);
		ASSERT_EQ(workload_parse_kopts(&with, buf, &back, why, sizeof why), 0);
		workload_format_kopts(&with, &back, again, sizeof again);
		ASSERT_STR_EQ(again, buf);
	}
	ASSERT_EQ(workload_parse_kopts(&with, "", &ko, why, sizeof why), 0);
}

static void parse_errors(void)
{
	static const char *const bad[] = { "tile", "=64", "tile=", "tile=64,path",
					   "tile=64,,path=mma", NULL };
	struct fp_kopts ko;
	char why[256];

	for (int i = 0; bad[i]; i++) {
		memset(&ko, 0, sizeof ko);
		why[0] = '\0';
		if (workload_parse_kopts(&with, bad[i], &ko, why, sizeof why) != -1)
			FAIL("'%s' was accepted", bad[i]);
		mentions(why, (const char *const[]){ "KEY=VALUE", NULL });
	}
	ASSERT_EQ(workload_parse_kopts(&with, "tile=64,path=x", &ko, why, sizeof why), -1);
	mentions(why, (const char *const[]){ "'x'", "auto, simt, mma, wgmma", NULL });
}

/* Every built-in workload's options are well formed: a default first,
 * values unique and within the limits the store's one-byte index takes. */
static void builtins(void)
{
	for (const struct workload *const *w = fp_workloads; *w; w++) {
		ASSERT(workload_nkopts(*w) <= FP_MAX_KOPTS);
		for (int k = 0; k < workload_nkopts(*w); k++) {
			const struct fp_kopt *o = &(*w)->kopts[k];
			int n = 0;

			ASSERT(o->name && *o->name && o->help && *o->help);
			ASSERT_EQ(workload_kopt(*w, o->name), k);
			while (o->values[n])
				n++;
			ASSERT(n >= 1 && n <= FP_MAX_KOPT_VALUES);
			for (int i = 0; i < n; i++)
				for (int j = i + 1; j < n; j++)
					if (!strcmp(o->values[i], o->values[j]))
						FAIL("%s: %s lists '%s' twice", (*w)->name,
						     o->name, o->values[i]);
		}
	}
}

int main(void)
{
	set_errors();
	set_and_format();
	parse_errors();
	builtins();
	return 0;
}
