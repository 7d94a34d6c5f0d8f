/* cgroup.c - a task's cgroup v2 as the kernel's cgroup ids name it: the id of a cgroup is
 * the inode number of its directory in the cgroup2 file system (kernfs node ids), and a
 * task's cgroup is the "0::/a/b" line of /proc/<tid>/cgroup under the mount point of
 * the first cgroup2 entry of /proc/self/mountinfo.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "util/util.h"

int brt_cgroup2_mount(char *dir, size_t cap)
{
	char line[1024], mnt[512], fstype[64];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s", fstype) != 1)
			continue;
		if (!strcmp(fstype, "cgroup2") && strlen(mnt) < cap) {
			strcpy(dir, mnt);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

int brt_cgroup_ids(int32_t tid, uint64_t *ids, int max)
{
	char path[512], line[512], dir[1024], *p = NULL;
	struct stat st;
	size_t base;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!p && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3))
			p = line + 3;
	fclose(f);
	if (!p || !brt_cgroup2_mount(dir, sizeof(dir) / 2))
		return 0;
	p[strcspn(p, "\n")] = 0;
	base = strlen(dir);
	/* the root, then one directory per component of the task's path */
	for (;;) {
		if (stat(dir, &st))
			return n;
		if (n == max)
			return -1;
		ids[n++] = (uint64_t)st.st_ino;
		while (*p == '/')
			p++;
		if (!*p)
			return n;
		if (base + 1 < sizeof(dir))
			dir[base++] = '/';
		while (*p && *p != '/') {
			if (base + 1 < sizeof(dir))
				dir[base++] = *p;
			p++;
		}
		dir[base] = 0;
	}
}
