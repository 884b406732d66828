/* mpc_config.h — every environment variable Motor reads, in one table: its name, its default
 * and what it means. Internal to the core (not installed).
 *
 * Every read goes through the getters below, so a variable cannot be read without being listed
 * here: tests/config_doc_test.sh fails on a MOTOR_ name written anywhere else in the library's C
 * or read by System.MP without a row here, and on a docs/reference.md list of variables that
 * differs from what this table prints (it compiles this header alone into a program that prints
 * the list). It sits in mpc/, the lowest layer, so that every layer can read through it;
 * dependency-free (no <mpi.h>) for that test. */
#ifndef MPC_CONFIG_H
#define MPC_CONFIG_H

/* X(ID, NAME, DEFAULT, MEANING) gives MPC_CONFIG_ID. DEFAULT is the value an unset or empty
 * variable reads as ("": none, shown as unset). MEANING is Markdown for docs/reference.md's list,
 * whose links point into that page.
 * MOTOR_CORE is read by System.MP before it loads the core (so not through these getters): it
 * is listed so that the docs' list is whole, and the test checks System.MP reads no other. */
#define MPC_CONFIG_VARIABLES(X)                                                               \
    X(WAIT, "MOTOR_WAIT", "auto",                                                             \
      "How blocking calls wait: `auto` yields the core between polls where the host's ranks " \
      "outnumber the cores they may run on and spins elsewhere, `spin` never yields, "        \
      "`yield` always does; any other value is named on stderr and `auto` is used "           \
      "([Waiting: MOTOR_WAIT](#waiting-motor_wait)).")                                        \
    X(FINALIZE_TIMEOUT, "MOTOR_FINALIZE_TIMEOUT", "30",                                       \
      "Seconds `MPI_Finalize` may take on one host once every rank has finished; past them "  \
      "the process ends with status 0 after telling the process manager what `MPI_Finalize` " \
      "would ([cluster.md](cluster.md)). `0`: no bound.")                                     \
    X(HEARTBEAT_TIMEOUT, "MOTOR_HEARTBEAT_TIMEOUT", "4",                                      \
      "Seconds a rank on another host may be silent, and then unreachable over TCP, before "  \
      "the job ends ([cluster.md](cluster.md)). `0`: no heartbeat.")                          \
    X(HANG_REPORT, "MOTOR_HANG_REPORT", "0",                                                  \
      "Seconds a rank may stay blocked in one call before it says so on stderr: the call, "   \
      "its communicator, how long, and for a collective which ranks have not entered it "     \
      "([The hang report](#the-hang-report-motor_hang_report)). `0`: no report.")             \
    X(HANG_EXIT, "MOTOR_HANG_EXIT", "0",                                                      \
      "With `MOTOR_HANG_REPORT`: seconds a rank may stay blocked in one call before it ends " \
      "the job with exit status 70 ([The hang report](#the-hang-report-motor_hang_report)). " \
      "`0`: never.")                                                                          \
    X(PIN_POLICY, "MOTOR_PIN_POLICY", "",                                                     \
      "`every`: pin every transfer's object before it starts, movable or not, as bindings "   \
      "outside the runtime must; only for measuring what the generation-aware policy saves.") \
    X(CORE, "MOTOR_CORE", "",                                                                 \
      "Where System.MP under stock `mono` looks for `libmotorcore.so` when it is neither "    \
      "beside `System.MP.dll` nor one directory up: the library itself or its directory "     \
      "([Running under motor or under stock "                                                 \
      "mono](#running-under-motor-or-under-stock-mono)).")

typedef enum mpc_config_id {
#define MPC_CONFIG_ENUM(id, name, fallback, meaning) MPC_CONFIG_##id,
    MPC_CONFIG_VARIABLES(MPC_CONFIG_ENUM)
#undef MPC_CONFIG_ENUM
        MPC_CONFIG_COUNT
} mpc_config_id;

/* The variable's name ("MOTOR_WAIT"), for messages about its value. */
const char *mpc_config_name(mpc_config_id id);

/* The variable's value, or the table's default when it is unset or empty. */
const char *mpc_config_string(mpc_config_id id);

/* The variable as a number of seconds >= 0: the table's default when it is unset or empty, and
 * when it is not such a number (then said on stderr). */
double mpc_config_seconds(mpc_config_id id);

#endif
