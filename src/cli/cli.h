/* The callpath command table (git's builtin.h). To add a command:
 *   1. write src/cli/cmd-NAME.c with `int cmd_NAME(int argc, char **argv)` (argv[0] = "NAME")
 *      that handles --help, returns the process exit status, and prints errors with
 *      cli_die()/cli_error();
 *   2. declare it here and add a row to commands[] in main.c;
 *   3. document it in docs/cmd-NAME.md. */
#ifndef CP_CLI_H
#define CP_CLI_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_struct(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_gprof(int argc, char **argv);

/* Prints "callpath NAME: message" (message from cp_error_message() when fmt is NULL). */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Exit status used for failures of callpath itself (not of the profiled program). */
#define CLI_EXIT_FAILURE 2
/* Path of the directory holding the callpath executable (to find libcallpath-rt.so). */
const char *cli_self_dir(void);

#endif
