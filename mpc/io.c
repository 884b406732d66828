/* io.c — MPI-IO on files of arrays' elements (mpc_internal.h, "files"): collective open with an
 * outcome every rank agrees on, close, delete, size, sync, explicit-offset reads and writes of
 * (data, count, word type), and the views of a row-major global array. */
#include "mpc_impl.h"

#include <string.h>

/* ROMIO makes its collective calls' errors agree by reducing the ranks' error codes, so a rank
 * may get a code another rank's MPICH made; looking it up (MPI_Error_class, _string) prints
 * "Invalid error code" and finds nothing. Every failure of a file call is returned as its
 * error class instead (a class is a valid code): MPICH keeps the class in a code's low 7 bits
 * (MPIR_ERR_CLASS_MASK). */
static int as_class(int rc) { return rc == MPI_SUCCESS ? rc : rc & 0x7f; }

/* The widest unsigned word dividing bytes (as datatypes.c chooses an element's word). */
static MPI_Datatype word_of(size_t bytes, size_t *word)
{
    *word = bytes % 8 == 0 ? 8 : bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 2 : 1;
    return *word == 8   ? MPI_UINT64_T
           : *word == 4 ? MPI_UINT32_T
           : *word == 2 ? MPI_UINT16_T
                        : MPI_BYTE;
}

int mpc_file_open(mpc_comm comm, const char *path, int amode, MPI_File *fh, int *failed_class,
                  int *failed_rank)
{
    MPI_File made = MPI_FILE_NULL;
    int rc = as_class(MPI_File_open(comm, path, amode, MPI_INFO_NULL, &made));
    int cls = rc;
    int rank = 0, ret = MPI_Comm_rank(comm, &rank);
    /* every rank learns the worst outcome (the highest class, from the lowest rank having it) */
    struct {
        int cls, rank;
    } mine = {cls, rank}, worst = {0, 0};
    if (ret == MPI_SUCCESS)
        ret = MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, comm);
    if (ret != MPI_SUCCESS || worst.cls != MPI_SUCCESS) {
        if (made != MPI_FILE_NULL)
            (void)MPI_File_close(&made); /* failing already: the open's outcome is reported */
        *failed_class = ret != MPI_SUCCESS ? MPI_ERR_OTHER : worst.cls;
        *failed_rank = ret != MPI_SUCCESS ? rank : worst.rank;
        return ret != MPI_SUCCESS ? ret : rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER;
    }
    rc = as_class(MPI_File_set_errhandler(made, MPI_ERRORS_RETURN));
    if (rc != MPI_SUCCESS) {
        (void)MPI_File_close(&made);
        *failed_class = MPI_ERR_OTHER;
        *failed_rank = rank;
        return rc;
    }
    *fh = made;
    return MPC_OK;
}

int mpc_file_close(MPI_File *fh) { return as_class(MPI_File_close(fh)); }

int mpc_file_delete(const char *path, int *cls)
{
    int rc = as_class(MPI_File_delete(path, MPI_INFO_NULL));
    *cls = rc;
    return rc;
}

int mpc_file_get_size(MPI_File fh, int64_t *bytes)
{
    MPI_Offset size = 0;
    int rc = as_class(MPI_File_get_size(fh, &size));
    if (rc == MPI_SUCCESS)
        *bytes = (int64_t)size;
    return rc;
}

int mpc_file_set_size(MPI_File fh, int64_t bytes) { return as_class(MPI_File_set_size(fh, bytes)); }

int mpc_file_sync(MPI_File fh) { return as_class(MPI_File_sync(fh)); }

int mpc_file_memory(size_t bytes, int *count, MPI_Datatype *type)
{
    size_t word;
    *type = word_of(bytes, &word);
    if (bytes / word > (size_t)INT_MAX)
        return MPC_ERR_TOO_LARGE;
    *count = (int)(bytes / word);
    return MPC_OK;
}

int mpc_file_at(MPI_File fh, int64_t offset, void *buf, int count, MPI_Datatype type, int kind,
                mpc_status *status)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc;
    switch (kind & (MPC_FILE_WRITE | MPC_FILE_COLLECTIVE)) {
    case MPC_FILE_WRITE | MPC_FILE_COLLECTIVE:
        rc = MPI_File_write_at_all(fh, offset, buf, count, type, &st);
        break;
    case MPC_FILE_WRITE: rc = MPI_File_write_at(fh, offset, buf, count, type, &st); break;
    case MPC_FILE_COLLECTIVE: rc = MPI_File_read_at_all(fh, offset, buf, count, type, &st); break;
    default: rc = MPI_File_read_at(fh, offset, buf, count, type, &st); break;
    }
    if (rc == MPI_SUCCESS)
        mpc_status_from_probe(&st, status); /* no cancel bit: only the byte count is read */
    return as_class(rc);
}

int mpc_file_iat(MPI_File fh, int64_t offset, void *buf, int count, MPI_Datatype type, int write,
                 mpc_request *req)
{
    return as_class(write ? MPI_File_iwrite_at(fh, offset, buf, count, type, req)
                          : MPI_File_iread_at(fh, offset, buf, count, type, req));
}

int mpc_file_readable(MPI_File fh, int64_t offset, int64_t count, size_t etype_size, int64_t *bytes)
{
    MPI_Offset size = 0, at = 0;
    int rc = MPI_File_get_size(fh, &size);
    if (rc != MPI_SUCCESS)
        return as_class(rc);
    /* the common case first: the last element lies inside, so all of them do */
    if (count > 0 && (rc = MPI_File_get_byte_offset(fh, offset + count - 1, &at)) != MPI_SUCCESS)
        return as_class(rc);
    if (count == 0 || at + (MPI_Offset)etype_size <= size) {
        *bytes = count * (int64_t)etype_size;
        return MPC_OK;
    }
    /* the elements' file positions grow with their index (a subarray's do): the last one
     * wholly inside the file by bisection over [0, count) */
    int64_t lo = 0, hi = count; /* elements [0, lo) lie inside; [hi, count) do not */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((rc = MPI_File_get_byte_offset(fh, offset + mid, &at)) != MPI_SUCCESS)
            return as_class(rc);
        if (at + (MPI_Offset)etype_size <= size)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t partial = 0;
    if (lo < count) { /* the part of the first element that passes the end */
        if ((rc = MPI_File_get_byte_offset(fh, offset + lo, &at)) != MPI_SUCCESS)
            return as_class(rc);
        partial = size > at ? (int64_t)(size - at) : 0;
    }
    *bytes = lo * (int64_t)etype_size + partial;
    return MPC_OK;
}

int mpc_file_test(mpc_request *req, int *done, int64_t *bytes)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = MPI_Test(req, done, &st);
    if (rc == MPI_SUCCESS && *done)
        *bytes = status_bytes(&st); /* no envelope, and nothing to cancel */
    return as_class(rc);
}

int mpc_file_view_types(size_t elem_size, int ndims, const int *gsizes, const int *sizes,
                        const int *starts, MPI_Datatype *etype, MPI_Datatype *filetype)
{
    size_t word;
    MPI_Datatype w = word_of(elem_size, &word), e = MPI_DATATYPE_NULL, f = MPI_DATATYPE_NULL;
    int rc = MPI_Type_contiguous((int)(elem_size / word), w, &e);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&e);
    int empty = 0;
    for (int d = 0; d < ndims; d++)
        empty |= sizes[d] == 0;
    if (rc == MPI_SUCCESS) /* MPI's subarray needs sizes of at least 1: an empty part reads 0 */
        rc = empty ? MPI_Type_contiguous(0, e, &f)
                   : MPI_Type_create_subarray(ndims, gsizes, sizes, starts, MPI_ORDER_C, e, &f);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&f);
    if (rc != MPI_SUCCESS) {
        if (f != MPI_DATATYPE_NULL)
            (void)MPI_Type_free(&f); /* failing already: the first error is the one */
        if (e != MPI_DATATYPE_NULL)
            (void)MPI_Type_free(&e);
        return rc;
    }
    *etype = e;
    *filetype = f;
    return MPC_OK;
}

int mpc_file_set_view(MPI_File fh, int64_t disp, MPI_Datatype etype, MPI_Datatype filetype)
{
    return as_class(MPI_File_set_view(fh, disp, etype, filetype, "native", MPI_INFO_NULL));
}

int mpc_file_type_free(MPI_Datatype *type)
{
    return *type == MPI_DATATYPE_NULL ? MPC_OK : MPI_Type_free(type);
}
