/* Private to src/record: the pieces of cp_record_run in their files. */
#ifndef CP_RECORD_IMPL_H
#define CP_RECORD_IMPL_H

#include "record/record.h"

#include <stddef.h>

/* record.c */
void cp_record_child_environment(const struct cp_record_opts *o,
				 const struct cp_record_result *res);
/* run.c: forks, execs and waits for the program (res->outdir set), forwarding signals. */
int cp_record_spawn(const struct cp_record_opts *o, struct cp_record_result *res);
/* mpi.c */
int cp_record_mpi_job(char *out, size_t cap);
int cp_record_clear_ended(const char *dir);

#endif
