/* strmap.c - string maps by open addressing with linear probing; the table
 * doubles at half full, so a lookup probes about 1.5 slots. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "strmap.h"
#include "util.h"

uint64_t strmap_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static size_t find(const struct strmap *m, const char *key, uint64_t h)
{
	size_t i;

	for (i = h & (m->cap - 1); m->v[i].key; i = (i + 1) & (m->cap - 1))
		if (m->v[i].hash == h && !strcmp(m->v[i].key, key))
			break;
	return i;
}

struct strmap_entry *strmap_get(const struct strmap *m, const char *key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = find(m, key, strmap_hash(key));
	return m->v[i].key ? &m->v[i] : NULL;
}

static void grow(struct strmap *m)
{
	size_t cap = m->cap ? 2 * m->cap : 64;
	struct strmap_entry *v = xcalloc(cap, sizeof *v);

	for (size_t j = 0; j < m->cap; j++) {
		size_t i;

		if (!m->v[j].key)
			continue;
		for (i = m->v[j].hash & (cap - 1); v[i].key; i = (i + 1) & (cap - 1))
			;
		v[i] = m->v[j];
	}
	free(m->v);
	m->v = v;
	m->cap = cap;
}

struct strmap_entry *strmap_put(struct strmap *m, const char *key, int *added)
{
	uint64_t h = strmap_hash(key);
	size_t i;

	if (2 * (m->n + 1) > m->cap)
		grow(m);
	i = find(m, key, h);
	if (added)
		*added = !m->v[i].key;
	if (!m->v[i].key) {
		m->v[i].key = xstrdup(key);
		m->v[i].hash = h;
		m->v[i].v.i = 0;
		m->n++;
	}
	return &m->v[i];
}

void strmap_clear(struct strmap *m, void (*free_value)(void *))
{
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->v[i].key)
			continue;
		if (free_value && m->v[i].v.p)
			free_value(m->v[i].v.p);
		free(m->v[i].key);
	}
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}
