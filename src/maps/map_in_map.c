/* map_in_map.c - BPF_MAP_TYPE_ARRAY_OF_MAPS and BPF_MAP_TYPE_HASH_OF_MAPS.  Storage is an
 * array or a hash whose 4-byte values are inner map ids (what BPF_MAP_LOOKUP_ELEM returns,
 * as in the kernel); each process keeps its own id -> map references, since the maps a
 * program may follow are the ones this process holds: those it stored, and those another
 * process stored into an outer map with a name (a pin), which mim_links.c keeps alive by
 * links and a lookup here follows (follow()).  An inner map must match the
 * template taken from attr.inner_map_fd at creation, by the kernel's bpf_map_meta_equal()
 * rule (type, key and value sizes, flags, max_entries unless the template has
 * BPF_F_INNER_MAP, and the value's lock and timer fields: btf_record_equal()); the
 * template sits after the storage so every process checks the same,
 * each against its own copy read once at attach.  A slot's id is never followed through
 * the id walk: it finds only a map this process stored there itself or the storer's link
 * of it under this outer map's id (checked against the id and the template), so another
 * process writing ids into the storage makes a lookup miss, or find an inner map this
 * outer map held, nothing more.
 * A program's lookup returns the inner map itself, which the map helpers then accept.
 * An entry's reference is published as a named one (obj.h, brt_obj_named()), as a prog
 * array's: other processes' id walks count it only while they find the outer map alive
 * and its storage naming the inner map (brt_map_file_values()), so an outer map this
 * process has not swept since its last holder went holds nothing for them, as the kernel
 * frees the inner maps with the outer one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "maps/maps.h"

struct mim_tmpl {
	uint32_t type, key_size, value_size, max_entries, flags;
	/* the kernel's inner_map_meta also keeps the inner map's btf_record and BTF: 1 +
	 * offset of the value's lock (lock_res: a bpf_res_spin_lock) and timer, 0 when none,
	 * and whether the map has BTF (the verifier's lock rules ask) */
	uint32_t lock_off1, timer_off1;
	uint8_t lock_res, has_btf, pad[2];
};

struct mim_ref {
	uint32_t id;
	struct brt_map *map; /* referenced */
};

struct mim_view {
	pthread_mutex_t lock;
	const struct brt_map_ops *base; /* array or hash storage */
	void *base_priv;                /* the storage's own per-process state */
	struct mim_ref *refs;           /* one per entry this process stored or followed */
	uint32_t n, cap;
	/* ids a lookup could not follow lately (follow()): not tried again within a tick */
	struct { uint32_t id; int64_t at; } miss[4];
	uint32_t next_miss;
	/* the template as read once at attach: the shared copy can be rewritten by any
	 * process that can write the file, and a program verified against one shape must
	 * never be handed an inner map of another */
	struct mim_tmpl tmpl;
	/* the storage's view of the map as attached: the hash storage keeps a pointer to
	 * the map it attached to (its elements' frees read the map's fields), which must
	 * outlive the attach call */
	struct brt_map view;
};

static _Thread_local struct mim_tmpl pending; /* alloc_check -> init of the same create */

static const struct brt_map_ops *base_ops(uint32_t type)
{
	return type == BPF_MAP_TYPE_ARRAY_OF_MAPS ? &brt_array_map_ops : &brt_hash_map_ops;
}

/* The storage sees a plain array/hash map with its own priv. */
static struct brt_map as_base(const struct brt_map *map)
{
	struct brt_map b = *map;
	const struct mim_view *v = map->priv;

	b.type = map->type == BPF_MAP_TYPE_ARRAY_OF_MAPS ? BPF_MAP_TYPE_ARRAY : BPF_MAP_TYPE_HASH;
	b.priv = v ? v->base_priv : NULL;
	return b;
}

static int is_map_in_map(uint32_t type)
{
	return type == BPF_MAP_TYPE_ARRAY_OF_MAPS || type == BPF_MAP_TYPE_HASH_OF_MAPS;
}

static int meta_equal(const struct mim_tmpl *t, const struct brt_map *m)
{
	return t->type == m->type && t->key_size == m->key_size &&
	       t->value_size == m->value_size && t->flags == m->flags &&
	       ((t->flags & BPF_F_INNER_MAP) || t->max_entries == m->max_entries) &&
	       t->lock_off1 == (uint32_t)(m->lock_off + 1) && t->lock_res == !!m->lock_res &&
	       t->timer_off1 == (uint32_t)(m->timer_off + 1);
}

/* a template read from the shared file: its fields inside the value, where a lock (4
 * bytes, 4-aligned) and a timer (16 bytes, 8-aligned) can be */
static int tmpl_sane(const struct mim_tmpl *t)
{
	if (!t->type || is_map_in_map(t->type) || t->type == BPF_MAP_TYPE_PROG_ARRAY)
		return 0;
	if (t->lock_off1 && ((t->lock_off1 - 1) % 4 || t->lock_off1 - 1 > t->value_size ||
			     t->value_size - (t->lock_off1 - 1) < 4))
		return 0;
	return !t->timer_off1 || (!((t->timer_off1 - 1) % 8) && t->timer_off1 - 1 <= t->value_size &&
				  t->value_size - (t->timer_off1 - 1) >= 16);
}

static int mim_alloc_check(const union bpf_attr *attr)
{
	union bpf_attr a = *attr;
	struct brt_map *inner;
	int err;

	if (attr->value_size != 4 || (attr->map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)))
		return -EINVAL;
	a.map_type = attr->map_type == BPF_MAP_TYPE_ARRAY_OF_MAPS ? BPF_MAP_TYPE_ARRAY :
								     BPF_MAP_TYPE_HASH;
	err = base_ops(attr->map_type)->alloc_check(&a);
	if (err)
		return err;
	/* the kernel's bpf_map_meta_alloc() */
	err = brt_map_from_fd((int)attr->inner_map_fd, &inner);
	if (err)
		return err;
	if (is_map_in_map(inner->type) || inner->type == BPF_MAP_TYPE_PROG_ARRAY) {
		brt_map_put(inner);
		return -EINVAL;
	}
	pending = (struct mim_tmpl){ .type = inner->type, .key_size = inner->key_size,
				     .value_size = inner->value_size,
				     .max_entries = inner->max_entries, .flags = inner->flags,
				     .lock_off1 = (uint32_t)(inner->lock_off + 1),
				     .timer_off1 = (uint32_t)(inner->timer_off + 1),
				     .lock_res = (uint8_t)!!inner->lock_res,
				     .has_btf = inner->obj.snap.btf_id != 0 };
	brt_map_put(inner);
	return 0;
}

static int mim_data_size(const struct brt_map *map, uint64_t *size)
{
	struct brt_map b = as_base(map);
	int err = base_ops(map->type)->data_size(&b, size);

	if (!err)
		*size += BRT_ROUND8(sizeof(struct mim_tmpl));
	return err;
}

static struct mim_tmpl *tmpl_of(const struct brt_map *map)
{
	return (struct mim_tmpl *)((char *)map->data + map->data_size -
				   BRT_ROUND8(sizeof(struct mim_tmpl)));
}

static int mim_init(struct brt_map *map)
{
	struct brt_map b = as_base(map);
	const struct brt_map_ops *base = base_ops(map->type);

	*tmpl_of(map) = pending;
	return base->init ? base->init(&b) : 0;
}

static int mim_attach(struct brt_map *map)
{
	const struct brt_map_ops *base = base_ops(map->type);
	struct mim_view *v = calloc(1, sizeof(*v));
	int err = 0;

	if (!v)
		return -ENOMEM;
	memcpy(&v->tmpl, tmpl_of(map), sizeof(v->tmpl));
	if (!tmpl_sane(&v->tmpl)) {
		free(v);
		return -EINVAL; /* corrupt or foreign file */
	}
	pthread_mutex_init(&v->lock, NULL);
	v->base = base;
	map->priv = NULL;
	v->view = as_base(map);
	if (base->attach) {
		err = base->attach(&v->view);
		v->base_priv = v->view.priv;
	}
	if (err) {
		pthread_mutex_destroy(&v->lock);
		free(v);
		return err;
	}
	map->priv = v;
	return 0;
}

/* An entry's reference goes. */
static void drop(struct brt_map *inner)
{
	brt_obj_named(&inner->obj, -1);
	brt_map_put(inner);
}

static void mim_detach(struct brt_map *map)
{
	struct mim_view *v = map->priv;
	struct brt_map b;

	if (!v)
		return;
	for (uint32_t i = 0; i < v->n; i++)
		drop(v->refs[i].map);
	free(v->refs);
	b = as_base(map);
	if (v->base->detach)
		v->base->detach(&b);
	pthread_mutex_destroy(&v->lock);
	free(v);
	map->priv = NULL;
}

/* Drop this process's reference for one entry holding id (if it set it). */
static void forget(struct mim_view *v, uint32_t id)
{
	for (uint32_t i = 0; i < v->n; i++) {
		if (v->refs[i].id == id) {
			drop(v->refs[i].map);
			v->refs[i] = v->refs[--v->n];
			return;
		}
	}
}

/* Room for one more reference (under v->lock): 0 or -ENOMEM. */
static int reserve(struct mim_view *v)
{
	struct mim_ref *refs;
	uint32_t cap;

	if (v->n < v->cap)
		return 0;
	cap = v->cap ? v->cap * 2 : 8;
	refs = realloc(v->refs, cap * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	v->refs = refs;
	v->cap = cap;
	return 0;
}

static struct brt_map *held(const struct mim_view *v, uint32_t id)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (v->refs[i].id == id)
			return v->refs[i].map;
	return NULL;
}

static int64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* An entry another process stored: the inner map its links name (mim_links.c), if it
 * is the map with that id and of the template's shape, taken as this process's own
 * reference from then on (dropped as a stored one is).  An id that cannot be followed
 * is not tried again within a clock tick: a program looking up such a slot in a loop
 * costs no system calls. */
static struct brt_map *follow(struct brt_map *map, struct mim_view *v, uint32_t id)
{
	struct brt_map *inner = NULL, *found;
	int64_t now = coarse_ns();
	int fd;

	pthread_mutex_lock(&v->lock);
	for (unsigned i = 0; i < 4; i++)
		if (v->miss[i].id == id && now - v->miss[i].at < 4000000) {
			pthread_mutex_unlock(&v->lock);
			return NULL;
		}
	pthread_mutex_unlock(&v->lock);
	fd = brt_mim_open_linked(map, id);
	/* a number of our own: what a batch's memo knew under it is some closed fd's, and
	 * it must not know this one once it is closed */
	if (fd >= 0)
		brt_obj_batch_forget(fd);
	if (fd >= 0 && brt_map_from_fd(fd, &inner))
		inner = NULL;
	if (fd >= 0) {
		brt_obj_batch_forget(fd);
		close(fd);
	}
	if (inner && (inner->obj.snap.id != id || !meta_equal(&v->tmpl, inner))) {
		brt_map_put(inner);
		inner = NULL;
	}
	pthread_mutex_lock(&v->lock);
	found = held(v, id); /* followed by another thread meanwhile */
	if (!found && inner && !reserve(v)) {
		brt_obj_named(&inner->obj, 1);
		v->refs[v->n++] = (struct mim_ref){ id, inner };
		found = inner;
		inner = NULL;
	} else if (!found) {
		v->miss[v->next_miss % 4].id = id;
		v->miss[v->next_miss++ % 4].at = now;
	}
	pthread_mutex_unlock(&v->lock);
	if (inner)
		brt_map_put(inner);
	return found;
}

static void *mim_lookup(struct brt_map *map, const void *key)
{
	struct mim_view *v = map->priv;
	struct brt_map b = as_base(map), *found;
	const uint32_t *idp = v->base->lookup(&b, key);
	uint32_t id;

	if (!idp)
		return NULL;
	brt_shm_read(&id, idp, sizeof(id));
	if (!id)
		return NULL;
	pthread_mutex_lock(&v->lock);
	found = held(v, id);
	pthread_mutex_unlock(&v->lock);
	return found ? found : follow(map, v, id);
}

static int mim_copy_value(struct brt_map *map, const void *key, void *value)
{
	struct brt_map b = as_base(map);
	int err = ((struct mim_view *)map->priv)->base->copy_value(&b, key, value);
	uint32_t id;

	if (err)
		return err;
	memcpy(&id, value, 4);
	return id ? 0 : -ENOENT; /* an empty array slot */
}

/* Does a slot of outer hold inner_id (read through this process's mapping; 1 also when the
 * storage could not be read whole, so a link stays)?  brt_mim_unlink()'s question. */
static int stores(struct brt_map *outer, uint32_t inner_id)
{
	const struct mim_view *v = outer->priv;
	struct brt_map b = as_base(outer);
	unsigned char *key, *next;
	uint64_t steps = 0;
	uint32_t id;
	int err, found = 1;

	if (!is_map_in_map(outer->type) || !v)
		return 1;
	key = malloc(outer->key_size);
	next = malloc(outer->key_size);
	if (key && next) {
		/* a walk that another process's changes keep from ending (a hash walk starts
		 * over from a key deleted under it) answers "stored": the link stays */
		found = 0;
		for (err = v->base->get_next_key(&b, NULL, next); !err && !found;
		     err = v->base->get_next_key(&b, key, next)) {
			if (++steps > (uint64_t)outer->max_entries) {
				found = 1;
				break;
			}
			memcpy(key, next, outer->key_size);
			found = !v->base->copy_value(&b, key, &id) && id == inner_id;
		}
		if (err && err != -ENOENT)
			found = 1;
	}
	free(key);
	free(next);
	return found;
}

static int mim_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	struct mim_view *v = map->priv;
	struct brt_map b = as_base(map), *inner, *stored = NULL;
	uint32_t id, old = 0;
	int32_t fd;
	int err;

	if (map->type == BPF_MAP_TYPE_ARRAY_OF_MAPS && flags != BPF_ANY)
		return -EINVAL;
	memcpy(&fd, value, 4);
	err = brt_map_from_fd(fd, &inner);
	if (err)
		return err;
	/* this process's programs may write it through the outer map */
	err = brt_obj_writable(&inner->obj, "an inner map stored in a map of maps");
	if (err) {
		brt_map_put(inner);
		return err;
	}
	if (!meta_equal(&v->tmpl, inner)) {
		brt_map_put(inner);
		return -EINVAL;
	}
	id = inner->obj.snap.id;
	pthread_mutex_lock(&v->lock);
	err = reserve(v);
	if (err)
		goto out;
	if (v->base->copy_value(&b, key, &old))
		old = 0;
	err = v->base->update(&b, key, &id, flags);
	if (err)
		goto out;
	if (old)
		forget(v, old);
	brt_obj_named(&inner->obj, 1);
	v->refs[v->n++] = (struct mim_ref){ id, inner };
	stored = inner;
	brt_map_get(stored);
	inner = NULL;
out:
	pthread_mutex_unlock(&v->lock);
	if (inner)
		brt_map_put(inner);
	if (stored) {
		/* an outer map with a name outlives this process: so must the entry */
		(void)brt_mim_link(map, &stored, 1);
		brt_map_put(stored);
		/* and the entry it replaced goes (mim_links.c) */
		if (old && old != id)
			brt_mim_unlink(map, old, stores);
	}
	return err;
}

static int mim_delete(struct brt_map *map, const void *key)
{
	struct mim_view *v = map->priv;
	struct brt_map b = as_base(map);
	uint32_t old = 0, zero = 0;
	int err;

	pthread_mutex_lock(&v->lock);
	err = v->base->copy_value(&b, key, &old);
	if (!err && map->type == BPF_MAP_TYPE_ARRAY_OF_MAPS)
		err = old ? v->base->update(&b, key, &zero, BPF_ANY) : -ENOENT;
	else if (!err)
		err = v->base->delete(&b, key);
	else if (err == -ENOENT && map->type == BPF_MAP_TYPE_ARRAY_OF_MAPS)
		err = -E2BIG; /* index past max_entries */
	if (!err && old)
		forget(v, old);
	pthread_mutex_unlock(&v->lock);
	if (!err && old)
		brt_mim_unlink(map, old, stores);
	return err;
}


static int mim_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	struct brt_map b = as_base(map);

	return ((struct mim_view *)map->priv)->base->get_next_key(&b, key, next_key);
}

int brt_map_in_map_holds(struct brt_map *outer, const struct brt_map *inner)
{
	struct mim_view *v = outer->priv;
	int yes = 0;

	if (!is_map_in_map(outer->type) || !v)
		return 0;
	pthread_mutex_lock(&v->lock);
	for (uint32_t i = 0; i < v->n && !yes; i++)
		yes = v->refs[i].map == inner;
	pthread_mutex_unlock(&v->lock);
	return yes;
}

void brt_map_in_map_named(struct brt_map *outer)
{
	struct mim_view *v = outer->priv;
	struct brt_map **inner;
	uint32_t n = 0;

	if (!is_map_in_map(outer->type) || !v)
		return;
	pthread_mutex_lock(&v->lock);
	inner = malloc((v->n ? v->n : 1) * sizeof(*inner));
	for (uint32_t i = 0; inner && i < v->n; i++) {
		inner[n] = v->refs[i].map;
		brt_map_get(inner[n++]);
	}
	pthread_mutex_unlock(&v->lock);
	if (!inner)
		return;
	(void)brt_mim_link(outer, inner, n);
	for (uint32_t i = 0; i < n; i++)
		brt_map_put(inner[i]);
	free(inner);
}

int brt_map_in_map_template(const struct brt_map *outer, uint32_t *type, uint32_t *key_size,
			    uint32_t *value_size, uint32_t *max_entries, uint32_t *flags)
{
	const struct mim_view *v = outer->priv;
	const struct mim_tmpl *t;

	if (!is_map_in_map(outer->type) || !v)
		return -EINVAL;
	t = &v->tmpl;
	*type = t->type;
	*key_size = t->key_size;
	*value_size = t->value_size;
	*max_entries = t->max_entries;
	*flags = t->flags;
	return 0;
}

int brt_map_in_map_template_fields(const struct brt_map *outer, struct brt_mim_fields *f)
{
	const struct mim_view *v = outer->priv;

	memset(f, 0, sizeof(*f));
	if (!is_map_in_map(outer->type) || !v)
		return -EINVAL;
	f->lock_off1 = v->tmpl.lock_res ? 0 : v->tmpl.lock_off1;
	f->res_lock_off1 = v->tmpl.lock_res ? v->tmpl.lock_off1 : 0;
	f->timer_off1 = v->tmpl.timer_off1;
	f->has_btf = v->tmpl.has_btf;
	return 0;
}

/* file_values (maps.h): the storage's, the template after it never read */
static int mim_file_values(const struct brt_map *m, int fd, uint32_t off, uint32_t len,
			   void (*fn)(void *arg, const void *bytes), void *arg)
{
	struct brt_map b = *m;
	const struct brt_map_ops *base = base_ops(m->type);

	b.type = m->type == BPF_MAP_TYPE_ARRAY_OF_MAPS ? BPF_MAP_TYPE_ARRAY : BPF_MAP_TYPE_HASH;
	b.ops = base;
	b.priv = NULL;
	return base->file_values(&b, fd, off, len, fn, arg);
}

const struct brt_map_ops brt_map_in_map_ops = {
	.btf = BRT_MAP_BTF_NONE,
	.file_values = mim_file_values,
	.alloc_check = mim_alloc_check,
	.data_size = mim_data_size,
	.init = mim_init,
	.attach = mim_attach,
	.detach = mim_detach,
	.lookup = mim_lookup,
	.copy_value = mim_copy_value,
	.update = mim_update,
	.delete = mim_delete,
	.get_next_key = mim_get_next_key,
};
