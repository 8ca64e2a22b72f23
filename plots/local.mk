## plots/local.mk - the gnuplot scripts (installed under $(pkgdatadir)) and
## the driver that writes their data files and runs gnuplot; with its test.

noinst_LIBRARIES += plots/libfpplots.a
plots_libfpplots_a_SOURCES = plots/plot.c plots/plot.h \
	plots/layout.c plots/layout.h plots/chart.c plots/chart.h
## Where the scripts are found at run time: $FUSEPROF_DATADIR, else the
## installed copy, else the source tree (an uninstalled build).
plots_libfpplots_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFP_PKGDATADIR='"$(pkgdatadir)"' -DFP_SRCPLOTSDIR='"$(abs_top_srcdir)/plots"'
fp_cmd_libs += plots/libfpplots.a

plotsdir = $(pkgdatadir)
dist_plots_DATA = plots/roofline.gp plots/fusion.gp

check_PROGRAMS += tests/test-plot
TESTS += tests/test-plot
tests_test_plot_SOURCES = tests/test-plot.c tests/synth.c tests/synth.h
tests_test_plot_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_plot_LDADD = $(test_report_libs)

## Chart geometry and label placement.
check_PROGRAMS += tests/test-layout
TESTS += tests/test-layout
tests_test_layout_SOURCES = tests/test-layout.c
tests_test_layout_LDADD = plots/libfpplots.a $(test_core_libs)

## What each chart shows, decided from the data: axis ranges, roofs, arrow
## styles and bundles, markers, the speedup chart's rows.
check_PROGRAMS += tests/test-chart
TESTS += tests/test-chart
tests_test_chart_SOURCES = tests/test-chart.c
tests_test_chart_LDADD = plots/libfpplots.a $(test_core_libs)
