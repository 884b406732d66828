/* liveness.h — internal to mpc: the heartbeat that ends a job spanning hosts when one host falls
 * silent (liveness.c). */
#ifndef MPC_LIVENESS_H
#define MPC_LIVENESS_H

/* At MPI initialisation, on every rank (collective): opens the port peers probe a silent rank at
 * and starts the heartbeat thread when World spans hosts, MPI granted MPI_THREAD_MULTIPLE and
 * MOTOR_HEARTBEAT_TIMEOUT (seconds, mpc_config.h) is not 0. Returns MPI_SUCCESS or an MPI
 * code. */
int liveness_start(int thread_level);
/* 1 when World spans hosts, 0 when not, -1 when unknown (asked collectively at the start). */
int liveness_spans_hosts(void);
/* Stops the heartbeat (before MPI ends). */
void liveness_stop(void);

#endif
