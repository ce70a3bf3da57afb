/* Which programs cannot be preloaded: static executables (no PT_INTERP). */
#include "kcopy/kcopy.h"

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
