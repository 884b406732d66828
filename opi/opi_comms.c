/* opi_comms.c — groups, Cartesian topologies, intercommunicators and spawned processes: the
 * internal calls behind System.MP.Group, CartComm, Intercomm, Intracomm.Create/CreateCart/
 * CreateIntercomm/Spawn, MP.DimsCreate and MP.Parent.
 *
 * Every argument is checked here, before MPI sees it, and a refusal is recorded with the C#
 * parameter and the values (error_record). Arrays from C# (int[] ranks, dims, coordinates;
 * bool[] periods) are copied into native memory before the MPI call, so MPI never holds a
 * managed address; arrays that receive results are the bracket's objects (pinned if the call
 * has to run GC-safe and they could move). Local MPI calls (group algebra, Cartesian queries)
 * are made in XFER_MPI_BEGIN/END; collective ones (creating communicators, spawning) block, and
 * run in a GC-safe region (XFER_BLOCKING_BEGIN/END). What MPI returns lands in C locals, copied
 * to the caller's out-parameters after the bracket. */
#include "opi_icalls.h"

#include <stdlib.h>
#include <string.h>

/* System.MP's values for MPI's "no rank" (MP.Undefined) and "no process" (MP.ProcNull),
 * OPI_UNDEFINED and OPI_PROC_NULL (opi_constants.h): MPICH's MPI_PROC_NULL is -1 (System.MP's
 * AnySource), so both are translated here. */
static int32_t undefined_out(int r)
{
    return r == MPI_UNDEFINED ? OPI_UNDEFINED : r == MPI_PROC_NULL ? OPI_PROC_NULL : r;
}

/* ---- arguments ---- */

/* A non-null array of 4-byte (int) or 1-byte (bool) elements; its data and length. */
static int small_array(MonoObject *a, const char *name, uint32_t elem_size, void **data, int32_t *n)
{
    opi_buffer b;
    int rc = opi_buffer_whole_as(a, name, &b);
    if (rc != MPC_OK)
        return rc;
    if (b.elem_size != elem_size)
        return error_record(OPI_ERR_NOT_TRANSPORTABLE, name, "%s must be an array of %s", name,
                            elem_size == 4 ? "int" : "bool");
    if (b.bytes / elem_size > INT32_MAX)
        return error_record(OPI_ERR_DIMS, name, "%s has more than %d elements", name, INT32_MAX);
    *data = b.data;
    *n = (int32_t)(b.bytes / elem_size);
    return MPC_OK;
}

/* A native int copy of an int[] argument (elem_size 4), or of a bool[] one (elem_size 1: each
 * element becomes 0 or 1), at least one element allocated; *copy is freed by the caller. */
static int native_ints(MonoObject *a, const char *name, uint32_t elem_size, int **copy, int32_t *n)
{
    void *data = NULL;
    int rc = small_array(a, name, elem_size, &data, n);
    if (rc != MPC_OK)
        return rc;
    if (!(*copy = malloc(((size_t)*n + 1) * sizeof(int))))
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a copy of %s (%d elements)",
                            name, *n);
    if (elem_size == sizeof(int))
        memcpy(*copy, data, (size_t)*n * sizeof(int));
    else
        for (int32_t i = 0; i < *n; i++)
            (*copy)[i] = ((const uint8_t *)data)[i] != 0;
    return MPC_OK;
}

static int check_group(int32_t group, const char *name)
{
    if (group != MPI_GROUP_NULL)
        return MPC_OK;
    return error_record(MPC_ERR_COMM_NULL, name, "%s has been disposed", name);
}

/* A rank of something of size n (a group, a communicator), as about argument name. */
static int rank_outside(const char *name, int index, int32_t rank, int32_t n, const char *of)
{
    if (index >= 0)
        return error_record(OPI_ERR_GROUP_RANK, name,
                            "%s[%d] = %d is outside 0..%d of %s of size %d", name, index, rank,
                            n - 1, of, n);
    return error_record(OPI_ERR_GROUP_RANK, name, "%s %d is outside 0..%d of %s of size %d", name,
                        rank, n - 1, of, n);
}

/* The group size of a group handle already checked. */
RT_HOLDS_STACK_MARK static int group_size(int32_t group, int32_t *size)
{
    int rc, n = 0;
    XFER_MPI_BEGIN();
    rc = mpc_group_size(group, &n);
    XFER_MPI_END;
    *size = n;
    return rc;
}

/* Frees a group handle this file made. */
RT_HOLDS_STACK_MARK static int group_free(int group)
{
    int rc;
    XFER_MPI_BEGIN();
    rc = mpc_group_free(&group);
    XFER_MPI_END;
    return rc;
}

/* ---- the ranks of one host, names, comparison ---- */

/* The longest name that round-trips (Comm.MaxName, checked by the contract test): MPI keeps
 * MPI_MAX_OBJECT_NAME - 1 characters and cuts longer ones silently. */
#define OPI_MAX_NAME OPI_COMM_MAX_NAME
_Static_assert(OPI_MAX_NAME <= MPI_MAX_OBJECT_NAME - 1, "MPI keeps names of OPI_MAX_NAME chars");

RT_HOLDS_STACK_MARK int32_t opi_comm_split_shared(int32_t comm, int32_t key, int32_t *out)
{
    MPI_Comm made = MPI_COMM_NULL;
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_comm_split_shared(comm, key, &made);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *out = made;
    return rc;
}

/* name: a byte[] of ASCII characters, no NUL (Comm.Name's setter checked the string and says
 * so in C# terms; this is the core's own guard), at most OPI_MAX_NAME of them. */
RT_HOLDS_STACK_MARK int32_t opi_comm_set_name(int32_t comm, MonoObject *name)
{
    char copy[OPI_MAX_NAME + 1];
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole_as(name, "value", &b)))
        return rc;
    if (b.elem_size != 1 || b.bytes > OPI_MAX_NAME)
        return error_record(OPI_ERR_BAD_ARGUMENT, "value",
                            "a communicator's name is at most %d ASCII characters; %zu bytes were "
                            "given",
                            OPI_MAX_NAME, b.bytes);
    for (size_t i = 0; i < b.bytes; i++) {
        copy[i] = (char)((const uint8_t *)b.data)[i];
        if (copy[i] <= 0)
            return error_record(OPI_ERR_BAD_ARGUMENT, "value",
                                "byte %zu of the name is %u: a communicator's name is ASCII "
                                "characters 1..127",
                                i, ((const uint8_t *)b.data)[i]);
    }
    copy[b.bytes] = '\0';
    XFER_MPI_BEGIN();
    rc = mpc_comm_set_name(comm, copy);
    XFER_MPI_END;
    return rc;
}

/* The name into buffer (a byte[] of at least OPI_MAX_NAME bytes), its length into *length. */
RT_HOLDS_STACK_MARK int32_t opi_comm_get_name(int32_t comm, MonoObject *buffer, int32_t *length)
{
    char name[MPI_MAX_OBJECT_NAME + 1] = "";
    int n = 0;
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)))
        return rc;
    XFER_MPI_BEGIN();
    rc = mpc_comm_get_name(comm, name, &n);
    XFER_MPI_END;
    /* buffer's address read after the bracket, which may have let it move */
    if (rc != MPC_OK || (rc = opi_buffer_whole_as(buffer, "buffer", &b)))
        return rc;
    size_t len = strnlen(name, sizeof name - 1);
    if (len > b.bytes)
        return error_record(OPI_ERR_LENGTH, "buffer", "the name has %zu bytes; buffer holds %zu",
                            len, b.bytes);
    memcpy(b.data, name, len);
    *length = (int32_t)len;
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_comm_compare(int32_t a, int32_t b, int32_t *result)
{
    int rc, r = MPI_UNEQUAL;
    if ((rc = check_comm(a)) || (rc = check_comm(b)))
        return rc;
    XFER_MPI_BEGIN();
    rc = mpc_comm_compare(a, b, &r);
    XFER_MPI_END;
    if (rc != MPC_OK)
        return rc;
    *result = r == MPI_IDENT       ? OPI_COMPARE_IDENTICAL
              : r == MPI_CONGRUENT ? OPI_COMPARE_CONGRUENT
              : r == MPI_SIMILAR   ? OPI_COMPARE_SIMILAR
                                   : OPI_COMPARE_UNEQUAL;
    return MPC_OK;
}

/* ---- groups ---- */

RT_HOLDS_STACK_MARK int32_t opi_comm_group(int32_t comm, int32_t *group)
{
    int made = MPI_GROUP_NULL;
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    XFER_MPI_BEGIN();
    rc = mpc_comm_group(comm, &made);
    XFER_MPI_END;
    if (rc == MPC_OK)
        *group = made;
    return rc;
}

int32_t opi_group_size(int32_t group, int32_t *size)
{
    int rc = check_group(group, "group");
    return rc ? rc : group_size(group, size);
}

RT_HOLDS_STACK_MARK int32_t opi_group_rank(int32_t group, int32_t *rank)
{
    int mine = 0;
    int rc = check_group(group, "group");
    if (rc != MPC_OK)
        return rc;
    XFER_MPI_BEGIN();
    rc = mpc_group_rank(group, &mine);
    XFER_MPI_END;
    if (rc == MPC_OK)
        *rank = undefined_out(mine);
    return rc;
}

/* ranks: each inside 0..size-1 of group, none twice. */
static int check_ranks(const int *ranks, int32_t n, int32_t size, const char *name)
{
    int *seen = calloc((size_t)size + 1, sizeof *seen);
    if (!seen)
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory checking %s", name);
    int rc = MPC_OK;
    for (int32_t i = 0; i < n && rc == MPC_OK; i++) {
        int r = ranks[i];
        if (r < 0 || r >= size)
            rc = rank_outside(name, i, r, size, "a group");
        else if (seen[r])
            rc = error_record(OPI_ERR_DUPLICATE_RANK, name,
                              "%s[%d] = %d repeats %s[%d]: each rank may appear once", name, i, r,
                              name, seen[r] - 1);
        else
            seen[r] = i + 1;
    }
    free(seen);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_group_incl_excl(int32_t group, MonoObject *ranks, int32_t exclude,
                                                int32_t *out)
{
    int *copy = NULL;
    int32_t n = 0, size = 0;
    int rc;
    if ((rc = check_group(group, "group")) || (rc = native_ints(ranks, "ranks", 4, &copy, &n)))
        return rc;
    if ((rc = group_size(group, &size)) == MPC_OK &&
        (rc = check_ranks(copy, n, size, "ranks")) == MPC_OK) {
        int made = MPI_GROUP_NULL;
        XFER_MPI_BEGIN();
        rc =
            exclude ? mpc_group_excl(group, n, copy, &made) : mpc_group_incl(group, n, copy, &made);
        XFER_MPI_END;
        if (rc == MPC_OK)
            *out = made;
    }
    free(copy);
    return rc;
}

/* kind: OPI_GROUP_UNION, _INTERSECTION or _DIFFERENCE (opi_constants.h). */
RT_HOLDS_STACK_MARK int32_t opi_group_combine(int32_t a, int32_t b, int32_t kind, int32_t *out)
{
    int rc;
    if ((rc = check_group(a, "a")) || (rc = check_group(b, "b")))
        return rc;
    if (kind < 0 || kind >= OPI_GROUP_COMBINE_COUNT)
        return error_record(OPI_ERR_OUT_OF_RANGE, "kind", "group operation %d is not 0..%d", kind,
                            OPI_GROUP_COMBINE_COUNT - 1);
    int made = MPI_GROUP_NULL;
    XFER_MPI_BEGIN();
    switch ((enum opi_group_combine)kind) {
    case OPI_GROUP_UNION: rc = mpc_group_union(a, b, &made); break;
    case OPI_GROUP_INTERSECTION: rc = mpc_group_intersection(a, b, &made); break;
    case OPI_GROUP_DIFFERENCE: rc = mpc_group_difference(a, b, &made); break;
    default: rc = RT_ERR_RUNTIME; break;
    }
    XFER_MPI_END;
    if (rc == MPC_OK)
        *out = made;
    return rc;
}

/* result: an int[] as long as ranks, filled with the ranks in other (MP.Undefined where absent). */
RT_HOLDS_STACK_MARK int32_t opi_group_translate_ranks(int32_t group, MonoObject *ranks,
                                                      int32_t other, MonoObject *result)
{
    int *copy = NULL;
    void *res = NULL;
    int32_t n = 0, rn = 0, size = 0;
    int rc;
    if ((rc = check_group(group, "group")) || (rc = check_group(other, "other")) ||
        (rc = small_array(result, "result", 4, &res, &rn)) ||
        (rc = native_ints(ranks, "ranks", 4, &copy, &n)))
        return rc;
    if (rn != n) {
        free(copy);
        return error_record(OPI_ERR_DIMS, "result", "result has %d elements for %d ranks", rn, n);
    }
    if ((rc = group_size(group, &size)) == MPC_OK) {
        for (int32_t i = 0; i < n && rc == MPC_OK; i++) {
            if (copy[i] == OPI_PROC_NULL)
                copy[i] = MPI_PROC_NULL;
            else if (copy[i] < 0 || copy[i] >= size)
                rc = error_record(OPI_ERR_GROUP_RANK, "ranks",
                                  "ranks[%d] = %d is outside 0..%d of a group of size %d, and is "
                                  "not MP.ProcNull (-3)",
                                  i, copy[i], size - 1, size);
        }
    }
    if (rc == MPC_OK) {
        int *out = malloc(((size_t)n + 1) * sizeof *out);
        if (!out) {
            rc = error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory translating %d ranks", n);
        } else {
            XFER_MPI_BEGIN(result);
            rc = mpc_group_translate_ranks(group, n, copy, other, out);
            XFER_MPI_END;
        }
        if (rc == MPC_OK) {
            int32_t *dst = res; /* result is among the call's objects: where it was, or pinned */
            for (int32_t i = 0; i < n; i++)
                dst[i] = undefined_out(out[i]);
        }
        free(out);
    }
    free(copy);
    return rc;
}

int32_t opi_group_free(int32_t *group)
{
    if (*group == MPI_GROUP_NULL)
        return MPC_OK;
    int rc = group_free(*group);
    if (rc == MPC_OK)
        *group = MPI_GROUP_NULL;
    return rc;
}

/* ---- collective creation of communicators ---- */

/* group must be a subgroup of comm's group: MPI_Comm_create's rule, checked locally. */
RT_HOLDS_STACK_MARK int32_t opi_comm_create(int32_t comm, int32_t group, int32_t *out)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_group(group, "group")))
        return rc;
    int32_t n, mine = MPI_GROUP_NULL;
    if ((rc = group_size(group, &n)) || (rc = opi_comm_group(comm, &mine)))
        return rc;
    int *ranks = malloc(((size_t)n + 1) * sizeof *ranks),
        *in_comm = malloc(((size_t)n + 1) * sizeof *in_comm);
    if (!ranks || !in_comm) {
        rc = error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory checking a group of %d", n);
    } else {
        for (int32_t i = 0; i < n; i++)
            ranks[i] = i;
        XFER_MPI_BEGIN();
        rc = mpc_group_translate_ranks(group, n, ranks, mine, in_comm);
        XFER_MPI_END;
        if (rc == MPC_OK) {
            int32_t outside = 0, first = -1;
            for (int32_t i = 0; i < n; i++)
                if (in_comm[i] == MPI_UNDEFINED && outside++ == 0)
                    first = i;
            if (outside)
                rc = error_record(
                    OPI_ERR_BAD_ARGUMENT, "group",
                    "group holds %d process(es) that are not in this communicator (the first: its "
                    "rank %d); Create takes a subgroup of the communicator's Group",
                    outside, first);
        }
    }
    free(ranks);
    free(in_comm);
    int frc = group_free(mine);
    if (rc != MPC_OK)
        return rc;
    if (frc != MPC_OK)
        return frc;
    MPI_Comm made = MPI_COMM_NULL;
    XFER_BLOCKING_BEGIN();
    rc = mpc_comm_create(comm, group, &made);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *out = made;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_cart_create(int32_t comm, int32_t size, MonoObject *dims,
                                            MonoObject *periods, int32_t reorder, int32_t *out)
{
    int *d = NULL, *p = NULL;
    int32_t nd = 0, np = 0;
    int rc;
    if ((rc = check_comm(comm)) || (rc = native_ints(dims, "dims", 4, &d, &nd)) ||
        (rc = native_ints(periods, "periods", 1, &p, &np)))
        goto done;
    if (np != nd) {
        rc = error_record(OPI_ERR_DIMS, "periods",
                          "periods has %d elements and dims %d: one per dimension", np, nd);
        goto done;
    }
    int64_t product = 1; /* stops growing once past size: no overflow */
    for (int32_t i = 0; i < nd; i++) {
        if (d[i] < 1) {
            rc = error_record(OPI_ERR_OUT_OF_RANGE, "dims",
                              "dims[%d] = %d: every dimension needs 1 process or more", i, d[i]);
            goto done;
        }
        if (product <= size)
            product *= d[i];
    }
    if (product > size) {
        rc = error_record(OPI_ERR_DIMS, "dims",
                          "dims multiply to %s%lld processes; the communicator has %d",
                          product > INT32_MAX ? "more than " : "",
                          (long long)(product > INT32_MAX ? INT32_MAX : product), size);
        goto done;
    }
    MPI_Comm made = MPI_COMM_NULL;
    XFER_BLOCKING_BEGIN();
    rc = mpc_cart_create(comm, nd, d, p, reorder != 0, &made);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *out = made;
done:
    free(d);
    free(p);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_cart_dim(int32_t comm, int32_t *ndims)
{
    int n = 0;
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    XFER_MPI_BEGIN();
    rc = mpc_cartdim_get(comm, &n);
    XFER_MPI_END;
    if (rc == MPC_OK)
        *ndims = n;
    return rc;
}

/* dims, coords: int[ndims]; periods: bool[ndims]. */
RT_HOLDS_STACK_MARK int32_t opi_cart_get(int32_t comm, MonoObject *dims, MonoObject *periods,
                                         MonoObject *coords)
{
    void *dd = NULL, *pd = NULL, *cd = NULL;
    int32_t nd = 0, np = 0, nc = 0, ndims = 0;
    int rc;
    if ((rc = opi_cart_dim(comm, &ndims)) || (rc = small_array(dims, "dims", 4, &dd, &nd)) ||
        (rc = small_array(periods, "periods", 1, &pd, &np)) ||
        (rc = small_array(coords, "coords", 4, &cd, &nc)))
        return rc;
    if (nd != ndims || np != ndims || nc != ndims)
        return error_record(OPI_ERR_DIMS, "dims",
                            "the grid has %d dimensions; dims, periods and coords hold %d, %d, %d",
                            ndims, nd, np, nc);
    int *buf = malloc(((size_t)ndims * 3 + 1) * sizeof *buf);
    if (!buf)
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a grid of %d dimensions",
                            ndims);
    XFER_MPI_BEGIN(dims, coords);
    rc = mpc_cart_get(comm, ndims, buf, buf + ndims, buf + 2 * ndims);
    XFER_MPI_END;
    if (rc == MPC_OK) {
        /* periods was not among the objects: find it again (a GC-safe call may have moved it) */
        if ((rc = small_array(periods, "periods", 1, &pd, &np)) == MPC_OK) {
            for (int32_t i = 0; i < ndims; i++) {
                ((int32_t *)dd)[i] = buf[i];
                ((uint8_t *)pd)[i] = buf[ndims + i] != 0;
                ((int32_t *)cd)[i] = buf[2 * ndims + i];
            }
        }
    }
    free(buf);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_cart_coords(int32_t comm, int32_t size, int32_t rank,
                                            MonoObject *coords)
{
    void *cd = NULL;
    int32_t nc = 0, ndims = 0;
    int rc;
    if ((rc = opi_cart_dim(comm, &ndims)) || (rc = small_array(coords, "coords", 4, &cd, &nc)))
        return rc;
    if (rank < 0 || rank >= size)
        return rank_outside("rank", -1, rank, size, "a communicator");
    if (nc != ndims)
        return error_record(OPI_ERR_DIMS, "coords",
                            "coords holds %d elements for a grid of %d dimensions", nc, ndims);
    int *buf = malloc(((size_t)ndims + 1) * sizeof *buf);
    if (!buf)
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for %d coordinates", ndims);
    XFER_MPI_BEGIN(coords);
    rc = mpc_cart_coords(comm, rank, ndims, buf);
    XFER_MPI_END;
    if (rc == MPC_OK)
        memcpy(cd, buf, (size_t)ndims * sizeof *buf);
    free(buf);
    return rc;
}

/* coords: one per dimension, inside 0..dims[i]-1 on a dimension that is not periodic (periodic
 * ones wrap, as MPI_Cart_rank does). */
RT_HOLDS_STACK_MARK int32_t opi_cart_rank(int32_t comm, MonoObject *coords, int32_t *rank)
{
    int *c = NULL, *grid = NULL;
    int32_t nc = 0, ndims = 0;
    int rc;
    if ((rc = opi_cart_dim(comm, &ndims)) || (rc = native_ints(coords, "coords", 4, &c, &nc)))
        return rc;
    if (nc != ndims) {
        rc = error_record(OPI_ERR_DIMS, "coords",
                          "coords holds %d elements for a grid of %d dimensions", nc, ndims);
        goto done;
    }
    if (!(grid = malloc(((size_t)ndims * 3 + 1) * sizeof *grid))) {
        rc = error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a grid of %d dimensions",
                          ndims);
        goto done;
    }
    XFER_MPI_BEGIN();
    rc = mpc_cart_get(comm, ndims, grid, grid + ndims, grid + 2 * ndims);
    XFER_MPI_END;
    if (rc != MPC_OK)
        goto done;
    for (int32_t i = 0; i < ndims; i++) {
        if (!grid[ndims + i] && (c[i] < 0 || c[i] >= grid[i])) {
            rc = error_record(
                OPI_ERR_OUT_OF_RANGE, "coords",
                "coords[%d] = %d is outside 0..%d of dimension %d, which is not periodic", i, c[i],
                grid[i] - 1, i);
            goto done;
        }
        if (grid[ndims +
                 i]) { /* wrap here: MPI leaves large negative values to the implementation */
            c[i] %= grid[i];
            if (c[i] < 0)
                c[i] += grid[i];
        }
    }
    int found = 0;
    XFER_MPI_BEGIN();
    rc = mpc_cart_rank(comm, c, &found);
    XFER_MPI_END;
    if (rc == MPC_OK)
        *rank = found;
done:
    free(c);
    free(grid);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_cart_shift(int32_t comm, int32_t direction, int32_t displacement,
                                           int32_t *source, int32_t *dest)
{
    int32_t ndims = 0;
    int rc = opi_cart_dim(comm, &ndims);
    if (rc != MPC_OK)
        return rc;
    if (direction < 0 || direction >= ndims)
        return error_record(OPI_ERR_OUT_OF_RANGE, "direction",
                            "direction %d is outside 0..%d of a grid of %d dimension(s)", direction,
                            ndims - 1, ndims);
    int from = 0, to = 0;
    XFER_MPI_BEGIN();
    rc = mpc_cart_shift(comm, direction, displacement, &from, &to);
    XFER_MPI_END;
    if (rc == MPC_OK) {
        *source = undefined_out(from);
        *dest = undefined_out(to);
    }
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_cart_sub(int32_t comm, MonoObject *remain, int32_t *out)
{
    int *r = NULL;
    int32_t nr = 0, ndims = 0;
    int rc;
    if ((rc = opi_cart_dim(comm, &ndims)) || (rc = native_ints(remain, "remainDims", 1, &r, &nr)))
        return rc;
    if (nr != ndims) {
        free(r);
        return error_record(OPI_ERR_DIMS, "remainDims",
                            "remainDims holds %d elements for a grid of %d dimensions", nr, ndims);
    }
    MPI_Comm made = MPI_COMM_NULL;
    XFER_BLOCKING_BEGIN();
    rc = mpc_cart_sub(comm, r, &made);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *out = made;
    free(r);
    return rc;
}

/* dims: filled in place (the caller passes its own copy); zeros are MPI's to choose. */
RT_HOLDS_STACK_MARK int32_t opi_dims_create(int32_t nodes, MonoObject *dims)
{
    int *d = NULL;
    int32_t nd = 0;
    int rc;
    if (nodes < 1)
        return error_record(OPI_ERR_OUT_OF_RANGE, "nodes",
                            "nodes %d: a grid needs 1 process or more", nodes);
    if ((rc = native_ints(dims, "dims", 4, &d, &nd)))
        return rc;
    int64_t fixed = 1;
    int zeros = 0;
    for (int32_t i = 0; i < nd && rc == MPC_OK; i++) {
        if (d[i] < 0)
            rc = error_record(OPI_ERR_OUT_OF_RANGE, "dims",
                              "dims[%d] = %d: a dimension is 0 (free) or positive", i, d[i]);
        else if (d[i] == 0)
            zeros++;
        else if (fixed <= nodes)
            fixed *= d[i];
    }
    if (rc == MPC_OK && (fixed > nodes || nodes % fixed != 0 || (!zeros && fixed != nodes)))
        rc = error_record(
            OPI_ERR_DIMS, "dims",
            zeros ? "the fixed dimensions of dims multiply to %lld, which does not divide nodes %d"
                  : "dims multiply to %lld and leave nothing free, but nodes is %d",
            (long long)fixed, nodes);
    if (rc == MPC_OK) {
        void *dd = NULL;
        XFER_MPI_BEGIN(dims);
        rc = mpc_dims_create(nodes, nd, d);
        XFER_MPI_END;
        if (rc == MPC_OK && (rc = small_array(dims, "dims", 4, &dd, &nd)) == MPC_OK)
            memcpy(dd, d, (size_t)nd * sizeof *d);
    }
    free(d);
    return rc;
}

/* ---- intercommunicators ---- */

/* peer: MPI_COMM_NULL off the local leader is fine (significant there only); peer_size and
 * peer_rank: the caller's size and rank in peer when it has one. */
RT_HOLDS_STACK_MARK int32_t opi_intercomm_create(int32_t comm, int32_t size, int32_t rank,
                                                 int32_t local_leader, int32_t peer,
                                                 int32_t peer_size, int32_t peer_rank,
                                                 int32_t remote_leader, int32_t tag, int32_t *out)
{
    int rc;
    if ((rc = check_comm(comm)))
        return rc;
    if (local_leader < 0 || local_leader >= size)
        return rank_outside("localLeader", -1, local_leader, size, "a communicator");
    if (tag < 0 || tag > mpc_tag_ub())
        return opi_tag_error("tag", tag, 0);
    if (rank == local_leader && peer == MPI_COMM_NULL)
        return error_record(
            OPI_ERR_NULL_ARGUMENT, "peer",
            "peer must not be null at the local leader (rank %d): the leaders talk through it",
            rank);
    if (peer != MPI_COMM_NULL) {
        if (remote_leader < 0 || remote_leader >= peer_size)
            return rank_outside("remoteLeader", -1, remote_leader, peer_size,
                                "peer, a communicator");
        if (rank == local_leader && remote_leader == peer_rank)
            return error_record(
                OPI_ERR_OUT_OF_RANGE, "remoteLeader",
                "remoteLeader %d is the local leader itself (its rank in peer): the remote group "
                "must be another group",
                remote_leader);
    }
    MPI_Comm made = MPI_COMM_NULL;
    XFER_BLOCKING_BEGIN();
    rc = mpc_intercomm_create(comm, local_leader, peer, remote_leader, tag, &made);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *out = made;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_intercomm_merge(int32_t comm, int32_t high, int32_t *out)
{
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    MPI_Comm made = MPI_COMM_NULL;
    XFER_BLOCKING_BEGIN();
    rc = mpc_intercomm_merge(comm, high != 0, &made);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *out = made;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_comm_remote_size(int32_t comm, int32_t *size)
{
    int n = 0;
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    XFER_MPI_BEGIN();
    rc = mpc_comm_remote_size(comm, &n);
    XFER_MPI_END;
    if (rc == MPC_OK)
        *size = n;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_comm_test_inter(int32_t comm, int32_t *inter)
{
    int flag = 0;
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    XFER_MPI_BEGIN();
    rc = mpc_comm_test_inter(comm, &flag);
    XFER_MPI_END;
    if (rc == MPC_OK)
        *inter = flag != 0;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_comm_parent(int32_t *parent)
{
    int found = MPI_COMM_NULL;
    int rc;
    XFER_MPI_BEGIN();
    rc = mpc_comm_get_parent(&found);
    XFER_MPI_END;
    if (rc == MPC_OK)
        *parent = found;
    return rc;
}

/* ---- spawn ---- */

/* What the root tells every rank before anyone enters MPI_Comm_spawn, so that no rank waits in
 * a spawn the root never starts: the root's own refusal of its arguments, or this MPI library's
 * inability to start processes, with the reason. */
struct spawn_verdict {
    int32_t refusal;     /* 0, or the code the root refused its arguments with */
    int32_t unsupported; /* MPI's code when MPI_Open_port fails: no dynamic processes */
    char argument[64];
    char text[1024];
};

/* The error record keeps the argument's pointer: the names Spawn's root may refuse, as literals. */
static const char *spawn_argument(const char *name)
{
    static const char *const names[] = {"program", "args", "maxProcs"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i]))
            return names[i];
    return NULL;
}

/* Whether this library can start processes: probed once (MPI_Open_port / MPI_Close_port). */
static int probed_rc = -1;
static char probed_why[512];

RT_HOLDS_STACK_MARK static int probe_dynamic_processes(void)
{
    if (probed_rc < 0) {
        char why[sizeof probed_why] = "";
        int rc;
        XFER_MPI_BEGIN();
        rc = mpc_dynamic_processes(why, sizeof why);
        XFER_MPI_END;
        for (char *c = why; *c; c++) /* MPI's error stack on one line */
            if (*c == '\n')
                *c = ' ';
        memcpy(probed_why, why, sizeof why);
        probed_rc = rc;
    }
    return probed_rc;
}

/* The command line of a spawn, copied out of b (UTF-8 strings each ended by NUL: the working
 * directory, the executable, then its arguments): *strings holds the copy, argv points into it. */
typedef struct spawn_command {
    char *strings, **argv;
    const char *wdir, *exe;
} spawn_command;

static int copy_command(const opi_buffer *b, spawn_command *c)
{
    int n = 0;
    for (size_t i = 0; i < b->bytes; i++)
        n += b->data[i] == '\0';
    c->strings = malloc(b->bytes + 1);
    c->argv = calloc((size_t)n + 1, sizeof *c->argv);
    if (!c->strings || !c->argv || n < 2)
        return n < 2 ? error_record(OPI_ERR_NULL_ARGUMENT, "program", "no program to start")
                     : error_record(MPC_ERR_NO_MEMORY, NULL,
                                    "out of memory for spawn's command line");
    memcpy(c->strings, b->data, b->bytes);
    c->strings[b->bytes] = '\0';
    char *at = c->strings;
    c->wdir = at;
    at += strlen(at) + 1;
    c->exe = at;
    at += strlen(at) + 1;
    for (int i = 0; i < n - 2; i++, at += strlen(at) + 1)
        c->argv[i] = at;
    return MPC_OK;
}

/* At the root: the verdict every rank learns (v: a refusal of the arguments, or no dynamic
 * processes in this MPI library), and the command line to start (c). A failure returned here is
 * the root's alone (System.MP always passes the command at the root). */
static int root_verdict(int32_t refusal, MonoObject *refusal_text, MonoObject *command,
                        int32_t max_procs, struct spawn_verdict *v, spawn_command *c)
{
    opi_buffer b;
    int rc;
    if (refusal) {
        v->refusal = refusal;
        if (refusal_text && opi_buffer_whole_as(refusal_text, "refusalText", &b) == MPC_OK) {
            size_t cut = 0;
            while (cut < b.bytes && b.data[cut] != '\n')
                cut++;
            snprintf(v->argument, sizeof v->argument, "%.*s", (int)cut, b.data);
            if (cut < b.bytes)
                snprintf(v->text, sizeof v->text, "%.*s", (int)(b.bytes - cut - 1),
                         b.data + cut + 1);
        }
        return MPC_OK;
    }
    if (max_procs < 1) {
        v->refusal = OPI_ERR_OUT_OF_RANGE;
        snprintf(v->argument, sizeof v->argument, "maxProcs");
        snprintf(v->text, sizeof v->text, "maxProcs %d: Spawn starts 1 process or more", max_procs);
        return MPC_OK;
    }
    if ((rc = opi_buffer_whole_as(command, "program", &b)) != MPC_OK ||
        (rc = copy_command(&b, c)) != MPC_OK)
        return rc;
    int prc = probe_dynamic_processes();
    if (prc != MPC_OK) {
        v->unsupported = prc;
        snprintf(
            v->text, sizeof v->text,
            "Spawn is not supported by this MPI library (MPICH %s): it cannot start processes: "
            "MPI_Open_port, which MPI_Comm_spawn needs to connect new processes, fails (as "
            "with Debian 12's MPICH 4.0.2 and its ch4:ucx device, whose MPI_Comm_spawn "
            "reports \"Error in spawn call\"). MPI: %s",
            MPICH_VERSION, probed_why);
    }
    return MPC_OK;
}

/* command: at the root, the command line (copy_command). refusal and refusal_text
 * ("argument\nmessage"): at the root, the code and account of an argument System.MP refused
 * there (0: none); they reach every rank. */
RT_HOLDS_STACK_MARK int32_t opi_comm_spawn(int32_t comm, int32_t size, int32_t rank, int32_t root,
                                           int32_t refusal, MonoObject *refusal_text,
                                           MonoObject *command, int32_t max_procs, int32_t *out)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_root(size, root)))
        return rc;
    struct spawn_verdict v;
    memset(&v, 0, sizeof v);
    spawn_command c = {NULL, NULL, NULL, NULL};
    if (rank == root &&
        (rc = root_verdict(refusal, refusal_text, command, max_procs, &v, &c)) != MPC_OK)
        goto done;
    /* every rank learns the verdict before anyone enters MPI_Comm_spawn */
    if ((rc = opi_native_bcast(&v, sizeof v, root, comm)) != MPC_OK)
        goto done;
    if (v.refusal) {
        v.argument[sizeof v.argument - 1] = '\0';
        const char *argument = spawn_argument(v.argument);
        rc = rank == root
                 ? error_record(v.refusal, argument, "%s", v.text)
                 : error_record(v.refusal, argument, "Spawn was refused at the root (rank %d): %s",
                                root, v.text);
        goto done;
    }
    if (v.unsupported) {
        rc = error_record(OPI_ERR_NOT_SUPPORTED, NULL, "%s%s", v.text,
                          rank == root ? "" : " (as the root found)");
        goto done;
    }
    MPI_Comm made = MPI_COMM_NULL;
    XFER_BLOCKING_BEGIN();
    rc = mpc_comm_spawn(c.exe, c.argv, max_procs, c.wdir && *c.wdir ? c.wdir : NULL, root, comm,
                        &made);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *out = made;
done:
    free(c.strings);
    free(c.argv);
    return rc;
}
