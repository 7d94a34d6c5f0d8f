/* replay.c - a stand-in for libFuzzer's main: runs LLVMFuzzerTestOneInput once on every
 * file named on the command line (directories are walked one level), so the seed corpus
 * and the crash inputs saved in fuzz/regress/<target>/ run as ordinary tests in every
 * build, without clang or libFuzzer.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long size;

	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto err_close;
	/* An exactly sized heap copy, so ASan catches a read one byte past the input. */
	buf = malloc(size ? (size_t)size : 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size)
		goto err_free;
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)size);
	free(buf);
	return 0;

err_free:
	free(buf);
err_close:
	fprintf(stderr, "%s: cannot read\n", path);
	fclose(f);
	return -1;
}

static int replay_dir(const char *dir, unsigned *count)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), err = 0;

	if (n < 0) {
		perror(dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (names[i]->d_name[0] != '.' && !stat(path, &st) && S_ISREG(st.st_mode)) {
			err |= replay_file(path);
			(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return err;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int err = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			perror(argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			err |= replay_dir(argv[i], &count);
		} else {
			err |= replay_file(argv[i]);
			count++;
		}
	}
	printf("replayed %u inputs%s\n", count, err ? ", some unreadable" : "");
	return err ? 1 : 0;
}
