/* tracefs.c - kernel tracepoints as tracefs describes them: find tracefs (mounting it at
 * /sys/kernel/tracing when it is not there and we may), a tracepoint's id
 * (events/<category>/<name>/id) and the layout of its records (the `format` file: the
 * common_ header then the event's fields, each with offset, size and signedness).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfrt.h"
#include "trace/trace.h"
#include "util/util.h"

static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

int brt_tracefs_dir(char *buf, size_t len)
{
	char probe[256];

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < BRT_ARRAY_SIZE(tracefs_dirs); i++) {
			snprintf(probe, sizeof(probe), "%s/events", tracefs_dirs[i]);
			if (!access(probe, R_OK)) {
				snprintf(buf, len, "%s", tracefs_dirs[i]);
				return 0;
			}
		}
		/* not mounted: try once, as root may (what `mount -t tracefs` does) */
		if (pass == 0 && mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL))
			break;
	}
	return -ENODEV;
}

/* "cat:name" or "cat/name" into its parts; only the characters tracefs names use. */
static int split_name(const char *tp, char *cat, char *name, size_t len)
{
	const char *sep = strpbrk(tp, ":/");
	size_t clen;

	if (!sep || sep == tp || !sep[1] || strlen(sep + 1) >= len)
		return -EINVAL;
	clen = (size_t)(sep - tp);
	if (clen >= len)
		return -EINVAL;
	memcpy(cat, tp, clen);
	cat[clen] = 0;
	strcpy(name, sep + 1);
	for (const char *p = tp; *p; p++)
		if (p != sep && !(*p == '_' || *p == '-' || (*p >= '0' && *p <= '9') ||
				  (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return -EINVAL;
	return 0;
}

/* One "field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;" line. */
static int parse_field(const char *line, struct bpfrt_tp_field *f)
{
	const char *decl = strstr(line, "field:"), *semi, *name;
	unsigned off, size, sgn = 0;
	size_t dlen, tlen;

	if (!decl)
		return 0;
	decl += 6;
	semi = strchr(decl, ';');
	if (!semi || !strstr(semi, "offset:") || !strstr(semi, "size:"))
		return -EINVAL;
	if (sscanf(strstr(semi, "offset:"), "offset:%u", &off) != 1 ||
	    sscanf(strstr(semi, "size:"), "size:%u", &size) != 1)
		return -EINVAL;
	if (strstr(semi, "signed:"))
		sscanf(strstr(semi, "signed:"), "signed:%u", &sgn);
	dlen = (size_t)(semi - decl);
	/* the name is the last word before ';' (arrays keep their "[N]") */
	name = decl + dlen;
	while (name > decl && name[-1] != ' ')
		name--;
	tlen = name > decl ? (size_t)(name - decl) - 1 : 0;
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%.*s", (int)(decl + dlen - name), name);
	snprintf(f->type, sizeof(f->type), "%.*s", (int)tlen, decl);
	f->offset = off;
	f->size = size;
	f->is_signed = (int)sgn;
	return 1;
}

int brt_tp_open_dir(const char *tp, char *dir, size_t len)
{
	char cat[128], name[128], root[128];
	int err = split_name(tp, cat, name, sizeof(cat));

	if (err) {
		brt_print(BPFRT_WARN, "bpfrt: '%s' is not a tracepoint name (CATEGORY:NAME)\n", tp);
		return err;
	}
	err = brt_tracefs_dir(root, sizeof(root));
	if (err) {
		brt_print(BPFRT_WARN, "bpfrt: tracefs is not mounted at /sys/kernel/tracing and "
			  "cannot be mounted (needs root)\n");
		return err;
	}
	snprintf(dir, len, "%s/events/%s/%s", root, cat, name);
	if (access(dir, F_OK)) {
		brt_print(BPFRT_WARN, "bpfrt: unknown tracepoint '%s:%s' (no %s)\n", cat, name, dir);
		return -ENOENT;
	}
	return 0;
}

int bpfrt_tracepoint_fields(const char *tp, struct bpfrt_tp_field *fields, size_t cap,
			    uint32_t *record_size, uint32_t *id)
{
	char dir[512], path[640], line[1024];
	uint32_t size = 0, tp_id = 0;
	struct bpfrt_tp_field f;
	int n = 0, err;
	FILE *fp;

	err = brt_tp_open_dir(tp, dir, sizeof(dir));
	if (err)
		return -(errno = -err);
	snprintf(path, sizeof(path), "%s/format", dir);
	fp = fopen(path, "re");
	if (!fp)
		return -(errno = errno == ENOENT ? ENOENT : EACCES);
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "ID: %u", &tp_id) == 1)
			continue;
		err = parse_field(line, &f);
		if (err < 0) {
			brt_print(BPFRT_WARN, "bpfrt: %s: unreadable field line: %s", path, line);
			fclose(fp);
			return -(errno = EINVAL);
		}
		if (!err)
			continue;
		if (f.offset + f.size > size)
			size = f.offset + f.size;
		if ((size_t)n < cap)
			fields[n] = f;
		n++;
	}
	fclose(fp);
	if (!tp_id || !n) {
		brt_print(BPFRT_WARN, "bpfrt: %s: no ID or no fields\n", path);
		return -(errno = EINVAL);
	}
	if (record_size)
		*record_size = size;
	if (id)
		*id = tp_id;
	return n;
}
