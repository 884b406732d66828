/* sd_writer.c — writes an object graph (FORMAT.md). Iterative: records are numbered in the
 * order they are found, and that order is also the work queue, so a list of a million nodes
 * needs no recursion. An identity map gives shared references and cycles one record.
 *
 * It runs GC-unsafe and allocates no managed memory, so the graph stays where it is — except
 * that building the plan of a class met for the first time calls into Mono, which may wait
 * for a lock in a GC-safe state and let a collection move objects. The collection epoch is
 * therefore checked after every plan lookup: if a collection began, no address taken before
 * is used again and the write starts over (the plans built so far stay cached).
 *
 * A long write would also hold up another thread's collection, which waits for this thread:
 * every few thousand records (references of one array, MiB of one array's data) the write
 * checks whether one was requested. If every object it recorded is old and old objects never
 * move in this process (the host's evacuation-threshold=0), it lets the collection run and goes
 * on; otherwise it drops its work, lets the collection run and starts over — with the graph
 * promoted, the next attempt usually goes on — except on its last attempt, which finishes
 * without giving way. */
#include "serializer.h"

#include "class_plan.h"
#include "error_record.h"
#include "gc_hooks.h"
#include "layout.h"
#include "ptr_map.h"
#include "sd_threads.h"
#include "sd_wire.h"

#include <endian.h>
#include <mono/metadata/appdomain.h>
#include <mono/metadata/mono-gc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An entry of the identity map (object -> record index, open addressing): the index + 1 (0:
 * empty) and 32 bits of the object's address, so that a probe reads the record table only when
 * those bits match (a new object, the common case, is placed after one cache line or two). */
typedef struct map_entry {
    uint32_t index1, key;
} map_entry;

/* The objects a write has seen, until one is met twice: a bit per 8 bytes of address (objects
 * are 8-byte aligned and at least 16 bytes long), a 64-byte block of bits per 4 KiB page, the
 * pages found through a small hash table (and the last page looked up). */
typedef struct seen_page {
    uintptr_t page1; /* page number + 1, 0 = empty */
    uint32_t bits;   /* its block */
} seen_page;
typedef struct seen_bits {
    uint64_t w[8];
} seen_bits;
#define SEEN_PAGE_SHIFT 12

typedef struct graph {
    MonoObject **objs;
    const rt_class_plan **plans;
    uint32_t *type_of; /* record -> type index, numbered as records are found */
    uint32_t count, cap;
    map_entry *map; /* built at the first object met twice (mapped): see record_of */
    size_t mask;
    int mapped;
    seen_page *pages; /* the pages of the objects seen so far, and a bit per 8 bytes of each */
    size_t page_mask, npages;
    seen_bits *bits;
    size_t cap_bits;
    uintptr_t last_page1; /* the last page looked up + 1, and its bits */
    uint32_t last_bits;
    const rt_class_plan **types;
    uint32_t ntypes, cap_types, last_type;
    size_t record_bytes;         /* the records' bytes in the message, summed as they are walked */
    int kept;                    /* the arrays are the thread's kept ones (take_kept) */
    size_t win_first, win_count; /* the window of the root array written (a split piece) */
    int windowed;
    int32_t *refs; /* every reference as a record index, in visiting order */
    size_t nrefs, cap_refs, next_ref;
    uint64_t epoch;    /* collections begun when this attempt started */
    int moved;         /* a collection began: every address is suspect */
    int immovable;     /* every object recorded is old or pinned below, and old
                        * objects never move here: a collection changes no address
                        * the write holds */
    uint32_t pins[16]; /* GC handles pinning the few young objects of such a write */
    uint32_t npins;
    int yield_to_gc;  /* give way to a requested collection (all but the last try) */
    size_t *sizes;    /* record -> elements of a collection, counted when found */
    uint8_t *scratch; /* one collection element gathered from its entry */
    size_t scratch_size;
    uint8_t **retired; /* smaller scratch blocks, which a running iteration may still
                          use: freed when the write ends */
    size_t nretired;
    const rt_class_plan **closure; /* the types a receiver of the root's class allows (built
                                      when an object sits in a slot of another type) */
    uint32_t nclosure, cap_closure;
    size_t *placed; /* log positions of references to unmarked objects in slots of another type,
                       judged once the walk is over (misplaced_refused) */
    size_t nplaced, cap_placed;
    int out_of_memory; /* admissible() failed for want of memory */
} graph;

/* The element range of record i that is written: the whole array, the root's window, or a
 * collection's elements. */
static inline void element_range(const graph *g, uint32_t i, size_t *first, size_t *n)
{
    if (g->plans[i]->shape == RT_COLLECTION) {
        *first = 0;
        *n = g->sizes[i];
    } else if (i == 0 && g->windowed) {
        *first = g->win_first;
        *n = g->win_count;
    } else {
        *first = 0;
        *n = rt_array_length(g->objs[i]);
    }
}

/* Every this many records (or references of one array, or bytes of one array's data), a write
 * checks whether a collection is waiting for it: a bounded wait for the collector. */
#define RECORDS_PER_GC_CHECK 4096
#define BYTES_PER_GC_CHECK (1u << 20)

/* Do old objects move in this process (major collections that evacuate)? Until told, yes. */
static atomic_int old_generation_moves = 1;

void sd_set_old_generation_moves(int moves) { atomic_store(&old_generation_moves, moves != 0); }

/* Has a collection begun since this attempt started? If every object recorded is old and old
 * objects never move, the write lets it run and goes on: no address it holds can change, and
 * the objects stay reachable from the root. Otherwise every address is suspect (g->moved): the
 * attempt stops and the write starts over once the collection has run — the nursery objects
 * are old then, so the next attempt usually goes on through collections. */
static int collection_begun(graph *g)
{
    if (g->moved || gch_epoch() == g->epoch)
        return g->moved;
    if (g->immovable) {
        gch_yield_to_gc();
        g->epoch = gch_epoch();
        return 0;
    }
    if (g->yield_to_gc)
        g->moved = 1;
    return g->moved;
}

static int collection_waiting(graph *g, uint32_t i)
{
    return i % RECORDS_PER_GC_CHECK == 0 ? collection_begun(g) : g->moved;
}

static size_t hash(const void *p) { return ((uintptr_t)p >> 3) * 0x9E3779B97F4A7C15ull; }
static uint32_t map_key(const void *p) { return (uint32_t)((uintptr_t)p >> 3); }

static int grow_map(graph *g)
{
    size_t cap = g->mask ? (g->mask + 1) * 2 : 1024;
    while (cap < 2 * ((size_t)g->count + 1))
        cap *= 2;
    map_entry *m = calloc(cap, sizeof *m);
    if (!m)
        return -1;
    for (uint32_t i = 0; i < g->count; i++) {
        size_t h = hash(g->objs[i]) & (cap - 1);
        while (m[h].index1)
            h = (h + 1) & (cap - 1);
        m[h] = (map_entry){i + 1, map_key(g->objs[i])};
    }
    free(g->map);
    g->map = m;
    g->mask = cap - 1;
    return 0;
}

/* The identity map of every record so far: into the (zeroed) kept map when it has room. */
static int build_map(graph *g)
{
    if (!g->map || 2 * ((size_t)g->count + 1) > g->mask + 1)
        return grow_map(g);
    for (uint32_t i = 0; i < g->count; i++) {
        size_t h = hash(g->objs[i]) & g->mask;
        while (g->map[h].index1)
            h = (h + 1) & g->mask;
        g->map[h] = (map_entry){i + 1, map_key(g->objs[i])};
    }
    return 0;
}

/* The type index of plan p in this message, numbered when first met (a message has few types:
 * the last one found, then a scan). -1 when out of memory. */
static int type_index_of(graph *g, const rt_class_plan *p, uint32_t *index)
{
    if (g->last_type < g->ntypes && g->types[g->last_type] == p) {
        *index = g->last_type;
        return 0;
    }
    for (uint32_t t = 0; t < g->ntypes; t++)
        if (g->types[t] == p) {
            *index = g->last_type = t;
            return 0;
        }
    if (g->ntypes == g->cap_types) {
        g->cap_types = g->cap_types ? 2 * g->cap_types : 16;
        const rt_class_plan **t = realloc(g->types, g->cap_types * sizeof *t);
        if (!t)
            return -1;
        g->types = t;
    }
    g->types[g->ntypes] = p;
    *index = g->last_type = g->ntypes++;
    return 0;
}

/* The block of seen-bits of page (an address >> SEEN_PAGE_SHIFT), added zeroed when new; NULL
 * when out of memory. */
static seen_bits *page_bits(graph *g, uintptr_t page)
{
    if (g->last_page1 == page + 1)
        return &g->bits[g->last_bits];
    if ((g->npages + 1) * 2 > g->page_mask + 1) {
        size_t cap = g->page_mask ? 2 * (g->page_mask + 1) : 64;
        seen_page *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t k = 0; k <= g->page_mask && g->pages; k++)
            if (g->pages[k].page1) {
                size_t h = hash((void *)(g->pages[k].page1 - 1)) & (cap - 1);
                while (t[h].page1)
                    h = (h + 1) & (cap - 1);
                t[h] = g->pages[k];
            }
        free(g->pages);
        g->pages = t;
        g->page_mask = cap - 1;
    }
    size_t h = hash((void *)page) & g->page_mask;
    for (; g->pages[h].page1; h = (h + 1) & g->page_mask)
        if (g->pages[h].page1 == page + 1)
            goto found;
    if (g->npages == g->cap_bits) {
        size_t cap = g->cap_bits ? 2 * g->cap_bits : 64;
        seen_bits *b = realloc(g->bits, cap * sizeof *b);
        if (!b)
            return NULL;
        memset(b + g->cap_bits, 0, (cap - g->cap_bits) * sizeof *b); /* (kept zeroed) */
        g->bits = b;
        g->cap_bits = cap;
    }
    g->pages[h] = (seen_page){page + 1, (uint32_t)g->npages++};
found:
    g->last_page1 = page + 1;
    g->last_bits = g->pages[h].bits;
    return &g->bits[g->last_bits];
}

/* Is o met for the first time in this write? Until an object is met twice, a bit per address
 * answers (a list or a tree, most graphs, never needs more); at the first object met twice, the
 * identity map is built from the records so far and answers from then on. 1: new, 0: seen (the
 * map is built), -1: out of memory. */
static int first_sight(graph *g, MonoObject *o)
{
    seen_bits *b = page_bits(g, (uintptr_t)o >> SEEN_PAGE_SHIFT);
    if (!b)
        return -1;
    unsigned bit = ((uintptr_t)o & ((1u << SEEN_PAGE_SHIFT) - 1)) >> 3;
    uint64_t mask = (uint64_t)1 << (bit & 63);
    if (!(b->w[bit >> 6] & mask)) {
        b->w[bit >> 6] |= mask;
        return 1;
    }
    if (build_map(g))
        return -1;
    g->mapped = 1;
    return 0;
}

/* The record index of o, adding it (and its plan) when new. -1 when out of memory or when a
 * collection began while the plan was built (g->moved). */
static int64_t record_of(graph *g, MonoObject *o)
{
    size_t h = 0;
    uint32_t key = map_key(o);
    int sight = g->mapped ? 0 : first_sight(g, o);
    if (sight < 0)
        return -1;
    if (!sight) {
        if ((g->count + 1) * 2 > g->mask + 1 && grow_map(g))
            return -1;
        for (h = hash(o) & g->mask; g->map[h].index1; h = (h + 1) & g->mask)
            if (g->map[h].key == key && g->objs[g->map[h].index1 - 1] == o)
                return g->map[h].index1 - 1;
    }
    if (g->count == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 256;
        MonoObject **objs = realloc(g->objs, g->cap * sizeof *objs);
        const rt_class_plan **plans = realloc(g->plans, g->cap * sizeof *plans);
        size_t *sizes = realloc(g->sizes, g->cap * sizeof *sizes);
        uint32_t *type_of = realloc(g->type_of, g->cap * sizeof *type_of);
        if (objs)
            g->objs = objs;
        if (plans)
            g->plans = plans;
        if (sizes)
            g->sizes = sizes;
        if (type_of)
            g->type_of = type_of;
        if (!objs || !plans || !sizes || !type_of)
            return -1;
    }
    /* A nursery object moves at the next collection: a few of them (often kept in the nursery
     * by stale stack words) are pinned, more make the write start over when one comes. Not the
     * root: an internal call's argument does not move during the call (MONO-FACTS), which
     * starting over relies on as well. */
    if (g->immovable && g->count > 0 && mono_gc_get_generation(o) == 0) {
        uint32_t pin = g->npins < sizeof g->pins / sizeof g->pins[0] ? mono_gchandle_new(o, 1) : 0;
        if (!pin)
            g->immovable = 0;
        else
            g->pins[g->npins++] = pin;
        /* mono_gchandle_new makes no GC transition from a GC-unsafe thread (OPI pins the same
         * way), so o cannot have moved before the pin held; should a collection be under way
         * anyway, an attempt that may start over does so rather than trust that */
        if (pin && gch_epoch() != g->epoch && g->yield_to_gc) {
            g->moved = 1;
            return -1;
        }
    }
    int built = 0;
    const rt_class_plan *p = rt_plan_of(o, &built);
    if (built && gch_epoch() != g->epoch) {
        if (!g->immovable) { /* o itself may have moved while the plan was built */
            g->moved = 1;
            return -1;
        }
        g->epoch = gch_epoch();
    }
    if (!p)
        return -1;
    /* a collection's store is not a record: young, it could move under a write that lets
     * collections run, so such a write starts over instead */
    if (g->immovable && p->shape == RT_COLLECTION) {
        MonoObject *store =
            *(MonoObject **)((uint8_t *)o + sizeof(MonoObject) + p->collection->store);
        if (store && mono_gc_get_generation(store) == 0)
            g->immovable = 0;
    }
    if (type_index_of(g, p, &g->type_of[g->count]))
        return -1;
    g->objs[g->count] = o;
    g->plans[g->count] = p;
    g->sizes[g->count] = 0;
    if (g->mapped)
        g->map[h] = (map_entry){g->count + 1, key};
    return g->count++;
}

/* The type name of a plan, without the ", image" of its wire name. */
static int short_len(const rt_class_plan *p)
{
    for (uint32_t i = p->qualified_name_len; i-- > 1;)
        if (p->qualified_name[i - 1] == ',' && p->qualified_name[i] == ' ')
            return (int)(i - 1);
    return (int)p->qualified_name_len;
}

/* How many references record i logs (visit_refs visits them in this order). */
static size_t refs_logged(const graph *g, uint32_t i)
{
    const rt_class_plan *p = g->plans[i];
    if (p->shape == RT_OBJECT)
        return p->nslots;
    if ((p->shape != RT_ARRAY && p->shape != RT_COLLECTION) || !p->nslots)
        return 0;
    size_t first, n;
    element_range(g, i, &first, &n);
    return n * p->nslots;
}

/* Appends the label of reference k of record i: ".Name", "[e]" or "[e].Name". */
static void step_label(const graph *g, uint32_t i, size_t k, char *out, size_t cap)
{
    const rt_class_plan *p = g->plans[i];
    size_t len = strlen(out);
    if (p->shape == RT_OBJECT) {
        snprintf(out + len, cap - len, ".%s", p->slots[k].name);
        return;
    }
    size_t first, n;
    element_range(g, i, &first, &n);
    const char *name = p->slots[k % p->nslots].name;
    snprintf(out + len, cap - len, "[%zu]%s%s", first + k / p->nslots, *name ? "." : "", name);
}

/* How record r is reached from the root ("root.Items[3].Next"), rebuilt from the reference log:
 * a record is discovered where it first appears there. Only for error messages: it reads plans
 * and the log, never an object. A long chain keeps its first and last links. */
static void path_to(const graph *g, uint32_t r, char *out, size_t cap)
{
    snprintf(out, cap, "root");
    if (r == 0)
        return;
    uint32_t *parent = malloc(g->count * sizeof *parent);
    size_t *via = malloc(g->count * sizeof *via);
    uint32_t *chain = malloc(g->count * sizeof *chain);
    if (!parent || !via || !chain) {
        snprintf(out, cap, "(a record the path of which could not be traced: out of memory)");
        goto done;
    }
    memset(parent, 0xff, g->count * sizeof *parent);
    size_t pos = 0;
    for (uint32_t i = 0; i < g->count && pos < g->nrefs && parent[r] == UINT32_MAX; i++) {
        size_t n = refs_logged(g, i);
        for (size_t k = 0; k < n && pos < g->nrefs; k++, pos++) {
            int32_t v = g->refs[pos];
            if (v > 0 && parent[v] == UINT32_MAX) {
                parent[v] = i;
                via[v] = k;
            }
        }
    }
    if (parent[r] == UINT32_MAX)
        goto done;
    size_t depth = 0;
    for (uint32_t at = r; at != 0; at = parent[at])
        chain[depth++] = at; /* r first, the root's child last */
    enum { HEAD = 6, TAIL = 8 };
    for (size_t d = depth; d-- > 0;) {
        size_t from_root = depth - 1 - d;
        if (depth > HEAD + TAIL && from_root == HEAD) {
            size_t len = strlen(out);
            snprintf(out + len, cap - len, "(+%zu links)", depth - HEAD - TAIL);
        }
        if (depth > HEAD + TAIL && from_root >= HEAD && d >= TAIL)
            continue;
        step_label(g, parent[chain[d]], via[chain[d]], out, cap);
    }
done:
    free(parent);
    free(via);
    free(chain);
}

/* ---- the elements of an array or a collection, one at a time ---- */

static int32_t int_field(MonoObject *o, uint32_t offset)
{
    return *(int32_t *)((uint8_t *)o + sizeof(MonoObject) + offset);
}

static MonoObject *ref_field(MonoObject *o, uint32_t offset)
{
    return *(MonoObject **)((uint8_t *)o + sizeof(MonoObject) + offset);
}

/* A collection's elements, its store and the store's entries in use; -1 when its fields
 * disagree (another thread changes it while it is written). */
static int collection_state(MonoObject *o, const rt_class_plan *p, size_t *n, MonoObject **store,
                            size_t *used)
{
    const rt_collection *c = p->collection;
    int64_t live = (int64_t)int_field(o, c->live) - (c->freed >= 0 ? int_field(o, c->freed) : 0);
    int64_t in_use = int_field(o, c->used);
    *store = ref_field(o, c->store);
    size_t capacity = *store ? rt_array_length(*store) : 0;
    if (live < 0 || in_use < live || (uint64_t)in_use > capacity ||
        (c->head >= 0 &&
         (int_field(o, c->head) < 0 || (capacity && (size_t)int_field(o, c->head) >= capacity))))
        return -1;
    *n = (size_t)live;
    *used = (size_t)in_use;
    return 0;
}

/* The elements record i writes, in order: an array's in place; a collection's from its store's
 * entries in use, in place when the store is an E[], else gathered into the graph's scratch. */
typedef struct elements {
    const rt_class_plan *p;
    uint8_t *data; /* the first element (arrays), or the store's first entry */
    size_t n, at;  /* elements to give, given */
    size_t entry, entries, capacity, head; /* collections: next entry, entries in use, store length,
                                              the Queue's first entry */
    uint8_t *scratch;
    int changed; /* the collection no longer holds the elements counted */
} elements;

static void elements_begin(graph *g, uint32_t i, elements *it)
{
    const rt_class_plan *p = g->plans[i];
    MonoObject *o = g->objs[i];
    size_t first;
    *it = (elements){.p = p, .scratch = g->scratch};
    element_range(g, i, &first, &it->n);
    if (p->shape != RT_COLLECTION) {
        it->data = rt_array_data(o) + first * p->data_size;
        return;
    }
    MonoObject *store;
    size_t n;
    if (collection_state(o, p, &n, &store, &it->entries) || n != it->n) {
        it->changed = 1;
        it->n = 0;
        return;
    }
    it->data = store ? rt_array_data(store) : NULL;
    it->capacity = store ? rt_array_length(store) : 0;
    it->head = p->collection->head >= 0 ? (size_t)int_field(o, (uint32_t)p->collection->head) : 0;
}

/* The next element's data (E's layout), or NULL after the last (it->changed: too few found). */
static const uint8_t *elements_next(elements *it)
{
    const rt_class_plan *p = it->p;
    if (it->at == it->n)
        return NULL;
    if (p->shape != RT_COLLECTION)
        return it->data + it->at++ * p->data_size;
    const rt_collection *c = p->collection;
    const uint8_t *entry;
    if (c->hash_code < 0) { /* List, Stack: entries 0.., Queue: from its head, wrapping */
        size_t e = it->head + it->at;
        entry = it->data + (e >= it->capacity ? e - it->capacity : e) * c->stride;
    } else { /* HashSet, Dictionary: the entries in use that are not free */
        for (;; it->entry++) {
            if (it->entry >= it->entries) {
                it->changed = 1;
                return NULL;
            }
            entry = it->data + it->entry * c->stride;
            if (*(const int32_t *)(entry + c->hash_code) >= 0)
                break;
        }
        it->entry++;
    }
    it->at++;
    if (c->nparts == 1 && !c->parts[0].to && !c->parts[0].from)
        return entry;
    memset(it->scratch, 0, p->data_size);
    for (uint32_t k = 0; k < c->nparts; k++)
        memcpy(it->scratch + c->parts[k].to, entry + c->parts[k].from, c->parts[k].length);
    return it->scratch;
}

/* Records that a collection changed while it was written (SD_ERR_GRAPH). */
static int collection_changed(const graph *g, uint32_t i)
{
    const rt_class_plan *p = g->plans[i];
    return error_record(
        SD_ERR_GRAPH, NULL,
        "the %.*s changed while it was being written (another thread modified it): nothing "
        "was sent",
        (int)p->qualified_name_len, p->qualified_name);
}

/* The first framework-private reference slot of record i that holds a reference (it could not
 * travel: it would arrive null): its element index (arrays) and slot. 0 when there is none. */
static int hidden_value(const graph *g, uint32_t i, size_t *elem, const rt_hidden_slot **h)
{
    const rt_class_plan *p = g->plans[i];
    if (!p->nhidden || p->shape == RT_STRING)
        return 0;
    if (p->shape == RT_OBJECT) {
        uint8_t *data = (uint8_t *)g->objs[i] + sizeof(MonoObject);
        for (uint32_t k = 0; k < p->nhidden; k++)
            if (*(MonoObject **)(data + p->hidden[k].offset)) {
                *elem = 0;
                *h = &p->hidden[k];
                return 1;
            }
        return 0;
    }
    elements it;
    size_t first, n;
    element_range(g, i, &first, &n);
    elements_begin((graph *)g, i, &it);
    for (const uint8_t *data; (data = elements_next(&it));)
        for (uint32_t k = 0; k < p->nhidden; k++)
            if (*(MonoObject *const *)(data + p->hidden[k].offset)) {
                *elem = first + it.at - 1;
                *h = &p->hidden[k];
                return 1;
            }
    return 0;
}

/* Is a comparer of this class its element type's default (the corlib's Generic-, Object-,
 * Enum-, Nullable-...EqualityComparer`1, ByteEqualityComparer)? A collection with another would
 * be rebuilt unlike the original by the receiver, which uses the default. Judged once per class
 * with Mono calls, which are safepoints when a collection is pending: hence the cache. */
/* comparer class -> DEFAULT_COMPARER or CUSTOM_COMPARER */
static ptr_map comparer_verdicts = PTR_MAP_INIT;
static char default_comparer_mark, custom_comparer_mark;
#define DEFAULT_COMPARER ((void *)&default_comparer_mark)
#define CUSTOM_COMPARER ((void *)&custom_comparer_mark)

static void *judge_comparer(const void *key, void *ctx)
{
    (void)ctx;
    MonoClass *k = (MonoClass *)key;
    const char *name = mono_class_get_name(k), *ns = mono_class_get_namespace(k);
    static const char suffix[] = "EqualityComparer`1";
    size_t len = strlen(name), n = sizeof suffix - 1;
    int defaults =
        mono_class_get_image(k) == mono_get_corlib() && !strcmp(ns, "System.Collections.Generic") &&
        ((len > n && !strcmp(name + len - n, suffix)) || !strcmp(name, "ByteEqualityComparer"));
    return defaults ? DEFAULT_COMPARER : CUSTOM_COMPARER;
}

/* The class of collection o's comparer when it is not the default, else NULL. On a first
 * verdict for a class (Mono calls), a collection may have run: then g->moved is set, as after a
 * plan build, and the caller gives up. */
static MonoClass *custom_comparer(graph *g, MonoObject *o, const rt_collection *c)
{
    MonoObject *comparer = c->comparer >= 0 ? ref_field(o, (uint32_t)c->comparer) : NULL;
    if (!comparer)
        return NULL;
    MonoClass *k = rt_vtable_class(comparer->vtable);
    void *verdict = ptr_map_get(&comparer_verdicts, k);
    if (!verdict) {
        verdict = ptr_map_get_or_build(&comparer_verdicts, k, judge_comparer, NULL);
        if (gch_epoch() != g->epoch) {
            if (!g->immovable) {
                g->moved = 1;
                return NULL;
            }
            g->epoch = gch_epoch();
        }
    }
    return verdict == CUSTOM_COMPARER ? k : NULL;
}

/* Counts the elements of collection record r, just discovered, and checks that it can travel. */
static int admit_collection(graph *g, uint32_t r)
{
    const rt_class_plan *p = g->plans[r];
    MonoObject *o = g->objs[r], *store;
    size_t used;
    char path[200];
    MonoClass *comparer = custom_comparer(g, o, p->collection);
    if (g->moved)
        return SD_ERR_GRAPH; /* (not recorded: the write starts over) */
    if (comparer) {
        path_to(g, r, path, sizeof path);
        return error_record(
            SD_ERR_GRAPH, NULL,
            "%s (%.*s): its comparer %s is not the default one, and the receiver rebuilds the "
            "collection with the default comparer (its contents could differ): copy it into a "
            "collection with the default comparer, or send its contents as arrays",
            path, short_len(p), p->qualified_name, mono_class_get_name(comparer));
    }
    if (collection_state(o, p, &g->sizes[r], &store, &used))
        return collection_changed(g, r);
    if (p->data_size >
        g->scratch_size) { /* (a parent collection's iteration may hold the old one) */
        uint8_t *s = malloc(p->data_size),
                **retired = realloc(g->retired, (g->nretired + 1) * sizeof *retired);
        if (retired)
            g->retired = retired;
        if (!s || !retired) {
            free(s);
            return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory writing a collection");
        }
        g->retired[g->nretired++] = g->scratch;
        g->scratch = s;
        g->scratch_size = p->data_size;
    }
    return MPC_OK;
}

/* Adds class k and, transitively, its slots' declared classes and its element class to the
 * closure (the reader's allow-list R of the root's class, bar the classes that travel as another
 * type, which may sit anywhere). -1 when out of memory or a collection began while a plan was
 * built (g->moved: the write starts over). */
static int close_over(graph *g, MonoClass *k)
{
    int built = 0;
    const rt_class_plan *p = rt_plan_known_for_class(k);
    if (!p) {
        built = 1;
        p = rt_plan_for_class(k);
    }
    if (built && gch_epoch() != g->epoch) {
        if (!g->immovable) {
            g->moved = 1;
            return -1;
        }
        g->epoch = gch_epoch();
    }
    if (!p)
        return -1;
    for (uint32_t i = 0; i < g->nclosure; i++)
        if (g->closure[i] == p)
            return 0;
    if (g->nclosure == g->cap_closure) {
        uint32_t cap = g->cap_closure ? 2 * g->cap_closure : 16;
        const rt_class_plan **c = realloc(g->closure, cap * sizeof *c);
        if (!c)
            return -1;
        g->closure = c;
        g->cap_closure = cap;
    }
    g->closure[g->nclosure++] = p;
    for (uint32_t s = 0; s < p->nslots; s++)
        if (close_over(g, p->slots[s].declared))
            return -1;
    return p->elem_class ? close_over(g, p->elem_class) : 0;
}

/* Notes the reference just logged, to an object of an unmarked class in a slot of another type:
 * judged once the walk is over. -1 when out of memory. */
static int note_placed(graph *g)
{
    if (g->nplaced == g->cap_placed) {
        size_t cap = g->cap_placed ? 2 * g->cap_placed : 16;
        size_t *p = realloc(g->placed, cap * sizeof *p);
        if (!p)
            return -1;
        g->placed = p;
        g->cap_placed = cap;
    }
    g->placed[g->nplaced++] = g->nrefs - 1;
    return 0;
}

/* Records why record r cannot sit at path, a slot declared as d: its class is neither d nor one
 * that travels as another type (rt_travels_as_base) nor one a receiver of the root's class
 * allows. */
static void misplaced(graph *g, uint32_t r, MonoClass *d, const char *path)
{
    const rt_class_plan *vp = g->plans[r];
    const rt_class_plan *dp = rt_plan_for_class(d); /* a Mono call: the write fails anyway */
    int dn = dp ? short_len(dp) : 1;
    const char *dname = dp ? dp->qualified_name : "?";
    if (vp->framework)
        error_record(SD_ERR_GRAPH, NULL,
                     "%s: an object of the framework type %.*s sits where %.*s is declared; "
                     "a framework type travels there only if it is a value (a primitive, "
                     "decimal, DateTime, TimeSpan, DateTimeOffset, Guid, string), an array "
                     "or a standard collection of such values, else only in a slot declared "
                     "as its own type",
                     path, short_len(vp), vp->qualified_name, dn, dname);
    else
        error_record(SD_ERR_GRAPH, NULL,
                     "%s: an object of type %.*s sits where %.*s is declared: mark %.*s "
                     "[Transportable] so that it may travel as a %.*s",
                     path, short_len(vp), vp->qualified_name, dn, dname, short_len(vp),
                     vp->qualified_name, dn, dname);
}

/* The declared class of the slot of the reference logged at pos. */
static MonoClass *declared_at(const graph *g, size_t pos)
{
    size_t at = 0;
    for (uint32_t i = 0; i < g->count; i++) {
        size_t n = refs_logged(g, i);
        if (pos < at + n) {
            const rt_class_plan *p = g->plans[i];
            return p->slots[(pos - at) % p->nslots].declared;
        }
        at += n;
    }
    return NULL;
}

/* The path of the reference logged at pos: its record's path and the slot or element. */
static void path_of_reference(const graph *g, size_t pos, char *out, size_t cap)
{
    size_t at = 0;
    for (uint32_t i = 0; i < g->count; i++) {
        size_t n = refs_logged(g, i);
        if (pos < at + n) {
            path_to(g, i, out, cap);
            step_label(g, i, pos - at, out, cap);
            return;
        }
        at += n;
    }
    snprintf(out, cap, "root");
}

/* May record r, just discovered, travel in a slot declared as d? Refused: objects that never
 * travel (denied) and objects with framework-private references, which would arrive incomplete
 * (Tuple of references...). An object of another class than d that is neither marked
 * [Transportable] nor a framework value (rt_travels_as_base) is noted, and judged once the walk
 * is over (misplaced_refused). 0 with the reason recorded (g->out_of_memory: for want of memory).
 */
static int admissible(graph *g, uint32_t r, MonoClass *d)
{
    const rt_class_plan *vp = g->plans[r];
    char path[200];
    size_t elem;
    const rt_hidden_slot *h;
    if (vp->denied) {
        path_to(g, r, path, sizeof path);
        error_record(SD_ERR_GRAPH, NULL, "%s: an object of type %.*s cannot be serialized: %s",
                     path, short_len(vp), vp->qualified_name, vp->denied);
        return 0;
    }
    /* (admit_collection counts its elements first) */
    if (vp->shape == RT_COLLECTION && admit_collection(g, r) != MPC_OK)
        return 0;
    if (hidden_value(g, r, &elem, &h)) {
        path_to(g, r, path, sizeof path);
        if (vp->shape == RT_ARRAY || vp->shape == RT_COLLECTION) {
            size_t len = strlen(path);
            snprintf(path + len, sizeof path - len, "[%zu]", elem);
        }
        error_record(
            SD_ERR_GRAPH, NULL,
            "%s (%.*s): field %s, private to framework type %s, holds a reference the "
            "structured transport cannot carry (it would arrive null); framework objects with "
            "such state (Tuple, ValueTuple, LinkedList, SortedDictionary... holding references) do "
            "not travel: send their contents as arrays or in a carried collection (List, "
            "Dictionary...), or leave the field null",
            path, short_len(vp), vp->qualified_name, h->name, h->owner);
        return 0;
    }
    if (vp->klass != d && !vp->in_base_slot) /* (the root is in no slot) */
        return !(g->out_of_memory = note_placed(g) != 0);
    return 1;
}

/* What admissible() would accept without looking further: a plan that may travel, with no
 * framework-private reference and nothing to count, in a slot of its own class or one it may
 * travel in. */
static inline int plainly_admissible(const rt_class_plan *p, MonoClass *declared)
{
    return !p->denied && !p->nhidden && p->shape != RT_COLLECTION &&
           (p->klass == declared || p->in_base_slot);
}

/* Each reference of record i (through slots, or elements). -1 when fn fails; -2 when a
 * collection changed under the write (recorded). */
typedef int (*ref_visitor)(graph *g, MonoObject *value, MonoClass *declared, void *ctx);

/* always inlined: fn is then a known function, called directly */
static inline __attribute__((always_inline)) int visit_refs(graph *g, uint32_t i, ref_visitor fn,
                                                            void *ctx)
{
    MonoObject *o = g->objs[i];
    const rt_class_plan *p = g->plans[i];
    if (p->shape == RT_OBJECT) {
        uint8_t *data = (uint8_t *)o + sizeof(MonoObject);
        for (uint32_t s = 0; s < p->nslots; s++)
            if (fn(g, *(MonoObject **)(data + p->slots[s].offset), p->slots[s].declared, ctx))
                return -1;
    } else if ((p->shape == RT_ARRAY || p->shape == RT_COLLECTION) && p->nslots) {
        elements it;
        elements_begin(g, i, &it);
        for (const uint8_t *data; (data = elements_next(&it));)
            for (uint32_t s = 0; s < p->nslots; s++)
                if (fn(g, *(MonoObject *const *)(data + p->slots[s].offset), p->slots[s].declared,
                       ctx))
                    return -1;
        if (it.changed) {
            collection_changed(g, i);
            return -2;
        }
    }
    return 0;
}

/* Numbers a reference's target (adding it as a record when new) and logs the number: output
 * visits references in the same order and needs no second lookup. On failure *(int *)ctx says
 * why: SD_ERR_GRAPH (recorded), MPC_ERR_NO_MEMORY, or MPC_OK when a collection began (not an
 * error: the write starts over). */
static int discover(graph *g, MonoObject *value, MonoClass *declared, void *ctx)
{
    int *failure = ctx;
    if (g->nrefs % RECORDS_PER_GC_CHECK == RECORDS_PER_GC_CHECK - 1 && collection_begun(g)) {
        *failure = MPC_OK;
        return -1;
    }
    if (g->nrefs == g->cap_refs) {
        g->cap_refs = g->cap_refs ? 2 * g->cap_refs : 1024;
        int32_t *r = realloc(g->refs, g->cap_refs * sizeof *r);
        if (!r) {
            *failure = MPC_ERR_NO_MEMORY;
            return -1;
        }
        g->refs = r;
    }
    if (!value) {
        g->refs[g->nrefs++] = -1;
        return 0;
    }
    int64_t before = g->count, r = record_of(g, value);
    if (r < 0) {
        *failure = g->moved ? MPC_OK : MPC_ERR_NO_MEMORY;
        return -1;
    }
    g->refs[g->nrefs++] = (int32_t)r; /* logged first: admissible() traces paths in the log */
    if (r >= before && !plainly_admissible(g->plans[r], declared) &&
        !admissible(g, (uint32_t)r, declared)) {
        /* moved: the write starts over */
        *failure = g->moved ? MPC_OK : g->out_of_memory ? MPC_ERR_NO_MEMORY : SD_ERR_GRAPH;
        return -1;
    }
    /* met again: its place is checked again (an object admitted where it was first found may sit
     * here in a slot of another type: whether the graph travels must not depend on the order of
     * the walk) */
    if (r < before && g->plans[r]->klass != declared && !g->plans[r]->in_base_slot &&
        note_placed(g)) {
        *failure = MPC_ERR_NO_MEMORY;
        return -1;
    }
    return 0;
}

/* ---- output ---- */

static int reserve(sd_buffer *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d)
        return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

static void out32(sd_buffer *b, uint32_t v)
{
    uint32_t le = htole32(v); /* one store (GCC kept the byte loop a loop) */
    memcpy(b->data + b->len, &le, 4);
    b->len += 4;
}

static void out_bytes(sd_buffer *b, const void *p, size_t n)
{
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* Instance or element data with every reference slot zeroed. */
static void out_data(sd_buffer *b, const uint8_t *data, const rt_class_plan *p)
{
    uint8_t *at = b->data + b->len;
    out_bytes(b, data, p->data_size);
    for (uint32_t s = 0; s < p->nall; s++)
        memset(at + p->all[s], 0, sizeof(void *));
}

/* Writes the next logged reference (discovery visited them in this same order). */
static int out_ref(graph *g, MonoObject *value, MonoClass *declared, void *ctx)
{
    (void)value;
    (void)declared;
    out32(ctx, (uint32_t)g->refs[g->next_ref++]);
    return 0;
}

static size_t record_bytes(const graph *g, uint32_t i)
{
    MonoObject *o = g->objs[i];
    const rt_class_plan *p = g->plans[i];
    switch (p->shape) {
    case RT_OBJECT: return 4 + p->data_size + 4ull * p->nslots;
    case RT_STRING: return 8 + 2ull * (size_t)rt_string_length(o);
    default: {
        size_t first, n;
        element_range(g, i, &first, &n);
        size_t per = p->element == RT_ELEM_REFS ? 4 : p->data_size + 4ull * p->nslots;
        return 4 + 8ull * p->rank + n * per;
    }
    }
}

/* Writes record i; -1 when a collection began in the middle of a large array (g->moved), -2
 * when a collection changed under the write (recorded). */
static int out_record(graph *g, uint32_t i, sd_buffer *b)
{
    MonoObject *o = g->objs[i];
    const rt_class_plan *p = g->plans[i];
    out32(b, g->type_of[i]);
    if (p->shape == RT_OBJECT) {
        out_data(b, (uint8_t *)o + sizeof(MonoObject), p);
        for (uint32_t s = 0; s < p->nslots; s++) /* (the slots as logged: no second visit) */
            out32(b, (uint32_t)g->refs[g->next_ref++]);
        return 0;
    }
    if (p->shape == RT_STRING) {
        int32_t n = rt_string_length(o);
        size_t bytes = 2 * (size_t)n;
        out32(b, (uint32_t)n);
        for (size_t at = 0; at < bytes; at += BYTES_PER_GC_CHECK) {
            if (at && collection_begun(g))
                return -1;
            out_bytes(b, (const uint8_t *)rt_string_chars(o) + at,
                      bytes - at < BYTES_PER_GC_CHECK ? bytes - at : BYTES_PER_GC_CHECK);
        }
        return 0;
    }
    /* a T[] of raw elements, not too long to copy at once (most arrays): length, 0, data */
    if (p->shape == RT_ARRAY && p->vector && p->element == RT_ELEM_RAW && !p->nall &&
        !(i == 0 && g->windowed) && rt_array_length(o) * p->data_size <= BYTES_PER_GC_CHECK) {
        size_t n = rt_array_length(o);
        out32(b, (uint32_t)n);
        out32(b, 0);
        out_bytes(b, rt_array_data(o), n * p->data_size);
        return 0;
    }
    /* arrays: bounds, then elements. Multi-dimensional arrays keep {length, lower bound} per
     * dimension right after their data (MONO-FACTS); one-dimensional zero-based ones have none. */
    size_t first, n;
    element_range(g, i, &first, &n);
    const uint32_t *bounds =
        p->shape == RT_ARRAY ? *(const uint32_t **)((uint8_t *)o + sizeof(MonoObject)) : NULL;
    if (i == 0 && g->windowed)
        bounds = NULL; /* a piece is a zero-based one-dimensional array */
    for (uint32_t d = 0; d < p->rank; d++)
        out32(b, bounds ? bounds[2 * d] : (uint32_t)n);
    for (uint32_t d = 0; d < p->rank; d++)
        out32(b, bounds ? bounds[2 * d + 1] : 0);
    if (p->element == RT_ELEM_REFS)
        return visit_refs(g, i, out_ref, b);
    elements it;
    elements_begin(g, i, &it);
    if (p->element == RT_ELEM_RAW && !p->nall &&
        (p->shape == RT_ARRAY || p->collection->kind == RT_LIST ||
         p->collection->kind == RT_STACK)) {
        /* contiguous raw data: copied in chunks that give way to a requested collection */
        size_t bytes = it.n * p->data_size;
        for (size_t at = 0; at < bytes; at += BYTES_PER_GC_CHECK) {
            if (at && collection_begun(g))
                return -1;
            out_bytes(b, it.data + at,
                      bytes - at < BYTES_PER_GC_CHECK ? bytes - at : BYTES_PER_GC_CHECK);
        }
        return it.changed ? (collection_changed(g, i), -2) : 0;
    }
    for (const uint8_t *data; (data = elements_next(&it));) {
        out_data(b, data, p); /* (structs whose references do not travel: only zeroes there) */
        for (uint32_t s = 0; s < p->nslots; s++)
            out_ref(g, NULL, NULL, b);
    }
    if (it.changed) {
        collection_changed(g, i);
        return -2;
    }
    return 0;
}

void sd_buffer_free(sd_buffer *b)
{
    free(b->data);
    *b = (sd_buffer){0};
}

int sd_write(MonoObject *root, sd_buffer *out)
{
    out->len = 0;
    return sd_write_piece(root, 0, SIZE_MAX, out);
}

static int write_once(MonoObject *root, size_t first, size_t count, sd_buffer *out,
                      size_t *measured, MonoArray *order, int *moved, int yield_to_gc);

/* measured non-NULL: only the size is wanted (Measure), nothing is written to out; with order,
 * only the objects in record order are (sd_record_order). */
static int write_or_measure(MonoObject *root, size_t first, size_t count, sd_buffer *out,
                            size_t *measured, MonoArray *order)
{
    size_t start = out ? out->len : 0;
    enum { ATTEMPTS = 16 };
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        int moved = 0;
        if (out)
            out->len = start;
        int rc =
            write_once(root, first, count, out, measured, order, &moved, attempt < ATTEMPTS - 2);
        if (!moved)
            return rc;
        gch_yield_to_gc(); /* no address is held now: let the collection that stopped us run */
    }
    return error_record(RT_ERR_RUNTIME, NULL,
                        "collections kept interrupting the write (%d attempts)", ATTEMPTS);
}

int sd_write_piece(MonoObject *root, size_t first, size_t count, sd_buffer *out)
{
    return write_or_measure(root, first, count, out, NULL, NULL);
}

int sd_measure(MonoObject *root, size_t *bytes)
{
    *bytes = 0;
    return write_or_measure(root, 0, SIZE_MAX, NULL, bytes, NULL);
}

int sd_record_order(MonoObject *root, MonoArray *order, size_t *count)
{
    *count = 0;
    return root ? write_or_measure(root, 0, SIZE_MAX, NULL, count, order) : MPC_OK;
}

/* A thread keeps its last write's work arrays for the next write (up to KEPT_RECORDS records):
 * allocated per write they cost page faults every time (the identity map of 8192 objects is
 * 128 KiB, which malloc maps afresh), ~15% of a write of small objects. A write nested in
 * another on the thread (through a Mono call that runs managed code) allocates its own. */
#define KEPT_RECORDS (1u << 16)
typedef struct kept_arrays {
    MonoObject **objs;
    const rt_class_plan **plans;
    size_t *sizes;
    uint32_t *type_of;
    uint32_t cap;
    map_entry *map; /* all zero while kept */
    size_t mask;
    int32_t *refs;
    size_t cap_refs;
    seen_page *pages; /* all zero while kept */
    size_t page_mask;
    seen_bits *bits; /* all zero while kept */
    size_t cap_bits;
} kept_arrays;
static __thread kept_arrays kept;
static __thread int kept_busy;

/* Lends the thread's kept arrays to g, when no write on this thread holds them. */
static void take_kept(graph *g)
{
    if (kept_busy)
        return;
    kept_busy = g->kept = 1;
    g->objs = kept.objs;
    g->plans = kept.plans;
    g->sizes = kept.sizes;
    g->cap = kept.cap;
    g->map = kept.map;
    g->mask = kept.mask;
    g->refs = kept.refs;
    g->cap_refs = kept.cap_refs;
    g->type_of = kept.type_of;
    g->pages = kept.pages;
    g->page_mask = kept.page_mask;
    g->bits = kept.bits;
    g->cap_bits = kept.cap_bits;
    kept = (kept_arrays){0};
}

static void free_arrays(kept_arrays *a)
{
    free(a->objs);
    free(a->plans);
    free(a->map);
    free(a->refs);
    free(a->type_of);
    free(a->sizes);
    free(a->pages);
    free(a->bits);
}

/* Frees g's work arrays, or keeps them for the thread's next write with the map cleared. */
static void release_arrays(graph *g)
{
    kept_arrays a = {g->objs, g->plans,    g->sizes, g->type_of,   g->cap,  g->map,     g->mask,
                     g->refs, g->cap_refs, g->pages, g->page_mask, g->bits, g->cap_bits};
    if (g->kept && g->cap <= KEPT_RECORDS && g->cap_bits <= KEPT_RECORDS) {
        memset(g->bits, 0, g->npages * sizeof *g->bits);
        if (g->pages && (g->page_mask + 1) <= 16u * g->npages + 1024)
            memset(g->pages, 0, (g->page_mask + 1) * sizeof *g->pages);
        else { /* a large table and few pages: a small one next time */
            free(g->pages);
            a.pages = NULL;
            a.page_mask = 0;
        }
        if (!g->mapped)
            ; /* (the map was not used: still zero) */
        else if (g->map && (g->mask + 1) <= 16u * (size_t)g->count + 1024)
            memset(g->map, 0, (g->mask + 1) * sizeof *g->map);
        else if (g->map) /* a large map and few records: clear the records' entries only */
            for (uint32_t i = 0; i < g->count; i++) {
                size_t h = hash(g->objs[i]) & g->mask;
                while (g->map[h].index1 != i + 1)
                    h = (h + 1) & g->mask;
                g->map[h] = (map_entry){0, 0};
            }
        kept = a;
    } else {
        free_arrays(&a);
    }
    if (g->kept)
        kept_busy = 0;
}

void sd_writer_thread_stopped(void)
{
    if (kept_busy)
        return;
    free_arrays(&kept);
    kept = (kept_arrays){0};
}

/* ---- a write, phase by phase: window, records, types, size, message ----
 * Each phase returns MPC_OK or the error (MPC_ERR_NO_MEMORY for a failed allocation, and for
 * an attempt a collection stopped: g->moved); write_end is the one way out once the kept arrays
 * are lent. The phases are static and called once per attempt, so they are inlined. */

/* A piece (count != SIZE_MAX) is a range of a one-dimensional array: the window written as the
 * root. *moved when a collection began while the root's plan was built. */
static int set_window(graph *g, MonoObject *root, size_t first, size_t count, int *moved)
{
    int built = 0;
    const rt_class_plan *rp = root ? rt_plan_of(root, &built) : NULL;
    if (built && gch_epoch() != g->epoch) {
        *moved = 1;
        return MPC_OK;
    }
    if (!rp || rp->shape != RT_ARRAY || rp->rank != 1 || first + count > rt_array_length(root))
        return error_record(SD_ERR_GRAPH, NULL,
                            "a piece must be a range of a one-dimensional array");
    g->windowed = 1;
    g->win_first = first;
    g->win_count = count;
    return MPC_OK;
}

/* Finds every record from the root, breadth first, each object admitted as it is found. */
static int find_records(graph *g, MonoObject *root)
{
    if (record_of(g, root) < 0)
        return MPC_ERR_NO_MEMORY;
    if (!admissible(g, 0, g->plans[0]->klass))
        return SD_ERR_GRAPH;
    for (uint32_t i = 0; i < g->count; i++) {
        if (collection_waiting(g, i))
            return MPC_ERR_NO_MEMORY; /* (g->moved: starts over) */
        int failure = MPC_ERR_NO_MEMORY, visited = visit_refs(g, i, discover, &failure);
        if (visited == -2)
            return SD_ERR_GRAPH;
        if (visited) /* MPC_OK: moved, starts over */
            return failure == MPC_OK ? MPC_ERR_NO_MEMORY : failure;
        g->record_bytes += record_bytes(g, i);
    }
    return MPC_OK;
}

/* Once the walk is over: may the unmarked objects found in slots of another type sit there? Only
 * where a receiver of the root's class allows their class: the root's class, the declared types of
 * the travelling slots and the element types, from it and from every class in the graph that
 * travels as another type, transitively — the reader's allow-list, so that what one end accepts
 * the other sends, whatever the order of the walk. SD_ERR_GRAPH naming the first that may not
 * (recorded); MPC_ERR_NO_MEMORY when out of memory or moved (g->moved: the write starts over). */
static int misplaced_refused(graph *g)
{
    if (!g->nplaced)
        return MPC_OK;
    if (close_over(g, g->plans[0]->klass))
        return MPC_ERR_NO_MEMORY;
    for (uint32_t i = 1; i < g->count; i++)
        if (g->plans[i]->in_base_slot && close_over(g, g->plans[i]->klass))
            return MPC_ERR_NO_MEMORY;
    for (size_t k = 0; k < g->nplaced; k++) {
        uint32_t r = (uint32_t)g->refs[g->placed[k]], c = 0;
        while (c < g->nclosure && g->closure[c] != g->plans[r])
            c++;
        if (c < g->nclosure)
            continue;
        char path[200];
        path_of_reference(g, g->placed[k], path, sizeof path);
        misplaced(g, r, declared_at(g, g->placed[k]), path);
        return SD_ERR_GRAPH;
    }
    return MPC_OK;
}

/* Only the objects in record order are wanted (sd_record_order), and how many there are. No
 * Mono call since the walk ended: the addresses are current. */
static int store_order(const graph *g, MonoArray *order, size_t *count)
{
    size_t room = rt_array_length((MonoObject *)order), n = g->count < room ? g->count : room;
    for (size_t i = 0; i < n; i++)
        mono_array_setref(order, i, g->objs[i]);
    *count = g->count;
    return MPC_OK;
}

/* The message's size in bytes, into *total; refused when it would name too many types. */
static int message_bytes(graph *g, size_t *total)
{
    *total = SD_HEADER_BYTES;
    for (uint32_t t = 0; t < g->ntypes; t++)
        *total += 16 + g->types[t]->qualified_name_len;
    *total += g->record_bytes;
    if (g->ntypes > SD_MAX_TYPES)
        return error_record(SD_ERR_GRAPH, NULL,
                            "the graph holds %u types, more than the %d a message may name",
                            g->ntypes, SD_MAX_TYPES);
    return MPC_OK;
}

/* Writes the message, total bytes long (FORMAT.md): header, type table, records. */
static int out_message(graph *g, int null_root, size_t total, sd_buffer *out)
{
    if (reserve(out, total))
        return MPC_ERR_NO_MEMORY;
    out32(out, SD_MAGIC);
    out32(out, SD_VERSION);
    out32(out, g->ntypes);
    out32(out, g->count);
    out32(out, null_root ? (uint32_t)-1 : 0);
    out32(out, 0);
    out32(out, (uint32_t)total);
    out32(out, (uint32_t)((uint64_t)total >> 32));
    for (uint32_t t = 0; t < g->ntypes; t++) {
        const rt_class_plan *p = g->types[t];
        uint8_t head[4] = {sd_wire_kind(p), p->rank, sd_wire_element(p), 0};
        out_bytes(out, head, 4);
        out32(out, p->data_size);
        out32(out, sd_wire_ref_count(p));
        out32(out, p->qualified_name_len);
        out_bytes(out, p->qualified_name, p->qualified_name_len);
    }
    for (uint32_t i = 0; i < g->count; i++) {
        int written = collection_waiting(g, i) ? -1 : out_record(g, i, out);
        if (written) /* -1: g->moved, starts over */
            return written == -2 ? SD_ERR_GRAPH : MPC_ERR_NO_MEMORY;
    }
    return MPC_OK;
}

/* The one way out of an attempt once the kept arrays are lent: *moved when a collection stopped
 * it (then nothing is recorded: the write starts over), else records an allocation failure;
 * gives back every pin and array. */
static int write_end(graph *g, int rc, int *moved)
{
    if (g->moved)
        *moved = 1; /* whatever was written used addresses a collection may have changed */
    else if (rc == MPC_ERR_NO_MEMORY)
        error_record(rc, NULL, "out of memory writing a graph (%u objects found)", g->count);
    for (uint32_t k = 0; k < g->npins; k++)
        mono_gchandle_free(g->pins[k]);
    release_arrays(g);
    free(g->types);
    free(g->closure);
    free(g->placed);
    free(g->scratch);
    for (size_t k = 0; k < g->nretired; k++)
        free(g->retired[k]);
    free(g->retired);
    return rc;
}

static int write_once(MonoObject *root, size_t first, size_t count, sd_buffer *out,
                      size_t *measured, MonoArray *order, int *moved, int yield_to_gc)
{
    graph g = {0};
    g.epoch = gch_epoch();
    g.yield_to_gc = yield_to_gc;
    g.immovable = !atomic_load(&old_generation_moves);
    int rc = MPC_OK;
    /* (before the kept arrays are lent: nothing to give back) */
    if (count != SIZE_MAX && ((rc = set_window(&g, root, first, count, moved)) != MPC_OK || *moved))
        return rc;
    take_kept(&g);
    size_t total;
    if (root && ((rc = find_records(&g, root)) != MPC_OK || (rc = misplaced_refused(&g)) != MPC_OK))
        goto end;
    if (root && order) {
        rc = store_order(&g, order, measured);
        goto end;
    }
    if ((rc = message_bytes(&g, &total)) != MPC_OK)
        goto end;
    if (measured)
        *measured = total;
    else
        rc = out_message(&g, !root, total, out);
end:
    return write_end(&g, rc, moved);
}
