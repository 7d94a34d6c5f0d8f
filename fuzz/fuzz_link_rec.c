/* fuzz_link_rec.c - fuzz target for link records ($BPFRT_FS/.bpfrt-links/<id>, api/
 * link_rec.c), which any process of the user (or a scribbler) may write and every process
 * listing links reads.  The input's first byte picks:
 *  - even: the bytes are a record: brt_link_rec_parse(), and for an accepted one
 *    brt_link_rec_fill() with name buffers given or not (the kernel's EINVAL rule);
 *  - odd: a valid record of a link-like socketpair of this process is written, then the
 *    rest of the input scribbles it as (offset, byte) pairs or, with the second byte's
 *    low bit, replaces it whole; then the readers run: GET_NEXT_ID, find by id and by
 *    socket, LINK_GET_FD_BY_ID (a dup taken from this process) and OBJ_GET_INFO_BY_FD
 *    of the socket through bpfrt_bpf() with a name buffer.
 * Nothing may crash, hang or read outside its buffers; errors are fine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "bpfrt.h"
#include "api/link_rec.h"

static char dir[64];
static int sv[2] = { -1, -1 };

static void parse(const uint8_t *data, size_t size)
{
	struct brt_link_rec r;
	struct brt_link_kinfo info;
	const char *name;
	uint64_t ubuf;
	uint32_t ulen;

	if (brt_link_rec_parse(data, size, &r, &name))
		return;
	for (int i = 0; i < 3; i++) {
		memset(&info, 0, sizeof(info));
		/* no buffer, a buffer, a pointer without length (EINVAL) */
		info.perf_event.uprobe.file_name = i ? 0x1000 : 0;
		info.perf_event.uprobe.name_len = i == 1 ? 16 : 0;
		info.raw_tp.tp_name = info.perf_event.uprobe.file_name;
		info.raw_tp.tp_name_len = info.perf_event.uprobe.name_len;
		brt_link_rec_fill(&r, name, &info, &ubuf, &ulen);
	}
}

static void registry(const uint8_t *data, size_t size)
{
	struct brt_link_desc d = { .type = BRT_LINK_PERF_EVENT, .perf_type = BRT_PERF_UPROBE,
				   .offset = 0x1139, .name = "/proc/self/exe" };
	char path[128], name[BRT_LINK_REC_NAME_MAX], out[64];
	struct brt_link_rec r;
	struct stat su, sp;
	struct brt_link_kinfo info;
	union bpf_attr a;
	uint32_t id;
	int fd;

	if (fstat(sv[0], &su) || fstat(sv[1], &sp) ||
	    brt_link_rec_write(&d, 7, 3, sv[1], sp.st_ino, su.st_ino))
		return;
	snprintf(path, sizeof(path), "%s/.bpfrt-links/7", dir);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return;
	if (size && (data[0] & 1)) {
		(void)!ftruncate(fd, 0);
		(void)!pwrite(fd, data + 1, size - 1, 0);
	} else {
		for (size_t i = 1; i + 2 < size; i += 3)
			(void)!pwrite(fd, &data[i + 2], 1, (data[i] | data[i + 1] << 8) % 200);
	}
	close(fd);
	brt_link_rec_next_id(1, &id);
	brt_link_rec_find(7, 0, &r, name);
	brt_link_rec_find(0, su.st_ino, &r, name);
	fd = brt_link_rec_open(7);
	if (fd >= 0)
		close(fd);
	memset(&info, 0, sizeof(info));
	info.perf_event.uprobe.file_name = (uint64_t)(uintptr_t)out;
	info.perf_event.uprobe.name_len = sizeof(out);
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)sv[0];
	a.info.info = (uint64_t)(uintptr_t)&info;
	a.info.info_len = sizeof(info);
	bpfrt_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a));
	snprintf(path, sizeof(path), "%s/.bpfrt-links/7", dir);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/bpfrt-fuzz-link-rec.%d", (int)getpid());
		if (mkdir(dir, 0700) && errno != EEXIST)
			return 0;
		setenv("BPFRT_FS", dir, 1);
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
			return 0;
	}
	if (!size)
		return 0;
	if (data[0] & 1)
		registry(data + 1, size - 1);
	else
		parse(data + 1, size - 1);
	return 0;
}
