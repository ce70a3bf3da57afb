/* Another process's load modules, for the offline driver (the kernel-copy sampler, in the
 * CLI): the ELF file's PT_LOAD segments are mapped read-only in this process at their
 * relative places, so that the unwinder reads .eh_frame_hdr, .eh_frame and code bytes as it
 * does in a live process, shifted by image_delta (runtime address + image_delta = here).
 * Outside signal context; never linked into a signal path. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/error.h"
#include "runtime/unwind/cfi.h"
#include "runtime/unwind/modules-internal.h"
#include "runtime/unwind/modules.h"

#define IMG_PAGE 4096ull
#define IMG_MAX_PHDRS 64

/* Fills m from the program headers: image_base is where virtual address 0 lies here,
 * bias where it lies in the target. */
static int image_fill(struct cp_module *m, const ElfW(Phdr) * ph, int phnum, uintptr_t image_base,
		      uint64_t bias, const char *name)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	memset(m, 0, sizeof(*m));
	m->bias = bias;
	m->foreign = 1;
	m->image_delta = (int64_t)(image_base - bias);
	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			lo = ph[i].p_vaddr < lo ? ph[i].p_vaddr : lo;
			if (ph[i].p_vaddr + ph[i].p_memsz > hi)
				hi = ph[i].p_vaddr + ph[i].p_memsz;
		} else if (ph[i].p_type == PT_GNU_EH_FRAME) {
			m->eh_frame_hdr = (const uint8_t *)(image_base + ph[i].p_vaddr);
			m->eh_frame_hdr_size = ph[i].p_filesz;
		} else if (ph[i].p_type == PT_NOTE && !m->build_id_len) {
			cp_module_read_build_id(m, (const uint8_t *)(image_base + ph[i].p_vaddr),
						ph[i].p_filesz);
		}
	}
	if (hi == 0)
		return cp_error(CP_EFORMAT, "%s: no executable segment", name);
	m->text_lo = bias + lo;
	m->text_hi = bias + hi;
	strncpy(m->path, name, sizeof(m->path) - 1);
	return 0;
}

static int headers_read(int fd, const char *name, ElfW(Ehdr) * eh, ElfW(Phdr) * ph)
{
	if (pread(fd, eh, sizeof(*eh), 0) != (ssize_t)sizeof(*eh) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_machine != EM_X86_64)
		return cp_error(CP_EFORMAT, "%s: not an x86-64 ELF file", name);
	if (eh->e_phnum == 0 || eh->e_phnum > IMG_MAX_PHDRS || eh->e_phentsize != sizeof(*ph))
		return cp_error(CP_EFORMAT, "%s: unusual program headers", name);
	if (pread(fd, ph, sizeof(*ph) * eh->e_phnum, (off_t)eh->e_phoff) !=
	    (ssize_t)(sizeof(*ph) * eh->e_phnum))
		return cp_error(CP_EFORMAT, "%s: truncated program headers", name);
	return 0;
}

/* Maps every PT_LOAD of fd read-only at its place, followed by extra writable bytes at
 * *tail; returns where vaddr 0 lies, or 0. Past a segment's file size reads zeroes. */
static uintptr_t image_map(int fd, const ElfW(Phdr) * ph, int phnum, size_t extra, uint8_t **tail)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	char *base;

	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		lo = (ph[i].p_vaddr & ~(IMG_PAGE - 1)) < lo ? ph[i].p_vaddr & ~(IMG_PAGE - 1) : lo;
		hi = ph[i].p_vaddr + ph[i].p_memsz > hi ? ph[i].p_vaddr + ph[i].p_memsz : hi;
	}
	if (hi <= lo || hi - lo > (1ull << 30))
		return 0;
	hi = (hi + IMG_PAGE - 1) & ~(IMG_PAGE - 1);
	base = mmap(NULL, hi - lo + extra, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 0;
	for (int i = 0; i < phnum; i++) {
		uint64_t va = ph[i].p_vaddr & ~(IMG_PAGE - 1), skip = ph[i].p_vaddr - va;
		if (ph[i].p_type != PT_LOAD || !ph[i].p_filesz)
			continue;
		if (mmap(base + (va - lo), ph[i].p_filesz + skip, PROT_READ,
			 MAP_PRIVATE | MAP_FIXED, fd,
			 (off_t)(ph[i].p_offset - skip)) == MAP_FAILED) {
			munmap(base, hi - lo + extra);
			return 0;
		}
	}
	*tail = (uint8_t *)base + (hi - lo);
	if (extra)
		mprotect(*tail, extra, PROT_READ | PROT_WRITE);
	return (uintptr_t)base - lo;
}

/* The .eh_frame section (address, size) from the section headers; 0 if there is none. */
static int eh_frame_section(int fd, const ElfW(Ehdr) * eh, uint64_t *addr, uint64_t *size)
{
	ElfW(Shdr) sh, strs;
	char name[16];

	if (!eh->e_shoff || eh->e_shentsize != sizeof(sh) || eh->e_shstrndx >= eh->e_shnum ||
	    pread(fd, &strs, sizeof(strs), (off_t)(eh->e_shoff + eh->e_shstrndx * sizeof(sh))) !=
		(ssize_t)sizeof(strs))
		return 0;
	for (unsigned i = 1; i < eh->e_shnum; i++) {
		if (pread(fd, &sh, sizeof(sh), (off_t)(eh->e_shoff + i * sizeof(sh))) !=
			(ssize_t)sizeof(sh) ||
		    pread(fd, name, sizeof(name), (off_t)(strs.sh_offset + sh.sh_name)) <= 0)
			return 0;
		name[sizeof(name) - 1] = 0;
		if (!strcmp(name, ".eh_frame") && sh.sh_addr && sh.sh_type == SHT_PROGBITS) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			return 1;
		}
	}
	return 0;
}

static size_t hdr_bytes(uint64_t eh_frame_size)
{
	return 8 + 8 * (eh_frame_size / 16 + 1); /* an FDE takes at least 16 bytes */
}

static int fde_cmp(const void *a, const void *b)
{
	const struct cp_cfi_fde *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* An .eh_frame_hdr with a binary-search table for an image that has none (ld gives static
 * executables none), built at hdr (hdr_bytes(size) bytes, within 2 GiB of the image). */
static size_t hdr_build(const uint8_t *eh_frame, uint64_t size, uint8_t *hdr)
{
	size_t cap = size / 16 + 1, n;
	struct cp_cfi_fde *f = malloc(cap * sizeof(*f));
	int32_t *t = (int32_t *)(void *)(hdr + 8);
	uint32_t count;

	if (!f)
		return 0;
	n = cp_cfi_fde_list(eh_frame, size, f, cap);
	qsort(f, n, sizeof(*f), fde_cmp);
	hdr[0] = 1;
	hdr[1] = 0xff; /* no eh_frame_ptr */
	hdr[2] = 0x03; /* udata4 count */
	hdr[3] = 0x3b; /* datarel sdata4 table */
	count = (uint32_t)n;
	memcpy(hdr + 4, &count, 4);
	for (size_t i = 0; i < n; i++) {
		t[2 * i] = (int32_t)(f[i].begin - (uintptr_t)hdr);
		t[2 * i + 1] = (int32_t)((uintptr_t)f[i].fde - (uintptr_t)hdr);
	}
	free(f);
	return n ? 8 + 8 * n : 0;
}

/* The target's bias from one of its mappings: map_start maps file offset pgoff. */
static int bias_of(const ElfW(Phdr) * ph, int phnum, uint64_t map_start, uint64_t pgoff,
		   uint64_t *bias)
{
	for (int i = 0; i < phnum; i++) {
		uint64_t off = ph[i].p_offset & ~(IMG_PAGE - 1);
		if (ph[i].p_type != PT_LOAD || pgoff < off ||
		    pgoff >= ph[i].p_offset + (ph[i].p_filesz ? ph[i].p_filesz : 1))
			continue;
		*bias = map_start - ((ph[i].p_vaddr & ~(IMG_PAGE - 1)) + (pgoff - off));
		return 0;
	}
	return -1;
}

static int has_eh_frame_hdr(const ElfW(Phdr) * ph, int phnum)
{
	for (int i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			return 1;
	return 0;
}

int cp_modules_map_file(const char *open_path, const char *name, uint64_t map_start, uint64_t pgoff,
			struct cp_module *m)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph[IMG_MAX_PHDRS];
	uint64_t bias, eh_addr = 0, eh_size = 0;
	uintptr_t image;
	uint8_t *tail = NULL;
	int fd = open(open_path, O_RDONLY | O_CLOEXEC), rc, build;

	if (fd < 0)
		return cp_error(CP_EIO, "cannot open %s: %s", open_path, strerror(errno));
	rc = headers_read(fd, name, &eh, ph);
	if (rc)
		goto out;
	if (bias_of(ph, eh.e_phnum, map_start, pgoff, &bias) < 0) {
		rc = cp_error(CP_EFORMAT, "%s: no segment at file offset %#llx", name,
			      (unsigned long long)pgoff);
		goto out;
	}
	build = !has_eh_frame_hdr(ph, eh.e_phnum) && eh_frame_section(fd, &eh, &eh_addr, &eh_size);
	image = image_map(fd, ph, eh.e_phnum, build ? hdr_bytes(eh_size) : 0, &tail);
	if (!image) {
		rc = cp_error(CP_EIO, "%s: cannot map its segments: %s", name, strerror(errno));
		goto out;
	}
	rc = image_fill(m, ph, eh.e_phnum, image, bias, name);
	if (!rc && build) {
		m->eh_frame_hdr_size = hdr_build((const uint8_t *)(image + eh_addr), eh_size, tail);
		m->eh_frame_hdr = m->eh_frame_hdr_size ? tail : NULL;
	}
out:
	close(fd);
	return rc;
}

int cp_modules_map_memory(const void *ehdr, uint64_t map_start, const char *name,
			  struct cp_module *m)
{
	const ElfW(Ehdr) *eh = ehdr;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)ehdr + eh->e_phoff);
	uint64_t lo = UINT64_MAX;

	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_vaddr & ~(IMG_PAGE - 1)) < lo)
			lo = ph[i].p_vaddr & ~(IMG_PAGE - 1);
	if (lo == UINT64_MAX)
		return cp_error(CP_EFORMAT, "%s: no loadable segment", name);
	return image_fill(m, ph, eh->e_phnum, (uintptr_t)ehdr - lo, map_start - lo, name);
}
