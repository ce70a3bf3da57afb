/* The SyncObject resource hierarchy of `callpath search` (docs/cmd-search.md): all
 * synchronization objects > kind (mutex, cond, barrier...) > object (a lock's global name,
 * or its address), from the sync-object tables the wait trigger fills (db/sync-objects.h).
 * When ExcessiveSyncWaiting first holds on a code focus, its SyncObject refinement is
 * decided at once on the waits since the search began: the root, each kind, and the
 * objects of each true kind (heaviest first, at most SYNC_OBJECTS_MAX), each true when
 * its waits are at least the threshold's share of the program's time. */
#ifndef CP_SEARCH_SYNCOBJ_H
#define CP_SEARCH_SYNCOBJ_H

#include "search/measure.h"

struct cp_search;

/* A SyncObject focus (node.sync indexes them). */
struct cp_search_syncfocus {
	int level;  /* 0 /SyncObject, 1 /SyncObject/KIND, 2 /SyncObject/KIND/OBJECT */
	char *name; /* the resource name */
	char *file; /* level 2: the top call site's source file and line, or NULL */
	int line;
};

/* The waits so far, as the baseline (at the search's first snapshot a). */
void cp_search_sync_start(struct cp_search *s, const struct cp_search_snap *a);
/* ExcessiveSyncWaiting node i was found true on its experiment (a, b], at time t: the
 * SyncObject hierarchy is refined and decided (once per search) on the waits since the
 * baseline, against the time since then of the threads active in (a, b]. Returns the nodes
 * added. */
size_t cp_search_sync_refine(struct cp_search *s, uint32_t i, const struct cp_search_snap *a,
			     const struct cp_search_snap *b, double t);
/* The focus of node.sync (NULL if out of range). */
const struct cp_search_syncfocus *cp_search_sync_focus(const struct cp_search *s, int32_t sync);
void cp_search_sync_release(struct cp_search *s);

#endif
