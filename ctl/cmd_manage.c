/*
 * cmd_manage: the commands that change a mounted array, as mdadm's
 * Manage.c does for md:
 *
 *   raidfsctl fail MOUNTPOINT MEMBER      md --fail (refused when the
 *                                         array cannot run without it)
 *   raidfsctl remove MOUNTPOINT MEMBER    md --remove (a faulty member,
 *                                         or a spare)
 *   raidfsctl add MOUNTPOINT DEVICE       md --add: a spare, rebuilt at
 *                                         once into a slot not in use
 *   raidfsctl replace MOUNTPOINT MEMBER DEVICE
 *                                         md --replace: DEVICE filled
 *                                         while MEMBER serves, then takes
 *                                         its slot
 *   raidfsctl clear MOUNTPOINT            zpool clear: error counters
 *   raidfsctl set MOUNTPOINT rebuild-speed-min=N rebuild-speed-max=N
 *   raidfsctl test-alert MOUNTPOINT       a TestMessage event
 *
 * MEMBER: a slot number, a member uuid or a device path.  The daemon
 * does the work and says what it did (printed) or why not (on stderr).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "ctl.h"
#include "prog.h"

static int manage_usage(const char *msg)
{
	prog_usage_error(CTL_PROG, msg);
	return CTL_EXIT_USAGE;
}

/*
 * MEMBER or DEVICE as the daemon can find it: a path (anything but a slot
 * number or a uuid) made absolute here, against the caller's working
 * directory - the daemon's is another (a bare "m1.img" was looked up
 * there: not found, or another file of that name failed another member;
 * a tester's find, T3 D2).
 */
static void arg_resolve(const char *arg, bool device, char *out, size_t len)
{
	char real[PATH_MAX], cwd[PATH_MAX];
	uuid_t uuid;
	int slot;

	if (!arg[0] ||
	    (!device && (ctl_parse_slot(arg, &slot) || !uuid_parse(arg, uuid))))
		snprintf(out, len, "%s", arg);
	else if (realpath(arg, real))
		snprintf(out, len, "%s", real);
	else if (arg[0] == '/' || !getcwd(cwd, sizeof(cwd)) ||
		 snprintf(out, len, "%s/%s", strcmp(cwd, "/") ? cwd : "",
			  arg) >= (int)len)
		snprintf(out, len, "%s", arg);
}

static int manage_args(enum ctl_cmd cmd, int argc, char **argv,
		       struct ctl_request *r)
{
	bool one = cmd == CTL_CLEAR || cmd == CTL_TEST_ALERT;

	if (cmd == CTL_SET) {
		if (argc < 2)
			return manage_usage("set: MOUNTPOINT and a setting are "
					    "required");
		for (int i = 1; i < argc; i++)
			if (ctl_parse_setting(argv[i], r))
				return manage_usage("set: settings are "
						    "rebuild-speed-min=KiB/s and "
						    "rebuild-speed-max=KiB/s "
						    "(suffixes K, M, G)");
		return 0;
	}
	if (cmd == CTL_REPLACE) {
		if (argc > 3)
			return manage_usage("replace: too many arguments: "
					    "MOUNTPOINT MEMBER DEVICE");
		if (argc != 3)
			return manage_usage("replace: MOUNTPOINT, MEMBER and "
					    "DEVICE are required");
		arg_resolve(argv[1], false, r->arg, sizeof(r->arg));
		arg_resolve(argv[2], true, r->device, sizeof(r->device));
		return 0;
	}
	if (argc > (one ? 1 : 2))
		return manage_usage(one ? "too many arguments: MOUNTPOINT "
				    "only" : cmd == CTL_ADD ? "too many "
				    "arguments: MOUNTPOINT DEVICE" : "too many "
				    "arguments: MOUNTPOINT MEMBER");
	if (argc != (one ? 1 : 2))
		return manage_usage(one ? "MOUNTPOINT is required" :
				    cmd == CTL_ADD ? "MOUNTPOINT and DEVICE are "
				    "required" : "MOUNTPOINT and MEMBER are "
				    "required");
	if (!one)
		arg_resolve(argv[1], cmd == CTL_ADD, r->arg, sizeof(r->arg));
	return 0;
}

int cmd_manage(enum ctl_cmd cmd, int argc, char **argv)
{
	struct ctl_request r = { .cmd = cmd };
	struct ctl_conn c;
	char msg[512] = "";
	int ret;

	/* argv[0] is the command's name */
	ret = manage_args(cmd, argc - 1, argv + 1, &r);
	if (ret)
		return ret;
	if ((cmd == CTL_ADD && r.arg[0] != '/') ||
	    (cmd == CTL_REPLACE && r.device[0] != '/')) {
		const char *dev = argv[cmd == CTL_ADD ? 2 : 3];

		fprintf(stderr, CTL_PROG ": %s%s%s: no such device\n",
			dev[0] ? "" : "\"", dev, dev[0] ? "" : "\" (empty)");
		return CTL_EXIT_REFUSED;
	}
	ret = ctl_connect(argv[1], &c);
	if (ret)
		return ret;
	ret = ctl_call(&c, &r, NULL, msg, sizeof(msg));
	if (ret == CTL_EXIT_OK && msg[0])
		printf("%s: %s\n", c.where, msg);
	ctl_close(&c);
	return ret;
}
