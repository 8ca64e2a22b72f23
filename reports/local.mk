## reports/local.mk - analysis and rendering: roofline numbers and fusion
## pairs read from the views, Markdown/HTML/CSV/JSON output, the rows the
## charts take (plots/ draws them); with their tests. The `fuseprof report`
## command (src/cmd-report.c) is built by src/local.mk.

noinst_LIBRARIES += reports/libfpreports.a
reports_libfpreports_a_SOURCES = \
	reports/roofline.c reports/roofline.h \
	reports/fusion.c reports/fusion.h \
	reports/saved.c reports/saved.h \
	reports/opps.c reports/opps.h \
	reports/ranks.c reports/ranks.h \
	reports/render.c reports/render.h \
	reports/plot-input.c reports/plot-input.h \
	reports/against.c reports/against.h \
	reports/rows.c reports/rows.h \
	reports/trace.c reports/trace.h
reports_libfpreports_a_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
fp_cmd_libs += reports/libfpreports.a

## A report test links the report libraries, the store, and the synthetic
## database writer.
test_report_libs = reports/libfpreports.a reports/libfpcompare.a plots/libfpplots.a \
	$(test_store_libs)

check_PROGRAMS += tests/mkdb tests/test-roofline tests/test-report-views \
	tests/test-save-recompute
TESTS += tests/test-roofline tests/test-report-views tests/test-save-recompute
tests_mkdb_SOURCES = tests/mkdb.c tests/synth.c tests/synth.h
tests_mkdb_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_mkdb_LDADD = $(test_store_libs)
tests_test_roofline_SOURCES = tests/test-roofline.c
tests_test_roofline_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_roofline_LDADD = $(test_report_libs)
tests_test_report_views_SOURCES = tests/test-report-views.c tests/synth.c tests/synth.h
tests_test_report_views_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_report_views_LDADD = $(test_report_libs)
tests_test_save_recompute_SOURCES = tests/test-save-recompute.c tests/synth.c \
	tests/synth.h
tests_test_save_recompute_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_save_recompute_LDADD = $(test_report_libs)

TESTS += tests/test-report-cli.sh tests/test-report-errors.sh \
	tests/test-report-saved.sh tests/test-report-fusion-note.sh \
	tests/test-report-ranks.sh
EXTRA_DIST += tests/test-report-cli.sh tests/test-report-errors.sh \
	tests/test-report-saved.sh tests/test-report-fusion-note.sh \
	tests/test-report-ranks.sh

## --base: one run against another, matched as compare matches them
## (runs written by tests/mkruns, and the shipped profiles).
TESTS += tests/test-report-base.sh
EXTRA_DIST += tests/test-report-base.sh

## Numbers to distrust: v_distrust's rules at and past each threshold
## (runs written by tests/mkruns), the report's outputs of them, and the
## offenders of the shipped samples.
TESTS += tests/test-report-distrust.sh
EXTRA_DIST += tests/test-report-distrust.sh

## The sample database of a real GPU run, reported end to end; and every
## sample's ops within their roofs and above their minimum bytes.
TESTS += tests/test-report-sample.sh tests/test-samples.sh tests/test-profile-sample.sh
EXTRA_DIST += tests/test-report-sample.sh tests/test-samples.sh tests/test-profile-sample.sh \
	examples/h100-sample.db examples/h100-profile.db \
	examples/h200-sample.db examples/h200-block.db examples/h200-truth.db \
	examples/README.md
