/* icall_table.h — the one table of internal calls behind System.MP.MPDirect.
 *
 * X(Name, c_function): "System.MP.MPDirect::Name" is bound to c_function (every overload of
 * Name, as Mono binds a name given without signature). All are registered raw: they run
 * GC-unsafe with no transition (~4 ns per call instead of ~45 ns), so none may block: every
 * wait goes through opi_complete(), which leaves the GC-unsafe state first. The test
 * IcallTableTest proves this list and the C# externs agree. */
#define MOTOR_ICALLS(X)                     \
    X(IcallNames, opi_icall_names)          \
    X(ErrorString, opi_error_string)        \
    X(ErrorClass, opi_error_class)          \
    X(TransportError, opi_transport_error)  \
    X(ThreadLevel, opi_thread_level)        \
    X(WorldHandle, opi_world_handle)        \
    X(SelfHandle, opi_self_handle)          \
    X(TagUpperBound, opi_tag_upper_bound)   \
    X(Wtime, opi_wtime)                     \
    X(ProcessorName, opi_processor_name)    \
    X(Abort, opi_abort)                     \
    X(Finalize, opi_finalize)               \
    X(Stats, opi_stats)                     \
    X(OldGenerationMoves, opi_icall_old_generation_moves) \
    X(CommNullHandle, opi_comm_null_handle) \
    X(CommRank, opi_comm_rank)              \
    X(CommSize, opi_comm_size)              \
    X(CommDup, opi_comm_dup)                \
    X(CommSplit, opi_comm_split)            \
    X(CommFree, opi_comm_free)              \
    X(Barrier, opi_barrier)                 \
    X(Send, opi_send)                       \
    X(SendRange, opi_send_range)            \
    X(Recv, opi_recv)                       \
    X(RecvRange, opi_recv_range)            \
    X(Sendrecv, opi_sendrecv)               \
    X(SendrecvRange, opi_sendrecv_range)    \
    X(Probe, opi_probe)                     \
    X(Iprobe, opi_iprobe)                   \
    X(Isend, opi_isend)                     \
    X(IsendRange, opi_isend_range)          \
    X(Irecv, opi_irecv)                     \
    X(IrecvRange, opi_irecv_range)          \
    X(RequestWait, opi_request_wait)        \
    X(RequestTest, opi_request_test)        \
    X(RequestCancel, opi_request_cancel)    \
    X(Bcast, opi_bcast)                     \
    X(BcastRange, opi_bcast_range)          \
    X(Scatter, opi_scatter)                 \
    X(Gather, opi_gather)                   \
    X(Allgather, opi_allgather)             \
    X(Alltoall, opi_alltoall)               \
    X(Reduce, opi_reduce)                   \
    X(Allreduce, opi_allreduce)             \
    X(Scan, opi_scan)                       \
    X(OpCreate, opi_op_create)              \
    X(OpFree, opi_op_free)                  \
    X(SdInit, opi_sd_init)                  \
    X(SdError, opi_sd_error)                \
    X(SdWrite, opi_sd_write)                \
    X(SdCopy, opi_sd_copy)                  \
    X(SdRead, opi_sd_read)                  \
    X(OSend, opi_osend)                     \
    X(ORecv, opi_orecv)                     \
    X(OBcast, opi_obcast)                   \
    X(OScatter, opi_oscatter)               \
    X(OGather, opi_ogather)                 \
    X(OAllgather, opi_oallgather)           \
    X(SdReadIncoming, opi_sd_read_incoming) \
    X(SdRelease, opi_sd_release)
