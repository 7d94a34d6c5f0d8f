/* dl.c - optional libraries opened on first use (see dl.h for why). */
#include "util/dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;

static int try_load(struct brt_dl_lib *lib)
{
	const char *first = lib->sonames[0];
	void *h = NULL;

	for (size_t i = 0; !h && lib->sonames[i]; i++)
		h = dlopen(lib->sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(lib->why, sizeof(lib->why), "%s: not installed (%s)", first, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; lib->symbols[i]; i++) {
		void *addr = dlsym(h, lib->symbols[i]);

		memcpy((char *)lib->fns + i * sizeof(addr), &addr, sizeof(addr));
		if (!addr) {
			snprintf(lib->why, sizeof(lib->why), "%s: no symbol %s", first,
				 lib->symbols[i]);
			dlclose(h);
			return -ENOENT;
		}
	}
	return 1; /* kept open for the life of the process */
}

int brt_dl_load(struct brt_dl_lib *lib, char *err, size_t errlen)
{
	int state = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);

	if (!state) {
		pthread_mutex_lock(&dl_lock);
		state = lib->state;
		if (!state) {
			state = try_load(lib);
			__atomic_store_n(&lib->state, state, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&dl_lock);
	}
	if (state == 1)
		return 0;
	if (errlen)
		snprintf(err, errlen, "%s", lib->why);
	return state;
}
