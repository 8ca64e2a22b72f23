/* shape.h - shape specs with sweeps: "M=16384,N=768:4096:x2" expands to the
 * single shapes it names, each then checked by the workload's own parser.
 *
 * Grammar (spaces around tokens are ignored):
 *   spec   := shape (';' shape)*        several shapes, run in order
 *   shape  := assign (',' assign)*      parameters in any order
 *   assign := NAME '=' values
 *   values := item ('|' item)*          a list: "N=768|1024|4096"
 *   item   := INT                       one value
 *           | INT ':' INT ':' 'x' INT   geometric range lo..hi (inclusive),
 *                                       times a factor >= 2: "768:4096:x2"
 *           | INT ':' INT ':' '+' INT   arithmetic range, step >= 1
 *   INT    := decimal digits, optional leading '-' (the workload decides
 *             what is in range)
 * A shape with several swept parameters expands to their cartesian product,
 * the first parameter written varying slowest. An empty spec, a range with
 * lo > hi, or an expansion over SHAPE_MAX_EXPANSION shapes is an error. */
#ifndef FP_SHAPE_H
#define FP_SHAPE_H

#include <stddef.h>

#include "workload.h"

/* Most single shapes one spec may expand to: a typo such as "1:1000000:+1"
 * should be an error, not an hour of GPU time. */
#define SHAPE_MAX_EXPANSION 4096

/* Single-shape texts ("M=16384,N=768"), in expansion order; owned. */
struct shape_list {
	size_t n, alloc;
	char **items;
};
#define SHAPE_LIST_INIT { 0, 0, NULL }

/* Expand spec into single-shape texts appended to out (names as written, not
 * checked against any workload). Returns 0, or -1 with a one-line reason in
 * why and out unchanged. */
int shape_expand(const char *spec, struct shape_list *out, char *why,
		 size_t whylen);

/* Free every item; the list is empty and reusable afterwards. */
void shape_list_release(struct shape_list *l);

/* Expand spec and parse each single shape with workload_parse_shape (names,
 * ranges, defaults), dropping repeats. On success *shapes is a malloc'd array
 * of *n (>= 1) shapes owned by the caller. Returns 0, or -1 with a reason in
 * why ("N=0 is out of range [1, 65536]") and nothing allocated. */
int shape_sweep(const struct workload *w, const char *spec,
		struct fp_shape **shapes, size_t *n, char *why, size_t whylen);

#endif
