/* syncookie.c - SYN cookies for XDP and tc: bpf_tcp_check_syncookie, bpf_tcp_gen_syncookie,
 * bpf_tcp_raw_gen_syncookie_ipv4/6, bpf_tcp_raw_check_syncookie_ipv4/6.
 *
 * The kernel's cookie is a keyed hash of the connection's addresses and ports with a
 * secret drawn at boot, a minute counter and the index of the MSS in a table, laid out as
 * in RFC 4987: hash(0) + the client's sequence number + (count << 24) + ((hash(count) +
 * index) & 0xffffff).  bpfrt builds its cookies the same way with a key of its own (the
 * kernel's secret is not readable from user space), so its cookies differ from the
 * kernel's while everything else agrees: the MSS chosen (the top 32 bits of a
 * generated cookie: the table entry at or below the MSS option, else the default), the
 * error codes and their order, and a check accepts a cookie bpfrt generated within the
 * kernel's age limit and rejects the others (a kernel cookie included).
 *
 * The socket variants need a listener's state: bpf_tcp_check_syncookie answers as the
 * kernel's for a listener whose SYN queue has not overflowed in the last two minutes
 * (tcp_synq_no_recent_overflow(): -ENOENT before any cookie is checked), and
 * bpf_tcp_gen_syncookie as for one whose queue is not full (no cookie unless
 * net.ipv4.tcp_syncookies is 2); user space cannot see a listener's queue.  The
 * sockets programs hold are sockmap snapshots (maps/sockmap.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "attach/attach.h"
#include "maps/maps.h"
#include "util/util.h"
#include "vm/vm.h"

#define COOKIEBITS 24
#define COOKIEMASK ((UINT32_C(1) << COOKIEBITS) - 1)
#define MAX_SYNCOOKIE_AGE 2 /* minutes */
#define TCP_LISTEN 10
#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define TCPOLEN_MSS 4
#define TCP_MSS_DEFAULT 536
#define IPV6_MSS_CLAMP (1280 - 20 - 40) /* IPV6_MIN_MTU less the TCP and IPv6 headers */

/* the kernel's MSS tables (net/ipv4/syncookies.c, net/ipv6/syncookies.c) */
static const uint16_t msstab4[] = { 536, 1300, 1440, 1460 };
static const uint16_t msstab6[] = { 1280 - 60, 1480 - 60, 1500 - 60, 9000 - 60 };

static uint64_t key[2];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void key_init(void)
{
	if (getrandom(key, sizeof(key), 0) != sizeof(key)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
		key[1] = (uint64_t)ts.tv_sec * 0xc2b2ae3d27d4eb4full ^ key[0];
	}
}

/* the two ends of a connection, as the cookie hashes them (IPv4: one word each) */
struct flow {
	uint32_t saddr[4], daddr[4];
	uint16_t sport, dport; /* network order */
	uint32_t seq;          /* the client's, host order */
	int v6;
};

static uint32_t cookie_hash(const struct flow *f, uint32_t count, int c)
{
	uint64_t h = key[c];
	uint32_t w[10];
	size_t n = 0;

	for (int i = 0; i < (f->v6 ? 4 : 1); i++) {
		w[n++] = f->saddr[i];
		w[n++] = f->daddr[i];
	}
	w[n++] = (uint32_t)f->sport << 16 | f->dport;
	w[n++] = count;
	for (size_t i = 0; i < n; i++) {
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	h *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h ^ (h >> 32));
}

/* tcp_cookie_time(): minutes, as the kernel's jiffies / (60 * HZ) */
static uint32_t cookie_time(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)(ts.tv_sec / 60);
}

static uint32_t make_cookie(const struct flow *f, uint32_t index)
{
	uint32_t count = cookie_time();

	pthread_once(&key_once, key_init);
	return cookie_hash(f, 0, 0) + f->seq + (count << COOKIEBITS) +
	       ((cookie_hash(f, count, 1) + index) & COOKIEMASK);
}

/* check_tcp_syn_cookie(): the MSS index the cookie carries, or UINT32_MAX when it is too
 * old (its index is then out of the table, as any forged cookie's mostly is) */
static uint32_t cookie_index(const struct flow *f, uint32_t cookie)
{
	uint32_t count = cookie_time(), diff;

	pthread_once(&key_once, key_init);
	cookie -= cookie_hash(f, 0, 0) + f->seq;
	diff = (count - (cookie >> COOKIEBITS)) & ((uint32_t)-1 >> COOKIEBITS);
	if (diff >= MAX_SYNCOOKIE_AGE)
		return UINT32_MAX;
	return (cookie - cookie_hash(f, count - diff, 1)) & COOKIEMASK;
}

static void flow_of(const uint8_t *iph, const uint8_t *th, int v6, struct flow *f)
{
	uint32_t seq;

	memset(f, 0, sizeof(*f));
	f->v6 = v6;
	if (v6) {
		memcpy(f->saddr, iph + 8, 16);
		memcpy(f->daddr, iph + 24, 16);
	} else {
		memcpy(f->saddr, iph + 12, 4);
		memcpy(f->daddr, iph + 16, 4);
	}
	memcpy(&f->sport, th, 2);
	memcpy(&f->dport, th + 2, 2);
	memcpy(&seq, th + 4, 4);
	f->seq = ntohl(seq);
}

/* __cookie_v4/v6_init_sequence(): the cookie for a SYN with MSS *mss, which becomes the
 * table's entry at or below it */
static uint32_t init_sequence(const uint8_t *iph, const uint8_t *th, int v6, uint16_t *mss)
{
	const uint16_t *tab = v6 ? msstab6 : msstab4;
	struct flow f;
	uint32_t i;

	for (i = 3; i; i--)
		if (*mss >= tab[i])
			break;
	*mss = tab[i];
	flow_of(iph, th, v6, &f);
	return make_cookie(&f, i);
}

/* __cookie_v4/v6_check(): the MSS of a valid cookie in the ACK th answers, else 0 */
static uint16_t cookie_check(const uint8_t *iph, const uint8_t *th, int v6)
{
	const uint16_t *tab = v6 ? msstab6 : msstab4;
	uint32_t ack, idx;
	struct flow f;

	flow_of(iph, th, v6, &f);
	memcpy(&ack, th + 8, 4);
	f.seq -= 1;
	idx = cookie_index(&f, ntohl(ack) - 1);
	return idx < 4 ? tab[idx] : 0;
}

static unsigned doff(const uint8_t *th)
{
	return (unsigned)(th[12] >> 4) * 4;
}

/* tcp_parse_mss_option(th, 0): the MSS option of the doff * 4 bytes at th, 0 when none */
static uint16_t parse_mss(const uint8_t *th)
{
	const uint8_t *p = th + 20;
	int len = (int)doff(th) - 20;
	uint16_t mss = 0;

	while (len > 0) {
		int op = *p++, size;

		if (op == TCPOPT_EOL)
			return mss;
		if (op == TCPOPT_NOP) {
			len--;
			continue;
		}
		if (len < 2)
			return mss;
		size = *p++;
		if (size < 2 || size > len)
			return mss;
		if (op == TCPOPT_MSS && size == TCPOLEN_MSS) {
			uint16_t in = (uint16_t)(p[0] << 8 | p[1]);

			if (in)
				mss = in;
		}
		p += size - 2;
		len -= size;
	}
	return mss;
}

/* net.ipv4.tcp_syncookies of this network namespace (the kernel's default 1) */
static int syncookies_sysctl(void)
{
	char buf[16];

	return brt_fs_read_text("/proc/sys/net/ipv4/tcp_syncookies", buf, sizeof(buf)) > 0 ?
		       buf[0] - '0' : 1;
}

#define ERR(e) ((uint64_t)(int64_t)-(e))
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

/* long bpf_tcp_check_syncookie(sk, iph, iph_len, th, th_len) */
uint64_t brt_helper_tcp_check_syncookie(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_sock *sk = brt_sock_of_ptr(r1, ctx);
	const uint8_t *th = (const uint8_t *)(uintptr_t)r4;

	(void)r2;
	if (!sk || r5 < 20)
		return ERR(EINVAL);
	if (sk->sk.protocol != IPPROTO_TCP || sk->sk.state != TCP_LISTEN)
		return ERR(EINVAL);
	if (!syncookies_sysctl())
		return ERR(EINVAL);
	if (!(th[13] & TH_ACK) || (th[13] & (TH_RST | TH_SYN)))
		return ERR(ENOENT);
	if (r3 < 20)
		return ERR(EINVAL);
	/* tcp_synq_no_recent_overflow(): no listener here has overflowed (see above) */
	return ERR(ENOENT);
}

/* s64 bpf_tcp_gen_syncookie(sk, iph, iph_len, th, th_len) */
uint64_t brt_helper_tcp_gen_syncookie(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_sock *sk = brt_sock_of_ptr(r1, ctx);
	const uint8_t *iph = (const uint8_t *)(uintptr_t)r2, *th = (const uint8_t *)(uintptr_t)r4;
	uint16_t mss;
	uint32_t cookie;
	int v6;

	if (!sk || r5 < 20 || r5 != doff(th))
		return ERR(EINVAL);
	if (sk->sk.protocol != IPPROTO_TCP || sk->sk.state != TCP_LISTEN)
		return ERR(EINVAL);
	if (!syncookies_sysctl())
		return ERR(ENOENT);
	if (!(th[13] & TH_SYN) || (th[13] & (TH_ACK | TH_FIN | TH_RST)))
		return ERR(EINVAL);
	if (r3 < 20)
		return ERR(EINVAL);
	switch (iph[0] >> 4) {
	case 4:
		if (sk->sk.family == AF_INET6 && sk->ipv6only)
			return ERR(EINVAL);
		v6 = 0;
		break;
	case 6:
		if (r3 < 40 || sk->sk.family != AF_INET6)
			return ERR(EINVAL);
		v6 = 1;
		break;
	default:
		return ERR(EPROTONOSUPPORT);
	}
	/* tcp_get_syncookie_mss(): a cookie only when syncookies are forced (2) or the SYN
	 * queue is full, which no listener's is here */
	if (syncookies_sysctl() != 2)
		return ERR(ENOENT);
	mss = parse_mss(th);
	if (!mss)
		mss = v6 ? IPV6_MSS_CLAMP : TCP_MSS_DEFAULT;
	cookie = init_sequence(iph, th, v6, &mss);
	return cookie | (uint64_t)mss << 32;
}

static uint64_t raw_gen(uint64_t r1, uint64_t r2, uint64_t r3, int v6)
{
	const uint8_t *th = (const uint8_t *)(uintptr_t)r2;
	uint16_t mss;
	uint32_t cookie;

	if (r3 < 20 || r3 != doff(th))
		return ERR(EINVAL);
	mss = parse_mss(th);
	if (!mss)
		mss = v6 ? IPV6_MSS_CLAMP : TCP_MSS_DEFAULT;
	cookie = init_sequence((const uint8_t *)(uintptr_t)r1, th, v6, &mss);
	return cookie | (uint64_t)mss << 32;
}

/* s64 bpf_tcp_raw_gen_syncookie_ipv4(iph, th, th_len) */
uint64_t brt_helper_tcp_raw_gen_syncookie_ipv4(uint64_t r1, uint64_t r2, uint64_t r3,
					       uint64_t r4, uint64_t r5,
					       struct bpfrt_run_ctx *ctx)
{
	(void)r4, (void)r5, (void)ctx;
	return raw_gen(r1, r2, r3, 0);
}

uint64_t brt_helper_tcp_raw_gen_syncookie_ipv6(uint64_t r1, uint64_t r2, uint64_t r3,
					       uint64_t r4, uint64_t r5,
					       struct bpfrt_run_ctx *ctx)
{
	(void)r4, (void)r5, (void)ctx;
	return raw_gen(r1, r2, r3, 1);
}

/* long bpf_tcp_raw_check_syncookie_ipv4(iph, th): 0 for a valid cookie, else -EACCES */
uint64_t brt_helper_tcp_raw_check_syncookie_ipv4(uint64_t r1, uint64_t r2, uint64_t r3,
						 uint64_t r4, uint64_t r5,
						 struct bpfrt_run_ctx *ctx)
{
	(void)r3, (void)r4, (void)r5, (void)ctx;
	return cookie_check((const uint8_t *)(uintptr_t)r1, (const uint8_t *)(uintptr_t)r2, 0)
		       ? 0 : ERR(EACCES);
}

uint64_t brt_helper_tcp_raw_check_syncookie_ipv6(uint64_t r1, uint64_t r2, uint64_t r3,
						 uint64_t r4, uint64_t r5,
						 struct bpfrt_run_ctx *ctx)
{
	(void)r3, (void)r4, (void)r5, (void)ctx;
	return cookie_check((const uint8_t *)(uintptr_t)r1, (const uint8_t *)(uintptr_t)r2, 1)
		       ? 0 : ERR(EACCES);
}
