/* tests/netns.h - a network namespace of the test's own, for the oracles that need
 * interfaces and routes (attach.fib_oracle, attach.redirect_live_oracle): the process
 * leaves the host's network, ip(8) commands build what the test needs, and all of it goes
 * away with the process.  The including file defines _GNU_SOURCE first (unshare()).
 */
#ifndef BPFRT_TESTS_NETNS_H
#define BPFRT_TESTS_NETNS_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

/* cmd through the shell, quietly: 0, or -1 and the command on stderr */
static inline int netns_sh(const char *cmd)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s >/dev/null 2>&1", cmd);
	if (system(buf)) {
		fprintf(stderr, "setup failed: %s\n", cmd);
		return -1;
	}
	return 0;
}

/* Into a new network namespace built by the n commands of cmds; skips the test (exit 77)
 * without root, ip(8), a namespace or a command that fails. */
static inline void netns_enter(const char *const *cmds, size_t n)
{
	if (geteuid() != 0)
		T_SKIP("not root: no network namespace, no XDP or tc programs");
	if (access("/usr/sbin/ip", X_OK) && access("/sbin/ip", X_OK) && access("/bin/ip", X_OK))
		T_SKIP("no ip(8) to build the network");
	if (unshare(CLONE_NEWNET))
		T_SKIP("unshare(CLONE_NEWNET) failed");
	for (size_t i = 0; i < n; i++)
		if (netns_sh(cmds[i]))
			T_SKIP("could not set up the network (%s)", cmds[i]);
}

#endif
