/* ksym.c - kernel symbols by name, as the kernel resolves a __ksym or a kfunc's address:
 * /proc/kallsyms read line by line (kallsyms_lookup_name()).  Its own file because it is
 * not a check: cfg.c asks it whether a kfunc exists in the running kernel, and prog.c for
 * the address a kfunc call's imm becomes in the program's xlated image.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf/btf.h"
#include "verifier/internal.h"

/* kallsyms_lookup_name() as /proc/kallsyms shows it: 1 when name is a kernel symbol (its
 * address in *addr: 0 unless the reader may see addresses), 0 when not, -1 when the list
 * cannot be read.  Kernels without CONFIG_KALLSYMS_ALL list functions, not variables. */
int brt_kallsyms_lookup(const char *name, uint64_t *addr)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	int found = 0;

	*addr = 0;
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL, *end;

		if (!sp2)
			continue;
		end = sp2 + 1 + strcspn(sp2 + 1, " \t\n");
		if ((size_t)(end - (sp2 + 1)) == strlen(name) && !strncmp(sp2 + 1, name, strlen(name))) {
			*addr = strtoull(line, NULL, 16);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

uint64_t brt_verifier_ksym_addr(int32_t btf_id)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	const struct btf_type *t = vml && btf_id > 0 ? brt_btf_type(vml, (uint32_t)btf_id) : NULL;
	const char *name;
	uint64_t addr = 0;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_FUNC || !(name = brt_btf_str(vml, t->name_off)) ||
	    brt_kallsyms_lookup(name, &addr) != 1)
		return 0;
	return addr;
}
