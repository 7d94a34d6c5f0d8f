/* test_pcap_io.c - capture files and tcpdump expressions through libpcap: generated pcap
 * and pcapng files read back packet for packet, corrupt and missing files and bad
 * expressions give clear errors, and for every expression of exprs.h the classic program
 * libpcap compiles, converted by bpfrt and run by the kernel as a socket filter, accepts
 * exactly the packets libpcap's own filter accepts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/pcap_io.h"
#include "exprs.h"
#include "harness.h"
#include "kernel_ref.h"
#include "pktgen.h"
#include "verifier/verifier.h"

#define NPKT 600
#define SEED 0x5eed0001

static char dir[512];

static const char *path_of(const char *name)
{
	static char buf[4][640];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len) {
		T_FAIL("cannot write %s", path);
		exit(1);
	}
	fclose(f);
}

/* Every packet read back equals the generator's, in order, for pcap and pcapng. */
static void test_read_back(const char *name, int raw, size_t n)
{
	struct pktgen g = { .seed = SEED };
	struct brt_pcap_reader *r;
	struct brt_pkt pkt;
	char err[256] = "";
	size_t count = 0, same = 0;
	int ret;

	T_CASE(name);
	ret = brt_pcap_open(path_of(name), &r, err, sizeof(err));
	T_EQ_INT(0, ret);
	if (ret) {
		T_FAIL("%s", err);
		return;
	}
	T_EQ_INT(raw ? PKTGEN_DLT_RAW : PKTGEN_DLT_EN10MB, brt_pcap_linktype(r));
	T_EQ_INT(65535, brt_pcap_snaplen(r));
	while ((ret = brt_pcap_next(r, &pkt, err, sizeof(err))) == 1) {
		size_t caplen, len = pktgen_next(&g, raw, &caplen);

		count++;
		same += pkt.caplen == caplen && pkt.wirelen == len &&
			!memcmp(pkt.data, g.buf, caplen);
	}
	T_EQ_INT(0, ret);
	T_EQ_INT(n, count);
	T_EQ_INT(n, same);
	brt_pcap_close(r);
}

static void test_bad_files(void)
{
	static const uint8_t garbage[64] = "this is not a capture file at all, not even close....";
	struct brt_pcap_reader *r = NULL;
	struct brt_pkt pkt;
	char err[256] = "";
	uint8_t *buf;
	size_t len;
	FILE *f;
	int ret;

	T_CASE("missing file");
	T_EQ_INT(-ENOENT, brt_pcap_open(path_of("does-not-exist.pcap"), &r, err, sizeof(err)));
	T_CONTAINS("does-not-exist.pcap: No such file or directory", err);

	T_CASE("garbage");
	write_file(path_of("garbage.pcap"), garbage, sizeof(garbage));
	T_EQ_INT(-EINVAL, brt_pcap_open(path_of("garbage.pcap"), &r, err, sizeof(err)));
	T_CONTAINS("garbage.pcap: unknown file format", err);

	T_CASE("empty");
	write_file(path_of("empty.pcap"), "", 0);
	T_EQ_INT(-EINVAL, brt_pcap_open(path_of("empty.pcap"), &r, err, sizeof(err)));
	T_CONTAINS("empty.pcap: ", err);

	/* cut the file in the middle of its 11th packet */
	T_CASE("truncated");
	f = fopen(path_of("ether.pcap"), "rb");
	buf = malloc(1 << 20);
	len = f ? fread(buf, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	T_ASSERT(len > 4096);
	{
		size_t off = 24;
		for (int i = 0; i < 10; i++)
			off += 16 + (size_t)(buf[off + 8] | buf[off + 9] << 8 | buf[off + 10] << 16);
		write_file(path_of("truncated.pcap"), buf, off + 20);
	}
	T_EQ_INT(0, brt_pcap_open(path_of("truncated.pcap"), &r, err, sizeof(err)));
	for (int i = 0; i < 10; i++)
		T_EQ_INT(1, brt_pcap_next(r, &pkt, err, sizeof(err)));
	ret = brt_pcap_next(r, &pkt, err, sizeof(err));
	T_EQ_INT(-EINVAL, ret);
	T_CONTAINS("truncated.pcap: packet 10: truncated dump file", err);
	brt_pcap_close(r);

	/* a capture length larger than any snap length */
	T_CASE("huge caplen");
	buf[24 + 8] = 0xff;
	buf[24 + 9] = 0xff;
	buf[24 + 10] = 0xff;
	buf[24 + 11] = 0x7f;
	write_file(path_of("hugecap.pcap"), buf, len);
	T_EQ_INT(0, brt_pcap_open(path_of("hugecap.pcap"), &r, err, sizeof(err)));
	T_EQ_INT(-EINVAL, brt_pcap_next(r, &pkt, err, sizeof(err)));
	T_CONTAINS("hugecap.pcap: packet 0: ", err);
	brt_pcap_close(r);
	free(buf);
}

static void test_compile(void)
{
	struct sock_filter *prog = NULL;
	size_t n = 0;
	char err[256] = "";

	T_CASE("compile ok");
	T_EQ_INT(0, brt_pcap_compile("tcp port 80", PKTGEN_DLT_EN10MB, 65535, &prog, &n, err,
				     sizeof(err)));
	T_ASSERT(n > 5);
	T_EQ_INT(0, brt_cbpf_check(prog, n, err, sizeof(err)));
	free(prog);

	T_CASE("compile syntax error");
	T_EQ_INT(-EINVAL, brt_pcap_compile("tcp port", PKTGEN_DLT_EN10MB, 65535, &prog, &n, err,
					   sizeof(err)));
	T_CONTAINS("pcap: 'tcp port': can't parse filter expression: syntax error", err);

	T_CASE("compile wrong link type");
	T_EQ_INT(-EINVAL, brt_pcap_compile("ether host 00:11:22:33:44:55", PKTGEN_DLT_RAW, 65535,
					   &prog, &n, err, sizeof(err)));
	T_CONTAINS("pcap: 'ether host 00:11:22:33:44:55': ", err);
}

/* One expression over one file: libpcap's count equals bpfrt-converted-and-run-by-the-
 * kernel's count.  Short captures are left to the vm test: the kernel can't model them. */
static void check_expr(const char *file, const char *expr, int kernel)
{
	struct brt_pcap_reader *r = NULL;
	struct sock_filter *prog = NULL;
	struct bpf_insn *insns = NULL;
	struct brt_pcap_classic *ref = NULL;
	uint64_t packets = 0, lib_matched = 0, ref_matched = 0, differ = 0, checked = 0;
	size_t n = 0, ninsns = 0;
	char err[256] = "", log[8192];
	struct brt_pkt pkt;
	int fd = -1, ret;

	T_CASE(expr[0] ? expr : "(empty expression)");
	ret = brt_pcap_count_matches(path_of(file), expr, &packets, &lib_matched, err,
				     sizeof(err));
	if (!ret)
		ret = brt_pcap_open(path_of(file), &r, err, sizeof(err));
	if (!ret)
		ret = brt_pcap_compile(expr, brt_pcap_linktype(r), brt_pcap_snaplen(r), &prog, &n,
				       err, sizeof(err));
	if (!ret)
		ret = brt_cbpf_convert(prog, n, &insns, &ninsns, err, sizeof(err));
	T_EQ_INT(0, ret);
	if (ret) {
		T_FAIL("%s: %s", file, err);
		goto out;
	}
	T_EQ_INT(0, brt_pcap_classic_new(prog, n, &ref));
	{
		/* bpfrt's verifier accepts what the kernel accepts */
		struct brt_verify_opts vo = { .prog_type = BPF_PROG_TYPE_SOCKET_FILTER,
					      .priv = BRT_PRIV_ROOT, .gpl = 1 };
		static struct brt_verify_result res;

		ret = brt_verify(insns, ninsns, &vo, &res);
		if (ret)
			T_FAIL("%s: bpfrt's verifier refused the converted program: insn %d: %s",
			       file, res.err_insn, res.err_msg);
		else
			T_OK();
	}
	if (kernel) {
		fd = kref_load(insns, ninsns, log, sizeof(log));
		if (fd < 0)
			T_FAIL("%s: kernel refused the converted program: %s", file, log);
	}
	while (brt_pcap_next(r, &pkt, err, sizeof(err)) == 1) {
		uint32_t want = brt_pcap_classic_run(ref, pkt.data, pkt.wirelen, pkt.caplen), got = 0;

		ref_matched += want != 0;
		if (fd < 0 || pkt.caplen != pkt.wirelen)
			continue;
		checked++;
		if (kref_run(fd, pkt.data, pkt.caplen, &got) || got != want)
			differ++;
	}
	T_EQ_U64(lib_matched, ref_matched);
	T_EQ_U64(0, differ);
	if (getenv("BPFRT_TEST_VERBOSE"))
		printf("%-14s %4llu/%-4llu kernel-checked %llu  %s\n", file,
		       (unsigned long long)lib_matched, (unsigned long long)packets,
		       (unsigned long long)checked, expr);
out:
	if (fd >= 0)
		close(fd);
	brt_pcap_classic_free(ref);
	brt_pcap_close(r);
	free(insns);
	free(prog);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char err[256] = "";
	int kernel;

	if (!brt_pcap_available())
		T_SKIP("built without libpcap");
	snprintf(dir, sizeof(dir), "%s/bpfrt-pcap-io-XXXXXX", tmp ? tmp : "/tmp");
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a temporary directory");
	kernel = kref_usable();

	T_CASE("generate");
	T_EQ_INT(0, pktgen_write_pcap(path_of("ether.pcap"), SEED, NPKT, 0, err, sizeof(err)));
	T_EQ_INT(0, pktgen_write_pcap(path_of("raw.pcap"), SEED, NPKT / 2, 1, err, sizeof(err)));
	T_EQ_INT(0, pktgen_write_pcapng(path_of("ether.pcapng"), SEED, NPKT / 2));

	test_read_back("ether.pcap", 0, NPKT);
	test_read_back("raw.pcap", 1, NPKT / 2);
	test_read_back("ether.pcapng", 0, NPKT / 2);
	test_bad_files();
	test_compile();
	for (size_t i = 0; i < sizeof(ether_exprs) / sizeof(ether_exprs[0]); i++) {
		check_expr("ether.pcap", ether_exprs[i], kernel);
		check_expr("ether.pcapng", ether_exprs[i], kernel);
	}
	for (size_t i = 0; i < sizeof(raw_exprs) / sizeof(raw_exprs[0]); i++)
		check_expr("raw.pcap", raw_exprs[i], kernel);

	if (!t_failed) {
		static const char *const names[] = { "ether.pcap", "raw.pcap", "ether.pcapng",
						     "garbage.pcap", "empty.pcap", "truncated.pcap",
						     "hugecap.pcap" };
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			unlink(path_of(names[i]));
		rmdir(dir);
	}
	return t_done();
}
