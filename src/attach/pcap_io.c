/* pcap_io.c - the libpcap side of bpfrt: capture files in and out, tcpdump expressions
 * compiled to classic BPF, and libpcap's own classic interpreter as a reference.  The only
 * file that includes <pcap.h> (see pcap_io.h for why).
 */
#include "attach/pcap_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef BPFRT_HAVE_PCAP
#include <pcap/pcap.h>

#include "util/dl.h"

/* libpcap is opened on first use, not linked (util/dl.h: it costs every process that
 * links libbpfrt ~3 ms at start-up).  Its header still declares the types and calls. */
#define PCAP_CALLS(X)                                                                    \
	X(pcap_datalink) X(pcap_snapshot) X(pcap_next_ex)                                \
	X(pcap_geterr) X(pcap_close) X(pcap_open_dead) X(pcap_dump_open) X(pcap_dump)    \
	X(pcap_dump_flush) X(pcap_dump_close) X(pcap_compile) X(pcap_freecode)           \
	X(pcap_offline_filter) X(pcap_datalink_val_to_name) X(pcap_open_offline)

static struct {
#define X(f) __typeof__(&f) f;
	PCAP_CALLS(X)
#undef X
} pc;
static const char *const pc_names[] = {
#define X(f) #f,
	PCAP_CALLS(X)
#undef X
	NULL
};
static const char *const pc_sonames[] = { "libpcap.so.0.8", "libpcap.so.1", "libpcap.so",
					  NULL };
static struct brt_dl_lib pc_lib = { pc_sonames, pc_names, &pc, 0, "" };
_Static_assert(sizeof(pc) == (sizeof(pc_names) / sizeof(pc_names[0]) - 1) * sizeof(void *),
	       "one address per call");

/* 0 when libpcap's calls are ready in pc, else -ENOSYS and why in err */
static int pc_load(char *err, size_t errlen)
{
	char why[160];

	if (brt_dl_load(&pc_lib, why, sizeof(why))) {
		if (errlen)
			snprintf(err, errlen, "pcap: %s", why);
		return -ENOSYS;
	}
	return 0;
}

/* from here on a call of libpcap goes through the table */
#define pcap_datalink pc.pcap_datalink
#define pcap_snapshot pc.pcap_snapshot
#define pcap_next_ex pc.pcap_next_ex
#define pcap_geterr pc.pcap_geterr
#define pcap_close pc.pcap_close
#define pcap_open_dead pc.pcap_open_dead
#define pcap_dump_open pc.pcap_dump_open
#define pcap_dump pc.pcap_dump
#define pcap_dump_flush pc.pcap_dump_flush
#define pcap_dump_close pc.pcap_dump_close
#define pcap_compile pc.pcap_compile
#define pcap_freecode pc.pcap_freecode
#define pcap_offline_filter pc.pcap_offline_filter
#define pcap_datalink_val_to_name pc.pcap_datalink_val_to_name
#define pcap_open_offline pc.pcap_open_offline

struct brt_pcap_reader {
	pcap_t *p;
	char *path;
	uint64_t count; /* packets returned so far */
};

struct brt_pcap_writer {
	pcap_t *dead;
	pcap_dumper_t *d;
};

struct brt_pcap_classic {
	size_t n;
	struct bpf_insn insns[]; /* libpcap's classic struct bpf_insn */
};

int brt_pcap_available(void)
{
	return !pc_load(NULL, 0);
}

int brt_pcap_open(const char *path, struct brt_pcap_reader **out, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct brt_pcap_reader *r;
	int fd;

	if (pc_load(err, errlen))
		return -ENOSYS;
	/* libpcap opens the file itself ("-" is its stdin): no FILE may pass between this
	 * code's libc and libpcap's, which differ in the statically linked CLI (dlopen()
	 * there brings its own libc.so: CMakeLists.txt).  The open here only names the
	 * errno of a path that cannot be read. */
	if (strcmp(path, "-")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			int e = errno;

			snprintf(err, errlen, "pcap: %s: %s", path, strerror(e));
			return -e;
		}
		close(fd);
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		snprintf(err, errlen, "pcap: out of memory");
		return -ENOMEM;
	}
	/* pcap_open_offline reads both pcap and pcapng */
	r->p = pcap_open_offline(path, ebuf);
	if (!r->p) {
		snprintf(err, errlen, "pcap: %s: %s", path, ebuf[0] ? ebuf : "cannot read");
		free(r->path);
		free(r);
		return -EINVAL;
	}
	*out = r;
	return 0;
}

int brt_pcap_linktype(const struct brt_pcap_reader *r)
{
	return pcap_datalink(r->p);
}

int brt_pcap_snaplen(const struct brt_pcap_reader *r)
{
	return pcap_snapshot(r->p);
}

int brt_pcap_next(struct brt_pcap_reader *r, struct brt_pkt *pkt, char *err, size_t errlen)
{
	struct pcap_pkthdr *hdr;
	const u_char *data;
	int ret = pcap_next_ex(r->p, &hdr, &data);

	if (ret == PCAP_ERROR_BREAK)
		return 0;
	if (ret != 1) {
		snprintf(err, errlen, "pcap: %s: packet %llu: %s", r->path,
			 (unsigned long long)r->count, pcap_geterr(r->p));
		return -EINVAL;
	}
	pkt->data = data;
	pkt->caplen = hdr->caplen;
	pkt->wirelen = hdr->len;
	pkt->ts_sec = hdr->ts.tv_sec;
	pkt->ts_usec = hdr->ts.tv_usec;
	r->count++;
	return 1;
}

void brt_pcap_close(struct brt_pcap_reader *r)
{
	if (!r)
		return;
	pcap_close(r->p);
	free(r->path);
	free(r);
}

int brt_pcap_writer_open(const char *path, int linktype, int snaplen,
			 struct brt_pcap_writer **out, char *err, size_t errlen)
{
	struct brt_pcap_writer *w;

	if (pc_load(err, errlen))
		return -ENOSYS;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->dead = pcap_open_dead(linktype, snaplen))) {
		free(w);
		snprintf(err, errlen, "pcap: out of memory");
		return -ENOMEM;
	}
	w->d = pcap_dump_open(w->dead, path);
	if (!w->d) {
		snprintf(err, errlen, "pcap: %s: %s", path, pcap_geterr(w->dead));
		pcap_close(w->dead);
		free(w);
		return -EIO;
	}
	*out = w;
	return 0;
}

void brt_pcap_write(struct brt_pcap_writer *w, const struct brt_pkt *pkt)
{
	struct pcap_pkthdr hdr = {
		.ts = { .tv_sec = pkt->ts_sec, .tv_usec = pkt->ts_usec },
		.caplen = pkt->caplen,
		.len = pkt->wirelen,
	};

	pcap_dump((u_char *)w->d, &hdr, pkt->data);
}

int brt_pcap_writer_close(struct brt_pcap_writer *w)
{
	int ret = 0;

	if (!w)
		return 0;
	if (pcap_dump_flush(w->d))
		ret = -EIO;
	pcap_dump_close(w->d);
	pcap_close(w->dead);
	free(w);
	return ret;
}

int brt_pcap_compile(const char *expr, int linktype, int snaplen, struct sock_filter **out,
		     size_t *n, char *err, size_t errlen)
{
	struct bpf_program prog;
	struct sock_filter *f;
	pcap_t *dead;

	if (pc_load(err, errlen))
		return -ENOSYS;
	dead = pcap_open_dead(linktype, snaplen);
	if (!dead) {
		snprintf(err, errlen, "pcap: out of memory");
		return -ENOMEM;
	}
	if (pcap_compile(dead, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "pcap: '%s': %s", expr, pcap_geterr(dead));
		pcap_close(dead);
		return -EINVAL;
	}
	f = malloc((prog.bf_len ? prog.bf_len : 1) * sizeof(*f));
	if (!f) {
		pcap_freecode(&prog);
		pcap_close(dead);
		snprintf(err, errlen, "pcap: out of memory");
		return -ENOMEM;
	}
	for (u_int i = 0; i < prog.bf_len; i++) {
		f[i].code = prog.bf_insns[i].code;
		f[i].jt = prog.bf_insns[i].jt;
		f[i].jf = prog.bf_insns[i].jf;
		f[i].k = prog.bf_insns[i].k;
	}
	*out = f;
	*n = prog.bf_len;
	pcap_freecode(&prog);
	pcap_close(dead);
	return 0;
}

int brt_pcap_classic_new(const struct sock_filter *prog, size_t n,
			 struct brt_pcap_classic **out)
{
	struct brt_pcap_classic *c;

	if (pc_load(NULL, 0))
		return -ENOSYS;
	c = malloc(sizeof(*c) + n * sizeof(c->insns[0]));
	if (!c)
		return -ENOMEM;
	c->n = n;
	for (size_t i = 0; i < n; i++) {
		c->insns[i].code = prog[i].code;
		c->insns[i].jt = prog[i].jt;
		c->insns[i].jf = prog[i].jf;
		c->insns[i].k = prog[i].k;
	}
	*out = c;
	return 0;
}

uint32_t brt_pcap_classic_run(const struct brt_pcap_classic *c, const uint8_t *pkt,
			      uint32_t wirelen, uint32_t caplen)
{
	/* pcap_offline_filter(), what applications call: bpf_filter() behind a check */
	struct bpf_program prog = { (u_int)c->n, (struct bpf_insn *)(uintptr_t)c->insns };
	struct pcap_pkthdr h = { .caplen = caplen, .len = wirelen };

	return (uint32_t)pcap_offline_filter(&prog, &h, pkt);
}

void brt_pcap_classic_free(struct brt_pcap_classic *c)
{
	free(c);
}

const char *brt_pcap_linktype_name(int linktype)
{
	if (pc_load(NULL, 0))
		return NULL;
	return pcap_datalink_val_to_name(linktype);
}

int brt_pcap_count_matches(const char *path, const char *expr, uint64_t *packets,
			   uint64_t *matched, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct bpf_program prog;
	struct pcap_pkthdr *hdr;
	const u_char *data;
	pcap_t *p;
	int ret;

	if (pc_load(err, errlen))
		return -ENOSYS;
	p = pcap_open_offline(path, ebuf);
	if (!p) {
		snprintf(err, errlen, "pcap: %s: %s", path, ebuf);
		return -EINVAL;
	}
	if (pcap_compile(p, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "pcap: '%s': %s", expr, pcap_geterr(p));
		pcap_close(p);
		return -EINVAL;
	}
	*packets = *matched = 0;
	while ((ret = pcap_next_ex(p, &hdr, &data)) == 1) {
		(*packets)++;
		if (pcap_offline_filter(&prog, hdr, data))
			(*matched)++;
	}
	if (ret != PCAP_ERROR_BREAK)
		snprintf(err, errlen, "pcap: %s: packet %llu: %s", path,
			 (unsigned long long)*packets, pcap_geterr(p));
	pcap_freecode(&prog);
	pcap_close(p);
	return ret == PCAP_ERROR_BREAK ? 0 : -EINVAL;
}

#else /* !BPFRT_HAVE_PCAP */

int brt_pcap_available(void)
{
	return 0;
}

int brt_pcap_open(const char *path, struct brt_pcap_reader **out, char *err, size_t errlen)
{
	(void)out;
	snprintf(err, errlen, "pcap: %s: bpfrt was built without libpcap", path);
	return -EOPNOTSUPP;
}

int brt_pcap_linktype(const struct brt_pcap_reader *r)
{
	(void)r;
	return -1;
}

int brt_pcap_snaplen(const struct brt_pcap_reader *r)
{
	(void)r;
	return 0;
}

int brt_pcap_next(struct brt_pcap_reader *r, struct brt_pkt *pkt, char *err, size_t errlen)
{
	(void)r;
	(void)pkt;
	snprintf(err, errlen, "pcap: bpfrt was built without libpcap");
	return -EOPNOTSUPP;
}

void brt_pcap_close(struct brt_pcap_reader *r)
{
	(void)r;
}

int brt_pcap_writer_open(const char *path, int linktype, int snaplen,
			 struct brt_pcap_writer **out, char *err, size_t errlen)
{
	(void)linktype;
	(void)snaplen;
	(void)out;
	snprintf(err, errlen, "pcap: %s: bpfrt was built without libpcap", path);
	return -EOPNOTSUPP;
}

void brt_pcap_write(struct brt_pcap_writer *w, const struct brt_pkt *pkt)
{
	(void)w;
	(void)pkt;
}

int brt_pcap_writer_close(struct brt_pcap_writer *w)
{
	(void)w;
	return 0;
}

int brt_pcap_compile(const char *expr, int linktype, int snaplen, struct sock_filter **out,
		     size_t *n, char *err, size_t errlen)
{
	(void)linktype;
	(void)snaplen;
	(void)out;
	(void)n;
	snprintf(err, errlen, "pcap: '%s': bpfrt was built without libpcap", expr);
	return -EOPNOTSUPP;
}

int brt_pcap_classic_new(const struct sock_filter *prog, size_t n,
			 struct brt_pcap_classic **out)
{
	(void)prog;
	(void)n;
	(void)out;
	return -EOPNOTSUPP;
}

uint32_t brt_pcap_classic_run(const struct brt_pcap_classic *c, const uint8_t *pkt,
			      uint32_t wirelen, uint32_t caplen)
{
	(void)c;
	(void)pkt;
	(void)wirelen;
	(void)caplen;
	return 0;
}

void brt_pcap_classic_free(struct brt_pcap_classic *c)
{
	(void)c;
}

const char *brt_pcap_linktype_name(int linktype)
{
	(void)linktype;
	return NULL;
}

int brt_pcap_count_matches(const char *path, const char *expr, uint64_t *packets,
			   uint64_t *matched, char *err, size_t errlen)
{
	(void)expr;
	(void)packets;
	(void)matched;
	snprintf(err, errlen, "pcap: %s: bpfrt was built without libpcap", path);
	return -EOPNOTSUPP;
}

#endif
