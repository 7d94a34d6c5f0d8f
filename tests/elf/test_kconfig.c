/* test_kconfig.c - the kernel config behind CONFIG_* externs (src/elf/kconfig.c): a config
 * file named by BPFRT_KCONFIG read line by line, values stored with libbpf's rules for
 * each extern type (bool, tristate, char, integers that must fit, strings truncated), and,
 * in a child without BPFRT_KCONFIG, this kernel's own /proc/config.gz (gzip) when present.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/parse.h"
#include "util/util.h"
#include "harness.h"

struct scase {
	const char *name;
	enum brt_kcfg_type type;
	int is_signed;
	uint32_t sz;
	const char *value;
	int err;
	uint64_t want;        /* the stored bytes, little-endian (integers) */
	const char *want_str; /* or the stored string (char arrays) */
};

static const struct scase cases[] = {
	{ "bool y", BRT_KCFG_BOOL, 0, 1, "y", 0, 1, NULL },
	{ "bool n", BRT_KCFG_BOOL, 0, 1, "n", 0, 0, NULL },
	{ "bool m", BRT_KCFG_BOOL, 0, 1, "m", -EINVAL, 0, NULL },
	{ "tristate y", BRT_KCFG_TRISTATE, 0, 4, "y", 0, 1, NULL },
	{ "tristate m", BRT_KCFG_TRISTATE, 0, 4, "m", 0, 2, NULL },
	{ "tristate n", BRT_KCFG_TRISTATE, 0, 4, "n", 0, 0, NULL },
	{ "char y", BRT_KCFG_CHAR, 0, 1, "y", 0, 'y', NULL },
	{ "char number, not range-checked", BRT_KCFG_CHAR, 0, 1, "300", 0, 300 & 0xff, NULL },
	{ "int 250", BRT_KCFG_INT, 0, 4, "250", 0, 250, NULL },
	{ "int hex", BRT_KCFG_INT, 0, 8, "0x1000", 0, 0x1000, NULL },
	{ "u16 too big", BRT_KCFG_INT, 0, 2, "70000", -ERANGE, 0, NULL },
	{ "s16 -1", BRT_KCFG_INT, 1, 2, "-1", 0, 0xffff, NULL },
	{ "u16 -1", BRT_KCFG_INT, 0, 2, "-1", -ERANGE, 0, NULL },
	{ "int from y", BRT_KCFG_INT, 0, 4, "y", -EINVAL, 0, NULL },
	{ "int not a number", BRT_KCFG_INT, 0, 4, "12abc", -EINVAL, 0, NULL },
	{ "bool from a number", BRT_KCFG_BOOL, 0, 1, "1", -EINVAL, 0, NULL },
	{ "string", BRT_KCFG_CHAR_ARR, 0, 8, "\"hello\"", 0, 0, "hello" },
	{ "string truncated", BRT_KCFG_CHAR_ARR, 0, 4, "\"hello\"", 0, 0, "hel" },
	{ "string unterminated", BRT_KCFG_CHAR_ARR, 0, 8, "\"hello", -EINVAL, 0, NULL },
	{ "string into an int", BRT_KCFG_INT, 0, 4, "\"x\"", -EINVAL, 0, NULL },
	{ "unknown type", BRT_KCFG_UNKNOWN, 0, 4, "y", -EINVAL, 0, NULL },
};

static const char config[] = "#\n# Automatically generated file; DO NOT EDIT.\n#\n"
			     "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_HZ=250\n"
			     "CONFIG_S=\"hello world\"\nCONFIG_M=m\nCONFIG_A=n\nCONFIG_LONGER=1\n";

int main(void)
{
	char path[64], why[128];
	const char *v;
	FILE *f;
	pid_t pid;
	int st;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct scase *c = &cases[i];
		uint8_t out[16];
		uint64_t got = 0;

		T_CASE(c->name);
		memset(out, 0xaa, sizeof(out));
		T_EQ_INT(c->err,
			 brt_elf_kconfig_store(c->type, c->is_signed, c->value, out, c->sz, why,
					       sizeof(why)));
		if (c->err)
			continue;
		if (c->want_str) {
			T_EQ_STR(c->want_str, (const char *)out);
			continue;
		}
		memcpy(&got, out, c->sz);
		T_EQ_INT(c->want, got);
		T_EQ_INT(0xaa, out[c->sz]); /* nothing past the extern */
	}

	/* this kernel's config, in a child (the file is read once per process) */
	pid = fork();
	if (pid == 0) {
		unsetenv("BPFRT_KCONFIG");
		if (access("/proc/config.gz", R_OK))
			_exit(77);
		_exit(!brt_kconfig_get("CONFIG_BPF_SYSCALL", &v) && v && !strcmp(v, "y") ? 0
											   : 1);
	}
	T_CASE("/proc/config.gz: CONFIG_BPF_SYSCALL=y");
	T_ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		printf("skipped: /proc/config.gz part: no such file\n");
	else
		T_EQ_INT(0, WEXITSTATUS(st));

	T_CASE("a config file");
	snprintf(path, sizeof(path), "/tmp/bpfrt-kconfig-%d", (int)getpid());
	f = fopen(path, "w");
	T_ASSERT(f != NULL);
	fputs(config, f);
	fclose(f);
	setenv("BPFRT_KCONFIG", path, 1);
	T_EQ_INT(0, brt_kconfig_get("CONFIG_A", &v));
	T_EQ_STR("y", v ? v : "(null)"); /* the first line naming it */
	T_EQ_INT(0, brt_kconfig_get("CONFIG_HZ", &v));
	T_EQ_STR("250", v ? v : "(null)");
	T_EQ_INT(0, brt_kconfig_get("CONFIG_S", &v));
	T_EQ_STR("\"hello world\"", v ? v : "(null)");
	T_EQ_INT(0, brt_kconfig_get("CONFIG_B", &v));
	T_ASSERT(v == NULL); /* "is not set" is a comment */
	T_EQ_INT(0, brt_kconfig_get("CONFIG_LONG", &v));
	T_ASSERT(v == NULL); /* a prefix of CONFIG_LONGER */
	unlink(path);
	return t_done();
}
