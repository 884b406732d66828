/* rma.c — one-sided communication (mpc_internal.h): windows created over memory the caller keeps
 * in place (displacement unit 1: the caller computes byte displacements), their epochs, and the
 * operations. Every window gets MPI_ERRORS_RETURN, so a misuse MPI detects comes back as a code.
 * Large transfers go through the _c (MPI_Count) forms. */
#include "mpc_impl.h"

int mpc_win_create(void *base, size_t bytes, mpc_comm comm, MPI_Win *win)
{
    MPI_Info info;
    int rc = MPI_Info_create(&info);
    if (rc != MPI_SUCCESS)
        return rc;
    /* no Accumulate mixes operators on one element but Replace/NoOp with one op: "same_op_no_op"
     * would allow MPICH to use hardware atomics; a program may mix Sum and Replace, so the
     * default ordering and operators stay */
    rc = MPI_Win_create_c(base, (MPI_Aint)bytes, 1, info, comm, win);
    int free_rc = MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS) {
        (void)MPI_Win_free(win);
        return rc;
    }
    return free_rc;
}

int mpc_win_free(MPI_Win *win) { return MPI_Win_free(win); }

int mpc_win_fence(int assert_flags, MPI_Win win) { return MPI_Win_fence(assert_flags, win); }

int mpc_win_lock(int exclusive, int rank, MPI_Win win)
{
    return MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, rank, 0, win);
}

int mpc_win_unlock(int rank, MPI_Win win) { return MPI_Win_unlock(rank, win); }

int mpc_win_lock_all(MPI_Win win) { return MPI_Win_lock_all(0, win); }

int mpc_win_unlock_all(MPI_Win win) { return MPI_Win_unlock_all(win); }

int mpc_win_flush(int rank, MPI_Win win) { return MPI_Win_flush(rank, win); }

int mpc_win_flush_all(MPI_Win win) { return MPI_Win_flush_all(win); }

int mpc_put(const void *origin, size_t bytes, int rank, MPI_Aint disp, MPI_Win win)
{
    return MPI_Put_c(origin, (MPI_Count)bytes, MPI_BYTE, rank, disp, (MPI_Count)bytes, MPI_BYTE,
                     win);
}

int mpc_get(void *origin, size_t bytes, int rank, MPI_Aint disp, MPI_Win win)
{
    return MPI_Get_c(origin, (MPI_Count)bytes, MPI_BYTE, rank, disp, (MPI_Count)bytes, MPI_BYTE,
                     win);
}

int mpc_accumulate(const void *origin, MPI_Count count, MPI_Datatype type, int rank, MPI_Aint disp,
                   MPI_Op op, MPI_Win win)
{
    return MPI_Accumulate_c(origin, count, type, rank, disp, count, type, op, win);
}

int mpc_fetch_and_op(const void *value, void *result, MPI_Datatype type, int rank, MPI_Aint disp,
                     MPI_Op op, MPI_Win win)
{
    int rc = MPI_Fetch_and_op(value, result, type, rank, disp, op, win);
    return rc != MPI_SUCCESS ? rc : MPI_Win_flush(rank, win);
}

int mpc_compare_and_swap(const void *value, const void *compare, void *result, MPI_Datatype type,
                         int rank, MPI_Aint disp, MPI_Win win)
{
    int rc = MPI_Compare_and_swap(value, compare, result, type, rank, disp, win);
    return rc != MPI_SUCCESS ? rc : MPI_Win_flush(rank, win);
}
