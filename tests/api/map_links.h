/* map_links.h - the pin tests' view of a user's links directory (src/api/prog_file.c):
 * how many map links $BPFRT_FS/.bpfrt-maps holds (names not starting with a dot; the
 * program links, .prog-<inode>, and the lock are not counted). */
#ifndef BPFRT_TESTS_MAP_LINKS_H
#define BPFRT_TESTS_MAP_LINKS_H

#include <dirent.h>
#include <stdio.h>

#define LINKS ".bpfrt-maps"

static inline int count_links(const char *fs)
{
	char p[256];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(p, sizeof(p), "%s/" LINKS, fs);
	d = opendir(p);
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

#endif
