/* opi_ops.c — reduction operators: MPI's built-ins on the element types MPI defines them for,
 * and user operators written in C#. A user operator's native entry point is a libffi closure
 * (MPI's user function has no user-data argument: the closure carries the operator); it calls
 * the operator's managed trampoline (Combiner.Apply) through a cached unmanaged thunk, which
 * applies the C# delegate element-wise over the raw vectors. */
#include "opi_icalls.h"

#include "gc_hooks.h"
#include "names.h"

#include <ffi.h>
#include <mono/metadata/appdomain.h>
#include <mono/metadata/blob.h>
#include <mono/metadata/class.h>
#include <mono/metadata/reflection.h>
#include <mono/metadata/threads.h>
#include <pthread.h>
#include <stdlib.h>

enum op_family { ARITHMETIC, LOGICAL, BITWISE, ONE_SIDED };

static const struct {
    MPI_Op op;
    enum op_family family;
    const char *name; /* for messages */
} builtins[OP_BUILTINS] = {
#define OPI_OP_ENTRY(name, mpi_op, family) [OP_##name] = {mpi_op, family, #mpi_op},
    OPI_BUILTIN_OPS(OPI_OP_ENTRY)
#undef OPI_OP_ENTRY
};

/* The MPI datatype of a primitive element (char travels as its UTF-16 code unit). */
static MPI_Datatype primitive_datatype(int t)
{
    switch (t) {
    case MONO_TYPE_BOOLEAN: return MPI_C_BOOL;
    case MONO_TYPE_I1: return MPI_INT8_T;
    case MONO_TYPE_U1: return MPI_UINT8_T;
    case MONO_TYPE_I2: return MPI_INT16_T;
    case MONO_TYPE_U2:
    case MONO_TYPE_CHAR: return MPI_UINT16_T;
    case MONO_TYPE_I4: return MPI_INT32_T;
    case MONO_TYPE_U4: return MPI_UINT32_T;
    case MONO_TYPE_I8:
    case MONO_TYPE_I: return MPI_INT64_T;
    case MONO_TYPE_U8:
    case MONO_TYPE_U: return MPI_UINT64_T;
    case MONO_TYPE_R4: return MPI_FLOAT;
    case MONO_TYPE_R8: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

/* Which families MPI defines for an element type (MPI-4 §6.9.2). */
static int family_allowed(enum op_family f, int t)
{
    switch (t) {
    case MONO_TYPE_BOOLEAN: return f == LOGICAL;
    case MONO_TYPE_R4:
    case MONO_TYPE_R8: return f == ARITHMETIC;
    default: return primitive_datatype(t) != MPI_DATATYPE_NULL; /* integers: every family */
    }
}

/* ---- user operators ---- */

typedef void (*apply_thunk)(MonoObject *combiner, void *invec, void *inout, int32_t len,
                            MonoObject **exc);

typedef struct user_op {
    MPI_Op op;
    ffi_closure *closure;
    uint32_t combiner; /* pinned handle on the managed Combiner (see user_op_entry) */
    apply_thunk thunk;
    MonoClass *elem_class;
    MPI_Datatype datatype; /* primitive type, or contiguous bytes for a struct */
    uint32_t struct_bytes; /* a struct's size: the datatype is the operator's own; 0 otherwise */
} user_op;

#define USER_OP_BASE 100 /* user operator codes start here */
static pthread_mutex_t ops_lock = PTHREAD_MUTEX_INITIALIZER;
static user_op **user_ops;
static int32_t user_op_capacity;
static ffi_cif apply_cif;
static ffi_type *apply_args[4];
static pthread_once_t cif_once = PTHREAD_ONCE_INIT;
static int cif_status;
static __thread int thread_known __attribute__((tls_model("initial-exec")));

static void prepare_cif(void)
{
    for (int i = 0; i < 4; i++)
        apply_args[i] = &ffi_type_pointer;
    cif_status = ffi_prep_cif(&apply_cif, FFI_DEFAULT_ABI, 4, &ffi_type_void, apply_args);
}

/* The closure's body: MPI_User_function(invec, inoutvec, len, datatype). Runs on whichever
 * thread drives MPI's progress — normally the caller of the collective, possibly another
 * thread polling MPI. */
static void user_op_entry(ffi_cif *cif, void *ret, void **args, void *data)
{
    (void)cif;
    (void)ret;
    user_op *u = data;
    void *invec = *(void **)args[0], *inout = *(void **)args[1];
    int len = **(int **)args[2];
    /* A thread Mono has not seen must be attached before managed code runs. Only then: this
     * thread is normally in a GC-safe region, where mono_thread_attach on an attached thread
     * aborts when its lock is contended (it moves to GC-safe for the wait, from GC-safe). */
    if (!thread_known) {
        if (!mono_domain_get())
            mono_thread_attach(mono_get_root_domain());
        thread_known = 1;
    }
    /* A collection the operator triggers runs the GC hook on this thread, inside MPI: the
     * reduction's xfer_user_op_reduction_begin keeps the hook out of MPI meanwhile. */
    MonoObject *exc = NULL;
    u->thunk(mono_gchandle_get_target(u->combiner), invec, inout, len, &exc);
    /* Apply catches everything itself (and records it for the caller); exc is a last resort. */
    (void)exc;
}

/* Makes the operator's MPI handles (a struct's datatype first): inside a bracket. */
static int create_handles(user_op *u, MPI_User_function *fn, int commutative)
{
    int rc;
    if (u->struct_bytes && (rc = mpc_type_bytes(u->struct_bytes, &u->datatype)) != MPC_OK)
        return rc;
    if ((rc = mpc_op_create(fn, commutative, &u->op)) != MPC_OK && u->struct_bytes)
        mpc_type_free(&u->datatype); /* the first error is the one to report */
    return rc;
}

/* Frees them: inside a bracket. */
static int free_handles(user_op *u)
{
    int rc = mpc_op_free(&u->op);
    if (u->struct_bytes) {
        int type_rc = mpc_type_free(&u->datatype);
        if (rc == MPC_OK)
            rc = type_rc;
    }
    return rc;
}

/* Frees what opi_op_create made before it registers the operator. */
static void discard(user_op *u)
{
    if (u->combiner)
        mono_gchandle_free(u->combiner);
    ffi_closure_free(u->closure);
    free(u);
}

/* The MPI datatype of an operator's elements, of class k: a primitive's, or MPI_DATATYPE_NULL
 * and *struct_bytes for a struct without references; anything else is refused. */
static int element_datatype(MonoClass *k, const rt_class_plan *plan, MPI_Datatype *dt,
                            uint32_t *struct_bytes)
{
    *struct_bytes = 0;
    if ((*dt = primitive_datatype(plan->elem_type)) != MPI_DATATYPE_NULL)
        return MPC_OK;
    const char *field = plan->first_reference;
    if (field || !plan->value_type) {
        char *name = rt_class_name(k);
        error_record(OPI_ERR_NOT_TRANSPORTABLE, NULL,
                     "%s %s%s: a reduction operator works on primitive types and structs without "
                     "references",
                     name ? name : "?",
                     field ? "holds a reference in field " : "is not a value type",
                     field ? field : "");
        free(name);
        return OPI_ERR_NOT_TRANSPORTABLE;
    }
    uint32_t align;
    *struct_bytes = (uint32_t)mono_class_value_size(k, &align);
    return MPC_OK;
}

/* The operator's record, with the libffi closure MPI calls (*code_ptr) into combiner's
 * Combiner<T>.Apply; the combiner is not held yet. */
static int make_closure(MonoObject *combiner, MonoClass *k, MPI_Datatype dt, uint32_t struct_bytes,
                        user_op **out, void **code_ptr)
{
    MonoMethod *apply =
        mono_class_get_method_from_name(mono_object_get_class(combiner), "Apply", 3);
    if (!apply)
        return error_record(RT_ERR_RUNTIME, NULL, "the operator's class has no Apply method");
    user_op *u = calloc(1, sizeof *u);
    if (!u || !(u->closure = ffi_closure_alloc(sizeof(ffi_closure), code_ptr))) {
        free(u);
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a user operator's closure");
    }
    u->thunk = (apply_thunk)mono_method_get_unmanaged_thunk(apply);
    u->elem_class = k;
    u->datatype = dt;
    u->struct_bytes = struct_bytes;
    if (!u->thunk ||
        ffi_prep_closure_loc(u->closure, &apply_cif, user_op_entry, u, *code_ptr) != FFI_OK) {
        discard(u);
        return error_record(RT_ERR_RUNTIME, NULL,
                            "libffi could not prepare the operator's closure");
    }
    *out = u;
    return MPC_OK;
}

/* Puts u in the first free entry of the table of operators: its index, or -1 when out of memory. */
static int32_t table_add(user_op *u)
{
    pthread_mutex_lock(&ops_lock);
    int32_t i = 0;
    while (i < user_op_capacity && user_ops[i])
        i++;
    if (i == user_op_capacity) {
        int32_t grown = user_op_capacity ? user_op_capacity * 2 : 16;
        user_op **g = realloc(user_ops, (size_t)grown * sizeof *g);
        if (!g) {
            pthread_mutex_unlock(&ops_lock);
            return -1;
        }
        for (int32_t j = user_op_capacity; j < grown; j++)
            g[j] = NULL;
        user_ops = g;
        user_op_capacity = grown;
    }
    user_ops[i] = u;
    pthread_mutex_unlock(&ops_lock);
    return i;
}

RT_HOLDS_STACK_MARK int32_t opi_op_create(MonoReflectionType *element, MonoObject *combiner,
                                          int32_t commutative, int32_t *code)
{
    if (!element || !combiner)
        return error_record(OPI_ERR_NULL_ARGUMENT, NULL,
                            "the operator's element type or function is null");
    pthread_once(&cif_once, prepare_cif);
    if (cif_status != FFI_OK)
        return error_record(RT_ERR_RUNTIME, NULL,
                            "libffi cannot describe the operator's calls (status %d)", cif_status);
    MonoClass *k = mono_class_from_mono_type(mono_reflection_type_get_type(element));
    const rt_class_plan *plan = rt_plan_for_class(k);
    if (!plan)
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a class plan");
    MPI_Datatype dt;
    uint32_t struct_bytes;
    user_op *u = NULL;
    void *code_ptr = NULL;
    int rc;
    if ((rc = element_datatype(k, plan, &dt, &struct_bytes)) != MPC_OK ||
        (rc = make_closure(combiner, k, dt, struct_bytes, &u, &code_ptr)) != MPC_OK)
        return rc;
    /* pinned: user_op_entry reads its address in a GC-safe region, where a collection by
     * another thread could otherwise move it before the thunk enters managed code */
    u->combiner = mono_gchandle_new(combiner, 1);
    /* From here on a C# operator exists as far as the rule is concerned (transfer.h): MPI is
     * called GC-safe everywhere before this one can be used. No object is needed after. */
    xfer_user_op_add();
    XFER_MPI_BEGIN();
    rc = create_handles(u, (MPI_User_function *)code_ptr, commutative != 0);
    XFER_MPI_END;
    int32_t i = rc == MPC_OK ? table_add(u) : -1;
    if (rc == MPC_OK && i < 0) {
        XFER_MPI_BEGIN();
        (void)free_handles(u); /* out of memory is the error to report */
        XFER_MPI_END;
        rc = error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for the table of user operators");
    }
    if (rc != MPC_OK) {
        xfer_user_op_remove();
        discard(u);
        return rc;
    }
    *code = USER_OP_BASE + i;
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_op_free(int32_t code)
{
    user_op *u = NULL;
    pthread_mutex_lock(&ops_lock);
    int32_t i = code - USER_OP_BASE;
    if (i >= 0 && i < user_op_capacity) {
        u = user_ops[i];
        user_ops[i] = NULL;
    }
    pthread_mutex_unlock(&ops_lock);
    if (!u)
        return MPC_OK;
    int rc = MPC_OK;
    if (mpc_is_initialized()) {
        XFER_MPI_BEGIN();
        rc = free_handles(u);
        XFER_MPI_END;
    }
    xfer_user_op_remove();
    /* Collectives complete before their call returns, so no running one can still use it. */
    discard(u);
    return rc;
}

/* Records that operator `op` (its name) is not defined for the element class, and why. */
static int op_refused(const char *op, MonoClass *element, const char *why)
{
    char *name = rt_class_name(element);
    error_record(OPI_ERR_OP, "op", "%s is not defined for %s elements: %s", op, name ? name : "?",
                 why);
    free(name);
    return OPI_ERR_OP;
}

int opi_op_resolve(int32_t code, const rt_class_plan *elements, MPI_Op *op, MPI_Datatype *dt)
{
    static const char *const families[] = {
        [ARITHMETIC] = "arithmetic operators take numbers",
        [LOGICAL] = "logical operators take bool and integer types",
        [BITWISE] = "bitwise operators take integer types",
    };
    if (code == OP_REPLACE || code == OP_NO_OP)
        return error_record(
            OPI_ERR_OP, "op",
            "%s (%s) is for one-sided communication only (%s); a reduction takes Op.Sum, Op.Prod, "
            "Op.Min, Op.Max, Op.LAnd, Op.LOr, Op.BAnd, Op.BOr, Op.BXor or an Op.Create operator",
            code == OP_REPLACE ? "Op.Replace" : "Op.NoOp", builtins[code].name,
            code == OP_REPLACE ? "Window.Accumulate and Window.FetchAndOp"
                               : "Window.FetchAndOp, as an atomic read");
    if (code >= 0 && code < OP_BUILTINS) {
        *dt = primitive_datatype(elements->elem_type);
        if (*dt == MPI_DATATYPE_NULL)
            return op_refused(
                builtins[code].name, elements->elem_class,
                "MPI's operators take primitive types; make one for a struct with Op.Create");
        if (!family_allowed(builtins[code].family, elements->elem_type))
            return op_refused(builtins[code].name, elements->elem_class,
                              families[builtins[code].family]);
        *op = builtins[code].op;
        return MPC_OK;
    }
    pthread_mutex_lock(&ops_lock);
    int32_t i = code - USER_OP_BASE;
    user_op *u = i >= 0 && i < user_op_capacity ? user_ops[i] : NULL;
    MonoClass *made_for = u ? u->elem_class : NULL;
    if (u && u->elem_class == elements->elem_class) {
        *op = u->op;
        *dt = u->datatype;
    }
    pthread_mutex_unlock(&ops_lock);
    if (!made_for)
        return error_record(OPI_ERR_OP, "op",
                            "operator %d is not a live operator (it was disposed)", code);
    if (made_for != elements->elem_class) {
        char *made = rt_class_name(made_for), *given = rt_class_name(elements->elem_class);
        error_record(OPI_ERR_OP, "op",
                     "the user operator is not defined for %s elements: it was made for %s",
                     given ? given : "?", made ? made : "?");
        free(made);
        free(given);
        return OPI_ERR_OP;
    }
    return MPC_OK;
}

int opi_op_resolve_one_sided(int32_t code, const rt_class_plan *elements, MPI_Op *op,
                             MPI_Datatype *dt)
{
    if (code == OP_REPLACE || code == OP_NO_OP) {
        *dt = primitive_datatype(elements->elem_type);
        if (*dt == MPI_DATATYPE_NULL)
            return op_refused(builtins[code].name, elements->elem_class,
                              "one-sided operators take primitive types");
        *op = builtins[code].op;
        return MPC_OK;
    }
    if (code < 0 || code >= OP_BUILTINS)
        return error_record(OPI_ERR_NOT_SUPPORTED, "op",
                            "a user operator (Op.Create) cannot be applied to a window: MPI's "
                            "one-sided operations take only the built-in operators");
    return opi_op_resolve(code, elements, op, dt);
}
