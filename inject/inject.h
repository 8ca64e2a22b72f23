/* inject.h - what `fuseprof profile` and its collector, the injection
 * library libfuseprof-inject.so loaded into the profiled program, agree
 * on: the library's name, the environment through which the command
 * passes the run to the program's processes (internal plumbing between
 * fuseprof and its own library, never set by users), and how often each
 * process commits what it recorded. */
#ifndef FP_INJECT_H
#define FP_INJECT_H

/* The library, installed in $(pkglibdir) (lib/fuseprof/), found the way
 * fuseprof-gpu is (src/gpu-exec.c). */
#define FP_INJECT_LIB "libfuseprof-inject.so"

/* The database (an absolute path) and the profiled run's id in it. */
#define FP_ENV_PROFILE_DB "FUSEPROF_PROFILE_DB"
#define FP_ENV_PROFILE_RUN "FUSEPROF_PROFILE_RUN"
/* Optional: a POSIX extended regular expression on demangled kernel
 * names (only matching kernels are recorded), and the most launches each
 * process records (0 or unset: no limit). */
#define FP_ENV_PROFILE_FILTER "FUSEPROF_PROFILE_KERNEL_FILTER"
#define FP_ENV_PROFILE_MAX "FUSEPROF_PROFILE_MAX_KERNELS"
/* Optional: glob patterns on range paths, one per line (only launches in
 * a matching range, or in a range inside one, are recorded), and the one
 * device whose kernels are recorded (its CUDA ordinal in the program). */
#define FP_ENV_PROFILE_NVTX "FUSEPROF_PROFILE_NVTX_INCLUDE"
#define FP_ENV_PROFILE_DEVICE "FUSEPROF_PROFILE_DEVICE"

/* Optional: the hardware counters to read on every kernel, one raw
 * metric name a line (`profile --metrics GROUP` passes its group's). */
#define FP_ENV_PROFILE_COUNTERS "FUSEPROF_PROFILE_COUNTERS"

/* Counted kernels per range profiler collection, at most: each
 * collection's values are decoded when it ends, after a length drawn
 * between a third of this and this, or at a commit, whichever comes
 * first. */
#define FP_COUNT_BATCH 96

/* Each process commits what it recorded every FP_COMMIT_SECONDS, and
 * sooner when FP_COMMIT_KERNELS kernel records wait: a process killed
 * with SIGKILL loses at most that much. */
#define FP_COMMIT_SECONDS 2
#define FP_COMMIT_KERNELS 10000

#endif
