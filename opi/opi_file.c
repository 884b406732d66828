/* opi_file.c — MPFile: parallel files of managed arrays (MPI-IO). Collective open and close,
 * delete, size, sync, explicit-offset reads and writes of arrays' elements (independent,
 * collective, non-blocking), views of a row-major global array (a subarray filetype), and the
 * close at exit of the files a program did not dispose.
 *
 * An open file is a record here (the MPI_File, the access, the view's element size and this
 * rank's element count), which MPFile holds by id: nothing of it lives in managed memory, so a
 * dropped MPFile leaves a record that the end of MPI closes (opi_files_close_at_exit). The
 * arrays are zero-copy: a blocking access runs in a GC-safe bracket whose stack mark holds the
 * array (pinned only for the call), a non-blocking one is tracked in the registry like a
 * non-blocking receive or send (its array held until the request completes). ROMIO performs
 * the I/O of its "non-blocking" calls inside the call on a local file system: those run GC-safe
 * too, so that other threads' collections proceed while the disk works. */
#include "opi_icalls.h"

#include "layout.h"

#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* System.IO.FileMode and FileAccess, as C# numbers them */
enum {
    MODE_CREATE_NEW = 1,
    MODE_CREATE,
    MODE_OPEN,
    MODE_OPEN_OR_CREATE,
    MODE_TRUNCATE,
    MODE_APPEND
};
enum { ACCESS_READ = 1, ACCESS_WRITE = 2, ACCESS_READ_WRITE = 3 };
static const char *const mode_names[] = {"",         "CreateNew", "Create", "Open", "OpenOrCreate",
                                         "Truncate", "Append"};
static const char *const access_names[] = {"", "Read", "Write", "ReadWrite"};

typedef struct file_rec {
    int32_t id;
    MPI_File fh;
    int32_t access;     /* ACCESS_* */
    uint32_t view_elem; /* 0: no view; else the view's element size in bytes */
    int64_t view_count; /* with a view: this rank's elements of it */
    char *path;
} file_rec;

/* The open files, in the order they were opened; ids never reused. */
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static file_rec **files;
static int nfiles, files_cap;
static int32_t next_id = 1;

static int add_file(file_rec *r)
{
    pthread_mutex_lock(&files_lock);
    if (nfiles == files_cap) {
        int cap = files_cap ? 2 * files_cap : 8;
        file_rec **grown = realloc(files, (size_t)cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&files_lock);
            return MPC_ERR_NO_MEMORY;
        }
        files = grown;
        files_cap = cap;
    }
    r->id = next_id++;
    files[nfiles++] = r;
    pthread_mutex_unlock(&files_lock);
    return MPC_OK;
}

/* A copy of file id's record; MPC_ERR_REQUEST (recorded) when it is not open. */
static int get_file(int32_t id, file_rec *out)
{
    int found = 0;
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < nfiles; i++)
        if (files[i]->id == id) {
            *out = *files[i];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&files_lock);
    return found ? MPC_OK
                 : error_record(MPC_ERR_REQUEST, NULL, "the file (id %d) is not open", (int)id);
}

/* Takes file id's record out of the table (NULL: not open). */
static file_rec *take_file(int32_t id)
{
    file_rec *r = NULL;
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < nfiles; i++)
        if (files[i]->id == id) {
            r = files[i];
            memmove(&files[i], &files[i + 1], (size_t)(nfiles - i - 1) * sizeof *files);
            nfiles--;
            break;
        }
    pthread_mutex_unlock(&files_lock);
    return r;
}

static void set_view_of(int32_t id, uint32_t elem, int64_t count)
{
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < nfiles; i++)
        if (files[i]->id == id) {
            files[i]->view_elem = elem;
            files[i]->view_count = count;
        }
    pthread_mutex_unlock(&files_lock);
}

/* ---- errors ---- */

/* Whether the directory path lives in exists (path's own text, a copy cut by dirname). */
static int directory_exists(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return 1;
    struct stat st;
    int ok = stat(dirname(copy), &st) == 0 && S_ISDIR(st.st_mode);
    free(copy);
    return ok;
}

/* Records what MPI's failure rc of `what` on path means to a .NET programmer: the exception
 * FileStream would raise (FileNotFoundException, DirectoryNotFoundException,
 * UnauthorizedAccessException, IOException) from MPI's error class; other classes stay MPI's
 * code (an MPException). rank >= 0: the rank that failed (a collective's). */
static int file_error(int rc, int cls, const char *what, const char *path, int rank)
{
    if (rc <= 0)
        return rc;
    int code;
    switch (cls) {
    case MPI_ERR_NO_SUCH_FILE:
        code = directory_exists(path) ? OPI_ERR_FILE_NOT_FOUND : OPI_ERR_DIRECTORY_NOT_FOUND;
        break;
    case MPI_ERR_FILE_EXISTS: code = OPI_ERR_FILE_EXISTS; break;
    case MPI_ERR_ACCESS:
    case MPI_ERR_READ_ONLY: code = OPI_ERR_FILE_ACCESS; break;
    case MPI_ERR_BAD_FILE:
    case MPI_ERR_IO:
    case MPI_ERR_NO_SPACE:
    case MPI_ERR_QUOTA:
    case MPI_ERR_FILE_IN_USE:
    case MPI_ERR_AMODE:
    case MPI_ERR_CONVERSION:
    case MPI_ERR_UNSUPPORTED_DATAREP:
    case MPI_ERR_UNSUPPORTED_OPERATION:
    case MPI_ERR_FILE: code = OPI_ERR_FILE_IO; break;
    default: code = rc; break;
    }
    const char *reason = code == OPI_ERR_FILE_NOT_FOUND        ? "the file does not exist"
                         : code == OPI_ERR_DIRECTORY_NOT_FOUND ? "its directory does not exist"
                         : code == OPI_ERR_FILE_EXISTS         ? "the file exists already"
                         : code == OPI_ERR_FILE_ACCESS
                             ? "permission denied (or a read-only file or file system)"
                             : "an input/output error";
    char at[48] = "";
    if (rank >= 0)
        snprintf(at, sizeof at, " (on rank %d)", rank);
    return error_record(code, NULL, "%s \"%s\" failed%s: %s. MPI: %s", what, path, at, reason,
                        mpc_strerror(rc));
}

/* The error of an access to an open file (its class from MPI's code). */
static int access_error(int rc, const char *what, const file_rec *r)
{
    if (rc <= 0)
        return rc;
    return file_error(rc, mpc_error_class(rc), what, r->path, -1);
}

/* ---- open, close, delete ---- */

/* The path's bytes (a NUL-terminated UTF-8 byte[]) copied to C memory (free it). */
static int path_copy(MonoObject *path, char **out)
{
    opi_buffer b;
    int rc = opi_buffer_whole_as(path, "path", &b);
    if (rc != MPC_OK)
        return rc;
    size_t n = strnlen(b.data, b.bytes);
    if (n == 0)
        return error_record(OPI_ERR_BAD_ARGUMENT, "path", "path is empty");
    *out = strndup(b.data, n);
    return *out ? MPC_OK : error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a path");
}

/* What open does, in plain C and MPI calls only (inside the caller's GC-safe bracket). */
struct open_args {
    MPI_Comm comm;
    const char *path;
    int mode, access;
    MPI_File fh;
    int cls, rank;    /* the failure's class and rank */
    const char *what; /* the step that failed */
};

static int open_sequence(struct open_args *a)
{
    int base = a->access == ACCESS_READ    ? MPI_MODE_RDONLY
               : a->access == ACCESS_WRITE ? MPI_MODE_WRONLY
                                           : MPI_MODE_RDWR;
    int amode = base;
    switch (a->mode) {
    case MODE_CREATE_NEW: amode |= MPI_MODE_CREATE | MPI_MODE_EXCL; break;
    case MODE_CREATE:
    case MODE_OPEN_OR_CREATE:
        if (a->access != ACCESS_READ) /* MPI forbids CREATE with RDONLY: see below */
            amode |= MPI_MODE_CREATE;
        break;
    case MODE_APPEND: amode |= MPI_MODE_CREATE | MPI_MODE_APPEND; break;
    default: break;
    }
    a->what = "opening";
    int rc = mpc_file_open(a->comm, a->path, amode, &a->fh, &a->cls, &a->rank);
    if (rc != MPC_OK && a->mode == MODE_OPEN_OR_CREATE && a->access == ACCESS_READ &&
        a->cls == MPI_ERR_NO_SUCH_FILE) {
        /* OpenOrCreate for reading a file not there: create it empty, then open it to read */
        MPI_File made = MPI_FILE_NULL;
        a->what = "creating";
        rc = mpc_file_open(a->comm, a->path, MPI_MODE_WRONLY | MPI_MODE_CREATE, &made, &a->cls,
                           &a->rank);
        if (rc == MPC_OK && (rc = mpc_file_close(&made)) != MPC_OK)
            a->cls = mpc_error_class(rc);
        if (rc == MPC_OK) {
            a->what = "opening";
            rc = mpc_file_open(a->comm, a->path, amode, &a->fh, &a->cls, &a->rank);
        }
    }
    if (rc != MPC_OK)
        return rc;
    if (a->mode == MODE_CREATE || a->mode == MODE_TRUNCATE) {
        a->what = "truncating";
        rc = mpc_file_set_size(a->fh, 0);
        if (rc != MPC_OK) {
            a->cls = mpc_error_class(rc);
            a->rank = -1;
            (void)mpc_file_close(&a->fh); /* failing already */
            a->fh = MPI_FILE_NULL;
        }
    }
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_file_open(int32_t comm, MonoObject *path, int32_t mode,
                                          int32_t access, int32_t *id)
{
    int rc;
    if ((rc = check_comm(comm)))
        return rc;
    if (mode < MODE_CREATE_NEW || mode > MODE_APPEND)
        return error_record(OPI_ERR_OUT_OF_RANGE, "mode", "mode %d is not a System.IO.FileMode",
                            (int)mode);
    if (access < ACCESS_READ || access > ACCESS_READ_WRITE)
        return error_record(OPI_ERR_OUT_OF_RANGE, "access",
                            "access %d is not a System.IO.FileAccess", (int)access);
    /* the combinations FileStream refuses */
    if ((access == ACCESS_READ && (mode == MODE_CREATE_NEW || mode == MODE_CREATE ||
                                   mode == MODE_TRUNCATE || mode == MODE_APPEND)) ||
        (mode == MODE_APPEND && access != ACCESS_WRITE))
        return error_record(OPI_ERR_BAD_ARGUMENT, "access",
                            "FileMode.%s needs FileAccess.%s; access is FileAccess.%s",
                            mode_names[mode], mode == MODE_APPEND ? "Write" : "Write or ReadWrite",
                            access_names[access]);
    char *p = NULL;
    if ((rc = path_copy(path, &p)))
        return rc;
    struct open_args a = {
        .comm = comm, .path = p, .mode = mode, .access = access, .fh = MPI_FILE_NULL, .rank = -1};
    XFER_BLOCKING_BEGIN();
    rc = open_sequence(&a);
    XFER_BLOCKING_END;
    if (rc != MPC_OK) {
        char what[64];
        snprintf(what, sizeof what, "%s (FileMode.%s, FileAccess.%s)", a.what, mode_names[mode],
                 access_names[access]);
        rc = file_error(rc, a.cls, what, p, a.rank);
        free(p);
        return rc;
    }
    file_rec *r = calloc(1, sizeof *r);
    if (r) {
        r->fh = a.fh;
        r->access = access;
        r->path = p;
    }
    if (!r || add_file(r) != MPC_OK) {
        free(r);
        free(p);
        XFER_BLOCKING_BEGIN();
        (void)mpc_file_close(&a.fh); /* failing already: out of memory is what is reported */
        XFER_BLOCKING_END;
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory recording an open file");
    }
    *id = r->id;
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_file_close(int32_t id)
{
    file_rec *r = take_file(id);
    if (!r)
        return MPC_OK; /* closed already */
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_file_close(&r->fh);
    XFER_BLOCKING_END;
    rc = access_error(rc, "closing", r);
    free(r->path);
    free(r);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_file_delete(MonoObject *path)
{
    char *p = NULL;
    int rc, cls = MPI_SUCCESS;
    if ((rc = path_copy(path, &p)))
        return rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_file_delete(p, &cls);
    XFER_BLOCKING_END;
    /* as File.Delete: a missing file is no error, a missing directory is */
    if (rc != MPC_OK && cls == MPI_ERR_NO_SUCH_FILE && directory_exists(p))
        rc = MPC_OK;
    rc = file_error(rc, cls, "deleting", p, -1);
    free(p);
    return rc;
}

void opi_files_close_at_exit(void)
{
    for (;;) {
        pthread_mutex_lock(&files_lock);
        file_rec *r = nfiles > 0 ? files[0] : NULL;
        pthread_mutex_unlock(&files_lock);
        if (!r)
            break;
        r = take_file(r->id);
        if (!r)
            continue;
        fprintf(stderr,
                "motor: warning: MPFile \"%s\" was not disposed; closing it at the end of MPI "
                "(collective: every rank closes its undisposed files in the order it opened "
                "them)\n",
                r->path);
        int rc = mpc_file_close(&r->fh);
        if (rc != MPC_OK)
            fprintf(stderr, "motor: closing \"%s\" at the end failed: %s\n", r->path,
                    mpc_strerror(rc));
        free(r->path);
        free(r);
    }
}

/* ---- size, sync ---- */

RT_HOLDS_STACK_MARK int32_t opi_file_size(int32_t id, int64_t *bytes)
{
    file_rec r = {0};
    int rc;
    if ((rc = get_file(id, &r)))
        return rc;
    int64_t size = 0;
    XFER_BLOCKING_BEGIN();
    rc = mpc_file_get_size(r.fh, &size);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *bytes = size;
    return access_error(rc, "reading the length of", &r);
}

static int refuse_access(const file_rec *r, int write)
{
    return error_record(OPI_ERR_NOT_SUPPORTED, NULL,
                        "\"%s\" was opened with FileAccess.%s: it cannot be %s (as FileStream)",
                        r->path, access_names[r->access], write ? "written" : "read");
}

RT_HOLDS_STACK_MARK int32_t opi_file_set_size(int32_t id, int64_t bytes)
{
    file_rec r = {0};
    int rc;
    if ((rc = get_file(id, &r)))
        return rc;
    if (bytes < 0)
        return error_record(OPI_ERR_OUT_OF_RANGE, "bytes", "bytes %lld is negative",
                            (long long)bytes);
    if (!(r.access & ACCESS_WRITE))
        return refuse_access(&r, 1);
    XFER_BLOCKING_BEGIN();
    rc = mpc_file_set_size(r.fh, bytes);
    XFER_BLOCKING_END;
    return access_error(rc, "setting the length of", &r);
}

RT_HOLDS_STACK_MARK int32_t opi_file_sync(int32_t id)
{
    file_rec r = {0};
    int rc;
    if ((rc = get_file(id, &r)))
        return rc;
    if (!(r.access & ACCESS_WRITE))
        return MPC_OK; /* nothing written to flush (every rank opened it alike) */
    XFER_BLOCKING_BEGIN();
    rc = mpc_file_sync(r.fh);
    XFER_BLOCKING_END;
    return access_error(rc, "syncing", &r);
}

/* ---- reads and writes ---- */

/* The status of a file access: Count the whole elements moved, Bytes exact, no envelope. */
static void file_status(opi_status *out, int64_t bytes, uint32_t elem_size)
{
    out->source = OPI_ANY_SOURCE;
    out->tag = OPI_ANY_TAG;
    out->cancelled = 0;
    out->bytes = bytes;
    int64_t n = elem_size ? bytes / elem_size : 0;
    out->count = n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

/* What one explicit-offset access moves: (data, count, type) of array[array_offset ..
 * array_offset + count), checked against the file's access and view. */
struct access {
    file_rec r;
    opi_buffer b;
    int n;
    MPI_Datatype type;
};

static int access_prepare(int32_t id, int64_t offset, MonoObject *array, int32_t array_offset,
                          int32_t count, int write, struct access *x)
{
    int rc;
    if ((rc = get_file(id, &x->r)))
        return rc;
    if (!(x->r.access & (write ? ACCESS_WRITE : ACCESS_READ)))
        return refuse_access(&x->r, write);
    if ((rc = opi_buffer_whole_as(array, "array", &x->b)))
        return rc;
    uint32_t elem = x->b.elem_size;
    if (elem == 0)
        return error_record(OPI_ERR_BAD_ARGUMENT, "array",
                            "array's elements have no bytes: nothing to read or write");
    size_t length = x->b.bytes / elem;
    if (array_offset < 0 || (size_t)array_offset > length)
        return error_record(OPI_ERR_OFFSET, "arrayOffset",
                            "arrayOffset %d is outside 0..%zu, the length of array",
                            (int)array_offset, length);
    if (count < 0)
        return error_record(OPI_ERR_COUNT, "count", "count %d is negative", (int)count);
    if ((size_t)count > length - (size_t)array_offset)
        return error_record(OPI_ERR_COUNT, "count",
                            "count %d from arrayOffset %d passes the end of array (length %zu: "
                            "%zu fit)",
                            (int)count, (int)array_offset, length, length - (size_t)array_offset);
    if (offset < 0)
        return error_record(OPI_ERR_OUT_OF_RANGE, "offset", "offset %lld is negative",
                            (long long)offset);
    if (x->r.view_elem && x->r.view_elem != elem)
        return error_record(OPI_ERR_TYPE_MISMATCH, "array",
                            "array's elements have %u bytes and the view's %u: with a view, "
                            "offsets and counts are in the view's element type",
                            elem, x->r.view_elem);
    x->b.data += (size_t)array_offset * elem;
    x->b.bytes = (size_t)count * elem;
    if ((rc = mpc_file_memory(x->b.bytes, &x->n, &x->type)))
        return error_record(rc, "count",
                            "count %d elements of %u bytes is too large for one "
                            "MPI-IO call",
                            (int)count, elem);
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_file_at(int32_t id, int64_t offset, MonoObject *array,
                                        int32_t array_offset, int32_t count, int32_t kind,
                                        opi_status *status)
{
    struct access x = {0};
    int write = kind & MPC_FILE_WRITE, rc;
    if ((rc = access_prepare(id, offset, array, array_offset, count, write, &x)))
        return rc;
    mpc_status st = {0};
    size_t unit = x.r.view_elem ? x.r.view_elem : 1; /* what offsets count */
    int64_t readable = INT64_MAX;
    XFER_BLOCKING_BEGIN(array);
    rc = mpc_file_at(x.r.fh, offset, x.b.data, x.n, x.type, kind, &st);
    if (rc == MPC_OK && kind == MPC_FILE_COLLECTIVE)
        rc = mpc_file_readable(x.r.fh, offset, (int64_t)(x.b.bytes / unit), unit, &readable);
    XFER_BLOCKING_END;
    if (st.bytes > readable)
        st.bytes = readable;
    gch_count(GCH_OPERATIONS, 1);
    if (rc != MPC_OK)
        return access_error(rc, write ? "writing" : "reading", &x.r);
    file_status(status, st.bytes, x.b.elem_size);
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_file_iat(int32_t id, int64_t offset, MonoObject *array,
                                         int32_t array_offset, int32_t count, int32_t write,
                                         MonoObject *owner, int64_t *req_id, opi_status *status)
{
    struct access x = {0};
    int rc;
    if ((rc = access_prepare(id, offset, array, array_offset, count, write, &x)))
        return rc;
    uint32_t early_pin; /* MOTOR_PIN_POLICY=every: pinned before the access starts */
    xfer_early_pins(&array, 1, &early_pin);
    xfer_started s = {0};
    int64_t moved = 0;
    XFER_BLOCKING_BEGIN(array);
    rc = mpc_file_iat(x.r.fh, offset, x.b.data, x.n, x.type, write, &s.req);
    if (rc == MPC_OK)
        s.test_rc = mpc_file_test(&s.req, &s.done, &moved);
    XFER_BLOCKING_END;
    if (rc != MPC_OK) {
        xfer_early_unpin(&early_pin, 1);
        return access_error(rc, write ? "writing" : "reading", &x.r);
    }
    s.st.bytes = moved;
    s.st.source = MPI_ANY_SOURCE;
    s.st.tag = MPI_ANY_TAG;
    xfer_info info = {.elem_size = x.b.elem_size,
                      .is_send = XFER_FILE_ACCESS,
                      .tag = OPI_ANY_TAG,
                      .bytes = (int64_t)x.b.bytes};
    opi_status got = {0};
    int64_t made = -1;
    rc = opi_track_transfer(&s, &array, 1, &early_pin, owner, &info, "the array", &made, &got);
    if (made < 0 && got.error > 0)
        got.error = access_error(got.error, write ? "writing" : "reading", &x.r);
    *req_id = made;
    *status = got;
    return rc;
}

/* ---- views ---- */

RT_HOLDS_STACK_MARK int32_t opi_file_set_view(int32_t id, int64_t displacement, MonoObject *sample,
                                              MonoObject *global_sizes, MonoObject *spec,
                                              int64_t *local_count)
{
    file_rec r = {0};
    opi_buffer e;
    int rc;
    if ((rc = get_file(id, &r)))
        return rc;
    if (displacement < 0)
        return error_record(OPI_ERR_OUT_OF_RANGE, "displacement", "displacement %lld is negative",
                            (long long)displacement);
    if ((rc = opi_buffer_whole_as(sample, "elementType", &e)))
        return rc;
    if (e.elem_size == 0)
        return error_record(OPI_ERR_BAD_ARGUMENT, "elementType",
                            "elementType has no bytes: a view needs elements of at least 1 byte");
    if (!global_sizes)
        return error_record(OPI_ERR_NULL_ARGUMENT, "globalSizes", "globalSizes must not be null");
    size_t nd = rt_array_length(global_sizes), ns = rt_array_length(spec);
    const int32_t *g = (const int32_t *)rt_array_data(global_sizes);
    const int32_t *sp = (const int32_t *)rt_array_data(spec);
    if (nd < 1 || nd > MPC_REGION_MAX_DIMS)
        return error_record(OPI_ERR_BAD_ARGUMENT, "globalSizes",
                            "globalSizes has %zu dimensions: 1 to %d are possible", nd,
                            MPC_REGION_MAX_DIMS);
    if (ns < 4 || sp[1] < 1 || ns != 2 + 2 * (size_t)sp[1])
        return error_record(OPI_ERR_BAD_ARGUMENT, "local", "local is not a region System.MP made");
    if (sp[0] != 0)
        return error_record(OPI_ERR_BAD_ARGUMENT, "local",
                            "local is a Region.Strided: a view's part is a box (new Region(starts, "
                            "sizes), Region.Rows or Region.Columns)");
    if ((size_t)sp[1] != nd)
        return error_record(OPI_ERR_BAD_ARGUMENT, "local",
                            "local has %d dimension%s and globalSizes %zu", sp[1],
                            sp[1] == 1 ? "" : "s", nd);
    int gs[MPC_REGION_MAX_DIMS], starts[MPC_REGION_MAX_DIMS], sizes[MPC_REGION_MAX_DIMS];
    int64_t n = 1, total = 1;
    for (size_t d = 0; d < nd; d++) {
        int32_t start = sp[2 + d], size = sp[2 + nd + d];
        if (g[d] < 0)
            return error_record(OPI_ERR_OUT_OF_RANGE, "globalSizes",
                                "globalSizes[%zu] is %d (negative)", d, g[d]);
        if (start < 0 || size < -1)
            return error_record(OPI_ERR_OUT_OF_RANGE, "local",
                                "local dimension %zu: start %d, size %d (negative)", d, start,
                                size);
        if (size == -1)
            size = start <= g[d] ? g[d] - start : 0;
        if ((int64_t)start + size > g[d])
            return error_record(OPI_ERR_OUT_OF_RANGE, "local",
                                "local dimension %zu: start %d and size %d pass the end of the "
                                "global array, whose size in that dimension is %d",
                                d, start, size, g[d]);
        gs[d] = g[d];
        starts[d] = start;
        sizes[d] = size;
        n *= size;
        total *= g[d];
    }
    (void)total;
    MPI_Datatype etype = MPI_DATATYPE_NULL, filetype = MPI_DATATYPE_NULL;
    XFER_MPI_BEGIN();
    rc = mpc_file_view_types(e.elem_size, (int)nd, gs, sizes, starts, &etype, &filetype);
    XFER_MPI_END;
    if (rc != MPC_OK)
        return rc;
    int freed;
    XFER_BLOCKING_BEGIN();
    rc = mpc_file_set_view(r.fh, displacement, etype, filetype);
    /* MPI keeps what the view needs */
    freed = mpc_file_type_free(&filetype);
    if (freed == MPC_OK)
        freed = mpc_file_type_free(&etype);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        rc = freed;
    if (rc != MPC_OK)
        return access_error(rc, "setting the view of", &r);
    set_view_of(id, e.elem_size, n);
    *local_count = n;
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_file_all(int32_t id, MonoObject *array, int32_t write)
{
    file_rec r = {0};
    opi_buffer b;
    int rc;
    if ((rc = get_file(id, &r)))
        return rc;
    if (!(r.access & (write ? ACCESS_WRITE : ACCESS_READ)))
        return refuse_access(&r, write);
    if (!r.view_elem)
        return error_record(MPC_ERR_NOT_INITIALIZED, NULL,
                            "%s \"%s\" needs a view: call SetView first",
                            write ? "WriteAll to" : "ReadAll from", r.path);
    if ((rc = opi_buffer_whole_as(array, "array", &b)))
        return rc;
    if (b.elem_size != r.view_elem)
        return error_record(OPI_ERR_TYPE_MISMATCH, "array",
                            "array's elements have %u bytes and the view's %u", b.elem_size,
                            r.view_elem);
    int64_t length = (int64_t)(b.bytes / b.elem_size);
    if (length != r.view_count)
        return error_record(OPI_ERR_BAD_ARGUMENT, "array",
                            "array holds %lld elements and this rank's part of the view %lld: "
                            "they must be equal",
                            (long long)length, (long long)r.view_count);
    int n;
    MPI_Datatype type;
    if ((rc = mpc_file_memory(b.bytes, &n, &type)))
        return error_record(rc, "array", "array's %zu bytes are too many for one MPI-IO call",
                            b.bytes);
    mpc_status st = {0};
    int64_t readable = INT64_MAX;
    XFER_BLOCKING_BEGIN(array);
    rc = mpc_file_at(r.fh, 0, b.data, n, type, MPC_FILE_COLLECTIVE | (write ? MPC_FILE_WRITE : 0),
                     &st);
    if (rc == MPC_OK && !write) /* (ROMIO reports what was asked for, even past the end) */
        rc = mpc_file_readable(r.fh, 0, length, r.view_elem, &readable);
    XFER_BLOCKING_END;
    if (st.bytes > readable)
        st.bytes = readable;
    gch_count(GCH_OPERATIONS, 1);
    if (rc != MPC_OK)
        return access_error(rc, write ? "writing (collective)" : "reading (collective)", &r);
    if (!write && (size_t)st.bytes < b.bytes)
        return error_record(OPI_ERR_FILE_IO, NULL,
                            "ReadAll from \"%s\": the file ends inside this rank's part of the "
                            "view: %lld of its %zu bytes were read (the rest of array is as it "
                            "was)",
                            r.path, (long long)st.bytes, b.bytes);
    return MPC_OK;
}
