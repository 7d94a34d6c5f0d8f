/* datafile.h - the bpf_conformance `.data` test file format (described in the suite's
 * README.md): `bpfrt run` and `bpfrt jit` take such files, and the conformance tests read
 * the suite through the same reader (datafile.c); and the helper the suite's programs call.
 */
#ifndef BPFRT_TOOLS_DATAFILE_H
#define BPFRT_TOOLS_DATAFILE_H

#include <stddef.h>
#include <stdint.h>

#include "bpfrt.h"

struct datafile {
	char *asm_text;	  /* the asm section, or NULL; preceded by one empty line per file line
			   * before it, so assembler line numbers are line numbers of the file */
	uint8_t *raw;	  /* the raw section as instruction bytes (little-endian), or NULL */
	size_t raw_len;	  /* bytes in raw (a multiple of 8 unless the file is broken) */
	uint8_t *mem;	  /* the input memory, or NULL */
	size_t mem_len;	  /* bytes in mem */
	int has_result;	  /* a `-- result` section was present */
	uint64_t result;  /* its value */
	int has_error;	  /* a `-- error` section was present */
	char *error;	  /* its first non-empty line, trimmed ("" when none) */
};

/* Parse the file at path into df (zeroed first).  Returns 0, or -errno with a message
 * naming the line in err; df holds nothing to free after a failure. */
int datafile_load(const char *path, struct datafile *df, char *err, size_t errlen);
/* Free what df holds and zero it. */
void datafile_free(struct datafile *df);

/* The suite's helper 5 (see its README), for bpfrt_helper_register() on each vm that runs
 * the suite's programs: returns its argument; 0 stops the program with r0 = 0. */
extern const struct bpfrt_helper_proto datafile_unwind_helper;

#endif
