/* The target's load modules, registered with the runtime's module registry (its images
 * mapped read-only here) from /proc/PID/maps at the start and from PERF_RECORD_MMAP2
 * records afterwards. The vDSO is the same in every process: ours stands in for it. */
#include "kcopy/kcopy-internal.h"

#include "base/error.h"
#include "runtime/unwind/modules.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

/* Is a module of this path already registered at this address? */
static int known(const char *path, uint64_t start)
{
	uint32_t n = cp_modules_count();

	for (uint32_t i = 0; i < n; i++) {
		const struct cp_module *m = cp_modules_slot(i);
		if (!m->unloaded && start >= m->text_lo && start < m->text_hi &&
		    !strcmp(m->path, path))
			return 1;
	}
	return 0;
}

void kc_target_map(pid_t pid, const char *path, uint64_t start, uint64_t pgoff)
{
	struct cp_module m;
	int rc;

	(void)pid;
	if (known(path, start))
		return;
	if (!strcmp(path, "[vdso]")) {
		const void *vdso = (const void *)getauxval(AT_SYSINFO_EHDR);
		rc = vdso ? cp_modules_map_memory(vdso, start, path, &m) : CP_ENOENT;
	} else if (path[0] == '/') {
		rc = cp_modules_map_file(path, path, start, pgoff, &m);
	} else {
		return; /* anonymous code (a JIT): its samples keep absolute addresses */
	}
	if (rc == 0)
		rc = cp_modules_add(&m);
	if (rc < 0)
		cp_error_clear(); /* that module's samples stay unattributed */
}

int kc_target_scan(pid_t pid)
{
	char file[64], line[4096 + 128], path[4096];
	uint64_t lo, hi, off;
	char perms[8];
	FILE *f;

	snprintf(file, sizeof file, "/proc/%d/maps", (int)pid);
	f = fopen(file, "r");
	if (!f)
		return cp_error(CP_ENOENT, "process %d: cannot read its maps", (int)pid);
	while (fgets(line, sizeof line, f)) {
		int n = 0;
		path[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &lo, &hi,
			   perms, &off, &n) < 4)
			continue;
		if (perms[2] != 'x' || !n)
			continue;
		snprintf(path, sizeof path, "%s", line + n);
		path[strcspn(path, "\n")] = 0;
		if (path[0])
			kc_target_map(pid, path, lo, off);
	}
	fclose(f);
	return 0;
}
