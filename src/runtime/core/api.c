/* The public callpath_* API exported by libcallpath-rt.so (placeholder until the runtime
 * lands: a program may call these whether or not it runs under callpath). */
#define CP_EXPORT __attribute__((visibility("default")))

CP_EXPORT void callpath_start(void)
{
}

CP_EXPORT void callpath_stop(void)
{
}
