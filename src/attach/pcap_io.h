/* pcap_io.h - everything bpfrt asks of libpcap, behind types that don't mention it:
 * reading pcap/pcapng files, writing pcap files, compiling tcpdump expressions to classic
 * BPF and running classic BPF with libpcap's own interpreter (the reference the tests and
 * benchmarks compare against).  Kept apart from attach.h because <pcap.h> defines a
 * classic struct bpf_insn that clashes with <linux/bpf.h>'s, so pcap_io.c can include
 * only this header.  Built without libpcap, every function fails with -EOPNOTSUPP.
 */
#ifndef BPFRT_SRC_ATTACH_PCAP_IO_H
#define BPFRT_SRC_ATTACH_PCAP_IO_H

#include <stddef.h>
#include <stdint.h>

#include <linux/filter.h>

/* One captured packet: data holds caplen bytes of the wirelen bytes on the wire. */
struct brt_pkt {
	const uint8_t *data;
	uint32_t caplen;
	uint32_t wirelen;
	int64_t ts_sec;
	int64_t ts_usec;
};

struct brt_pcap_reader;
struct brt_pcap_writer;
struct brt_pcap_classic;

/* 1 when bpfrt was built with libpcap. */
int brt_pcap_available(void);

/* Open a pcap or pcapng file (path "-" = stdin).  Returns 0, or -errno with "pcap:
 * <path>: <reason>" in err (-EOPNOTSUPP without libpcap, -EINVAL for a file libpcap can't
 * parse, -ENOENT ...). */
int brt_pcap_open(const char *path, struct brt_pcap_reader **out, char *err, size_t errlen);
int brt_pcap_linktype(const struct brt_pcap_reader *r);
int brt_pcap_snaplen(const struct brt_pcap_reader *r);
/* The next packet; its bytes stay valid until the next call.  Returns 1 with *pkt set, 0
 * at the end of the file, or -EINVAL with "pcap: <path>: packet N: <reason>" for a
 * truncated or corrupt file. */
int brt_pcap_next(struct brt_pcap_reader *r, struct brt_pkt *pkt, char *err, size_t errlen);
void brt_pcap_close(struct brt_pcap_reader *r);

/* Create a pcap file for packets of this link type. */
int brt_pcap_writer_open(const char *path, int linktype, int snaplen,
			 struct brt_pcap_writer **out, char *err, size_t errlen);
void brt_pcap_write(struct brt_pcap_writer *w, const struct brt_pkt *pkt);
/* Flush and close; returns 0 or -EIO when the data could not be written. */
int brt_pcap_writer_close(struct brt_pcap_writer *w);

/* Compile a tcpdump expression for a link type and snap length with libpcap's optimizer.
 * *out is malloc'ed (caller frees).  Returns 0, or -EINVAL with "pcap: <expr>: <reason>". */
int brt_pcap_compile(const char *expr, int linktype, int snaplen, struct sock_filter **out,
		     size_t *n, char *err, size_t errlen);

/* libpcap's classic interpreter (bpf_filter), the reference for classic semantics. */
int brt_pcap_classic_new(const struct sock_filter *prog, size_t n,
			 struct brt_pcap_classic **out);
uint32_t brt_pcap_classic_run(const struct brt_pcap_classic *c, const uint8_t *pkt,
			      uint32_t wirelen, uint32_t caplen);
void brt_pcap_classic_free(struct brt_pcap_classic *c);

/* libpcap on its own: open path, compile expr for it, count the packets
 * pcap_offline_filter() accepts.  The reference the filter tests and benchmarks compare
 * bpfrt with.  Returns 0 or -errno with a message. */
int brt_pcap_count_matches(const char *path, const char *expr, uint64_t *packets,
			   uint64_t *matched, char *err, size_t errlen);

/* Name of a DLT_* link type ("EN10MB"), or NULL. */
const char *brt_pcap_linktype_name(int linktype);

#endif
