/* motor_core.c — installing the core into a running Mono: internal calls, GC hooks, policy. */
#include "motor_core.h"

#include "gc_hooks.h"
#include "opi_internal.h"
#include "ptr_map.h"
#include "serializer.h"
#include "transfer.h"

#include <mono/metadata/loader.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int installed;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

/* The value of the last "evacuation-threshold=" option in a MONO_GC_PARAMS string, or -1. */
static long evacuation_threshold(const char *params)
{
    static const char key[] = "evacuation-threshold=";
    long value = -1;
    for (const char *p = params; p && *p;) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        if ((size_t)(end - p) >= sizeof key - 1 && strncmp(p, key, sizeof key - 1) == 0)
            value = strtol(p + sizeof key - 1, NULL, 10);
        p = *end ? end + 1 : end;
    }
    return value;
}

char *motor_core_gc_params(const char *user_params)
{
    const char *user = user_params ? user_params : "";
    size_t n = strlen(user) + sizeof ",evacuation-threshold=0";
    char *out = malloc(n);
    if (!out)
        return NULL;
    if (evacuation_threshold(user) >= 0)
        snprintf(out, n, "%s", user);
    else
        snprintf(out, n, "%s%sevacuation-threshold=0", user, *user ? "," : "");
    return out;
}

int motor_core_finalize(void)
{
    /* motor and System.MP's exit handler may both get here: the setting is read (and a bad one
     * reported) only by the call that ends MPI */
    if (!mpc_is_initialized())
        return mpc_finalize(); /* MPC_ERR_NOT_INITIALIZED, with its record */
    opi_files_close_at_exit(); /* undisposed MPFiles: their data written, with a warning */
    opi_window_close_all();    /* windows not disposed: freed, with a warning */
    xfer_close(); /* no GC event calls MPI from here on; what is registered is finished */
    double bound = mpc_config_seconds(MPC_CONFIG_FINALIZE_TIMEOUT);
    return mpc_finalize_within(bound, 0);
}

/* Caller holds install_lock. */
static int install_locked(void)
{
    if (installed)
        return MPC_OK;
    int rc = opi_layout_init();
    if (rc != MPC_OK)
        return rc;
    if (xfer_install() != 0 || gch_install(sd_thread_stopped) != 0)
        return error_record(RT_ERR_RUNTIME, NULL, "the GC event hook could not be installed");
    /* plans are built under a lock, calling Mono: wait for that lock GC-safe */
    ptr_map_set_lock_wait(gch_lock_gc_safe);
    /* What the runtime was started with decides whether small old objects can move. */
    xfer_set_old_generation_moves(evacuation_threshold(getenv("MONO_GC_PARAMS")) != 0);
    sd_set_old_generation_moves(evacuation_threshold(getenv("MONO_GC_PARAMS")) != 0);
    xfer_set_pin_every(strcmp(mpc_config_string(MPC_CONFIG_PIN_POLICY), "every") == 0);
    for (size_t i = 0; i < opi_icall_count; i++)
        mono_dangerous_add_raw_internal_call(opi_icall_table[i].name, opi_icall_table[i].fn);
    installed = 1;
    return MPC_OK;
}

int motor_core_install(void)
{
    pthread_mutex_lock(&install_lock);
    int rc = install_locked();
    pthread_mutex_unlock(&install_lock);
    return rc;
}

int motor_core_ensure(void)
{
    pthread_mutex_lock(&install_lock);
    int rc = 1;
    if (!installed) {
        rc = mpc_init(NULL, NULL, MPI_THREAD_MULTIPLE, NULL);
        if (rc == MPC_OK)
            rc = install_locked();
    }
    pthread_mutex_unlock(&install_lock);
    return rc;
}

int motor_core_installed(void) { return installed; }

const char *motor_core_strerror(int code)
{
    switch (code) { /* a code taken twice in the one list is a duplicate case: no build */
#define MOTOR_ERROR_CASE(name, value, message) \
    case value: return message;
        MOTOR_ERRORS(MOTOR_ERROR_CASE)
#undef MOTOR_ERROR_CASE
    }
    return mpc_strerror(code); /* 0, MPI's codes, unknown ones */
}
