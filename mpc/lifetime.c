/* lifetime.c — starting and ending MPI (mpc.h), and what MPI granted at the start. The end's
 * talk with Hydra is finalize_watch.c's, the heartbeat liveness.c's, the wait policy
 * wait_policy.c's. */
#include "mpc_impl.h"

#include "error_record.h"
#include "finalize_watch.h"
#include "hang_watch.h"
#include "liveness.h"
#include "owned_handles.h"

#include <stdio.h>

static int granted_thread_level = -1;
static int tag_upper_bound = 32767; /* MPI guarantees at least this; replaced at init */

int mpc_init(int *argc, char ***argv, int required, int *provided)
{
    int init = 0, fin = 0, rc;
    if ((rc = MPI_Finalized(&fin)) != MPI_SUCCESS)
        return rc;
    if (fin)
        return error_record(MPC_ERR_NOT_INITIALIZED, NULL,
                            "MPI has been finalised: it cannot be initialised again");
    if ((rc = MPI_Initialized(&init)) != MPI_SUCCESS)
        return rc;
    if (!init) {
        rc = MPI_Init_thread(argc, argv, required, &granted_thread_level);
        if (rc != MPI_SUCCESS)
            return rc;
    } else if ((rc = MPI_Query_thread(&granted_thread_level)) != MPI_SUCCESS) {
        return rc;
    }
    if ((rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
        (rc = MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        return rc;
    void *attr = NULL;
    int found = 0;
    if ((rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attr, &found)) != MPI_SUCCESS)
        return rc;
    if (found)
        tag_upper_bound = *(int *)attr;
    /* Collective, so only when this call initialised MPI: every rank then runs it. */
    if (!init && (rc = wait_policy_measure()) != MPI_SUCCESS)
        return rc;
    if (!init && (rc = liveness_start(granted_thread_level)) != MPI_SUCCESS)
        return rc;
    if (!init && (rc = hang_watch_start(granted_thread_level)) != MPI_SUCCESS)
        return rc;
    wait_policy_choose();
    if (provided)
        *provided = granted_thread_level;
    return MPC_OK;
}

/* Frees what callers made and never freed (a program's undisposed communicators and
 * operators), which MPI_Finalize would otherwise report as leaks on every rank. */
static void free_what_callers_left(void)
{
    int rc = mpc_datatypes_free_all();
    if (rc != MPI_SUCCESS)
        fprintf(stderr, "motor: freeing the datatypes of regions at the end failed: %s\n",
                mpc_strerror(rc));
    rc = mpc_neighbor_types_free_all();
    if (rc != MPI_SUCCESS)
        fprintf(stderr,
                "motor: freeing the datatypes of neighbourhood collectives at the end failed: %s\n",
                mpc_strerror(rc));
    rc = owned_free_all();
    if (rc != MPI_SUCCESS)
        fprintf(stderr,
                "motor: freeing the MPI objects left at the end (communicators, groups, "
                "datatypes, operators) failed: %s\n",
                mpc_strerror(rc));
}

int mpc_finalize(void)
{
    if (!mpc_is_initialized())
        return error_record(MPC_ERR_NOT_INITIALIZED, NULL,
                            "MPI is not initialised, or has been finalised already");
    free_what_callers_left();
    hang_watch_stop();
    liveness_stop();
    return MPI_Finalize();
}

int mpc_finalize_within(double seconds, int exit_status)
{
    if (!mpc_is_initialized())
        return error_record(MPC_ERR_NOT_INITIALIZED, NULL,
                            "MPI is not initialised, or has been finalised already");
    free_what_callers_left();
    if (seconds <= 0) {
        hang_watch_stop();
        liveness_stop();
        return MPI_Finalize();
    }
    /* the heartbeat runs on through the barrier: a host lost now still ends the job */
    int rank = 0, rc = hang_watch_final_barrier(); /* World's, or the hang watch's duplicate */
    liveness_stop();
    if (rc != MPI_SUCCESS || (rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank)) != MPI_SUCCESS)
        return rc;
    int pmi = hydra_pmi_socket();
    if (liveness_spans_hosts() == 1 && pmi >= 0)
        hydra_end_without_teardown(pmi, exit_status, rank); /* returns if Hydra did not answer */
    return finalize_bounded(seconds, exit_status, rank, pmi);
}

int mpc_is_initialized(void) { return mpi_running(); }
int mpc_thread_level(void) { return granted_thread_level; }
int mpc_tag_ub(void) { return tag_upper_bound; }
double mpc_wtime(void) { return MPI_Wtime(); }

int mpc_processor_name(char *buf, size_t size)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    if (!buf || size == 0)
        return MPI_ERR_ARG; /* MPI's own code for a bad argument: mpc speaks MPI's vocabulary */
    int rc = MPI_Get_processor_name(name, &len);
    if (rc != MPI_SUCCESS)
        return rc;
    snprintf(buf, size, "%.*s", len, name);
    return MPC_OK;
}

int mpc_abort(mpc_comm comm, int code) { return MPI_Abort(comm, code); }
