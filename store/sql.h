/* sql.h - statement helpers the store's files share (store/ only). */
#ifndef FP_STORE_SQL_H
#define FP_STORE_SQL_H

#include <sqlite3.h>

#include "store.h"

/* PRAGMA application_id of every fuseprof database: "FPRF". */
#define STORE_APP_ID 0x46505246

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

/* path as an SQLite URI that opens it read-only as fuseprof's readers do:
 * immutable when it is a WAL database with no log beside it (no lock
 * taken, nothing created beside it), else mode=ro. Returns a malloc'd
 * string. */
char *store_reader_uri(const char *path);

#endif
