/* cmd_attach.c - "bpfrt attach --iface IF ...": "bpfrt filter" run on live traffic
 * (AF_PACKET, TPACKET_V3 ring) until Ctrl-C, --max or --duration; the run itself is
 * cmd_filter.c's.
 */
#include "cli.h"

int cmd_attach(int argc, char **argv)
{
	return cli_filter_main(argc, argv, "attach");
}
