/* libFuzzer target for the structure-recovery front end and the structure-file reader.
 *
 * Input: an ELF image (seeded with the fixtures). It goes through the whole pipeline from
 * memory (ELF checks, symbols, PLT, DWARF through libdw, CFG, loops, scope tree, the
 * writer) and the result through the validating reader and its lookups. Inputs that
 * start with the structure-file magic are fed to the reader instead, with file_size and
 * checksum patched in first so that mutations reach the table checks behind them.
 *
 * Build and run: tests/e2e/struct-fuzz.sh (clang -fsanitize=fuzzer,address). */
#include "analyze/structure/recover.h"
#include "base/hash.h"
#include "format/structure.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void exercise(const struct cp_structure *st)
{
	uint32_t chain[64];
	for (uint32_t i = 0; i < st->hdr->nranges && i < 64; i++) {
		cp_structure_chain(st, st->ranges[i].lo, chain, 64);
		cp_structure_chain(st, st->ranges[i].lo + st->ranges[i].len - 1, chain, 64);
	}
	for (uint32_t i = 0; i < st->hdr->nscopes && i < 256; i++)
		(void)strlen(cp_structure_string(st, st->scopes[i].name));
}

static void fuzz_structure_file(uint8_t *buf, size_t size)
{
	struct cp_st_header *h = (struct cp_st_header *)buf;
	if (size >= sizeof(*h) && h->header_size >= sizeof(*h) && h->header_size <= size) {
		h->file_size = size;
		h->checksum =
		    cp_fnv1a(CP_ST_CHECKSUM_SEED, buf + h->header_size, size - h->header_size);
	}
	struct cp_structure st;
	if (!cp_structure_load(&st, buf, size, "fuzz")) {
		exercise(&st);
		cp_structure_release(&st);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* libelf may map the image read-write: give it a private copy. */
	uint8_t *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	if (size >= 8 && !memcmp(buf, CP_ST_MAGIC, 8)) {
		fuzz_structure_file(buf, size);
	} else {
		struct cp_structure st;
		if (!cp_struct_recover_memory(buf, size, &st)) {
			exercise(&st);
			cp_structure_release(&st);
		}
	}
	free(buf);
	return 0;
}
