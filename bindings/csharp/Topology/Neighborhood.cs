// Neighborhood — what CartComm and DistGraphComm share: the description of their neighbours the
// core reads, and the neighbourhood collectives behind their public members.
using System.Runtime.CompilerServices;

namespace System.MP
{
    internal static class Neighborhood
    {
        // The array forms (opi_neighbors.c's NBA_*) and the region forms' shape bits (NB_*).
        internal const int Allgather = 0, Alltoall = 1, Alltoallv = 2;
        internal const int SendArrays = 1, RecvArrays = 2, SendOne = 4;

        /// <summary>What the core reads of a topology: {indegree, outdegree, cart (1) or graph
        /// (0), repeated, sources[indegree], destinations[outdegree], recvTags[indegree],
        /// sendTags[outdegree]}. repeated is 1 when a process is a source more than once — a
        /// periodic grid dimension of one or two processes, a graph's repeated or self edges —
        /// where the order of MPI's receives decides which block lands where (the non-blocking
        /// forms). The blocking forms run as point-to-point, paired by the tags: on a grid the
        /// block sent toward -1 (send k = 2d, tag k) lands in the -1 neighbour's +1 block
        /// (receive j = 2d + 1 expects tag j ^ 1), MPI-4.0's pairing; on a graph the k-th edge to
        /// a process carries tag k and the receiver's k-th edge from it expects tag k. The
        /// sources also tell which blocks come from MP.ProcNull (nothing arrives).</summary>
        internal static int[] Describe(int[] sources, int[] destinations, bool cart)
        {
            bool repeated = false;
            var seen = new System.Collections.Generic.HashSet<int>();
            foreach (int s in sources)
                if (s != MP.ProcNull && !seen.Add(s))
                    repeated = true;
            int nin = sources.Length, nout = destinations.Length;
            var topo = new int[4 + 2 * (nin + nout)];
            topo[0] = nin;
            topo[1] = nout;
            topo[2] = cart ? 1 : 0;
            topo[3] = repeated ? 1 : 0;
            Array.Copy(sources, 0, topo, 4, nin);
            Array.Copy(destinations, 0, topo, 4 + nin, nout);
            Ordinals(sources, cart, topo, 4 + nin + nout, true);
            Ordinals(destinations, cart, topo, 4 + 2 * nin + nout, false);
            return topo;
        }

        /// <summary>The tag of each edge of a list, from position at in topo.</summary>
        static void Ordinals(int[] ranks, bool cart, int[] topo, int at, bool receiving)
        {
            var count = new System.Collections.Generic.Dictionary<int, int>();
            for (int i = 0; i < ranks.Length; i++) {
                if (cart) {
                    topo[at + i] = receiving ? i ^ 1 : i;
                    continue;
                }
                int n;
                count.TryGetValue(ranks[i], out n);
                topo[at + i] = n;
                count[ranks[i]] = n + 1;
            }
        }

        /// <summary>The regions' specs for the core, refusing a null list and
        /// default(Region).</summary>
        static object[] Specs(Region[] regions, string name)
        {
            if (regions == null)
                throw new ArgumentNullException(name);
            var specs = new object[regions.Length];
            for (int i = 0; i < regions.Length; i++)
                specs[i] = Spec(regions[i], name, i);
            return specs;
        }

        static object Spec(Region region, string name, int index)
        {
            if (region.Count == 0 && region.Starts.Length == 0)   // default(Region): no spec
                throw new ArgumentException(
                    (index >= 0 ? $"{name}[{index}]" : name) +
                        " is default(Region): make one with new Region(starts, sizes), " +
                        "Region.Rows, Region.Columns or Region.Strided",
                    name);
            return region.Spec(name);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void Arrays(Intracomm comm, int[] topo, int kind, Array send,
                                    int[] sendCounts, int[] sendDispls, Array recv,
                                    int[] recvCounts, int[] recvDispls)
        {
            var st = new StatusData();
            long id;
            Errors.Check(
                MPDirect.NeighborArrays(comm.handle, kind, topo, send, sendCounts, sendDispls, recv,
                                        recvCounts, recvDispls, null, out id, ref st));
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static Request StartArrays(Intracomm comm, int[] topo, int kind, string name,
                                            Array send, int[] sendCounts, int[] sendDispls,
                                            Array recv, int[] recvCounts, int[] recvDispls)
        {
            var request = new Request(name);
            var st = new StatusData();
            long id;
            Errors.Check(
                MPDirect.NeighborArrays(comm.handle, kind, topo, send, sendCounts, sendDispls, recv,
                                        recvCounts, recvDispls, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>A region form: send is an Array (or Array[] with SendArrays), sendSpecs its
        /// regions (one, with SendOne); likewise recv.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static Request Regions(Intracomm comm, int[] topo, int form, string name, object send,
                               object[] sendSpecs, object recv, object[] recvSpecs)
        {
            var request = name == null ? null : new Request(name);
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.NeighborRegions(comm.handle, form, topo, send, sendSpecs, recv,
                                                  recvSpecs, request, out id, ref st));
            return request?.Started(id, ref st);
        }

        /// <summary>NeighborAlltoall of regions (name null: blocking).</summary>
        internal static Request RegionAlltoall(Intracomm comm, int[] topo, string name,
                                               Array[] sendArrays, Region[] sendRegions,
                                               Array[] recvArrays, Region[] recvRegions)
        {
            object[] sendSpecs = Specs(sendRegions, nameof(sendRegions)),
                     recvSpecs = Specs(recvRegions, nameof(recvRegions));
            return Regions(comm, topo, SendArrays | RecvArrays, name, sendArrays, sendSpecs,
                           recvArrays, recvSpecs);
        }

        /// <summary>NeighborAlltoallv of regions of one array each side (name null:
        /// blocking).</summary>
        internal static Request RegionAlltoallv(Intracomm comm, int[] topo, string name,
                                                Array sendArray, Region[] sendRegions,
                                                Array recvArray, Region[] recvRegions)
        {
            object[] sendSpecs = Specs(sendRegions, nameof(sendRegions)),
                     recvSpecs = Specs(recvRegions, nameof(recvRegions));
            return Regions(comm, topo, 0, name, sendArray, sendSpecs, recvArray, recvSpecs);
        }

        /// <summary>NeighborAllgather of a region into regions of one array (name null:
        /// blocking).</summary>
        internal static Request RegionAllgather(Intracomm comm, int[] topo, string name,
                                                Array sendArray, Region sendRegion, Array recvArray,
                                                Region[] recvRegions)
        {
            var sendSpecs = new object[] { Spec(sendRegion, nameof(sendRegion), -1) };
            object[] recvSpecs = Specs(recvRegions, nameof(recvRegions));
            return Regions(comm, topo, SendOne, name, sendArray, sendSpecs, recvArray, recvSpecs);
        }
    }
}
