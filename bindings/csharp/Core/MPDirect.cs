// MPDirect — the internal calls of the Motor core. One extern per entry of
// opi/icall_table.h, which gives each one's C signature (ContractTest checks that both lists
// agree, name by name and parameter by parameter). Codes returned are turned into exceptions
// by Errors only (Check, or Make where the exception is raised later), from the thread's error
// record (LastError).
//
// Internal calls bind when their caller is JIT-compiled; under stock mono the core registers
// them at the first use of System.MP, so every method that calls one is NoInlining (it must
// not be compiled into a caller before registration). ContractTest enforces that too.
using System.Runtime.CompilerServices;

namespace System.MP
{
    internal static class MPDirect
    {
        // what C and C# agree on, for ContractTest
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Contract(byte[] buffer);
        // The thread's error record for a call that just returned code: "argument\ndetail"
        // (see Errors.Make).
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int LastError(int code, byte[] buffer);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int ErrorClass(int code);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int ThreadLevel();
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WorldHandle();
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SelfHandle();
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int TagUpperBound();
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern double Wtime();
        // a cheap clock for per-entry loads (the TSC where invariant): ticks, and seconds per tick
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern long Ticks();
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern double TickSeconds();
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int ProcessorName(byte[] buffer);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Abort(int comm, int code);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Finalize();
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Stats(long[] values);
        // until the huge-page thread has copied every array handed to it (tests, via reflection)
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int HugePagesWait();
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OldGenerationMoves();
        // the wait policy (0 spin, 1 yield: MOTOR_WAIT, mpc_wait_mode) and World's ranks and cores
        // on this host
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WaitPolicy(out int hostRanks, out int hostCores);

        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommNullHandle();
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommRank(int comm, out int rank);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommSize(int comm, out int size);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommDup(int comm, out int newComm);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommSplit(int comm, int color, int key, out int newComm);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommFree(ref int comm);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommSplitShared(int comm, int key, out int newComm);
        // name: ASCII bytes, no NUL, at most Comm.MaxName; buffer: at least Comm.MaxName bytes
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommSetName(int comm, byte[] name);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommGetName(int comm, byte[] buffer, out int length);
        // result: a Comparison
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommCompare(int a, int b, out int result);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Barrier(int comm);

        // size: the communicator's size, for rank checks. mode: 0 standard, 1 synchronous.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Send(int comm, int size, object obj, int dest, int tag,
                                        int mode);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SendRange(int comm, int size, Array array, int offset, int count,
                                             int dest, int tag, int mode);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Recv(int comm, int size, object obj, int source, int tag,
                                        ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RecvRange(int comm, int size, Array array, int offset, int count,
                                             int source, int tag, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Sendrecv(int comm, int size, object sendObj, int dest,
                                            int sendTag, object recvObj, int source, int recvTag,
                                            ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SendrecvRange(
            int comm, int size, Array sendArray, int sendOffset, int sendCount, int dest,
            int sendTag, Array recvArray, int recvOffset, int recvCount, int source, int recvTag,
            ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Probe(int comm, int size, int source, int tag,
                                         ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Iprobe(int comm, int size, int source, int tag,
                                          ref StatusData status, out int found);

        // Matched probes (Comm.Mprobe, Improbe) and the receives of their Message: message is
        // MPI's handle; used is 1 once MPI was given the message (0: an argument was refused
        // first, the Message may still be received).
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Mprobe(int comm, int size, int source, int tag,
                                          ref StatusData status, out int message);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Improbe(int comm, int size, int source, int tag,
                                           ref StatusData status, out int message, out int found);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int MessageRecvRange(int message, Array array, int offset, int count,
                                                    ref StatusData status, out int used);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int MessageRecvRegion(int message, Array array, int[] region,
                                                     ref StatusData status, out int used);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int MessageIrecvRange(int message, Array array, int offset,
                                                     int count, Request owner, out long id,
                                                     ref StatusData status, out int used);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int MessageORecv(int message, long bytes, Type expected,
                                                out object result, ref StatusData status,
                                                out int used);
        // a Message's finalizer: the core receives and discards the message
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int MessageDrop(int message, long bytes);
        // bytes of one element of array (a T[]) as OPI moves it (Status.GetCount<T>)
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int ElementSize(Array array, out int size);

        // Non-blocking: id = -1 when the transfer finished at once (status filled), else its
        // pin-registry id for the Request* calls; the registry holds a weak handle on owner.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Isend(int comm, int size, object obj, int dest, int tag,
                                         int mode, Request owner, out long id,
                                         ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int IsendRange(int comm, int size, Array array, int offset,
                                              int count, int dest, int tag, int mode, Request owner,
                                              out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Irecv(int comm, int size, object obj, int source, int tag,
                                         Request owner, out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int IrecvRange(int comm, int size, Array array, int offset,
                                              int count, int source, int tag, Request owner,
                                              out long id, ref StatusData status);
        // Regions (issue 34): spec is Region.Spec, [stride, ndims, starts..., sizes...].
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SendRegion(int comm, int size, Array array, int[] spec, int dest,
                                              int tag, int mode);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RecvRegion(int comm, int size, Array array, int[] spec,
                                              int source, int tag, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SendrecvRegion(
            int comm, int size, Array sendArray, int[] sendSpec, int dest, int sendTag,
            Array recvArray, int[] recvSpec, int source, int recvTag, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SendrecvReplaceRange(
            int comm, int size, Array array, int offset, int count, int dest, int sendTag,
            int source, int recvTag, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SendrecvReplaceRegion(
            int comm, int size, Array array, int[] spec, int dest, int sendTag, int source,
            int recvTag, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int IsendRegion(int comm, int size, Array array, int[] spec,
                                               int dest, int tag, int mode, Request owner,
                                               out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int IrecvRegion(int comm, int size, Array array, int[] spec,
                                               int source, int tag, Request owner, out long id,
                                               ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RequestWait(long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RequestTest(long id, ref StatusData status, out int completed);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RequestCancel(long id);

        // Collectives. rank: the caller's rank (decides who is root). op: Op.Code.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Bcast(int comm, int size, object obj, int root);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int BcastRange(int comm, int size, Array array, int offset,
                                              int count, int root);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Scatter(int comm, int size, int rank, Array send, Array recv,
                                           int root);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Gather(int comm, int size, int rank, Array send, Array recv,
                                          int root);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Allgather(int comm, int size, Array send, Array recv);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Alltoall(int comm, int size, Array send, Array recv);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Reduce(int comm, int size, int rank, Array send, Array recv,
                                          int op, int root);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Allreduce(int comm, int size, Array send, Array recv, int op);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Scan(int comm, int size, Array send, Array recv, int op);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OpCreate(Type element, object combiner, int commutative,
                                            out int code);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OpFree(int code);

        // Structured data transport. SdWrite serializes into the thread's native scratch buffer,
        // SdCopy copies it out.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SdInit(Type transportableAttribute, long maker);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SdWrite(object graph, int keep, out int size);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SdCopy(byte[] dest, int offset);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SdRead(byte[] src, int offset, int count, Type expected,
                                          out object result);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OSend(int comm, int size, object graph, int dest, int tag);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int ORecv(int comm, int size, int source, int tag, Type expected,
                                         out object result, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int ORecvInto(int comm, int size, int source, int tag, Type expected,
                                             object reuse, out object result,
                                             ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OBcast(int comm, int size, int rank, object graph, int root,
                                          Type expected, out object result);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OIsend(int comm, int size, object graph, int dest, int tag,
                                          Request owner, out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OIrecvPost(int comm, int size, int source, int tag, object owner,
                                              out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OIrecvComplete(long id, int block, Type expected,
                                                  out object result, out int completed,
                                                  ref StatusData status);
        // Split representation: the pieces land in the thread's native receive buffer; sizes
        // tells where; SdReadIncoming reads one piece from there.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OScatter(int comm, int size, int rank, Array array, int root,
                                            long[] sizes);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OGather(int comm, int size, int rank, Array piece, int root,
                                           long[] sizes);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OAllgather(int comm, int size, int rank, Array piece,
                                              long[] sizes);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SdReadIncoming(long offset, long count, Type expected,
                                                  out object result);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SdRelease();
        // the receive budget of this thread's reads from now on (0, 0: none)
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SdBudget(long bytes, double multiple);
        // System.MP.Arrays' scheduler: OPost sends header's bytes then the graph and never waits;
        // OTake receives the next matching message into the thread's incoming buffer (one matched
        // probe) and copies its first bytes into header (null: none); OForward sends it on with
        // header's bytes instead of its own; SdReadIncomingAfter copies its first bytes into
        // header and reads the graph after.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OPost(int comm, int size, long[] header, object graph, int dest,
                                         int tag);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OTake(int comm, int size, int source, int tag, long[] header,
                                         out int found, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int OForward(int comm, int size, long[] header, int dest, int tag);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SdReadIncomingAfter(long[] header, Type expected,
                                                       out object result);

        // the v-collectives (counts and displacements in elements; those significant only at
        // the root may be null elsewhere), Exscan, ReduceScatterBlock
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Gatherv(int comm, int size, int rank, Array send, Array recv,
                                           int[] counts, int[] displs, int root);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Scatterv(int comm, int size, int rank, Array send, int[] counts,
                                            int[] displs, Array recv, int root);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Allgatherv(int comm, int size, int rank, Array send, Array recv,
                                              int[] counts, int[] displs);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Alltoallv(int comm, int size, int rank, Array send,
                                             int[] sendCounts, int[] sendDispls, Array recv,
                                             int[] recvCounts, int[] recvDispls);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Exscan(int comm, int size, int rank, Array send, Array recv,
                                          int op);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int ReduceScatterBlock(int comm, int size, Array send, Array recv,
                                                      int op);

        // groups, Cartesian topologies, intercommunicators, spawn (opi/opi_comms.c). Handles
        // are MPI's (MPI_Group, MPI_Comm); ranks come back as System.MP's
        // (MP.Undefined, MP.ProcNull).
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommGroup(int comm, out int group);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int GroupSize(int group, out int size);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int GroupRank(int group, out int rank);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int GroupInclExcl(int group, int[] ranks, int exclude,
                                                 out int newGroup);
        // kind: 0 union, 1 intersection, 2 difference
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int GroupCombine(int a, int b, int kind, out int newGroup);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int GroupTranslateRanks(int group, int[] ranks, int other,
                                                       int[] result);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int GroupFree(ref int group);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommCreate(int comm, int group, out int newComm);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CartCreate(int comm, int size, int[] dims, bool[] periods,
                                              int reorder, out int newComm);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CartDim(int comm, out int ndims);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CartGet(int comm, int[] dims, bool[] periods, int[] coords);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CartCoords(int comm, int size, int rank, int[] coords);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CartRank(int comm, int[] coords, out int rank);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CartShift(int comm, int direction, int displacement,
                                             out int source, out int dest);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CartSub(int comm, bool[] remainDims, out int newComm);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int DimsCreate(int nodes, int[] dims);
        // distributed graphs and neighbourhood collectives (opi/opi_neighbors.c). topo: {indegree,
        // outdegree, n, the periodic Cartesian dimensions of 1 or 2 processes}; kind: 0 allgather,
        // 1 alltoall, 2 alltoallv; form: bits 1 send Array[], 2 recv Array[], 4 one send region
        // for all; specs: each Region's spec; owner null: the blocking call (id, status unused).
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int DistGraphCreate(
            int comm, int size, int[] sources, int[] destinations, int reorder, out int newComm);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int DistGraphNeighborsCount(int comm, out int indegree,
                                                           out int outdegree);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int DistGraphNeighbors(int comm, int[] sources, int[] destinations);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int NeighborArrays(
            int comm, int kind, int[] topo, Array send, int[] sendCounts, int[] sendDispls,
            Array recv, int[] recvCounts, int[] recvDispls, Request owner, out long id,
            ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int NeighborRegions(
            int comm, int form, int[] topo, object send, object[] sendSpecs, object recv,
            object[] recvSpecs, Request owner, out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int IntercommCreate(int comm, int size, int rank, int localLeader,
                                                   int peer, int peerSize, int peerRank,
                                                   int remoteLeader, int tag, out int newComm);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int IntercommMerge(int comm, int high, out int newComm);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommRemoteSize(int comm, out int size);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommTestInter(int comm, out int inter);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommParent(out int parent);
        // command: at the root, NUL-ended UTF-8 strings: working directory, executable, arguments.
        // refusal, refusalText ("argument\nmessage"): an argument the root refused, told to
        // every rank.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int CommSpawn(int comm, int size, int rank, int root, int refusal,
                                             byte[] refusalText, byte[] command, int maxProcs,
                                             out int newComm);

        // non-blocking collectives (id and status as for Isend; the registry holds a weak
        // handle on owner), and the request calls of TestAll and the progress engine.
        // RequestTestMany tests ids[start..]: a completed one's id becomes -1 and its status is
        // filled; the first failure stops the pass (stopped = its index) and returns its code.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Ibarrier(int comm, Request owner, out long id,
                                            ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Ibcast(int comm, int size, Array array, int root, Request owner,
                                          out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Iallgather(int comm, int size, Array send, Array recv,
                                              Request owner, out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Ialltoall(int comm, int size, Array send, Array recv,
                                             Request owner, out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Ireduce(int comm, int size, int rank, Array send, Array recv,
                                           int op, int root, Request owner, out long id,
                                           ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Iallreduce(int comm, int size, Array send, Array recv, int op,
                                              Request owner, out long id, ref StatusData status);
        // the rest of the non-blocking collectives (API.md version 3); the v-forms copy counts
        // and displs into memory their request owns
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Igather(int comm, int size, int rank, Array send, Array recv,
                                           int root, Request owner, out long id,
                                           ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Iscatter(int comm, int size, int rank, Array send, Array recv,
                                            int root, Request owner, out long id,
                                            ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Iscan(int comm, int size, Array send, Array recv, int op,
                                         Request owner, out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Iexscan(int comm, int size, int rank, Array send, Array recv,
                                           int op, Request owner, out long id,
                                           ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int IreduceScatterBlock(int comm, int size, Array send, Array recv,
                                                       int op, Request owner, out long id,
                                                       ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Igatherv(int comm, int size, int rank, Array send, Array recv,
                                            int[] counts, int[] displs, int root, Request owner,
                                            out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Iscatterv(int comm, int size, int rank, Array send, int[] counts,
                                             int[] displs, Array recv, int root, Request owner,
                                             out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Iallgatherv(int comm, int size, int rank, Array send, Array recv,
                                               int[] counts, int[] displs, Request owner,
                                               out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int Ialltoallv(int comm, int size, int rank, Array send,
                                              int[] sendCounts, int[] sendDispls, Array recv,
                                              int[] recvCounts, int[] recvDispls, Request owner,
                                              out long id, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RequestTestMany(long[] ids, int start, StatusData[] statuses,
                                                   out int stopped);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RequestDone(long id, out int done);
        // RequestWaitAll waits for ids[0..n) in one wait (Request.WaitAll): each completed one's
        // id becomes -1 and its status is filled, a failed one's code in its Error (Reserved 1:
        // its text is lost), its error set aside for RequestFailure, which makes the next one this
        // thread's error record again and returns its code (0: none). An id it could not take
        // (another thread holds it, or it completed already) stays.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RequestWaitAll(long[] ids, int n, StatusData[] statuses,
                                                  out int failures);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RequestFailure();

        // files (opi_file.c, MPFile). path: NUL-terminated UTF-8. FileAt's kind: 1 write, 2
        // collective (or'ed); FileIat's write: 0/1, the request registered as Isend's is.
        // FileSetView: sample is a 1-element array of the element type, spec Region.Spec.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileOpen(int comm, byte[] path, int mode, int access,
                                            out int id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileClose(int id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileDelete(byte[] path);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileSize(int id, out long bytes);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileSetSize(int id, long bytes);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileSync(int id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileAt(int id, long offset, Array array, int arrayOffset,
                                          int count, int kind, ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileIat(int id, long offset, Array array, int arrayOffset,
                                           int count, int write, Request owner, out long reqId,
                                           ref StatusData status);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileSetView(int id, long displacement, Array sample,
                                               int[] globalSizes, int[] spec, out long localCount);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int FileAll(int id, Array array, int write);

        // persistent requests (opi_persistent.c). SendInit/RecvInit register an inactive
        // persistent request under id (a weak handle on owner; region: Region.Spec). A start
        // gives useId = id while the use runs (for the Request* calls), -1 when it finished at
        // once (status filled, as Isend's); started 0: nothing started (refused). An error with
        // started 1 is MPI_Start's: the uses are as useId says. PrequestStartAll does the same
        // for the first n entries, ids becoming use ids. PrequestFree never waits.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SendInit(int comm, int size, Array array, int offset, int count,
                                            int dest, int tag, Prequest owner, out long id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int SendInitRegion(int comm, int size, Array array, int[] region,
                                                  int dest, int tag, Prequest owner, out long id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RecvInit(int comm, int size, Array array, int offset, int count,
                                            int source, int tag, Prequest owner, out long id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int RecvInitRegion(int comm, int size, Array array, int[] region,
                                                  int source, int tag, Prequest owner, out long id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int PrequestStart(long id, Array array, out long useId,
                                                 ref StatusData status, out int started);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int PrequestStartAll(long[] ids, Array[] arrays, int n,
                                                    StatusData[] statuses, out int started);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int PrequestFree(long id);

        // one-sided communication (opi_window.c). WinCreate is collective: id names the window
        // (never reused); memory may be null. Fence, Lock(rank, exclusive), Unlock, LockAll,
        // UnlockAll, Flush, FlushAll close or open epochs; the origin arrays of Put, Get and
        // Accumulate (offset, count: linear elements) stay held until their epoch closes.
        // FetchAndOp / CompareAndSwap take values = T[3] {value, compare, result}; op: Op.Code.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinCreate(int comm, int size, Array memory, out int id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinTargetCount(int id, int rank, out long count);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinFree(int id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinFence(int id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinLock(int id, int rank, int exclusive);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinUnlock(int id, int rank);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinLockAll(int id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinUnlockAll(int id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinFlush(int id, int rank);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinFlushAll(int id);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinPut(int id, Array origin, int offset, int count,
                                          int targetRank, long targetIndex);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinGet(int id, Array origin, int offset, int count,
                                          int targetRank, long targetIndex);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinAccumulate(int id, Array origin, int offset, int count,
                                                 int targetRank, long targetIndex, int op);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinFetchAndOp(int id, Array values, int targetRank,
                                                 long targetIndex, int op);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int WinCompareAndSwap(int id, Array values, int targetRank,
                                                     long targetIndex);
    }
}
