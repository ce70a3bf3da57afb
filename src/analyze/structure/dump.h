/* Readable dumps of a structure file: the scope tree load module > file > procedure >
 * inlined frame > loop > statement with line ranges and address intervals (text), or the
 * same as JSON (schema in docs/cmd-struct.md). */
#ifndef CP_ANALYZE_STRUCTURE_DUMP_H
#define CP_ANALYZE_STRUCTURE_DUMP_H

#include "format/structure.h"

#include <stdio.h>

void cp_struct_dump_text(const struct cp_structure *st, FILE *out);
void cp_struct_dump_json(const struct cp_structure *st, FILE *out);
/* The scope chain of addr as one line: `0xADDR<TAB>kind:name@file:line...` (see
 * docs/cmd-struct.md, --lookup). */
void cp_struct_print_lookup(const struct cp_structure *st, uint64_t addr, int json, FILE *out);

#endif
