/* cmd_attach.c - "bpfrt attach --iface IF EXPR": the filter of "bpfrt filter" run on live
 * traffic (AF_PACKET, TPACKET_V3 ring) until Ctrl-C, --max or --duration.  The work is
 * shared with cmd_filter.c. */
#include "cli.h"

int cmd_attach(int argc, char **argv)
{
	return cli_filter_main(argc, argv, "attach");
}
