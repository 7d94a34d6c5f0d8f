/* fuzz.h - the libFuzzer entry point every fuzz/fuzz_<target>.c defines.  The same file
 * links either with libFuzzer (fuzz build, -DBPFRT_FUZZ=ON) or with replay.c (every other
 * build), which feeds it the seed corpus and the saved crash inputs as regression tests.
 */
#ifndef BPFRT_FUZZ_FUZZ_H
#define BPFRT_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Run one input; must return 0.  Bad input must never crash, hang or leak. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
