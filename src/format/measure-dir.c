/* A measurement directory: process files and their thread files, matched by <pid>.<gen>. */
#include "format/measure-read.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

struct dir_entry {
	char *name;
	int pid;
	unsigned gen, tidx;
	int is_proc;
};

static int entry_parse(const char *name, struct dir_entry *e)
{
	size_t len = strlen(name);
	int n = 0;
	e->is_proc = len > 5 && !strcmp(name + len - 5, CP_MF_PROC_SUFFIX);
	int is_thr = len > 4 && !strcmp(name + len - 4, CP_MF_THREAD_SUFFIX);
	if (e->is_proc) {
		if (sscanf(name, "%d.%u.proc%n", &e->pid, &e->gen, &n) != 2 || (size_t)n != len)
			return 0;
	} else if (is_thr) {
		if (sscanf(name, "%d.%u.%u.thr%n", &e->pid, &e->gen, &e->tidx, &n) != 3 ||
		    (size_t)n != len)
			return 0;
	} else {
		return 0;
	}
	e->name = xstrdup(name);
	return 1;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct dir_entry *x = a, *y = b;
	if (x->is_proc != y->is_proc)
		return y->is_proc - x->is_proc; /* process files first */
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	return x->tidx < y->tidx ? -1 : x->tidx > y->tidx;
}

static int dir_list(const char *path, struct dir_entry **out, size_t *n)
{
	DIR *d = opendir(path);
	if (!d)
		return cp_error(errno == ENOENT ? CP_ENOENT : CP_EIO,
				"cannot open measurement directory %s: %s", path, strerror(errno));
	size_t alloc = 0;
	struct dirent *de;
	*out = NULL;
	*n = 0;
	while ((de = readdir(d))) {
		struct dir_entry e;
		if (!entry_parse(de->d_name, &e))
			continue;
		XGROW(*out, *n + 1, alloc);
		(*out)[(*n)++] = e;
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof **out, entry_cmp);
	return 0;
}

static int file_load(const char *dir, const char *name, int is_proc, void *out,
		     const struct cp_mf_proc *proc)
{
	struct strbuf path;
	strbuf_init(&path);
	strbuf_addf(&path, "%s/%s", dir, name);
	void *buf = NULL;
	size_t size = 0;
	int rc = cp_mf_file_map(path.buf, &buf, &size);
	if (!rc) {
		if (is_proc)
			rc = cp_mf_proc_parse(out, buf, size, path.buf);
		else
			rc = cp_mf_thr_parse(out, buf, size, path.buf, proc);
		cp_mf_file_unmap(buf, size);
	}
	strbuf_release(&path);
	return rc;
}

static struct cp_mf_image *image_find(struct cp_mf_dir *d, int pid, unsigned gen)
{
	for (size_t i = 0; i < d->nimages; i++)
		if (d->images[i].proc.hdr.pid == pid && d->images[i].proc.hdr.gen == gen)
			return &d->images[i];
	return NULL;
}

static int entry_load(struct cp_mf_dir *d, const struct dir_entry *e)
{
	if (e->is_proc) {
		struct cp_mf_image *im = &d->images[d->nimages];
		memset(im, 0, sizeof *im);
		int rc = file_load(d->path, e->name, 1, &im->proc, NULL);
		if (rc) {
			cp_mf_proc_release(&im->proc);
			return rc;
		}
		d->nimages++;
		if (im->proc.hdr.pid != e->pid || im->proc.hdr.gen != e->gen)
			return cp_error(CP_EFORMAT,
					"file %s/%s: pid %d / gen %u inside do not match its name",
					d->path, e->name, im->proc.hdr.pid, im->proc.hdr.gen);
		return 0;
	}
	struct cp_mf_image *im = image_find(d, e->pid, e->gen);
	if (!im)
		return cp_error(CP_EFORMAT, "file %s/%s: no process file %d.%u.proc beside it",
				d->path, e->name, e->pid, e->gen);
	if (cp_mf_proc_packed(&im->proc, e->tidx))
		return 0; /* a leftover of packing: the process file holds this thread */
	im->threads = xrealloc(im->threads, (im->nthreads + 1) * sizeof(*im->threads));
	struct cp_mf_thr *t = &im->threads[im->nthreads];
	int rc = file_load(d->path, e->name, 0, t, &im->proc);
	if (rc) {
		cp_mf_thr_release(t);
		/* Packed and unlinked by the running program since the listing: retried. */
		if (rc == CP_ENOENT)
			rc = cp_error(CP_EFORMAT, "file %s/%s vanished while reading", d->path,
				      e->name);
		return rc;
	}
	im->nthreads++;
	return 0;
}

static int thr_tidx_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct cp_mf_thr *)a)->hdr.tidx;
	uint32_t y = ((const struct cp_mf_thr *)b)->hdr.tidx;
	return x < y ? -1 : x > y;
}

/* The process file's packed threads join the thread files, in tidx order. */
static void image_take_packed(struct cp_mf_image *im)
{
	struct cp_mf_proc *p = &im->proc;
	if (p->npacked) {
		im->threads =
		    xrealloc(im->threads, (im->nthreads + p->npacked) * sizeof(*im->threads));
		memcpy(im->threads + im->nthreads, p->packed, p->npacked * sizeof(*p->packed));
		im->nthreads += p->npacked;
		free(p->packed);
		p->packed = NULL;
		p->npacked = 0;
	}
	if (im->nthreads > 1)
		qsort(im->threads, im->nthreads, sizeof(*im->threads), thr_tidx_cmp);
}

/* Start order, so that the first image is the program `callpath record` started. */
static int image_cmp(const void *a, const void *b)
{
	const struct cp_mf_process *x = &((const struct cp_mf_image *)a)->proc.hdr;
	const struct cp_mf_process *y = &((const struct cp_mf_image *)b)->proc.hdr;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* Sizes and published `used` of every file: changes while a program still writes. */
static uint64_t dir_signature(const char *dir, const struct dir_entry *ents, size_t n)
{
	uint64_t sig = 0;
	for (size_t i = 0; i < n; i++) {
		struct strbuf path;
		strbuf_init(&path);
		strbuf_addf(&path, "%s/%s", dir, ents[i].name);
		int fd = open(path.buf, O_RDONLY | O_CLOEXEC);
		strbuf_release(&path);
		if (fd < 0)
			continue;
		struct stat st;
		uint64_t used = 0;
		if (!fstat(fd, &st))
			sig = sig * 1000003u + (uint64_t)st.st_size;
		if (pread(fd, &used, sizeof used, offsetof(struct cp_mf_header, used)) ==
		    sizeof used)
			sig = sig * 1000003u + used;
		close(fd);
	}
	return sig;
}

static int dir_load(struct cp_mf_dir *d, const struct dir_entry *ents, size_t n, size_t nproc)
{
	int rc = 0;
	d->images = xcalloc(nproc, sizeof(*d->images));
	for (size_t i = 0; i < n && !rc; i++)
		rc = entry_load(d, &ents[i]);
	for (size_t i = 0; i < d->nimages && !rc; i++)
		image_take_packed(&d->images[i]);
	if (!rc)
		qsort(d->images, d->nimages, sizeof(*d->images), image_cmp);
	return rc;
}

/* dir_list, and the number of process files, which must not be 0. */
static int dir_list_images(const char *path, struct dir_entry **ents, size_t *n, size_t *nproc)
{
	int rc = dir_list(path, ents, n);
	if (rc)
		return rc;
	*nproc = 0;
	for (size_t i = 0; i < *n; i++)
		*nproc += (*ents)[i].is_proc;
	if (!*nproc)
		return cp_error(CP_ENOENT,
				"%s: no measurement files (<pid>.<gen>.proc); is it a callpath "
				"measurement directory?",
				path);
	return 0;
}

static void entries_free(struct dir_entry *ents, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ents[i].name);
	free(ents);
}

int cp_mf_dir_open(struct cp_mf_dir *d, const char *path)
{
	memset(d, 0, sizeof *d);
	d->path = xstrdup(path);
	/* A running program may grow a file, load a module a thread file already names, or
	 * pack and unlink a thread file between our reads of two files: such an inconsistency
	 * is retried with a new listing, real damage stays. */
	int rc;
	for (int attempt = 0;; attempt++) {
		struct dir_entry *ents = NULL;
		size_t n = 0, nproc = 0;
		rc = dir_list_images(path, &ents, &n, &nproc);
		if (rc)
			break;
		uint64_t sig = dir_signature(path, ents, n);
		rc = dir_load(d, ents, n, nproc);
		int again = rc == CP_EFORMAT && attempt < 4 && dir_signature(path, ents, n) != sig;
		entries_free(ents, n);
		if (!again)
			break;
		char *keep = d->path;
		d->path = NULL;
		cp_mf_dir_release(d);
		d->path = keep;
	}
	if (rc)
		cp_mf_dir_release(d);
	return rc;
}

void cp_mf_dir_release(struct cp_mf_dir *d)
{
	for (size_t i = 0; i < d->nimages; i++) {
		struct cp_mf_image *im = &d->images[i];
		for (size_t j = 0; j < im->nthreads; j++)
			cp_mf_thr_release(&im->threads[j]);
		free(im->threads);
		cp_mf_proc_release(&im->proc);
	}
	free(d->images);
	free(d->path);
	memset(d, 0, sizeof *d);
}

/* ---- streaming listing (cp_mf_list) ---- */

static uint64_t proc_start_ns(const char *dir, const char *name)
{
	struct strbuf path;
	strbuf_init(&path);
	strbuf_addf(&path, "%s/%s", dir, name);
	int fd = open(path.buf, O_RDONLY | O_CLOEXEC);
	strbuf_release(&path);
	uint64_t t = 0;
	if (fd < 0)
		return 0;
	if (pread(fd, &t, sizeof t, offsetof(struct cp_mf_process, start_ns)) != sizeof t)
		t = 0;
	close(fd);
	return t;
}

static int list_image_cmp(const void *a, const void *b)
{
	const struct cp_mf_list_image *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

int cp_mf_list_open(struct cp_mf_list *l, const char *path)
{
	struct dir_entry *ents = NULL;
	size_t n = 0, nproc = 0;
	memset(l, 0, sizeof *l);
	l->path = xstrdup(path);
	int rc = dir_list_images(path, &ents, &n, &nproc);
	if (rc)
		goto out;
	l->images = xcalloc(nproc, sizeof(*l->images));
	/* Sorted: process files first by (pid, gen), then thread files by (pid, gen, tidx). */
	for (size_t i = 0; i < nproc; i++) {
		struct cp_mf_list_image *im = &l->images[l->nimages++];
		im->pid = ents[i].pid;
		im->gen = ents[i].gen;
		im->proc_name = ents[i].name;
		ents[i].name = NULL;
	}
	size_t k = 0;
	for (size_t i = nproc; i < n; i++) {
		const struct dir_entry *e = &ents[i];
		while (k < l->nimages &&
		       (l->images[k].pid < e->pid ||
			(l->images[k].pid == e->pid && l->images[k].gen < e->gen)))
			k++;
		if (k == l->nimages || l->images[k].pid != e->pid || l->images[k].gen != e->gen) {
			rc =
			    cp_error(CP_EFORMAT, "file %s/%s: no process file %d.%u.proc beside it",
				     path, e->name, e->pid, e->gen);
			goto out;
		}
		struct cp_mf_list_image *im = &l->images[k];
		im->thr_names = xrealloc(im->thr_names, (im->nthreads + 1) * sizeof(char *));
		im->thr_tidx = xrealloc(im->thr_tidx, (im->nthreads + 1) * sizeof(unsigned));
		im->thr_tidx[im->nthreads] = e->tidx;
		im->thr_names[im->nthreads++] = ents[i].name;
		ents[i].name = NULL;
	}
	for (size_t i = 0; i < l->nimages; i++)
		l->images[i].start_ns = proc_start_ns(path, l->images[i].proc_name);
	qsort(l->images, l->nimages, sizeof(*l->images), list_image_cmp);
out:
	entries_free(ents, n);
	if (rc)
		cp_mf_list_release(l);
	return rc;
}

void cp_mf_list_release(struct cp_mf_list *l)
{
	for (size_t i = 0; i < l->nimages; i++) {
		struct cp_mf_list_image *im = &l->images[i];
		free(im->proc_name);
		for (size_t j = 0; j < im->nthreads; j++)
			free(im->thr_names[j]);
		free(im->thr_names);
		free(im->thr_tidx);
	}
	free(l->images);
	free(l->path);
	memset(l, 0, sizeof *l);
}

int cp_mf_list_proc(const struct cp_mf_list *l, size_t i, struct cp_mf_proc *p)
{
	const struct cp_mf_list_image *im = &l->images[i];
	memset(p, 0, sizeof *p);
	int rc = file_load(l->path, im->proc_name, 1, p, NULL);
	if (rc) {
		cp_mf_proc_release(p);
		return rc;
	}
	if (p->hdr.pid != im->pid || p->hdr.gen != im->gen) {
		rc =
		    cp_error(CP_EFORMAT, "file %s/%s: pid %d / gen %u inside do not match its name",
			     l->path, im->proc_name, p->hdr.pid, p->hdr.gen);
		cp_mf_proc_release(p);
	}
	return rc;
}

/* Thread j of image i in tidx order: packed thread *pk, or thread file *file. */
static void list_locate(const struct cp_mf_list_image *im, const struct cp_mf_proc *proc, size_t j,
			size_t *pk, size_t *file)
{
	size_t a = 0, b = 0;
	*pk = *file = SIZE_MAX;
	for (;;) {
		while (b < im->nthreads && cp_mf_proc_packed(proc, im->thr_tidx[b]))
			b++;
		int take_packed = a < proc->npacked &&
				  (b == im->nthreads || proc->packed[a].hdr.tidx < im->thr_tidx[b]);
		if (!take_packed && b == im->nthreads)
			return;
		if (j-- == 0) {
			*(take_packed ? pk : file) = take_packed ? a : b;
			return;
		}
		if (take_packed)
			a++;
		else
			b++;
	}
}

size_t cp_mf_list_nthreads(const struct cp_mf_list *l, size_t i, const struct cp_mf_proc *proc)
{
	const struct cp_mf_list_image *im = &l->images[i];
	size_t n = proc->npacked;
	for (size_t b = 0; b < im->nthreads; b++)
		n += !cp_mf_proc_packed(proc, im->thr_tidx[b]);
	return n;
}

uint64_t cp_mf_list_thread_bytes(const struct cp_mf_list *l, size_t i, size_t j,
				 const struct cp_mf_proc *proc)
{
	size_t pk, file;
	list_locate(&l->images[i], proc, j, &pk, &file);
	if (pk != SIZE_MAX)
		return (uint64_t)proc->packed[pk].nnodes * proc->packed[pk].hdr.node_size;
	if (file == SIZE_MAX)
		return 0;
	struct strbuf path;
	strbuf_init(&path);
	strbuf_addf(&path, "%s/%s", l->path, l->images[i].thr_names[file]);
	struct stat st;
	uint64_t size = stat(path.buf, &st) ? 0 : (uint64_t)st.st_size;
	strbuf_release(&path);
	return size;
}

/* Thread file tidx vanished: the program packed it into its process file since. */
static int list_thread_repacked(const struct cp_mf_list *l, size_t i, size_t file,
				struct cp_mf_thr *t)
{
	struct cp_mf_proc again;
	int rc = cp_mf_list_proc(l, i, &again);
	if (rc)
		return rc;
	const struct cp_mf_thr *pt = cp_mf_proc_packed(&again, l->images[i].thr_tidx[file]);
	if (pt)
		cp_mf_thr_copy(t, pt);
	else
		rc = cp_error(CP_EFORMAT, "file %s/%s vanished while reading", l->path,
			      l->images[i].thr_names[file]);
	cp_mf_proc_release(&again);
	return rc;
}

int cp_mf_list_thread(const struct cp_mf_list *l, size_t i, size_t j, const struct cp_mf_proc *proc,
		      struct cp_mf_thr *t)
{
	const struct cp_mf_list_image *im = &l->images[i];
	size_t pk, file;
	memset(t, 0, sizeof *t);
	list_locate(im, proc, j, &pk, &file);
	if (pk != SIZE_MAX) {
		cp_mf_thr_copy(t, &proc->packed[pk]);
		return 0;
	}
	if (file == SIZE_MAX)
		return cp_error(CP_EINVAL, "%s: image %zu has no thread %zu", l->path, i, j);
	int rc = file_load(l->path, im->thr_names[file], 0, t, proc);
	if (rc) {
		cp_mf_thr_release(t);
		if (rc == CP_ENOENT)
			rc = list_thread_repacked(l, i, file, t);
	}
	return rc;
}

int cp_mf_dir_done(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int nproc = 0, running = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name), sl = strlen(CP_MF_PROC_SUFFIX);
		if (len <= sl || strcmp(e->d_name + len - sl, CP_MF_PROC_SUFFIX))
			continue;
		char file[4096];
		snprintf(file, sizeof file, "%s/%s", path, e->d_name);
		struct cp_mf_header h;
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = pread(fd, &h, sizeof h, 0);
		close(fd);
		nproc++;
		if (n != (ssize_t)sizeof h || (h.flags & CP_MF_FINISHED))
			continue;
		long pid = strtol(e->d_name, NULL, 10);
		if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
			running++;
	}
	closedir(d);
	return nproc > 0 && running == 0;
}
