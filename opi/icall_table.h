/* icall_table.h — the one table of internal calls behind System.MP.MPDirect.
 *
 * X(Name, c_function, return type, (parameter types)): "System.MP.MPDirect::Name" is bound to
 * c_function, whose prototype this table declares (opi_icalls.h expands it, so a definition
 * that differs fails to compile). The types are spelled as the C# extern declares them, and
 * the contract test (ContractTest) compares every entry with MPDirect's externs: a wrong
 * argument count or type on a raw internal call would corrupt memory instead of throwing.
 * All are registered raw: they run GC-unsafe with no transition (~4 ns per call instead of
 * ~45 ns), so none may block: every wait goes through xfer_complete() and friends, which leave
 * the GC-unsafe state first. */
#ifndef ICALL_TABLE_H
#define ICALL_TABLE_H

/* C type of each C# parameter kind: by value, and by reference (ref/out). */
#define IC_I32 int32_t               /* int */
#define IC_I64 int64_t               /* long */
#define IC_F64 double                /* double */
#define IC_OBJ MonoObject *          /* any reference type: object, an array, Request */
#define IC_TYPE MonoReflectionType * /* System.Type */
#define IC_I32_REF int32_t *         /* ref/out int */
#define IC_I64_REF int64_t *         /* ref/out long */
#define IC_STATUS_REF opi_status *   /* ref StatusData */
#define IC_OBJ_REF MonoObject **     /* out object */

#define MOTOR_ICALLS(X)                                                                            \
    X(Contract, opi_contract, IC_I32, (IC_OBJ))                                                    \
    X(LastError, opi_last_error, IC_I32, (IC_I32, IC_OBJ))                                         \
    X(ErrorClass, opi_error_class, IC_I32, (IC_I32))                                               \
    X(ThreadLevel, opi_thread_level, IC_I32, (void))                                               \
    X(WorldHandle, opi_world_handle, IC_I32, (void))                                               \
    X(SelfHandle, opi_self_handle, IC_I32, (void))                                                 \
    X(TagUpperBound, opi_tag_upper_bound, IC_I32, (void))                                          \
    X(Wtime, opi_wtime, IC_F64, (void))                                                            \
    X(Ticks, opi_ticks, IC_I64, (void))                                                            \
    X(TickSeconds, opi_tick_seconds, IC_F64, (void))                                               \
    X(ProcessorName, opi_processor_name, IC_I32, (IC_OBJ))                                         \
    X(Abort, opi_abort, IC_I32, (IC_I32, IC_I32))                                                  \
    X(Finalize, opi_finalize, IC_I32, (void))                                                      \
    X(Stats, opi_stats, IC_I32, (IC_OBJ))                                                          \
    X(HugePagesWait, opi_huge_pages_wait, IC_I32, (void))                                          \
    X(OldGenerationMoves, opi_icall_old_generation_moves, IC_I32, (void))                          \
    X(WaitPolicy, opi_wait_policy, IC_I32, (IC_I32_REF, IC_I32_REF))                               \
    X(CommNullHandle, opi_comm_null_handle, IC_I32, (void))                                        \
    X(CommRank, opi_comm_rank, IC_I32, (IC_I32, IC_I32_REF))                                       \
    X(CommSize, opi_comm_size, IC_I32, (IC_I32, IC_I32_REF))                                       \
    X(CommDup, opi_comm_dup, IC_I32, (IC_I32, IC_I32_REF))                                         \
    X(CommSplit, opi_comm_split, IC_I32, (IC_I32, IC_I32, IC_I32, IC_I32_REF))                     \
    X(CommFree, opi_comm_free, IC_I32, (IC_I32_REF))                                               \
    X(CommSplitShared, opi_comm_split_shared, IC_I32, (IC_I32, IC_I32, IC_I32_REF))                \
    X(CommSetName, opi_comm_set_name, IC_I32, (IC_I32, IC_OBJ))                                    \
    X(CommGetName, opi_comm_get_name, IC_I32, (IC_I32, IC_OBJ, IC_I32_REF))                        \
    X(CommCompare, opi_comm_compare, IC_I32, (IC_I32, IC_I32, IC_I32_REF))                         \
    X(Barrier, opi_barrier, IC_I32, (IC_I32))                                                      \
    X(Send, opi_send, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32))                    \
    X(SendRange, opi_send_range, IC_I32,                                                           \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I32, IC_I32))                            \
    X(Recv, opi_recv, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_STATUS_REF))             \
    X(RecvRange, opi_recv_range, IC_I32,                                                           \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I32, IC_STATUS_REF))                     \
    X(Sendrecv, opi_sendrecv, IC_I32,                                                              \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_STATUS_REF))             \
    X(SendrecvRange, opi_sendrecv_range, IC_I32,                                                   \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32,     \
       IC_I32, IC_STATUS_REF))                                                                     \
    X(Probe, opi_probe, IC_I32, (IC_I32, IC_I32, IC_I32, IC_I32, IC_STATUS_REF))                   \
    X(Iprobe, opi_iprobe, IC_I32, (IC_I32, IC_I32, IC_I32, IC_I32, IC_STATUS_REF, IC_I32_REF))     \
    X(Mprobe, opi_mprobe, IC_I32, (IC_I32, IC_I32, IC_I32, IC_I32, IC_STATUS_REF, IC_I32_REF))     \
    X(Improbe, opi_improbe, IC_I32,                                                                \
      (IC_I32, IC_I32, IC_I32, IC_I32, IC_STATUS_REF, IC_I32_REF, IC_I32_REF))                     \
    X(MessageRecvRange, opi_message_recv_range, IC_I32,                                            \
      (IC_I32, IC_OBJ, IC_I32, IC_I32, IC_STATUS_REF, IC_I32_REF))                                 \
    X(MessageRecvRegion, opi_message_recv_region, IC_I32,                                          \
      (IC_I32, IC_OBJ, IC_OBJ, IC_STATUS_REF, IC_I32_REF))                                         \
    X(MessageIrecvRange, opi_message_irecv_range, IC_I32,                                          \
      (IC_I32, IC_OBJ, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF, IC_I32_REF))             \
    X(MessageORecv, opi_message_orecv, IC_I32,                                                     \
      (IC_I32, IC_I64, IC_TYPE, IC_OBJ_REF, IC_STATUS_REF, IC_I32_REF))                            \
    X(MessageDrop, opi_message_drop, IC_I32, (IC_I32, IC_I64))                                     \
    X(ElementSize, opi_element_size, IC_I32, (IC_OBJ, IC_I32_REF))                                 \
    X(Isend, opi_isend, IC_I32,                                                                    \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))         \
    X(IsendRange, opi_isend_range, IC_I32,                                                         \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I64_REF,         \
       IC_STATUS_REF))                                                                             \
    X(Irecv, opi_irecv, IC_I32,                                                                    \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                 \
    X(IrecvRange, opi_irecv_range, IC_I32,                                                         \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF)) \
    /* regions (issue 34): the Region's spec is an IC_OBJ (int[]) */                               \
    X(SendRegion, opi_send_region, IC_I32,                                                         \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32, IC_I32))                                    \
    X(RecvRegion, opi_recv_region, IC_I32,                                                         \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32, IC_STATUS_REF))                             \
    X(SendrecvRegion, opi_sendrecv_region, IC_I32,                                                 \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32,             \
       IC_STATUS_REF))                                                                             \
    X(SendrecvReplaceRange, opi_sendrecv_replace_range, IC_I32,                                    \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I32, IC_I32, IC_I32, IC_STATUS_REF))     \
    X(SendrecvReplaceRegion, opi_sendrecv_replace_region, IC_I32,                                  \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I32, IC_STATUS_REF))             \
    X(IsendRegion, opi_isend_region, IC_I32,                                                       \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF)) \
    X(IrecvRegion, opi_irecv_region, IC_I32,                                                       \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))         \
    X(RequestWait, opi_request_wait, IC_I32, (IC_I64, IC_STATUS_REF))                              \
    X(RequestTest, opi_request_test, IC_I32, (IC_I64, IC_STATUS_REF, IC_I32_REF))                  \
    X(RequestCancel, opi_request_cancel, IC_I32, (IC_I64))                                         \
    X(Bcast, opi_bcast, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_I32))                                  \
    X(BcastRange, opi_bcast_range, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32))       \
    X(Scatter, opi_scatter, IC_I32, (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32))              \
    X(Gather, opi_gather, IC_I32, (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32))                \
    X(Allgather, opi_allgather, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_OBJ))                          \
    X(Alltoall, opi_alltoall, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_OBJ))                            \
    X(Reduce, opi_reduce, IC_I32, (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32))        \
    X(Allreduce, opi_allreduce, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32))                  \
    X(Scan, opi_scan, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32))                            \
    X(OpCreate, opi_op_create, IC_I32, (IC_TYPE, IC_OBJ, IC_I32, IC_I32_REF))                      \
    X(OpFree, opi_op_free, IC_I32, (IC_I32))                                                       \
    X(SdInit, opi_sd_init, IC_I32, (IC_TYPE, IC_I64))                                              \
    X(SdWrite, opi_sd_write, IC_I32, (IC_OBJ, IC_I32, IC_I32_REF))                                 \
    X(SdCopy, opi_sd_copy, IC_I32, (IC_OBJ, IC_I32))                                               \
    X(SdRead, opi_sd_read, IC_I32, (IC_OBJ, IC_I32, IC_I32, IC_TYPE, IC_OBJ_REF))                  \
    X(OSend, opi_osend, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32))                          \
    X(ORecv, opi_orecv, IC_I32,                                                                    \
      (IC_I32, IC_I32, IC_I32, IC_I32, IC_TYPE, IC_OBJ_REF, IC_STATUS_REF))                        \
    X(ORecvInto, opi_orecv_into, IC_I32,                                                           \
      (IC_I32, IC_I32, IC_I32, IC_I32, IC_TYPE, IC_OBJ, IC_OBJ_REF, IC_STATUS_REF))                \
    X(OBcast, opi_obcast, IC_I32, (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I32, IC_TYPE, IC_OBJ_REF))   \
    X(OIsend, opi_oisend, IC_I32,                                                                  \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                 \
    X(OIrecvPost, opi_oirecv_post, IC_I32,                                                         \
      (IC_I32, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                         \
    X(OIrecvComplete, opi_oirecv_complete, IC_I32,                                                 \
      (IC_I64, IC_I32, IC_TYPE, IC_OBJ_REF, IC_I32_REF, IC_STATUS_REF))                            \
    X(OScatter, opi_oscatter, IC_I32, (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I32, IC_OBJ))            \
    X(OGather, opi_ogather, IC_I32, (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I32, IC_OBJ))              \
    X(OAllgather, opi_oallgather, IC_I32, (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ))                \
    X(SdReadIncoming, opi_sd_read_incoming, IC_I32, (IC_I64, IC_I64, IC_TYPE, IC_OBJ_REF))         \
    X(SdRelease, opi_sd_release, IC_I32, (void))                                                   \
    X(SdBudget, opi_sd_budget, IC_I32, (IC_I64, IC_F64))                                           \
    /* System.MP.Arrays' scheduler: a graph after a header of raw bytes; one probe per receive */  \
    X(OPost, opi_opost, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32))                  \
    X(OTake, opi_otake, IC_I32,                                                                    \
      (IC_I32, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I32_REF, IC_STATUS_REF))                         \
    X(OForward, opi_oforward, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32))                    \
    X(SdReadIncomingAfter, opi_sd_read_incoming_after, IC_I32, (IC_OBJ, IC_TYPE, IC_OBJ_REF))      \
    /* the v-collectives, Exscan, ReduceScatterBlock */                                            \
    X(Gatherv, opi_gatherv, IC_I32,                                                                \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_I32))                            \
    X(Scatterv, opi_scatterv, IC_I32,                                                              \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_I32))                            \
    X(Allgatherv, opi_allgatherv, IC_I32,                                                          \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ))                                    \
    X(Alltoallv, opi_alltoallv, IC_I32,                                                            \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ))                    \
    X(Exscan, opi_exscan, IC_I32, (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32))                \
    X(ReduceScatterBlock, opi_reduce_scatter_block, IC_I32,                                        \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32))                                                    \
    /* groups, Cartesian topologies, intercommunicators, spawn (opi_comms.c) */                    \
    X(CommGroup, opi_comm_group, IC_I32, (IC_I32, IC_I32_REF))                                     \
    X(GroupSize, opi_group_size, IC_I32, (IC_I32, IC_I32_REF))                                     \
    X(GroupRank, opi_group_rank, IC_I32, (IC_I32, IC_I32_REF))                                     \
    X(GroupInclExcl, opi_group_incl_excl, IC_I32, (IC_I32, IC_OBJ, IC_I32, IC_I32_REF))            \
    X(GroupCombine, opi_group_combine, IC_I32, (IC_I32, IC_I32, IC_I32, IC_I32_REF))               \
    X(GroupTranslateRanks, opi_group_translate_ranks, IC_I32, (IC_I32, IC_OBJ, IC_I32, IC_OBJ))    \
    X(GroupFree, opi_group_free, IC_I32, (IC_I32_REF))                                             \
    X(CommCreate, opi_comm_create, IC_I32, (IC_I32, IC_I32, IC_I32_REF))                           \
    X(CartCreate, opi_cart_create, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32_REF))   \
    X(CartDim, opi_cart_dim, IC_I32, (IC_I32, IC_I32_REF))                                         \
    X(CartGet, opi_cart_get, IC_I32, (IC_I32, IC_OBJ, IC_OBJ, IC_OBJ))                             \
    X(CartCoords, opi_cart_coords, IC_I32, (IC_I32, IC_I32, IC_I32, IC_OBJ))                       \
    X(CartRank, opi_cart_rank, IC_I32, (IC_I32, IC_OBJ, IC_I32_REF))                               \
    X(CartShift, opi_cart_shift, IC_I32, (IC_I32, IC_I32, IC_I32, IC_I32_REF, IC_I32_REF))         \
    X(CartSub, opi_cart_sub, IC_I32, (IC_I32, IC_OBJ, IC_I32_REF))                                 \
    X(DimsCreate, opi_dims_create, IC_I32, (IC_I32, IC_OBJ))                                       \
    /* distributed graphs, neighbourhood collectives (opi_neighbors.c): topo describes the         \
     * communicator's neighbours (opi_neighbors.c's top); a null owner runs the call blocking */   \
    X(DistGraphCreate, opi_dist_graph_create, IC_I32,                                              \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32_REF))                                        \
    X(DistGraphNeighborsCount, opi_dist_graph_neighbors_count, IC_I32,                             \
      (IC_I32, IC_I32_REF, IC_I32_REF))                                                            \
    X(DistGraphNeighbors, opi_dist_graph_neighbors, IC_I32, (IC_I32, IC_OBJ, IC_OBJ))              \
    X(NeighborArrays, opi_neighbor_arrays, IC_I32,                                                 \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_I64_REF, \
       IC_STATUS_REF))                                                                             \
    X(NeighborRegions, opi_neighbor_regions, IC_I32,                                               \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_I64_REF, IC_STATUS_REF)) \
    X(IntercommCreate, opi_intercomm_create, IC_I32,                                               \
      (IC_I32, IC_I32, IC_I32, IC_I32, IC_I32, IC_I32, IC_I32, IC_I32, IC_I32, IC_I32_REF))        \
    X(IntercommMerge, opi_intercomm_merge, IC_I32, (IC_I32, IC_I32, IC_I32_REF))                   \
    X(CommRemoteSize, opi_comm_remote_size, IC_I32, (IC_I32, IC_I32_REF))                          \
    X(CommTestInter, opi_comm_test_inter, IC_I32, (IC_I32, IC_I32_REF))                            \
    X(CommParent, opi_comm_parent, IC_I32, (IC_I32_REF))                                           \
    X(CommSpawn, opi_comm_spawn, IC_I32,                                                           \
      (IC_I32, IC_I32, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32_REF))                \
    /* non-blocking collectives and the request calls of TestAll and the progress engine */        \
    X(Ibarrier, opi_ibarrier, IC_I32, (IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                 \
    X(Ibcast, opi_ibcast, IC_I32,                                                                  \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                         \
    X(Iallgather, opi_iallgather, IC_I32,                                                          \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                         \
    X(Ialltoall, opi_ialltoall, IC_I32,                                                            \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                         \
    X(Ireduce, opi_ireduce, IC_I32,                                                                \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF)) \
    X(Iallreduce, opi_iallreduce, IC_I32,                                                          \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                 \
    /* the rest of the non-blocking collectives (API.md version 3) */                              \
    X(Igather, opi_igather, IC_I32,                                                                \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))         \
    X(Iscatter, opi_iscatter, IC_I32,                                                              \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))         \
    X(Iscan, opi_iscan, IC_I32,                                                                    \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                 \
    X(Iexscan, opi_iexscan, IC_I32,                                                                \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))         \
    X(IreduceScatterBlock, opi_ireduce_scatter_block, IC_I32,                                      \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))                 \
    X(Igatherv, opi_igatherv, IC_I32,                                                              \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_I32, IC_OBJ, IC_I64_REF,         \
       IC_STATUS_REF))                                                                             \
    X(Iscatterv, opi_iscatterv, IC_I32,                                                            \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_I32, IC_OBJ, IC_I64_REF,         \
       IC_STATUS_REF))                                                                             \
    X(Iallgatherv, opi_iallgatherv, IC_I32,                                                        \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_I64_REF, IC_STATUS_REF)) \
    X(Ialltoallv, opi_ialltoallv, IC_I32,                                                          \
      (IC_I32, IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_OBJ, IC_I64_REF, \
       IC_STATUS_REF))                                                                             \
    X(RequestTestMany, opi_request_test_many, IC_I32, (IC_OBJ, IC_I32, IC_OBJ, IC_I32_REF))        \
    X(RequestDone, opi_request_done, IC_I32, (IC_I64, IC_I32_REF))                                 \
    X(RequestWaitAll, opi_request_wait_all, IC_I32, (IC_OBJ, IC_I32, IC_OBJ, IC_I32_REF))          \
    X(RequestFailure, opi_request_failure, IC_I32, (void))                                         \
    /* files (opi_file.c, MPFile) */                                                               \
    X(FileOpen, opi_file_open, IC_I32, (IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32_REF))               \
    X(FileClose, opi_file_close, IC_I32, (IC_I32))                                                 \
    X(FileDelete, opi_file_delete, IC_I32, (IC_OBJ))                                               \
    X(FileSize, opi_file_size, IC_I32, (IC_I32, IC_I64_REF))                                       \
    X(FileSetSize, opi_file_set_size, IC_I32, (IC_I32, IC_I64))                                    \
    X(FileSync, opi_file_sync, IC_I32, (IC_I32))                                                   \
    X(FileAt, opi_file_at, IC_I32,                                                                 \
      (IC_I32, IC_I64, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_STATUS_REF))                             \
    X(FileIat, opi_file_iat, IC_I32,                                                               \
      (IC_I32, IC_I64, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I64_REF, IC_STATUS_REF))         \
    X(FileSetView, opi_file_set_view, IC_I32,                                                      \
      (IC_I32, IC_I64, IC_OBJ, IC_OBJ, IC_OBJ, IC_I64_REF))                                        \
    X(FileAll, opi_file_all, IC_I32, (IC_I32, IC_OBJ, IC_I32))                                     \
    /* persistent requests (opi_persistent.c) */                                                   \
    X(SendInit, opi_send_init, IC_I32,                                                             \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I64_REF))                \
    X(SendInitRegion, opi_send_init_region, IC_I32,                                                \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32, IC_OBJ, IC_I64_REF))                        \
    X(RecvInit, opi_recv_init, IC_I32,                                                             \
      (IC_I32, IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I32, IC_OBJ, IC_I64_REF))                \
    X(RecvInitRegion, opi_recv_init_region, IC_I32,                                                \
      (IC_I32, IC_I32, IC_OBJ, IC_OBJ, IC_I32, IC_I32, IC_OBJ, IC_I64_REF))                        \
    X(PrequestStart, opi_prequest_start, IC_I32,                                                   \
      (IC_I64, IC_OBJ, IC_I64_REF, IC_STATUS_REF, IC_I32_REF))                                     \
    X(PrequestStartAll, opi_prequest_start_all, IC_I32,                                            \
      (IC_OBJ, IC_OBJ, IC_I32, IC_OBJ, IC_I32_REF))                                                \
    X(PrequestFree, opi_prequest_free, IC_I32, (IC_I64))                                           \
    /* one-sided communication: windows (opi_window.c) */                                          \
    X(WinCreate, opi_win_create, IC_I32, (IC_I32, IC_I32, IC_OBJ, IC_I32_REF))                     \
    X(WinTargetCount, opi_win_target_count, IC_I32, (IC_I32, IC_I32, IC_I64_REF))                  \
    X(WinFree, opi_win_free, IC_I32, (IC_I32))                                                     \
    X(WinFence, opi_win_fence, IC_I32, (IC_I32))                                                   \
    X(WinLock, opi_win_lock, IC_I32, (IC_I32, IC_I32, IC_I32))                                     \
    X(WinUnlock, opi_win_unlock, IC_I32, (IC_I32, IC_I32))                                         \
    X(WinLockAll, opi_win_lock_all, IC_I32, (IC_I32))                                              \
    X(WinUnlockAll, opi_win_unlock_all, IC_I32, (IC_I32))                                          \
    X(WinFlush, opi_win_flush, IC_I32, (IC_I32, IC_I32))                                           \
    X(WinFlushAll, opi_win_flush_all, IC_I32, (IC_I32))                                            \
    X(WinPut, opi_win_put, IC_I32, (IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I64))               \
    X(WinGet, opi_win_get, IC_I32, (IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I64))               \
    X(WinAccumulate, opi_win_accumulate, IC_I32,                                                   \
      (IC_I32, IC_OBJ, IC_I32, IC_I32, IC_I32, IC_I64, IC_I32))                                    \
    X(WinFetchAndOp, opi_win_fetch_and_op, IC_I32, (IC_I32, IC_OBJ, IC_I32, IC_I64, IC_I32))       \
    X(WinCompareAndSwap, opi_win_compare_and_swap, IC_I32, (IC_I32, IC_OBJ, IC_I32, IC_I64))

#endif
