## kernels/api/local.mk - libfuseprof-kernels: the fused variants' kernels as
## a shared library with the C API of kernels/fuseprof/kernels.h (installed
## as fuseprof/kernels.h), and its pkg-config file. Linked from fpk.cu and
## the objects of kernels/libfpkernels.a and lib/libfpcore.a it needs (all
## built position-independent, Makefile.am); exports only fpk_* (fpk.map).
## Automake builds shared libraries through libtool only, which nvcc's
## objects do not fit: the rules are plain make.

fpk_so = libfuseprof-kernels.so.0
fpk_object = kernels/api/fpk.$(OBJEXT)
fpk_libs = -lcublasLt -lcublas -lcudart -lstdc++ -lm $(PTHREAD_LIBS)

fuseprofincludedir = $(includedir)/fuseprof
fuseprofinclude_HEADERS = kernels/fuseprof/kernels.h
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = kernels/api/fuseprof-kernels.pc
EXTRA_DIST += kernels/api/fpk.cu kernels/api/fpk.map kernels/api/fuseprof-kernels.pc.in

$(fpk_object): kernels/api/fpk.cu kernels/fuseprof/kernels.h $(kernels_headers) \
		kernels/ln_linear/internal.h kernels/ln_linear/ln_linear.h \
		kernels/ln_gelu/ln_gelu.h kernels/softmax/sm.h
	@$(MKDIR_P) kernels/api
	$(AM_V_NVCC)$(NVCC) $(NVCCFLAGS) $(DEFS) $(AM_CPPFLAGS) $(CPPFLAGS) -c -o $@ $<

$(fpk_so): $(fpk_object) kernels/libfpkernels.a lib/libfpcore.a kernels/api/fpk.map
	$(AM_V_GEN)$(CC) -shared -Wl,-soname,$(fpk_so) \
		-Wl,--version-script=$(srcdir)/kernels/api/fpk.map -Wl,--no-undefined \
		-o $@ $(fpk_object) kernels/libfpkernels.a lib/libfpcore.a \
		$(AM_LDFLAGS) $(LDFLAGS) $(fpk_libs)

libfuseprof-kernels.so: $(fpk_so)
	$(AM_V_GEN)rm -f $@ && $(LN_S) $(fpk_so) $@

all-local: libfuseprof-kernels.so
CLEANFILES += $(fpk_so) libfuseprof-kernels.so $(fpk_object)

install-exec-local: $(fpk_so)
	$(MKDIR_P) '$(DESTDIR)$(libdir)'
	$(INSTALL_PROGRAM) $(fpk_so) '$(DESTDIR)$(libdir)/$(fpk_so)'
	cd '$(DESTDIR)$(libdir)' && rm -f libfuseprof-kernels.so && \
		$(LN_S) $(fpk_so) libfuseprof-kernels.so

uninstall-local:
	rm -f '$(DESTDIR)$(libdir)/$(fpk_so)' '$(DESTDIR)$(libdir)/libfuseprof-kernels.so'

## The C API's CPU test (argument checks, messages, sizes; no GPU), the
## exported-symbol check and the README's example compiled against the
## header and the library.
TESTS += tests/test-kernels-api tests/test-kernels-lib.sh
check_PROGRAMS += tests/test-kernels-api
tests_test_kernels_api_SOURCES = tests/test-kernels-api.c tests/test.h
tests_test_kernels_api_CPPFLAGS = -I$(top_srcdir)/kernels -I$(top_srcdir)/tests $(CUDA_CPPFLAGS)
tests_test_kernels_api_LDADD = $(fpk_so) -lcudart $(PTHREAD_LIBS)
tests_test_kernels_api_LDFLAGS = -Wl,-rpath,'$(abs_top_builddir)' $(CUDA_LDFLAGS)
tests_test_kernels_api_DEPENDENCIES = $(fpk_so)
EXTRA_DIST += tests/test-kernels-lib.sh
