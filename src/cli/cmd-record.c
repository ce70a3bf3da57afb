/* callpath record — placeholder until its issue lands; exits non-zero so nothing mistakes it
 * for a working command. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

int cmd_record(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: callpath record ... (not implemented yet)\n");
		return 0;
	}
	cli_error("record", "not implemented yet");
	return CLI_EXIT_FAILURE;
}
