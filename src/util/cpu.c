/* cpu.c - the CPU a program run is for (util.h, brt_cpu_now()). */
#include <stdint.h>

#include "util/util.h"

_Thread_local uint32_t brt_cpu_event __attribute__((tls_model("initial-exec")));

int64_t brt_cpu_tls_off(void)
{
#if defined(__x86_64__)
	uintptr_t tp;

	/* the thread pointer: fs:0 holds the TCB's own address (x86-64 TLS ABI) */
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (int64_t)((uintptr_t)&brt_cpu_event - tp);
#else
	return INT64_MIN;
#endif
}
