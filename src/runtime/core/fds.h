/* The descriptors the runtime owns (thread/process files, perf events), so that a program
 * closing "every" descriptor (close loops, close_range, closefrom) does not silently end
 * its measurement. Async-signal-safe (atomic bit operations). */
#ifndef CP_RUNTIME_FDS_H
#define CP_RUNTIME_FDS_H

#define CP_FDS_MAX 65536

void cp_fd_own(int fd);
void cp_fd_disown(int fd);
int cp_fd_is_owned(int fd);
/* Closes fd for the runtime itself (bypasses the interposed close). */
int cp_fd_close(int fd);

#endif
