/* views.h - the public SQL views: the stable query surface of a database. */
#ifndef FP_VIEWS_H
#define FP_VIEWS_H

struct view_def {
	const char *name;  /* "v_ops" */
	const char *sql;   /* the SELECT after "CREATE VIEW name AS" */
	const char *doc;   /* one line for the README and `fuseprof query --list` */
};

/* Every view, in creation order (a view may use the ones before it);
 * terminated by name == NULL. */
extern const struct view_def fp_views[];

/* A short hash of all view definitions; stored in meta('views') so a
 * database whose views are stale is brought up to date on open. */
const char *views_signature(void);

#endif
