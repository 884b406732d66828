/* datatypes.c — the MPI datatypes of regions (mpc_internal.h): built once per shape, committed,
 * kept in a cache until MPI ends.
 *
 * A box of a row-major array is a subarray with starts 0 (the caller's pointer is the box's
 * first element, so one type serves a column at any index); every stride-th element of a
 * one-dimensional array is a vector. The element is elem_size bytes, described as the widest
 * unsigned word that divides it (MPI_UINT64_T, _32_T, _16_T, else MPI_BYTE; a contiguous run
 * of them when it holds more than one): MPICH's datatype engine (yaksa) packs a column of
 * words word by word, but a contiguous type of 8 MPI_BYTEs byte by byte (a 1024-element
 * column ping-pong: 8.6 us that way, 2.5 us as MPI_DOUBLE or MPI_UINT64_T). Before the key
 * is made the shape is normalised: trailing dimensions the box covers whole join the element,
 * leading dimensions of size 1 go (the pointer carries them), and the first dimension's
 * length is replaced by the box's size in it (it only sets the extent, which a count of 1
 * never uses), so more shapes share a type, and MPICH's type is flatter. */
#include "mpc_impl.h"

#include "error_record.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A shape's key and its committed type. dims and sizes point into the entry's own storage. */
typedef struct region_type {
    uint64_t hash;
    size_t elem_size;
    int ndims, stride;
    int *dims, *sizes;
    MPI_Datatype type;
    struct region_type *next; /* the bucket's chain */
} region_type;

/* Distinct shapes a program uses are few (a halo's edges, a block), and every one stays until
 * MPI ends: a cached type is never freed while the program runs, since another thread may have
 * just looked it up and not yet started its transfer (a program that makes new shapes without end
 * — Strided with ever new counts — keeps a few hundred bytes of MPICH's memory per shape). */
#define BUCKETS 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static region_type *buckets[BUCKETS];
static size_t cached;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t shape_hash(size_t elem_size, int ndims, int stride, const int *dims,
                           const int *sizes)
{
    uint64_t h = mix(mix(mix(0, elem_size), (uint64_t)ndims), (uint64_t)stride);
    for (int d = 0; d < ndims; d++)
        h = mix(mix(h, (uint64_t)(uint32_t)dims[d]), (uint64_t)(uint32_t)sizes[d]);
    return h;
}

static int same_shape(const region_type *e, uint64_t hash, size_t elem_size, int ndims, int stride,
                      const int *dims, const int *sizes)
{
    return e->hash == hash && e->elem_size == elem_size && e->ndims == ndims &&
           e->stride == stride && memcmp(e->dims, dims, (size_t)ndims * sizeof(int)) == 0 &&
           memcmp(e->sizes, sizes, (size_t)ndims * sizeof(int)) == 0;
}

/* Frees every cached type (before MPI_Finalize); the first failure's code (the others are still
 * freed). Under lock. */
static int free_all_locked(void)
{
    int first = MPI_SUCCESS;
    for (size_t b = 0; b < BUCKETS; b++) {
        while (buckets[b]) {
            region_type *e = buckets[b];
            buckets[b] = e->next;
            int rc = MPI_Type_free(&e->type);
            if (first == MPI_SUCCESS)
                first = rc;
            free(e);
        }
    }
    cached = 0;
    return first;
}

int mpc_datatypes_free_all(void)
{
    pthread_mutex_lock(&lock);
    int rc = mpi_running() ? free_all_locked() : MPI_SUCCESS;
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Builds the committed type of a normalised shape; on failure frees what it built. */
static int build(size_t elem_size, int ndims, int stride, const int *dims, const int *sizes,
                 MPI_Datatype *out)
{
    MPI_Datatype elem = MPI_DATATYPE_NULL, type = MPI_DATATYPE_NULL;
    size_t word = elem_size % 8 == 0 ? 8 : elem_size % 4 == 0 ? 4 : elem_size % 2 == 0 ? 2 : 1;
    MPI_Datatype word_type = word == 8   ? MPI_UINT64_T
                             : word == 4 ? MPI_UINT32_T
                             : word == 2 ? MPI_UINT16_T
                                         : MPI_BYTE;
    int rc = MPI_SUCCESS, made = elem_size != word; /* a predefined type is never freed */
    if (made)
        rc = MPI_Type_contiguous((int)(elem_size / word), word_type, &elem);
    else
        elem = word_type;
    if (rc != MPI_SUCCESS)
        return rc;
    if (stride > 0) {
        rc = MPI_Type_vector(sizes[0], 1, stride, elem, &type);
    } else {
        int starts[MPC_REGION_MAX_DIMS] = {0};
        rc = MPI_Type_create_subarray(ndims, dims, sizes, starts, MPI_ORDER_C, elem, &type);
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&type);
    int freed = made ? MPI_Type_free(&elem) : MPI_SUCCESS; /* the new type keeps what it needs */
    if (rc == MPI_SUCCESS)
        rc = freed;
    if (rc != MPI_SUCCESS) {
        if (type != MPI_DATATYPE_NULL)
            (void)MPI_Type_free(&type); /* already failing: the first error is the one */
        return rc;
    }
    *out = type;
    return MPI_SUCCESS;
}

/* A shape, normalised (see the top of the file), and where its entry would be. */
typedef struct shape {
    size_t elem_size;
    int ndims, stride;
    int dims[MPC_REGION_MAX_DIMS], sizes[MPC_REGION_MAX_DIMS];
    uint64_t hash;
} shape;

static int normalise(size_t elem_size, int ndims, const int *dims, const int *sizes, int stride,
                     shape *k)
{
    if (elem_size == 0 || elem_size > INT_MAX || ndims < 1 || ndims > MPC_REGION_MAX_DIMS ||
        stride < 0 || (stride > 0 && ndims != 1))
        return MPI_ERR_ARG;
    int n = ndims;
    for (int d = 0; d < n; d++) {
        if (sizes[d] < 1 || (stride == 0 && sizes[d] > dims[d]))
            return MPI_ERR_ARG; /* empty regions need no type: the caller sends 0 bytes */
        k->dims[d] = stride > 0 ? 0 : dims[d];
        k->sizes[d] = sizes[d];
    }
    if (stride == 0) {
        /* trailing whole dimensions join the element (while it fits an int) */
        while (n > 1 && k->sizes[n - 1] == k->dims[n - 1] &&
               elem_size * (size_t)k->dims[n - 1] <= (size_t)INT_MAX) {
            elem_size *= (size_t)k->dims[n - 1];
            n--;
        }
        /* leading dimensions of size 1: the caller's pointer is already there */
        int lead = 0;
        while (n - lead > 1 && k->sizes[lead] == 1)
            lead++;
        if (lead > 0) {
            memmove(k->dims, k->dims + lead, (size_t)(n - lead) * sizeof(int));
            memmove(k->sizes, k->sizes + lead, (size_t)(n - lead) * sizeof(int));
            n -= lead;
        }
        k->dims[0] = k->sizes[0]; /* the first dimension's length only sets the extent */
    }
    k->elem_size = elem_size;
    k->ndims = n;
    k->stride = stride;
    k->hash = shape_hash(elem_size, n, stride, k->dims, k->sizes);
    return MPI_SUCCESS;
}

/* The cached entry of k, or NULL. Under lock. */
static region_type *find_locked(const shape *k)
{
    for (region_type *e = buckets[k->hash % BUCKETS]; e; e = e->next)
        if (same_shape(e, k->hash, k->elem_size, k->ndims, k->stride, k->dims, k->sizes))
            return e;
    return NULL;
}

int mpc_region_type_find(size_t elem_size, int ndims, const int *dims, const int *sizes, int stride,
                         MPI_Datatype *type)
{
    shape k;
    if (normalise(elem_size, ndims, dims, sizes, stride, &k) != MPI_SUCCESS)
        return 0;
    pthread_mutex_lock(&lock);
    region_type *e = find_locked(&k);
    if (e)
        *type = e->type;
    pthread_mutex_unlock(&lock);
    return e != NULL;
}

int mpc_region_type(size_t elem_size, int ndims, const int *dims, const int *sizes, int stride,
                    MPI_Datatype *type)
{
    shape k;
    int rc = normalise(elem_size, ndims, dims, sizes, stride, &k);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&lock);
    region_type *e = find_locked(&k);
    if (e) {
        *type = e->type;
        pthread_mutex_unlock(&lock);
        return MPC_OK;
    }
    e = malloc(sizeof *e + 2 * (size_t)k.ndims * sizeof(int));
    rc = e ? build(k.elem_size, k.ndims, k.stride, k.dims, k.sizes, &e->type)
           : error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a region's datatype");
    if (rc != MPI_SUCCESS) {
        free(e);
        pthread_mutex_unlock(&lock);
        return rc;
    }
    e->hash = k.hash;
    e->elem_size = k.elem_size;
    e->ndims = k.ndims;
    e->stride = k.stride;
    e->dims = (int *)(e + 1);
    e->sizes = e->dims + k.ndims;
    memcpy(e->dims, k.dims, (size_t)k.ndims * sizeof(int));
    memcpy(e->sizes, k.sizes, (size_t)k.ndims * sizeof(int));
    region_type **bucket = &buckets[k.hash % BUCKETS];
    e->next = *bucket;
    *bucket = e;
    cached++;
    *type = e->type;
    pthread_mutex_unlock(&lock);
    return MPC_OK;
}

size_t mpc_region_types_cached(void)
{
    pthread_mutex_lock(&lock);
    size_t n = cached;
    pthread_mutex_unlock(&lock);
    return n;
}
