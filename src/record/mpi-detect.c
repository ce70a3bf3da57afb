/* Is the program an MPI program (or an MPI launcher)? Then `record` preloads
 * libcallpath-mpi.so beside the runtime. A program is one when it, or a library it needs
 * (followed a few levels, as the dynamic loader would find them), needs an MPI library. */
#include "record/record-impl.h"

#include "analyze/elf/needed.h"
#include "base/error.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MODULES 128 /* libraries looked at, at most */
#define MAX_DEPTH 3

static int is_mpi_library(const char *name)
{
	return !strncmp(name, "libmpi.so", 9) || !strncmp(name, "libmpi_", 7) ||
	       !strncmp(name, "libmpich", 8) || !strncmp(name, "libmpifort", 10);
}

/* The C library and its kin need no MPI: not worth opening. */
static int is_system_library(const char *name)
{
	static const char *const skip[] = {"libc.so",  "libm.so",  "libdl.so",	  "libpthread.so",
					   "librt.so", "ld-linux", "libgcc_s.so", "libstdc++.so"};
	for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
		if (!strncmp(name, skip[i], strlen(skip[i])))
			return 1;
	return 0;
}

/* name in a colon-separated list of directories; 0 and out set if found. */
static int search_dirs(const char *dirs, const char *name, char *out, size_t cap)
{
	for (const char *p = dirs; p && *p;) {
		size_t n = strcspn(p, ":");
		snprintf(out, cap, "%.*s/%s", (int)n, p, name);
		if (n && !access(out, R_OK))
			return 0;
		p += n + (p[n] == ':');
	}
	return -1;
}

static int find_library(const char *name, const char *runpath, char *out, size_t cap)
{
	static const char *const system_dirs =
	    "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib:"
	    "/usr/local/lib";
	if (strchr(name, '/'))
		return snprintf(out, cap, "%s", name) < (int)cap && !access(out, R_OK) ? 0 : -1;
	if (!search_dirs(runpath, name, out, cap) ||
	    !search_dirs(getenv("LD_LIBRARY_PATH"), name, out, cap))
		return 0;
	return search_dirs(system_dirs, name, out, cap);
}

struct walk {
	char *seen[MAX_MODULES];
	size_t nseen;
};

static int walk_module(struct walk *w, const char *path, int depth)
{
	struct cp_elf_image im;
	struct cp_elf_needed nd;
	char lib[PATH_MAX];
	int found = 0;
	if (cp_elf_image_open(&im, path)) {
		cp_error_clear();
		return 0;
	}
	if (cp_elf_needed_read(&im, &nd)) {
		cp_error_clear();
		cp_elf_image_release(&im);
		return 0;
	}
	for (size_t i = 0; i < nd.n && !found; i++)
		found = is_mpi_library(nd.names[i]);
	for (size_t i = 0; i < nd.n && !found && depth < MAX_DEPTH; i++) {
		if (is_system_library(nd.names[i]) || w->nseen == MAX_MODULES ||
		    find_library(nd.names[i], nd.runpath, lib, sizeof lib))
			continue;
		size_t j = 0;
		while (j < w->nseen && strcmp(w->seen[j], lib))
			j++;
		if (j < w->nseen)
			continue;
		w->seen[w->nseen++] = strdup(lib);
		found = walk_module(w, lib, depth + 1);
	}
	cp_elf_needed_release(&nd);
	cp_elf_image_release(&im);
	return found;
}

int cp_record_links_mpi(const char *exe)
{
	struct walk w = {.nseen = 0};
	int found = walk_module(&w, exe, 0);
	for (size_t i = 0; i < w.nseen; i++)
		free(w.seen[i]);
	return found;
}

int cp_record_is_launcher(const char *argv0, const char *exe)
{
	static const char *const names[] = {"mpirun",  "mpiexec", "orterun",
					    "prterun", "srun",	  "mpiexec.hydra"};
	const char *which[2] = {argv0, exe};
	for (int k = 0; k < 2; k++) {
		const char *base = strrchr(which[k], '/');
		base = base ? base + 1 : which[k];
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
			size_t n = strlen(names[i]);
			if (!strncmp(base, names[i], n) && (!base[n] || base[n] == '.'))
				return 1;
		}
	}
	return 0;
}
