/* link_rec.h - link records: what other processes see of a link (api/link_rec.c).  Kept
 * apart from api.h so the fuzz target (fuzz/fuzz_link_rec.c) reaches the parser alone. */
#ifndef BRT_API_LINK_REC_H
#define BRT_API_LINK_REC_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's link types and perf link kinds this file names (6.18's uapi; the build
 * machine's header may predate BPF_LINK_TYPE_TCX and enum bpf_perf_event_type). */
#define BRT_LINK_RAW_TRACEPOINT 1
#define BRT_LINK_XDP 6
#define BRT_LINK_PERF_EVENT 7
#define BRT_LINK_TCX 11
#define BRT_PERF_UPROBE 1
#define BRT_PERF_URETPROBE 2
#define BRT_PERF_KPROBE 3
#define BRT_PERF_KRETPROBE 4
#define BRT_PERF_TRACEPOINT 5

/* What the attach code says of a link it made (brt_link_publish()). */
struct brt_link_desc {
	uint32_t type;        /* BRT_LINK_* */
	uint32_t attach_type; /* tcx: BPF_TCX_INGRESS/EGRESS */
	uint32_t perf_type;   /* perf links: BRT_PERF_* */
	uint32_t ifindex;     /* xdp, tcx */
	uint64_t offset;      /* kprobe/uprobe: offset (from the function or file) */
	uint64_t addr;        /* kprobe: address; uprobe: ref_ctr_offset */
	uint64_t cookie;
	const char *name;     /* tracepoint, raw tracepoint, kprobe function, uprobe path */
};

/* One record file, $BPFRT_FS/.bpfrt-links/<id> (native byte order).  Written once by
 * the process whose thread runs the link; read by any process, so read as untrusted
 * bytes: brt_link_rec_parse() checks every field a reader uses. */
#define BRT_LINK_REC_MAGIC 0x4b4e4c5452465042ull /* "BPFRTLNK" little-endian */
#define BRT_LINK_REC_VERSION 1
#define BRT_LINK_REC_NAME_MAX 4096
/* Detached (BPF_LINK_DETACH of an XDP or tcx link) while fds of it remain: the kernel
 * keeps listing such a link, with no interface, until the last fd is closed; the peer
 * is gone, so it lives while its process holds a handed-out fd. */
#define BRT_LINK_REC_DETACHED 1u
struct brt_link_rec {
	uint64_t magic;
	uint32_t version;
	uint32_t size;        /* bytes of the record: this header and name_len */
	uint32_t id;          /* the link's id (the file's name) */
	uint32_t type;        /* BRT_LINK_* */
	uint32_t prog_id;
	uint32_t attach_type;
	int32_t owner;        /* pid of the process whose thread runs the link */
	int32_t peer_fd;      /* that process's fd of the runtime's end of the socketpair */
	uint64_t peer_ino;    /* its socket inode: owner alive and link running */
	uint64_t user_ino;    /* the socket inode of the link fds handed out */
	uint32_t perf_type;
	uint32_t ifindex;
	uint64_t offset, addr, cookie;
	uint32_t name_len;    /* bytes of name after the header, its NUL included; 0: none */
	uint32_t flags;       /* BRT_LINK_REC_DETACHED */
	/* char name[name_len] */
};

/* Check a record's bytes (len of them): 0 and *name (the name in buf, or NULL) when
 * every field is sane, -EINVAL otherwise. */
int brt_link_rec_parse(const void *buf, size_t len, struct brt_link_rec *out,
		       const char **name);

/* The kernel's struct bpf_link_info (6.18, 64 bytes) for the types above. */
struct brt_link_kinfo {
	uint32_t type, id, prog_id, pad;
	union {
		struct { uint64_t tp_name; uint32_t tp_name_len, pad; uint64_t cookie; } raw_tp;
		struct { uint32_t ifindex; } xdp;
		struct { uint32_t ifindex, attach_type; } tcx;
		struct {
			uint32_t type, pad;
			union {
				struct { uint64_t file_name; uint32_t name_len, offset;
					 uint64_t cookie, ref_ctr_offset; } uprobe;
				struct { uint64_t func_name; uint32_t name_len, offset;
					 uint64_t addr, missed, cookie; } kprobe;
				struct { uint64_t tp_name; uint32_t name_len, pad;
					 uint64_t cookie; } tracepoint;
			};
		} perf_event;
		uint8_t bytes[48];
	};
};

/* Fill info (which holds what the caller passed in) from a parsed record as the kernel's
 * fill_link_info() does: 0 or -EINVAL (a name buffer without length or the reverse);
 * *ubuf and *ulen say where the name goes (0: nowhere) and how much room it has. */
int brt_link_rec_fill(const struct brt_link_rec *r, const char *name,
		      struct brt_link_kinfo *info, uint64_t *ubuf, uint32_t *ulen);

/* The registry ($BPFRT_FS/.bpfrt-links).  write: the record of this process's link id
 * (peer_fd/peer_ino: the runtime's end, user_ino: the handed-out end).  remove: this
 * process's record id, if it is still the one with peer_ino.  next_id: the smallest live
 * id >= min.  find: the live record of id, or with id 0 of the link whose handed-out
 * socket is user_ino (name: BRT_LINK_REC_NAME_MAX bytes).  open: an fd of link id taken
 * from a process holding one.  of_fd: the record of the link behind fd.  detach_remote:
 * ask the thread running r's link (fd one of its handed-out fds) to detach, and wait. */
int brt_link_rec_write(const struct brt_link_desc *d, uint32_t id, uint32_t prog_id,
		       int peer_fd, uint64_t peer_ino, uint64_t user_ino);
void brt_link_rec_remove(uint32_t id, uint64_t peer_ino);
/* Mark this process's record id (still the one with peer_ino) detached. */
void brt_link_rec_detached(uint32_t id, uint64_t peer_ino);
int brt_link_rec_next_id(uint32_t min, uint32_t *out);
int brt_link_rec_find(uint32_t id, uint64_t user_ino, struct brt_link_rec *r, char *name);
int brt_link_rec_open(uint32_t id);
int brt_link_rec_of_fd(int fd, struct brt_link_rec *r, char *name);
int brt_link_rec_detach_remote(int fd, const struct brt_link_rec *r);

#endif
