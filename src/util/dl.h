/* dl.h - optional libraries opened when first needed rather than linked.
 *
 * Linking libpcap and capstone made every process that links libbpfrt pay for loading
 * them at start-up, whether it filters packets or disassembles JIT code or not: libpcap
 * brings libdbus, libsystemd, libgcrypt, liblzma, libzstd and liblz4, and capstone's
 * tables take thousands of relocations (on this kind of VM an empty program linked with
 * -lpcap started in 5.7 ms, with -lcapstone 9.1 ms, with neither 2.8 ms; `bpfrt
 * --version` took 10.5 ms against bpftool's 3.4 ms).  The bpf() path needs neither, so
 * the two are opened with dlopen() by the one file that uses each.
 *
 * The bpfrt CLI is linked statically (CMakeLists.txt), and a static glibc's dlopen() runs
 * the library on a libc.so of its own: nothing that libc owns (a FILE, memory one side
 * allocates and the other frees) may cross between the caller and such a library.
 */
#ifndef BPFRT_UTIL_DL_H
#define BPFRT_UTIL_DL_H

#include <stddef.h>

/* One library: the sonames to try in order and the symbols it must provide, both
 * NULL-terminated; fns is storage for one address per symbol, in order (a struct of
 * function pointers: each address is copied into it with memcpy, which is how C lets a
 * dlsym() result become a function pointer).  Zero-initialise the rest. */
struct brt_dl_lib {
	const char *const *sonames;
	const char *const *symbols;
	void *fns;
	int state;      /* 0 not tried, 1 loaded, -errno failed (sticky) */
	char why[160];  /* the failure, for every later caller */
};

/* Open lib once per process (thread-safe: fns is written once, under a lock, before the
 * state that publishes it); 0 when every symbol resolved, else -ENOENT with "NAME: why"
 * in err. */
int brt_dl_load(struct brt_dl_lib *lib, char *err, size_t errlen);

#endif
