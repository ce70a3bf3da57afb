/* Which programs cannot be preloaded: static executables (no PT_INTERP). */
#include "kcopy/kcopy.h"
#include "patch/select.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int cp_kcopy_is_static(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof ph)
		goto out;
	rc = 1;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) !=
		    (ssize_t)sizeof ph) {
			rc = -1;
			break;
		}
		if (ph.p_type == PT_INTERP) {
			rc = 0;
			break;
		}
	}
out:
	close(fd);
	return rc;
}

/* Does the static executable path have the runtime linked in (libcallpath-rt.a: its
 * callpath_attach_start in .symtab)? Then it is recorded as a preloaded one would be: the
 * runtime inside reads the environment. 1, 0, or -1 if unreadable. */
int cp_kcopy_links_runtime(const char *path)
{
	struct cp_patch_elf e;
	struct cp_patch_elf_iter it;
	struct cp_patch_func fn;
	if (cp_patch_elf_map(&e, path))
		return -1;
	cp_patch_elf_iter_init(&it);
	int found = 0;
	while (!found && cp_patch_elf_next(&e, &it, &fn))
		found = !strcmp(fn.name, "callpath_attach_start");
	cp_patch_elf_unmap(&e);
	return found;
}
