/*
 * raidfsctl: administer mounted raidfs arrays while they serve (status,
 * fail, remove, add, replace, clear, set, events, test-alert), through each
 * array's control socket.  A small main that dispatches to one file per
 * group of commands (ctl.h); the exit codes are CTL_EXIT_* (ctl.h,
 * docs/DESIGN.md "raidfsctl").
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "prog.h"

static void usage(void)
{
	printf("Usage: " CTL_PROG " COMMAND [ARGS]\n"
	       "Administers mounted raidfs arrays while they serve.\n\n"
	       "  status [-v] [--json] [MOUNTPOINT|UUID]   state, members, "
	       "errors, rebuild\n"
	       "  fail MOUNTPOINT MEMBER        mark a member faulty\n"
	       "  remove MOUNTPOINT MEMBER      take out a faulty member or "
	       "a spare\n"
	       "  add MOUNTPOINT DEVICE         add a spare (rebuilt at once "
	       "into a slot\n"
	       "                                not in use)\n"
	       "  replace MOUNTPOINT MEMBER DEVICE   fill DEVICE while MEMBER "
	       "serves, then\n"
	       "                                DEVICE takes its slot\n"
	       "  clear MOUNTPOINT              reset the error counters\n"
	       "  set MOUNTPOINT rebuild-speed-min=N rebuild-speed-max=N   "
	       "KiB/s (K, M, G)\n"
	       "  events [-f] [--json] MOUNTPOINT   the event history; -f: "
	       "follow it\n"
	       "  test-alert MOUNTPOINT         send a TestMessage event\n"
	       "  scrub start|stop|status MOUNTPOINT   verify and repair every "
	       "block online\n"
	       "  scrub start --wait MOUNTPOINT  and wait for its end (exit 1: "
	       "stopped, or\n"
	       "                                data lost)\n\n"
	       "MEMBER is a slot number, a member uuid or a device path.  "
	       "Root only.\n"
	       "Exit status: 0 done, 1 refused or failed, 2 usage error, 3 not "
	       "mounted,\n4 permission denied, 5 no answer from the daemon.\n");
}

static const struct {
	const char *name;
	enum ctl_cmd cmd;
} manage_cmds[] = {
	{ "fail", CTL_FAIL }, { "remove", CTL_REMOVE }, { "add", CTL_ADD },
	{ "replace", CTL_REPLACE },
	{ "clear", CTL_CLEAR }, { "set", CTL_SET },
	{ "test-alert", CTL_TEST_ALERT },
};

static int dispatch(int argc, char **argv)
{
	const char *name = argv[0];
	char prog[64];

	optind = 1;
	/* getopt names argv[0] in its messages: "raidfsctl status: ...",
	 * not "status: ..." */
	snprintf(prog, sizeof(prog), CTL_PROG " %s", name);
	argv[0] = prog;
	if (!strcmp(name, "status"))
		return cmd_status(argc, argv);
	if (!strcmp(name, "events"))
		return cmd_events(argc, argv);
	if (!strcmp(name, "scrub"))
		return cmd_scrub(argc, argv);
	for (size_t i = 0; i < sizeof(manage_cmds) / sizeof(manage_cmds[0]); i++)
		if (!strcmp(name, manage_cmds[i].name))
			return cmd_manage(manage_cmds[i].cmd, argc, argv);
	fprintf(stderr, CTL_PROG ": unknown command '%s'\n", name);
	prog_usage_hint(CTL_PROG);
	return CTL_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+hV", longs, NULL)) != -1) {
		switch (c) {
		case 'h': usage(); return CTL_EXIT_OK;
		case 'V': prog_version_print(CTL_PROG); return CTL_EXIT_OK;
		default: prog_usage_hint(CTL_PROG); return CTL_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		prog_usage_error(CTL_PROG, "a COMMAND is required");
		return CTL_EXIT_USAGE;
	}
	return dispatch(argc - optind, argv + optind);
}
