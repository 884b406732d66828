/* handles.c — the MPI objects mpc makes for its callers and the queries on them (mpc.h,
 * mpc_internal.h): communicators, groups, topologies, intercommunicators, spawned processes,
 * operators and datatypes. Each one made is recorded (owned_handles.h), so that the end of MPI
 * frees what a program left behind. */
#include "mpc_impl.h"

#include "error_record.h"
#include "owned_handles.h"

#include <stdio.h>

mpc_comm mpc_comm_world(void) { return MPI_COMM_WORLD; }
mpc_comm mpc_comm_self(void) { return MPI_COMM_SELF; }
int mpc_comm_rank(mpc_comm comm, int *rank) { return MPI_Comm_rank(comm, rank); }
int mpc_comm_size(mpc_comm comm, int *size) { return MPI_Comm_size(comm, size); }

/* A communicator MPI just made for a caller: errors returned, and freed at the end of MPI if the
 * caller never frees it (owned_handles.h). */
static int adopt_new_comm(int rc, mpc_comm *out)
{
    if (rc != MPI_SUCCESS || *out == MPI_COMM_NULL)
        return rc;
    return owned_add(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN), OWNED_COMM, (int)*out);
}

/* A communicator made by a collective call on parent, the call's code rc (mpc_internal.h's hang
 * report: the call ends, and the new communicator's identity derives from parent's). */
static int made(int marked, mpc_comm parent, int known, int rc, mpc_comm *out)
{
    mpc_hang_unblock(marked);
    rc = adopt_new_comm(rc, out);
    mpc_hang_derived(parent, rc == MPI_SUCCESS ? *out : MPI_COMM_NULL, known);
    return rc;
}

int mpc_comm_dup(mpc_comm comm, mpc_comm *out)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_DUP, comm);
    return made(marked, comm, 1, MPI_Comm_dup(comm, out), out);
}

int mpc_comm_split(mpc_comm comm, int color, int key, mpc_comm *out)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_SPLIT, comm);
    return made(marked, comm, 1, MPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key, out),
                out);
}

int mpc_comm_split_shared(mpc_comm comm, int key, mpc_comm *out)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_SPLIT, comm);
    return made(marked, comm, 1,
                MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, out), out);
}

int mpc_comm_set_name(mpc_comm comm, const char *name) { return MPI_Comm_set_name(comm, name); }

int mpc_comm_get_name(mpc_comm comm, char *name, int *length)
{
    return MPI_Comm_get_name(comm, name, length);
}

int mpc_comm_compare(mpc_comm a, mpc_comm b, int *result) { return MPI_Comm_compare(a, b, result); }

int mpc_comm_free(mpc_comm *comm)
{
    if (*comm == MPI_COMM_NULL)
        return error_record(MPC_ERR_COMM_NULL, NULL, "the communicator has been freed already");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return MPC_OK; /* predefined communicators are never freed */
    mpc_hang_forget(*comm);
    return owned_free(OWNED_COMM, comm);
}

/* ---- user operators and the datatypes of their elements ---- */

int mpc_op_create(MPI_User_function *fn, int commutative, MPI_Op *op)
{
    int rc = MPI_Op_create(fn, commutative, op); /* sequenced before *op is read */
    return owned_add(rc, OWNED_OP, (int)*op);
}

int mpc_op_free(MPI_Op *op) { return owned_free(OWNED_OP, op); }

int mpc_type_bytes(size_t bytes, MPI_Datatype *type)
{
    if (!MPC_FITS_INT(bytes))
        return error_record(MPC_ERR_TOO_LARGE, NULL,
                            "an element of %zu bytes is more than MPI's int count can describe",
                            bytes);
    int rc = MPI_Type_contiguous((int)bytes, MPI_BYTE, type);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(type)) != MPI_SUCCESS)
        MPI_Type_free(type); /* the commit's error is the one to report */
    return owned_add(rc, OWNED_TYPE, (int)*type);
}

int mpc_type_free(MPI_Datatype *type) { return owned_free(OWNED_TYPE, type); }

/* ---- groups, topologies, intercommunicators, processes ---- */

int mpc_comm_group(mpc_comm comm, mpc_group *group)
{
    int rc = MPI_Comm_group(comm, group); /* sequenced before *group is read */
    return owned_add(rc, OWNED_GROUP, (int)*group);
}
int mpc_group_size(mpc_group group, int *size) { return MPI_Group_size(group, size); }
int mpc_group_rank(mpc_group group, int *rank) { return MPI_Group_rank(group, rank); }

int mpc_group_incl(mpc_group group, int n, const int *ranks, mpc_group *out)
{
    int rc = MPI_Group_incl(group, n, ranks, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}

int mpc_group_excl(mpc_group group, int n, const int *ranks, mpc_group *out)
{
    int rc = MPI_Group_excl(group, n, ranks, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}

int mpc_group_union(mpc_group a, mpc_group b, mpc_group *out)
{
    int rc = MPI_Group_union(a, b, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}
int mpc_group_intersection(mpc_group a, mpc_group b, mpc_group *out)
{
    int rc = MPI_Group_intersection(a, b, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}
int mpc_group_difference(mpc_group a, mpc_group b, mpc_group *out)
{
    int rc = MPI_Group_difference(a, b, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}

int mpc_group_translate_ranks(mpc_group a, int n, const int *ranks, mpc_group b, int *out)
{
    return MPI_Group_translate_ranks(a, n, ranks, b, out);
}

int mpc_group_free(mpc_group *group)
{
    if (*group == MPI_GROUP_NULL || *group == MPI_GROUP_EMPTY)
        return MPC_OK; /* MPI_GROUP_EMPTY is predefined: nothing to free */
    return owned_free(OWNED_GROUP, group);
}

int mpc_comm_create(mpc_comm comm, mpc_group group, mpc_comm *out)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_CREATE, comm);
    return made(marked, comm, 1, MPI_Comm_create(comm, group, out), out);
}

int mpc_cart_create(mpc_comm comm, int ndims, const int *dims, const int *periods, int reorder,
                    mpc_comm *out)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_CART_CREATE, comm);
    return made(marked, comm, 1, MPI_Cart_create(comm, ndims, dims, periods, reorder, out), out);
}

int mpc_cartdim_get(mpc_comm comm, int *ndims) { return MPI_Cartdim_get(comm, ndims); }

int mpc_cart_get(mpc_comm comm, int maxdims, int *dims, int *periods, int *coords)
{
    return MPI_Cart_get(comm, maxdims, dims, periods, coords);
}

int mpc_cart_coords(mpc_comm comm, int rank, int maxdims, int *coords)
{
    return MPI_Cart_coords(comm, rank, maxdims, coords);
}

int mpc_cart_rank(mpc_comm comm, const int *coords, int *rank)
{
    return MPI_Cart_rank(comm, coords, rank);
}

int mpc_cart_shift(mpc_comm comm, int direction, int displacement, int *source, int *dest)
{
    return MPI_Cart_shift(comm, direction, displacement, source, dest);
}

int mpc_cart_sub(mpc_comm comm, const int *remain_dims, mpc_comm *out)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_CART_SUB, comm);
    return made(marked, comm, 1, MPI_Cart_sub(comm, remain_dims, out), out);
}

int mpc_dims_create(int nodes, int ndims, int *dims) { return MPI_Dims_create(nodes, ndims, dims); }

int mpc_intercomm_create(mpc_comm local, int local_leader, mpc_comm peer, int remote_leader,
                         int tag, mpc_comm *out)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_INTERCOMM, local);
    return made(marked, local, 0,
                MPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, out), out);
}

int mpc_intercomm_merge(mpc_comm inter, int high, mpc_comm *out)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_INTERCOMM, inter);
    return made(marked, inter, 0, MPI_Intercomm_merge(inter, high, out), out);
}

int mpc_comm_test_inter(mpc_comm comm, int *inter) { return MPI_Comm_test_inter(comm, inter); }
int mpc_comm_remote_size(mpc_comm comm, int *size) { return MPI_Comm_remote_size(comm, size); }

int mpc_dynamic_processes(char *why, size_t size)
{
    char port[MPI_MAX_PORT_NAME];
    int rc = MPI_Open_port(MPI_INFO_NULL, port);
    if (rc == MPI_SUCCESS)
        return MPI_Close_port(port);
    if (why && size) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
            len = snprintf(text, sizeof text, "MPI error %d", rc);
        snprintf(why, size, "%.*s", len, text);
    }
    return rc;
}

int mpc_comm_spawn(const char *command, char **argv, int maxprocs, const char *wdir, int root,
                   mpc_comm comm, mpc_comm *out)
{
    MPI_Info info = MPI_INFO_NULL;
    int rc, rank = 0;
    if ((rc = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
        return rc;
    if (rank == root && wdir) {
        if ((rc = MPI_Info_create(&info)) != MPI_SUCCESS)
            return rc;
        if ((rc = MPI_Info_set(info, "wdir", wdir)) != MPI_SUCCESS) {
            MPI_Info_free(&info);
            return rc;
        }
    }
    rc = MPI_Comm_spawn(command, argv, maxprocs, info, root, comm, out, MPI_ERRCODES_IGNORE);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return adopt_new_comm(rc, out);
}

/* MPI's own handle, the same at every call: errors returned, never freed by mpc. */
int mpc_comm_get_parent(mpc_comm *parent)
{
    int rc = MPI_Comm_get_parent(parent);
    if (rc != MPI_SUCCESS || *parent == MPI_COMM_NULL)
        return rc;
    return MPI_Comm_set_errhandler(*parent, MPI_ERRORS_RETURN);
}
