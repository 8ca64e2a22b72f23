## reports/compare.mk - `fuseprof compare`: the verdict library (no SQLite,
## so its tests run on constructed distributions) and its tests; the
## command (src/cmd-compare.c) is built by src/local.mk.

noinst_LIBRARIES += reports/libfpcompare.a
reports_libfpcompare_a_SOURCES = reports/compare.c reports/compare.h
fp_cmd_libs += reports/libfpcompare.a

## tests/mkruns writes runs with chosen numbers through the store API, for
## the CLI tests of compare and query.
check_PROGRAMS += tests/test-compare tests/mkruns
TESTS += tests/test-compare \
	tests/test-compare-cli.sh \
	tests/test-compare-db.sh \
	tests/test-compare-devices.sh \
	tests/test-query-named.sh
EXTRA_DIST += tests/test-compare-cli.sh tests/test-compare-db.sh \
	tests/test-compare-devices.sh tests/test-query-named.sh
tests_test_compare_SOURCES = tests/test-compare.c tests/test.h
tests_test_compare_LDADD = reports/libfpcompare.a $(test_core_libs)
tests_mkruns_SOURCES = tests/mkruns.c
tests_mkruns_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_mkruns_LDADD = $(test_store_libs)
