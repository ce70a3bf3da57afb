/* Another process's load modules, for the offline driver (the kernel-copy sampler, in the
 * CLI): the ELF file's PT_LOAD segments are mapped read-only in this process at their
 * relative places, so that the unwinder reads .eh_frame_hdr, .eh_frame and code bytes as it
 * does in a live process, shifted by image_delta (runtime address + image_delta = here).
 * Outside signal context; never linked into a signal path. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/error.h"
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

/* Maps every PT_LOAD of fd read-only at its place; returns where vaddr 0 lies, or 0. The
 * part of a segment past its file size reads as zeroes. */
static uintptr_t image_map(int fd, const ElfW(Phdr) * ph, int phnum)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	char *base;

	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		lo = (ph[i].p_vaddr & ~(IMG_PAGE - 1)) < lo ? ph[i].p_vaddr & ~(IMG_PAGE - 1) : lo;
		hi = ph[i].p_vaddr + ph[i].p_memsz > hi ? ph[i].p_vaddr + ph[i].p_memsz : hi;
	}
	if (hi <= lo || hi - lo > (1ull << 34))
		return 0;
	base = mmap(NULL, hi - lo, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 0;
	for (int i = 0; i < phnum; i++) {
		uint64_t va = ph[i].p_vaddr & ~(IMG_PAGE - 1), skip = ph[i].p_vaddr - va;
		if (ph[i].p_type != PT_LOAD || !ph[i].p_filesz)
			continue;
		if (mmap(base + (va - lo), ph[i].p_filesz + skip, PROT_READ, MAP_PRIVATE | MAP_FIXED,
			 fd, (off_t)(ph[i].p_offset - skip)) == MAP_FAILED) {
			munmap(base, hi - lo);
			return 0;
		}
	}
	return (uintptr_t)base - lo;
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

int cp_modules_map_file(const char *open_path, const char *name, uint64_t map_start, uint64_t pgoff,
			struct cp_module *m)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph[IMG_MAX_PHDRS];
	uint64_t bias;
	uintptr_t image;
	int fd = open(open_path, O_RDONLY | O_CLOEXEC), rc;

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
	image = image_map(fd, ph, eh.e_phnum);
	if (!image) {
		rc = cp_error(CP_EIO, "%s: cannot map its segments: %s", name, strerror(errno));
		goto out;
	}
	rc = image_fill(m, ph, eh.e_phnum, image, bias, name);
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
