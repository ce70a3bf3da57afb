#include "analyze/elf/elf-image.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void image_reset(struct cp_elf_image *im)
{
	memset(im, 0, sizeof(*im));
	im->fd = -1;
}

static int check_header(struct cp_elf_image *im)
{
	if (elf_kind(im->elf) != ELF_K_ELF)
		return cp_error(CP_EFORMAT, "%s: not an ELF file (bad magic at offset 0)",
				im->path);
	if (im->file_size < sizeof(Elf64_Ehdr))
		return cp_error(CP_EFORMAT, "%s: truncated ELF: %llu bytes, the header needs %zu",
				im->path, (unsigned long long)im->file_size, sizeof(Elf64_Ehdr));
	const char *ident = elf_getident(im->elf, NULL);
	if (!ident || ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB)
		return cp_error(CP_ENOTSUP,
				"%s: not a 64-bit little-endian ELF (byte %d of the "
				"header); callpath analyzes x86-64 only",
				im->path, EI_CLASS);
	GElf_Ehdr eh;
	if (!gelf_getehdr(im->elf, &eh))
		return cp_error(CP_EFORMAT, "%s: unreadable ELF header: %s", im->path,
				elf_errmsg(-1));
	if (eh.e_machine != EM_X86_64)
		return cp_error(CP_ENOTSUP,
				"%s: ELF for machine %u (e_machine at offset 18), not "
				"x86-64 (62); callpath analyzes x86-64 only",
				im->path, eh.e_machine);
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return cp_error(CP_ENOTSUP,
				"%s: ELF type %u is neither an executable nor a shared "
				"object",
				im->path, eh.e_type);
	im->e_type = eh.e_type;
	if (eh.e_shoff > im->file_size ||
	    (uint64_t)eh.e_shnum * eh.e_shentsize > im->file_size - eh.e_shoff)
		return cp_error(CP_EFORMAT,
				"%s: truncated ELF: section headers at offset %llu "
				"extend past the end of the file (%llu bytes)",
				im->path, (unsigned long long)eh.e_shoff,
				(unsigned long long)im->file_size);
	size_t n, strndx;
	if (elf_getshdrnum(im->elf, &n) || elf_getshdrstrndx(im->elf, &strndx))
		return cp_error(CP_EFORMAT, "%s: corrupt section header table at offset %llu: %s",
				im->path, (unsigned long long)eh.e_shoff, elf_errmsg(-1));
	return 0;
}

static void read_build_id(struct cp_elf_image *im, Elf_Data *d)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= CP_BUILD_ID_MAX) {
			memcpy(im->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
			im->build_id_len = nh.n_descsz;
			return;
		}
		off = next;
	}
}

static int section_cmp(const void *a, const void *b)
{
	const struct cp_elf_section *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int add_section(struct cp_elf_image *im, struct cp_elf_section **v, size_t *n, size_t index,
		       const GElf_Shdr *sh, size_t *alloc)
{
	Elf_Data *d = cp_elf_section_data(im, index);
	if (!d)
		return CP_EFORMAT;
	if (!d->d_buf || d->d_size < sh->sh_size)
		return 0;
	XGROW(*v, *n + 1, *alloc);
	struct cp_elf_section *s = &(*v)[(*n)++];
	s->addr = sh->sh_addr;
	s->size = sh->sh_size;
	s->data = d->d_buf;
	s->name = cp_elf_section_name(im, sh);
	s->index = index;
	s->flags = sh->sh_flags;
	return 0;
}

static int scan_sections(struct cp_elf_image *im)
{
	size_t n, alloc = 0, data_alloc = 0;
	elf_getshdrnum(im->elf, &n);
	for (size_t i = 1; i < n; i++) {
		GElf_Shdr sh;
		if (cp_elf_section_header(im, i, &sh))
			return CP_EFORMAT;
		if (sh.sh_type != SHT_NOBITS && sh.sh_size &&
		    (sh.sh_offset > im->file_size || sh.sh_size > im->file_size - sh.sh_offset))
			return cp_error(CP_EFORMAT,
					"%s: truncated or corrupt ELF: section %zu (%s) at "
					"offset %llu, size %llu, extends past the end of the file "
					"(%llu bytes)",
					im->path, i, cp_elf_section_name(im, &sh),
					(unsigned long long)sh.sh_offset,
					(unsigned long long)sh.sh_size,
					(unsigned long long)im->file_size);
		const char *name = cp_elf_section_name(im, &sh);
		if (sh.sh_type == SHT_NOTE) {
			Elf_Data *d = cp_elf_section_data(im, i);
			if (d && !im->build_id_len)
				read_build_id(im, d);
		} else if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC) && sh.sh_size) {
			int rc = add_section(im, &im->data, &im->ndata, i, &sh, &data_alloc);
			if (!rc && (sh.sh_flags & SHF_EXECINSTR))
				rc = add_section(im, &im->code, &im->ncode, i, &sh, &alloc);
			if (rc)
				return rc;
		} else if (name && !strcmp(name, ".debug_info") && sh.sh_size)
			im->has_debug_info = 1;
	}
	if (im->ncode)
		qsort(im->code, im->ncode, sizeof(*im->code), section_cmp);
	if (im->ndata)
		qsort(im->data, im->ndata, sizeof(*im->data), section_cmp);
	return 0;
}

/* Before libelf: a file starting like ELF but shorter than its header is truncated. */
static int precheck(const struct cp_elf_image *im, const unsigned char *head, size_t n)
{
	if (n < 4 || memcmp(head, ELFMAG, SELFMAG))
		return cp_error(CP_EFORMAT, "%s: not an ELF file (bad magic at offset 0)",
				im->path);
	if (im->file_size < sizeof(Elf64_Ehdr))
		return cp_error(CP_EFORMAT,
				"%s: truncated ELF: %llu bytes, the ELF header needs %zu", im->path,
				(unsigned long long)im->file_size, sizeof(Elf64_Ehdr));
	return 0;
}

static int image_finish_open(struct cp_elf_image *im)
{
	int rc = check_header(im);
	if (!rc)
		rc = scan_sections(im);
	if (rc)
		cp_elf_image_release(im);
	return rc;
}

int cp_elf_image_open(struct cp_elf_image *im, const char *path)
{
	image_reset(im);
	elf_version(EV_CURRENT);
	im->path = xstrdup(path);
	im->fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (im->fd < 0 || fstat(im->fd, &st)) {
		int e = errno;
		cp_elf_image_release(im);
		return cp_error(e == ENOENT ? CP_ENOENT : CP_EIO, "cannot open %s: %s", path,
				strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		cp_elf_image_release(im);
		return cp_error(CP_EINVAL, "%s: not a regular file", path);
	}
	im->file_size = (uint64_t)st.st_size;
	unsigned char head[SELFMAG];
	ssize_t got = pread(im->fd, head, sizeof head, 0);
	int rc = precheck(im, head, got > 0 ? (size_t)got : 0);
	if (rc) {
		cp_elf_image_release(im);
		return rc;
	}
	im->elf = elf_begin(im->fd, ELF_C_READ_MMAP, NULL);
	if (!im->elf) {
		rc = cp_error(CP_EFORMAT, "%s: cannot read as ELF: %s", path, elf_errmsg(-1));
		cp_elf_image_release(im);
		return rc;
	}
	return image_finish_open(im);
}

int cp_elf_image_open_memory(struct cp_elf_image *im, const void *buf, size_t len, const char *name)
{
	image_reset(im);
	elf_version(EV_CURRENT);
	im->path = xstrdup(name ? name : "<memory>");
	im->file_size = len;
	int rc = precheck(im, buf, len);
	if (rc) {
		cp_elf_image_release(im);
		return rc;
	}
	im->elf = elf_memory((char *)buf, len);
	if (!im->elf) {
		rc = cp_error(CP_EFORMAT, "%s: cannot read as ELF: %s", im->path, elf_errmsg(-1));
		cp_elf_image_release(im);
		return rc;
	}
	return image_finish_open(im);
}

void cp_elf_image_release(struct cp_elf_image *im)
{
	if (im->elf)
		elf_end(im->elf);
	if (im->fd >= 0)
		close(im->fd);
	free(im->path);
	free(im->code);
	free(im->data);
	image_reset(im);
}

const struct cp_elf_section *cp_elf_code_at(const struct cp_elf_image *im, uint64_t vaddr)
{
	size_t lo = 0, hi = im->ncode;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct cp_elf_section *s = &im->code[mid];
		if (vaddr < s->addr)
			hi = mid;
		else if (vaddr - s->addr >= s->size)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

size_t cp_elf_read(const struct cp_elf_image *im, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < im->ndata; i++) {
		const struct cp_elf_section *s = &im->data[i];
		if (vaddr < s->addr || vaddr - s->addr >= s->size)
			continue;
		size_t n = s->size - (vaddr - s->addr);
		if (n > len)
			n = len;
		memcpy(buf, s->data + (vaddr - s->addr), n);
		return n;
	}
	return 0;
}

int cp_elf_section_header(const struct cp_elf_image *im, size_t index, GElf_Shdr *shdr)
{
	Elf_Scn *scn = elf_getscn(im->elf, index);
	if (!scn || !gelf_getshdr(scn, shdr))
		return cp_error(CP_EFORMAT, "%s: corrupt section header %zu: %s", im->path, index,
				elf_errmsg(-1));
	return 0;
}

const char *cp_elf_section_name(const struct cp_elf_image *im, const GElf_Shdr *shdr)
{
	size_t strndx;
	if (elf_getshdrstrndx(im->elf, &strndx))
		return "?";
	const char *s = elf_strptr(im->elf, strndx, shdr->sh_name);
	return s ? s : "?";
}

size_t cp_elf_find_section(const struct cp_elf_image *im, const char *name, GElf_Shdr *shdr)
{
	size_t n;
	if (elf_getshdrnum(im->elf, &n))
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (cp_elf_section_header(im, i, shdr))
			continue;
		if (!strcmp(cp_elf_section_name(im, shdr), name))
			return i;
	}
	return 0;
}

Elf_Data *cp_elf_section_data(const struct cp_elf_image *im, size_t index)
{
	Elf_Scn *scn = elf_getscn(im->elf, index);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d)
		cp_error(CP_EFORMAT, "%s: cannot read section %zu: %s", im->path, index,
			 elf_errmsg(-1));
	return d;
}

void cp_build_id_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * len] = 0;
}
