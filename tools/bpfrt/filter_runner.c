/* filter_runner.c - the filter "bpfrt filter" and "bpfrt attach" apply to each packet: a
 * tcpdump expression or classic program converted and run by bpfrt (or libpcap's own
 * interpreter), or an eBPF program of a packet type; and the counters of verdicts and
 * actions a run keeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "filter.h"

/* A classic program in tcpdump -ddd form ("N" then N lines "code jt jf k") or -dd form
 * ("{ 0x28, 0, 0, 0x0000000c },"): all integers of the file, grouped by four. */
static int read_prog(const char *cmd, const char *path, struct sock_filter **out, size_t *n)
{
	char *text, *p, *end;
	uint64_t *num = NULL;
	size_t len, cnt = 0, cap = 0, first = 0;
	int ret = cli_read_file(path, &text, &len);

	if (ret)
		return cli_error("%s: %s: %s", cmd, path, strerror(-ret));
	for (p = text; *p;) {
		if (*p < '0' || *p > '9') {
			p++;
			continue;
		}
		if (cnt == cap) {
			uint64_t *nn = realloc(num, (cap = cap ? cap * 2 : 64) * sizeof(*num));

			if (!nn) {
				free(num);
				free(text);
				return cli_error("%s: out of memory", cmd);
			}
			num = nn;
		}
		errno = 0;
		num[cnt] = strtoull(p, &end, 0);
		if (errno || num[cnt] > UINT32_MAX) {
			ret = cli_error("%s: %s: offset %zu: number out of range", cmd, path,
					(size_t)(p - text));
			goto out;
		}
		cnt++;
		p = end;
	}
	if (cnt >= 1 && cnt == 1 + 4 * num[0])
		first = 1; /* -ddd: leading count */
	else if (cnt == 0 || cnt % 4) {
		ret = cli_error("%s: %s: expected the output of tcpdump -ddd or -dd", cmd, path);
		goto out;
	}
	*n = (cnt - first) / 4;
	*out = calloc(*n ? *n : 1, sizeof(**out));
	if (!*out) {
		ret = cli_error("%s: out of memory", cmd);
		goto out;
	}
	for (size_t i = 0; i < *n; i++) {
		const uint64_t *q = &num[first + 4 * i];

		if (q[0] > UINT16_MAX || q[1] > UINT8_MAX || q[2] > UINT8_MAX) {
			free(*out);
			*out = NULL;
			ret = cli_error("%s: %s: insn %zu: code, jt or jf out of range", cmd, path, i);
			goto out;
		}
		(*out)[i] = (struct sock_filter){ (uint16_t)q[0], (uint8_t)q[1], (uint8_t)q[2],
						  (uint32_t)q[3] };
	}
	ret = 0;
out:
	free(num);
	free(text);
	return ret;
}

/* An eBPF program of a packet type; packets start at the Ethernet header for it. */
static int runner_open_ebpf(struct runner *r, const struct fopts *o, int linktype)
{
	char err[512];
	int ret;

	/* not given: BPF_PROG_LOAD's default (BPFRT_ENGINE, else the JIT) */
	uint32_t flags = o->engine_set ? BPFRT_F_ENGINE(o->engine) : 0;

	ret = cli_pkt_prog_load(o->cmd, o->object, o->prog_name, o->ebpf, o->prog_type, flags,
				&r->obj, &r->prog_fd);
	if (ret)
		return ret;
	if (brt_pkt_prog_open(r->prog_fd, &r->pp, err, sizeof(err)))
		return cli_error("%s: %s: %s", o->cmd, o->object ? o->object : o->ebpf, err);
	r->type = brt_pkt_prog_type(r->pp);
	if (linktype != 1) {
		const char *lt = brt_pcap_linktype_name(linktype);

		return cli_error("%s: %s programs need Ethernet frames; %s has link type %s",
				 o->cmd, cli_pkt_type_name(r->type), o->capture,
				 lt ? lt : "unknown");
	}
	return 0;
}

int cli_filter_runner_open(struct runner *r, const struct fopts *o, int linktype, int snaplen)
{
	char err[512];
	int ret;

	r->type = BPF_PROG_TYPE_SOCKET_FILTER;
	if (o->object || o->ebpf)
		return runner_open_ebpf(r, o, linktype);
	if (o->prog_path)
		ret = read_prog(o->cmd, o->prog_path, &r->classic, &r->classic_len);
	else if ((ret = brt_pcap_compile(o->expr, linktype, snaplen, &r->classic,
					 &r->classic_len, err, sizeof(err))))
		return cli_error("%s: %s", o->cmd, err);
	if (ret)
		return ret;
	if (o->engine == ENGINE_LIBPCAP) {
		ret = brt_cbpf_check(r->classic, r->classic_len, err, sizeof(err));
		if (ret)
			return cli_error("%s: %s", o->cmd, err);
		if (brt_pcap_classic_new(r->classic, r->classic_len, &r->lib))
			return cli_error("%s: libpcap's interpreter is not available", o->cmd);
		return 0;
	}
	BPFRT_OPTS(bpfrt_pkt_filter_opts, fo, .engine = (enum bpfrt_engine)o->engine);
	ret = bpfrt_pkt_filter_load_cbpf(r->classic, r->classic_len, &fo, &r->f, err,
					 sizeof(err));
	if (ret)
		return cli_error("%s: %s", o->cmd, err);
	return 0;
}

void cli_filter_runner_close(struct runner *r)
{
	brt_pkt_prog_close(r->pp);
	if (r->obj)
		bpfrt_object_close(r->obj);
	else if (r->prog_fd >= 0)
		close(r->prog_fd);
	bpfrt_pkt_filter_free(r->f);
	brt_pcap_classic_free(r->lib);
	free(r->classic);
}

/* Run on one packet: res gets the verdict, its action and the packet to write (a socket
 * filter's verdict cuts it; tc and XDP programs may have changed it). */
int cli_filter_run_one(struct runner *r, const struct brt_pkt *pkt, struct brt_pkt_result *res,
		       char *err, size_t errlen)
{
	int ret = 0;

	if (r->pp)
		return brt_pkt_prog_run(r->pp, pkt, r->ifindex, 0, res, err, errlen);
	if (r->lib)
		res->verdict = brt_pcap_classic_run(r->lib, pkt->data, pkt->wirelen, pkt->caplen);
	else
		ret = bpfrt_pkt_filter_run(r->f, pkt->data, pkt->caplen, pkt->wirelen,
					   &res->verdict, err, errlen);
	res->action = res->verdict ? BPFRT_PKT_PASS : BPFRT_PKT_DROP;
	res->data = pkt->data;
	res->caplen = res->verdict < pkt->caplen ? res->verdict : pkt->caplen;
	return ret;
}

void cli_filter_count(struct stats *s, uint32_t wirelen, uint32_t verdict,
		      enum bpfrt_pkt_action action)
{
	size_t i;

	s->packets++;
	s->bytes += wirelen;
	s->actions[action]++;
	if (action == BPFRT_PKT_PASS) {
		s->matched++;
		s->matched_bytes += wirelen;
	}
	if (s->nr_verdicts && s->verdict[0] == verdict) {
		s->verdict_count[0]++; /* most packets share one verdict */
		return;
	}
	for (i = 0; i < s->nr_verdicts && s->verdict[i] != verdict; i++)
		;
	if (i == s->nr_verdicts) {
		if (i == MAX_VERDICTS) {
			s->other_verdicts++;
			return;
		}
		s->verdict[i] = verdict;
		s->nr_verdicts++;
	}
	s->verdict_count[i]++;
}
