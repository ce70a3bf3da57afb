/* Included last by every file whose code runs in signal context: calling one of these
 * there is a compile error (git's banned.h idea, for async-signal safety). */
#ifndef CP_BASE_SIGSAFE_BANNED_H
#define CP_BASE_SIGSAFE_BANNED_H

#pragma GCC poison malloc calloc realloc free strdup strndup
#pragma GCC poison printf fprintf sprintf snprintf vsnprintf vfprintf vprintf puts fputs
#pragma GCC poison fopen fclose fflush fwrite fread
#pragma GCC poison dlsym dlopen dlclose dladdr
#pragma GCC poison pthread_mutex_lock pthread_mutex_unlock pthread_rwlock_rdlock
#pragma GCC poison syslog perror strerror getenv setenv

#endif
