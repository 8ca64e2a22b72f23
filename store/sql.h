/* sql.h - statement helpers the store's files share (store/ only). */
#ifndef FP_STORE_SQL_H
#define FP_STORE_SQL_H

#include <sqlite3.h>

#include "store.h"

/* Prepare sql on st's connection into *s. Returns 0, or -1 after an error
 * naming the file. */
int store_prepare(struct store *st, const char *sql, sqlite3_stmt **s);

/* Step a prepared write to completion and finalize it. Returns 0, or -1
 * after "<what> '<path>': <sqlite message>". */
int store_step_done(struct store *st, sqlite3_stmt *s, const char *what);

/* Bind text, or NULL when v is NULL. */
void store_bind_text(sqlite3_stmt *s, int i, const char *v);

/* Bind a real, or NULL when v is not finite. */
void store_bind_real(sqlite3_stmt *s, int i, double v);

#endif
