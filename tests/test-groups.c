/* test-groups.c - counter group files: parsing, errors with file and line,
 * formula evaluation on random values, and every group fuseprof ships. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes.h"
#include "test.h"

static const char good[] =
	"# a comment\n"
	"name  demo   \n"
	"description two counters and a formula\n"
	"\n"
	"counter dram__bytes_read.sum\n"
	"counter dram__bytes_write.sum   # trailing comment\n"
	"counter sm__sass_thread_inst_executed_op_ffma_pred_on.sum\n"
	"formula bytes = dram__bytes_read.sum + dram__bytes_write.sum\n"
	"formula ai = 2 * sm__sass_thread_inst_executed_op_ffma_pred_on.sum / (dram__bytes_read.sum + dram__bytes_write.sum)\n"
	"formula neg = -(dram__bytes_read.sum - 1.5) * 4\n";

static void test_parse(unsigned seed)
{
	struct counter_group g;
	double v[3];

	ASSERT_EQ(group_parse(&g, good, "demo.txt"), 0);
	ASSERT_STR_EQ(g.name, "demo");
	ASSERT_STR_EQ(g.description, "two counters and a formula");
	ASSERT_EQ(g.ncounters, 3);
	ASSERT_STR_EQ(g.counters[1], "dram__bytes_write.sum");
	ASSERT_EQ(g.nformulas, 3);
	ASSERT_STR_EQ(g.formula_names[1], "ai");
	srand(seed);
	for (int i = 0; i < 1000; i++) {
		for (int j = 0; j < 3; j++)
			v[j] = (double)(rand() % 1000000) + 1;
		ASSERT_NEAR(group_eval(&g, 0, v), v[0] + v[1], 1e-12);
		ASSERT_NEAR(group_eval(&g, 1, v), 2 * v[2] / (v[0] + v[1]), 1e-12);
		ASSERT_NEAR(group_eval(&g, 2, v), -(v[0] - 1.5) * 4, 1e-12);
	}
	v[0] = v[1] = 0;
	ASSERT(isnan(group_eval(&g, 1, v)));  /* division by zero */
	ASSERT(isnan(group_eval(&g, 7, v)));  /* no such formula */
	group_release(&g);
	ASSERT(g.name == NULL && g.ncounters == 0);
}

static void refuse(const char *text)
{
	struct counter_group g;

	if (group_parse(&g, text, "bad.txt") == 0)
		FAIL("accepted: %s", text);
	ASSERT(g.name == NULL && g.counters == NULL);
}

static void test_errors(void)
{
	refuse("counter a.sum\n");                          /* no name */
	refuse("name x\n");                                 /* no counters */
	refuse("name x\nname y\ncounter a.sum\n");          /* name twice */
	refuse("name x\ncounter a.sum\ncounter a.sum\n");   /* duplicate */
	refuse("name x\ncounter a sum\n");                  /* bad name */
	refuse("name x\ncounter 1abc\n");
	refuse("name x\ncounters a.sum\n");                 /* unknown keyword */
	refuse("name x\ncounter a.sum\nformula f = b.sum\n");   /* not a counter */
	refuse("name x\ncounter a.sum\nformula f = (a.sum\n");  /* missing ) */
	refuse("name x\ncounter a.sum\nformula f a.sum\n");     /* no '=' */
	refuse("name x\ncounter a.sum\nformula F = a.sum\n");   /* bad name */
	refuse("name x\ncounter a.sum\nformula f = a.sum +\n");
	refuse("name\ncounter a.sum\n");                    /* empty value */
}

/* Every shipped group parses, and the default one has the counters that
 * the views (store/views.c) turn into bytes, FLOPs and clock rates. */
static void test_shipped(void)
{
	static const char *const groups[] = { "roofline", "memory", "flops" };
	static const char *const need[] = {
		"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
		"l1tex__t_bytes.sum",
		"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
		"sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
		"sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
		"sm__cycles_elapsed.avg.per_second",
		"dram__cycles_elapsed.avg.per_second",
	};
	struct counter_group g;
	char *list;

	setenv("FUSEPROF_GROUPS_DIR", FP_GROUPS_SRCDIR, 1);
	for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
		if (group_load(&g, groups[i]))
			FAIL("group '%s' does not load", groups[i]);
		ASSERT_STR_EQ(g.name, groups[i]);
		ASSERT(g.description != NULL);
		if (!strcmp(groups[i], "roofline")) {
			int tensor = 0;

			for (size_t n = 0; n < sizeof need / sizeof need[0]; n++) {
				int found = 0;

				for (int c = 0; c < g.ncounters; c++)
					found |= !strcmp(g.counters[c], need[n]);
				if (!found)
					FAIL("roofline lacks %s", need[n]);
			}
			for (int c = 0; c < g.ncounters; c++)
				tensor |= strstr(g.counters[c], "tensor") != NULL;
			ASSERT(tensor);
		}
		group_release(&g);
	}
	list = group_list();
	ASSERT(strstr(list, "roofline") != NULL);
	ASSERT(strstr(list, "memory") != NULL);
	free(list);
	ASSERT(group_load(&g, "no-such-group") < 0);
	ASSERT(group_load(&g, "/nonexistent/dir/x.txt") < 0);
}

int main(void)
{
	unsigned seed = (unsigned)time(NULL);

	fprintf(stderr, "test-groups: seed %u\n", seed);
	test_parse(seed);
	test_errors();
	test_shipped();
	return 0;
}
