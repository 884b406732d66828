/* opi_icalls.h — prototypes of the internal calls listed in icall_table.h. Internal to opi/.
 * Raw registration: they run GC-unsafe and must never block (waits go through
 * opi_complete, opi_probe_wait or opi_run_gc_safe). */
#ifndef OPI_ICALLS_H
#define OPI_ICALLS_H

#include "opi_internal.h"

#include <mono/metadata/reflection.h>

int32_t opi_icall_names(MonoObject *buffer);
int32_t opi_error_string(int32_t code, MonoObject *buffer);
int32_t opi_error_class(int32_t code);
int32_t opi_transport_error(MonoObject *obj, MonoObject *buffer);
int32_t opi_thread_level(void);
int32_t opi_world_handle(void);
int32_t opi_self_handle(void);
int32_t opi_tag_upper_bound(void);
double opi_wtime(void);
int32_t opi_processor_name(MonoObject *buffer);
int32_t opi_abort(int32_t comm, int32_t code);
int32_t opi_finalize(void);
int32_t opi_stats(MonoObject *values);
int32_t opi_icall_old_generation_moves(void);
int32_t opi_comm_null_handle(void);
int32_t opi_comm_rank(int32_t comm, int32_t *rank);
int32_t opi_comm_size(int32_t comm, int32_t *size);
int32_t opi_comm_dup(int32_t comm, int32_t *out);
int32_t opi_comm_split(int32_t comm, int32_t color, int32_t key, int32_t *out);
int32_t opi_comm_free(int32_t *comm);
int32_t opi_barrier(int32_t comm);
int32_t opi_send(int32_t comm, int32_t size, MonoObject *obj, int32_t dest, int32_t tag, int32_t mode);
int32_t opi_send_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset, int32_t count, int32_t dest, int32_t tag, int32_t mode);
int32_t opi_recv(int32_t comm, int32_t size, MonoObject *obj, int32_t source, int32_t tag, opi_status *status);
int32_t opi_recv_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset, int32_t count, int32_t source, int32_t tag, opi_status *status);
int32_t opi_sendrecv(int32_t comm, int32_t size, MonoObject *send_obj, int32_t dest, int32_t send_tag, MonoObject *recv_obj, int32_t source, int32_t recv_tag, opi_status *status);
int32_t opi_sendrecv_range(int32_t comm, int32_t size, MonoObject *send_array, int32_t send_offset, int32_t send_count, int32_t dest, int32_t send_tag, MonoObject *recv_array, int32_t recv_offset, int32_t recv_count, int32_t source, int32_t recv_tag, opi_status *status);
int32_t opi_probe(int32_t comm, int32_t size, int32_t source, int32_t tag, opi_status *status);
int32_t opi_iprobe(int32_t comm, int32_t size, int32_t source, int32_t tag, opi_status *status, int32_t *found);
int32_t opi_isend(int32_t comm, int32_t size, MonoObject *obj, int32_t dest, int32_t tag, int32_t mode, MonoObject *owner, int64_t *id, opi_status *status);
int32_t opi_isend_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset, int32_t count, int32_t dest, int32_t tag, int32_t mode, MonoObject *owner, int64_t *id, opi_status *status);
int32_t opi_irecv(int32_t comm, int32_t size, MonoObject *obj, int32_t source, int32_t tag, MonoObject *owner, int64_t *id, opi_status *status);
int32_t opi_irecv_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset, int32_t count, int32_t source, int32_t tag, MonoObject *owner, int64_t *id, opi_status *status);
int32_t opi_request_wait(int64_t id, opi_status *status);
int32_t opi_request_test(int64_t id, opi_status *status, int32_t *completed);
int32_t opi_request_cancel(int64_t id);
int32_t opi_bcast(int32_t comm, int32_t size, MonoObject *obj, int32_t root);
int32_t opi_bcast_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset, int32_t count, int32_t root);
int32_t opi_scatter(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv, int32_t root);
int32_t opi_gather(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv, int32_t root);
int32_t opi_allgather(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv);
int32_t opi_alltoall(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv);
int32_t opi_reduce(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv, int32_t op, int32_t root);
int32_t opi_allreduce(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv, int32_t op);
int32_t opi_scan(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv, int32_t op);
int32_t opi_op_create(MonoReflectionType *element, MonoObject *combiner, int32_t commutative, int32_t *code);
int32_t opi_op_free(int32_t code);
int32_t opi_sd_init(MonoReflectionType *attribute);
int32_t opi_sd_error(MonoObject *buffer);
int32_t opi_sd_write(MonoObject *graph, int32_t keep, int32_t *size);
int32_t opi_sd_copy(MonoObject *dest, int32_t offset);
int32_t opi_sd_read(MonoObject *src, int32_t offset, int32_t count, MonoReflectionType *expected, MonoObject **result);
int32_t opi_osend(int32_t comm, int32_t size, MonoObject *graph, int32_t dest, int32_t tag);
int32_t opi_orecv(int32_t comm, int32_t size, int32_t source, int32_t tag, MonoReflectionType *expected, MonoObject **result, opi_status *status);
int32_t opi_obcast(int32_t comm, int32_t size, int32_t rank, MonoObject *graph, int32_t root, MonoReflectionType *expected, MonoObject **result);
int32_t opi_oscatter(int32_t comm, int32_t size, int32_t rank, MonoObject *array, int32_t root, MonoObject *sizes_out);
int32_t opi_ogather(int32_t comm, int32_t size, int32_t rank, MonoObject *piece, int32_t root, MonoObject *sizes_out);
int32_t opi_oallgather(int32_t comm, int32_t size, int32_t rank, MonoObject *piece, MonoObject *sizes_out);
int32_t opi_sd_read_incoming(int64_t offset, int64_t count, MonoReflectionType *expected, MonoObject **result);
int32_t opi_sd_release(void);

#endif
