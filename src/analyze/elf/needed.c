#include "analyze/elf/needed.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* $ORIGIN in a run path: the module's directory. */
static char *expand_origin(const char *path, const char *module)
{
	const char *slash = strrchr(module, '/');
	int dirlen = slash ? (int)(slash - module) : 1;
	struct strbuf sb;
	strbuf_init(&sb);
	for (const char *p = path; *p;) {
		if (!strncmp(p, "$ORIGIN", 7) || !strncmp(p, "${ORIGIN}", 9)) {
			strbuf_addf(&sb, "%.*s", dirlen, slash ? module : ".");
			p += p[1] == '{' ? 9 : 7;
		} else {
			strbuf_addch(&sb, *p++);
		}
	}
	return strbuf_detach(&sb);
}

static void needed_add(struct cp_elf_needed *out, const char *s, size_t *cap)
{
	if (out->n == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		out->names = xrealloc(out->names, *cap * sizeof *out->names);
	}
	out->names[out->n++] = xstrdup(s);
}

int cp_elf_needed_read(const struct cp_elf_image *im, struct cp_elf_needed *out)
{
	GElf_Shdr sh;
	memset(out, 0, sizeof *out);
	size_t idx = cp_elf_find_section(im, ".dynamic", &sh);
	if (!idx)
		return 0;
	Elf_Data *dyn = cp_elf_section_data(im, idx);
	Elf_Data *str = dyn ? cp_elf_section_data(im, sh.sh_link) : NULL;
	if (!dyn || !str)
		return CP_EFORMAT;
	size_t cap = 0, count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	for (size_t i = 0; i < count; i++) {
		GElf_Dyn d;
		if (!gelf_getdyn(dyn, (int)i, &d) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag != DT_NEEDED && d.d_tag != DT_RUNPATH && d.d_tag != DT_RPATH)
			continue;
		if (d.d_un.d_val >= str->d_size)
			continue;
		const char *s = (const char *)str->d_buf + d.d_un.d_val;
		if (!memchr(s, 0, str->d_size - d.d_un.d_val))
			continue;
		if (d.d_tag == DT_NEEDED)
			needed_add(out, s, &cap);
		else if (d.d_tag == DT_RUNPATH || !out->runpath) {
			free(out->runpath);
			out->runpath = expand_origin(s, im->path);
		}
	}
	return 0;
}

void cp_elf_needed_release(struct cp_elf_needed *nd)
{
	for (size_t i = 0; i < nd->n; i++)
		free(nd->names[i]);
	free(nd->names);
	free(nd->runpath);
	memset(nd, 0, sizeof *nd);
}
