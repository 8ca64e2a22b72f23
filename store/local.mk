## store/local.mk - the SQLite store: schema, migrations, the public views,
## inserts and reads. Below the reports and the commands, beside kernels/
## and probes/ (which never touch SQLite); it uses only lib/.

noinst_LIBRARIES += store/libfpstore.a
store_libfpstore_a_SOURCES = \
	store/store.c store/store.h \
	store/views.c store/views.h \
	store/proc.c store/proc.h \
	store/sql.h \
	store/profile.c store/profile.h \
	store/merge.c store/merge.h
store_libfpstore_a_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
