/* hang_watch.h — internal to mpc: the start and end of the hang report's watch (hang_watch.c;
 * what the layers record for it is in mpc_internal.h). */
#ifndef MPC_HANG_WATCH_H
#define MPC_HANG_WATCH_H

/* At MPI initialisation, on every rank (collective over World): the ranks agree whether
 * MOTOR_HANG_REPORT is set everywhere; then, with MPI_THREAD_MULTIPLE, the watch's duplicate of
 * World is made and its thread started. Returns MPI_SUCCESS or an MPI code. */
int hang_watch_start(int thread_level);
/* World's last barrier before MPI_Finalize (mpc_finalize_within): while the watch runs, on its
 * own duplicate of World, so that a rank finishing early does not match a collective the others
 * are still in on World, and it answers meanwhile that it is finishing. Then the watch stops. */
int hang_watch_final_barrier(void);
/* The rank is finishing: the watch answers so, then stops (before MPI_Finalize). */
void hang_watch_stop(void);

#endif
