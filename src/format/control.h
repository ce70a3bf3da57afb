/* The control channel: how a tool asks a running, measured program to change its
 * instrumentation (docs/internals/control.md; `callpath probe --pid`, `callpath search`).
 *
 * Each process image whose runtime has the channel (CALLPATH_CONTROL=1) owns a FIFO in
 * its measurement directory, <pid>.control (mode 0600), which a runtime-owned thread
 * keeps open and reads (core/control.c). A client:
 *   1. makes its own reply FIFO (any path it may write; the measurement directory is
 *      used) and opens it read-write, so that opening it for writing never blocks;
 *   2. writes one request line per command to <pid>.control, whole lines of at most
 *      CP_CONTROL_LINE_MAX bytes (shorter than PIPE_BUF, so writes of concurrent clients
 *      never interleave):  REPLY-PATH <TAB> VERB <TAB> ARGUMENT <LF>
 *   3. reads one reply line per request from its FIFO:  "ok" [<TAB> TEXT] <LF>  or
 *      "error" <TAB> MESSAGE <LF>.
 * Opening <pid>.control for writing with O_NONBLOCK fails with ENXIO when no thread reads
 * it: the process has ended (or ran exec without the runtime), so the client never hangs.
 *
 * Verbs:  ping                 "ok <TAB> PID"
 *         add PATTERN          probes on the functions matching PATTERN (callpath probe -f
 *                              syntax), also in later dlopens: "ok <TAB> N <TAB> R[ <TAB>
 *                              REASON]": N functions patched, R refused (the reason of the
 *                              first refusal; every one is also a note in the measurement)
 *         remove PATTERN       "ok <TAB> N": N functions restored
 *         loops PLAN           loop probes (src/search/loops.h): "ok <TAB> LOOPS <TAB> EDGES"
 *         loops-file PATH      the same, with the plan in the file at PATH (absolute, a
 *                              regular file of at most CP_CONTROL_FILE_MAX bytes): a plan
 *                              longer than a request line (record/control.h:
 *                              cp_control_request_long writes and removes the file)
 *         detach               attach --inject's end (core/control.c)
 * The runtime checks that a reply path is a FIFO before it writes to it. */
#ifndef CP_FORMAT_CONTROL_H
#define CP_FORMAT_CONTROL_H

#define CP_CONTROL_SUFFIX ".control"
#define CP_CONTROL_LINE_MAX 4000 /* < PIPE_BUF (4096 on Linux) */
#define CP_CONTROL_REPLY_MAX 1024
#define CP_CONTROL_FILE_MAX (4u << 20) /* the argument of a VERB-file request */

#endif
