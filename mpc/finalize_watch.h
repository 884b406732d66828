/* finalize_watch.h — internal to mpc: how lifetime.c's mpc_finalize_within ends MPI under
 * Hydra's process manager (finalize_watch.c). */
#ifndef MPC_FINALIZE_WATCH_H
#define MPC_FINALIZE_WATCH_H

/* The socket to Hydra's process manager (PMI-1 over PMI_FD), or -1 under another launcher. */
int hydra_pmi_socket(void);

/* For a job spanning hosts, after World's final barrier: MPICH 4.0.2 disconnects every UCX
 * endpoint before its last process-manager barrier, and over TCP a disconnect can wait forever
 * for a peer already in that barrier. The barrier proved no message of the job is pending, so
 * every rank ends as MPI_Finalize ends toward the process manager, without the transport's
 * teardown: its barrier, then "finalize" (without which Hydra's proxy kills the job); the
 * kernel frees the rest. Ends the process with exit_status, stdio flushed; returns (having said
 * so on stderr) only when the process manager did not answer. */
void hydra_end_without_teardown(int pmi, int exit_status, int rank);

/* MPI_Finalize, ending the process with `exit_status` if it has not returned after `seconds`,
 * after finishing MPI's conversation with the process manager; `pmi` is the socket to Hydra, or
 * -1 (then the bound holds but the process manager is not told). Returns MPI_Finalize's code. */
int finalize_bounded(double seconds, int exit_status, int rank, int pmi);

#endif
