/* gen_pcap.c - write pktgen.h's synthetic traffic to a file, for the CLI tests and the
 * filter benchmark:  attach_gen_pcap OUT N [SEED] [raw|pcapng]
 */
#include <stdlib.h>

#include "pktgen.h"

int main(int argc, char **argv)
{
	const char *kind = argc > 4 ? argv[4] : "ether";
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	char err[256] = "";
	size_t n;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: %s OUT N [SEED] [ether|raw|pcapng]\n", argv[0]);
		return 2;
	}
	n = strtoull(argv[2], NULL, 0);
	if (!strcmp(kind, "pcapng"))
		ret = pktgen_write_pcapng(argv[1], seed, n);
	else
		ret = pktgen_write_pcap(argv[1], seed, n, !strcmp(kind, "raw"), err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: %s\n", argv[1], err[0] ? err : "write failed");
		return 1;
	}
	return 0;
}
