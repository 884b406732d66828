/* motor — runs a .NET program on Mono with MPI inside the runtime.
 *
 *   mpiexec.mpich -n 4 motor program.exe [args...]
 *
 * Order matters: GC parameters are set before the runtime starts (they are read once);
 * MPI is initialised before Mono so UCX's signal handlers are replaced by Mono's; the core is
 * installed before any managed code is compiled (internal calls bind at JIT time). */
#include "mono_private.h"
#include "motor_core.h"
#include "mpc.h"

#include <mono/jit/jit.h>
#include <mono/metadata/appdomain.h>
#include <mono/metadata/assembly.h>
#include <mono/metadata/environment.h>
#include <mono/metadata/exception.h>
#include <mono/metadata/mono-config.h>
#include <mono/metadata/object.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int world_rank, world_size = 1;
/* Set before motor's own MPI_Abort: MPI_Abort ends in exit(), whose handlers must not abort
 * again. */
static volatile sig_atomic_t aborting;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: motor [--help] [--version] program.exe [args...]\n"
            "Runs a .NET program on Mono with the Motor message-passing core inside the runtime.\n"
            "Start it under MPICH: mpiexec.mpich -n N motor program.exe [args...]\n"
            "Compile programs with: mcs -r:System.MP.dll program.cs\n"
            "Environment: MONO_GC_PARAMS is honoured; evacuation-threshold=0 is appended unless\n"
            "you set that option (old objects then never move and are never pinned).\n"
            "MONO_THREADS_SUSPEND may be hybrid (the default) or coop; preemptive is refused.\n"
            "A rank that ends with a non-zero status (Main's value, Environment.Exit) ends the\n"
            "whole job with that status.\n");
}

/* Prints an exception that no managed code caught, then takes the whole job down: the other
 * ranks would otherwise wait forever for this one. */
static void report_and_abort(MonoObject *exc)
{
    /* The embedding thread may be in the GC-safe state here (after mono_runtime_run_main);
     * ToString runs managed code, which needs the GC-unsafe state. */
    void *mark = NULL;
    mono_threads_enter_gc_unsafe_region(&mark);
    MonoObject *inner = NULL;
    MonoString *text = mono_object_to_string(exc, &inner);
    char *utf8 = text && !inner ? mono_string_to_utf8(text) : NULL;
    fprintf(stderr, "motor: rank %d: unhandled exception: %s\n", world_rank,
            utf8 ? utf8 : mono_class_get_name(mono_object_get_class(exc)));
    fflush(stderr);
    if (utf8)
        mono_free(utf8);
    /* MPI_Abort makes the launcher kill every process at once; hydra was seen to drop this
     * process's last output then (under load). An error path can spare a moment for the
     * report to be forwarded first. */
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    aborting = 1;
    mpc_abort(mpc_comm_world(), 1);
    _exit(1); /* MPI_Abort does not return; this is for a job of one process without a launcher */
}

static void on_unhandled_exception(MonoObject *exc, void *user_data)
{
    (void)user_data;
    report_and_abort(exc);
}

/* Ends this rank's part of the job with exit status `code`. A non-zero status from one rank of
 * several goes through MPI_Abort, so the launcher ends every rank with that status: the others
 * may be waiting for this one, so MPI_Finalize would hang (and a rank leaving without it makes
 * hydra kill the rest, reporting 9 or the code at random). A job of one rank just exits with the
 * code, without MPI_Finalize: nothing waits for it, and another thread may still be inside MPI.
 * System.MP does the same at ProcessExit, i.e. for Environment.Exit, before Mono stops the
 * other threads. */
static void end_mpi(int code)
{
    if (aborting || !mpc_is_initialized() || (code != 0 && world_size == 1))
        return;
    if (code != 0) {
        aborting = 1;
        fflush(stdout); /* MPI_Abort makes the launcher kill the other ranks: keep our output */
        mpc_abort(mpc_comm_world(), code);
        _exit(code); /* not reached: MPI_Abort ends the process */
    }
    int rc = motor_core_finalize();
    if (rc != MPC_OK && rc != MPC_ERR_NOT_INITIALIZED)
        fprintf(stderr, "motor: rank %d: MPI_Finalize failed: %s\n", world_rank, mpc_strerror(rc));
}

/* exit() handler, for a program that calls Environment.Exit(n) without System.MP having
 * started (System.MP's own ProcessExit handler ends MPI otherwise): Mono then calls exit(n)
 * after it began shutting down, never returning to main. MPI_Abort's own exit() (MP.Abort, or
 * System.MP's ProcessExit handler, which runs before Mono marks the shutdown) is left alone, and
 * so is any exit after MPI was finalized. */
static void on_process_exit(int status, void *arg)
{
    (void)arg;
    if (mono_runtime_is_shutting_down() && status == mono_environment_exitcode_get())
        end_mpi(status);
}

/* Under preemptive suspend a thread is stopped by a signal wherever it is, also inside a raw
 * (GC-unsafe) internal call holding object pointers in native frames, and objects may move under
 * it (MONO-FACTS: raw calls rely on not being preempted). Mono 6.8 reads the mode from
 * MONO_THREADS_SUSPEND only (the older MONO_ENABLE_COOP / MONO_ENABLE_HYBRID_SUSPEND are gone
 * from this runtime). Returns the reason to refuse, or NULL. */
static const char *unsafe_suspend_mode(void)
{
    const char *mode = getenv("MONO_THREADS_SUSPEND");
    if (mode && !strcmp(mode, "preemptive"))
        return "MONO_THREADS_SUSPEND=preemptive is not supported (raw internal calls must not be "
               "preempted); use hybrid (the default) or coop";
    return NULL;
}

/* Lets programs compiled elsewhere find System.MP.dll: the directory of this executable (the
 * build tree) and <that>/../<libdir>/motor (an installed tree) join MONO_PATH, which the runtime
 * reads when it starts. */
static int add_own_directory_to_mono_path(void)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    const char *old = getenv("MONO_PATH");
    char installed[4096 + 64];
    snprintf(installed, sizeof installed, "%s/../%s/motor", self, MOTOR_INSTALL_LIBDIR);
    int has_installed = access(installed, R_OK | X_OK) == 0; /* Mono warns of missing entries */
    size_t len = strlen(self) + strlen(installed) + (old ? strlen(old) : 0) + 3;
    char *path = malloc(len);
    if (!path)
        return -1;
    snprintf(path, len, "%s%s%s%s%s", self, has_installed ? ":" : "",
             has_installed ? installed : "", old && *old ? ":" : "", old && *old ? old : "");
    int rc = setenv("MONO_PATH", path, 1);
    free(path);
    return rc;
}

/* One line on stderr, written at once: the ranks of a job share the terminal, and pieces of
 * their lines written separately interleave ("motor: motor: ..."). */
static int fail(const char *fmt, const char *arg)
{
    char why[512];
    snprintf(why, sizeof why, fmt, arg);
    fprintf(stderr, "motor: %s\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[first], "--version")) {
            printf("motor %s (Mono embedding, MPICH %s)\n", MOTOR_VERSION, MPICH_VERSION);
            return 0;
        }
        if (!strcmp(argv[first], "--"))
            break;
        usage(stderr);
        return fail("unknown option '%s'", argv[first]);
    }
    if (first < argc && !strcmp(argv[first], "--"))
        first++;
    if (first >= argc) {
        usage(stderr);
        return 2;
    }
    const char *program = argv[first];
    if (access(program, R_OK) != 0)
        return fail("cannot read program '%s'", program);

    const char *refusal = unsafe_suspend_mode();
    if (refusal)
        return fail("%s", refusal);

    char *gc_params = motor_core_gc_params(getenv("MONO_GC_PARAMS"));
    if (!gc_params || setenv("MONO_GC_PARAMS", gc_params, 1) != 0)
        return fail("%s", "cannot set MONO_GC_PARAMS");
    free(gc_params);

    if (add_own_directory_to_mono_path() != 0)
        return fail("%s", "cannot set MONO_PATH");

    int provided = 0;
    int rc = mpc_init(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPC_OK)
        return fail("MPI initialisation failed: %s", mpc_strerror(rc));
    if ((rc = mpc_comm_rank(mpc_comm_world(), &world_rank)) != MPC_OK ||
        (rc = mpc_comm_size(mpc_comm_world(), &world_size)) != MPC_OK) {
        mpc_finalize();
        return fail("cannot query MPI_COMM_WORLD: %s", mpc_strerror(rc));
    }
    if (on_exit(on_process_exit, NULL) != 0) {
        mpc_finalize();
        return fail("%s", "cannot register the exit handler");
    }

    mono_config_parse(NULL);
    MonoDomain *domain = mono_jit_init_version("motor", "v4.0.30319");
    if (!domain) {
        mpc_finalize();
        return fail("%s", "cannot start the Mono runtime");
    }
    if ((rc = motor_core_install()) != MPC_OK) {
        mpc_finalize();
        return fail("cannot install the message-passing core: %s", motor_core_strerror(rc));
    }
    mono_install_unhandled_exception_hook(on_unhandled_exception, NULL);

    MonoAssembly *assembly = mono_domain_assembly_open(domain, program);
    MonoImage *image = assembly ? mono_assembly_get_image(assembly) : NULL;
    uint32_t entry = image ? mono_image_get_entry_point(image) : 0;
    MonoMethod *main_method = entry ? mono_get_method(image, entry, NULL) : NULL;
    if (!main_method) {
        mpc_finalize();
        return fail(assembly ? "'%s' has no entry point (is it a library?)"
                             : "'%s' is not a valid .NET assembly",
                    program);
    }
    mono_assembly_set_main(assembly);

    MonoObject *exc = NULL;
    int exit_code = mono_runtime_run_main(main_method, argc - first, argv + first, &exc);
    if (exc)
        report_and_abort(exc);
    if (exit_code == 0)
        exit_code = mono_environment_exitcode_get(); /* Environment.ExitCode for void Main */

    end_mpi(exit_code);
    mono_jit_cleanup(domain);
    return exit_code;
}
