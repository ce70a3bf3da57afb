/* GNU gmon.out (the file gprof reads): a histogram of program-counter samples over one
 * executable's text and caller->callee arcs with call counts. `callpath export --format
 * gmon` fills it from a profile database; `callpath gprof` (exact call counts from entry
 * probes) reuses the same writer.
 *
 * File layout (binutils gprof/gmon_out.h, little-endian x86-64): the header "gmon",
 * version 1 (4 bytes), 12 spare bytes; then tagged records: tag 0 = histogram (low_pc,
 * high_pc: 8 bytes each; number of bins: 4; profiling rate in Hz: 4; dimension "seconds"
 * padded to 15 bytes; abbreviation 's'; then the bins, 16-bit counts), tag 1 = arc
 * (from_pc, self_pc: 8 bytes each; count: 4 bytes). Addresses are those of the
 * executable as linked (for a PIE: offsets from its load base), as gprof's symbol table
 * has them. */
#ifndef CP_EXPORT_GMON_H
#define CP_EXPORT_GMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cp_gmon_arc {
	uint64_t from_pc; /* an address inside the caller (a call site or its entry) */
	uint64_t self_pc; /* the callee's entry */
	uint64_t count;	  /* calls (clamped to 2^32-1 when written) */
};

struct cp_gmon {
	uint64_t low_pc, high_pc; /* histogram range [low_pc, high_pc) */
	uint32_t nbins;
	double *seconds; /* [nbins]: time sampled in each bin */
	struct cp_gmon_arc *arcs;
	size_t narcs, arcs_alloc;
};

/* Histogram over [low_pc, high_pc) in bins of about bin_bytes (>= 1; the bin count is
 * capped at 2^22, widening the bins). Empty range: a one-bin histogram. */
void cp_gmon_init(struct cp_gmon *g, uint64_t low_pc, uint64_t high_pc, uint32_t bin_bytes);
void cp_gmon_release(struct cp_gmon *g);
/* Adds seconds of time at pc (outside the range: ignored, returns -1). */
int cp_gmon_hist_add(struct cp_gmon *g, uint64_t pc, double seconds);
/* Adds count calls from -> self (merged with an existing equal arc). */
void cp_gmon_arc_add(struct cp_gmon *g, uint64_t from_pc, uint64_t self_pc, uint64_t count);

/* The profiling rate cp_gmon_write uses: the largest rate (Hz) up to max_rate such that
 * no bin exceeds 65535 ticks, at least 1. */
uint32_t cp_gmon_rate(const struct cp_gmon *g, uint32_t max_rate);
/* Writes the file: bins = round(seconds * rate) with rate = cp_gmon_rate(g, max_rate)
 * (max_rate 0 = 1000000 Hz), then the arcs sorted. 0 or CP_EIO with cp_error() set. */
int cp_gmon_write(const struct cp_gmon *g, uint32_t max_rate, FILE *out);

/* callpath gprof: g (initialized here; release it in any case) from the measurement
 * directory dir of a run with entry probes on the functions of the executable exe (its
 * real path; metric "calls") and "cputime" sampling. Arcs: each probed call's PC node under
 * the CALL node of its call site, both in exe (gprof's mcount drops arcs from outside the
 * executable too); histogram: cputime at exe's PC nodes. *rate: the sampling rate in Hz for
 * cp_gmon_write. 0, CP_ENOENT when dir holds no profile of exe, or the reader's error. */
int cp_gmon_from_measurement(struct cp_gmon *g, const char *dir, const char *exe, uint32_t *rate);
/* cp_gmon_write to the file path. 0 or CP_EIO with cp_error() set. */
int cp_gmon_write_file(const struct cp_gmon *g, uint32_t max_rate, const char *path);

#endif
