/* A file-backed arena: the measurement file IS the memory the runtime writes.
 *
 * A large virtual range is reserved once (PROT_NONE, no backing); the file is mapped
 * MAP_SHARED|MAP_FIXED over its prefix and grown with fallocate/ftruncate ahead of use, so
 * addresses never move and a reader (or a post-mortem after SIGKILL) sees every published
 * byte. All functions except cp_arena_create's path handling are async-signal-safe (raw
 * system calls only), so a thread first seen in a signal handler can get its arena there. */
#ifndef CP_RUNTIME_ARENA_H
#define CP_RUNTIME_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cp_arena {
	char *base;	 /* start of the reserved range; the file starts here */
	size_t reserved; /* bytes of virtual address space reserved */
	size_t mapped;	 /* bytes of the file currently mapped (and allocated on disk) */
	int fd;		 /* kept at a high number, close-on-exec */
	dev_t dev;	 /* identity of the file, checked before growing: a program that */
	ino_t ino;	 /*   closes "all fds" must not make us ftruncate its own file */
	char path[4096]; /* to reopen the file if the program closed our descriptor */
};

/* Creates path exclusively (O_EXCL); -EEXIST if it exists. Returns 0 or -errno. */
int cp_arena_create(struct cp_arena *a, const char *path, size_t reserve, size_t initial);
/* Makes [0, need) writable, growing the file in steps. 0 or -errno (-ENOSPC past reserve). */
int cp_arena_ensure(struct cp_arena *a, size_t need);
/* Trims the file to `keep` bytes (0 = leave as is), unmaps and closes. */
void cp_arena_release(struct cp_arena *a, size_t keep);
/* Shortens the file to keep bytes, the mapping staying; a later cp_arena_ensure grows it
 * again. Only when no other thread can write past keep (the caller's own arena, or under
 * the lock that serialises its writers). */
void cp_arena_trim(struct cp_arena *a, size_t keep);
/* The file was unlinked (packed) but its owner goes on: creates a new file at the same path
 * holding the mapped bytes and maps it in place. 0 or -errno. */
int cp_arena_relink(struct cp_arena *a);
/* Unmaps and forgets without touching the file (fork child: the mapping is the parent's). */
void cp_arena_abandon(struct cp_arena *a);

#endif
