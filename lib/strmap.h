/* strmap.h - a map from strings to a number or a pointer (open addressing,
 * keys copied): interned kernel and range names, ids already looked up. */
#ifndef FP_STRMAP_H
#define FP_STRMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct strmap_entry {
	char *key;        /* owned by the map; stays put while the entry lives */
	uint64_t hash;
	union {
		long long i;
		void *p;
	} v;              /* 0 / NULL when the entry was added */
};

struct strmap {
	struct strmap_entry *v;
	size_t n, cap;    /* cap a power of two, or 0 */
};
#define STRMAP_INIT { NULL, 0, 0 }

/* The entry of key, or NULL. */
struct strmap_entry *strmap_get(const struct strmap *m, const char *key);

/* The entry of key, added (with a copy of key and a zero value) when
 * missing; *added says which (may be NULL). The pointer is good until the
 * next strmap_put. */
struct strmap_entry *strmap_put(struct strmap *m, const char *key, int *added);

/* Remove every entry, calling free_value(v.p) on each first when it is not
 * NULL; the map can be used again. */
void strmap_clear(struct strmap *m, void (*free_value)(void *));

/* FNV-1a of a string. */
uint64_t strmap_hash(const char *s);

#ifdef __cplusplus
}
#endif
#endif
