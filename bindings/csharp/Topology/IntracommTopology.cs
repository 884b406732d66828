// Intracomm: communicators from groups, Cartesian grids, intercommunicators, spawned processes.
using System.IO;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace System.MP
{
    public partial class Intracomm
    {
        /// <summary>A communicator of the processes in <paramref name="group"/>, a subgroup of
        /// this communicator's <see cref="Comm.Group"/>, ranked in the group's order
        /// (MPI_Comm_create). Collective: every process of this communicator calls it with the same
        /// group; those outside the group get null. Dispose the result when done.</summary>
        /// <exception cref="ArgumentNullException">group is null.</exception>
        /// <exception cref="ArgumentException">group holds processes that are not in this
        /// communicator.</exception>
        /// <exception cref="ObjectDisposedException">the communicator or the group has been
        /// disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Intracomm Create(Group group)
        {
            if (group == null)
                throw new ArgumentNullException(nameof(group));
            int newComm;
            Errors.Check(MPDirect.CommCreate(handle, group.Handle, out newComm));
            return newComm == NullHandle ? null : new Intracomm(newComm, true);
        }

        /// <summary>A communicator whose processes form a grid of dims[0] × dims[1] × …
        /// processes (MPI_Cart_create), periodic (wrapping around) along the dimensions where
        /// periods is true. With reorder false a process keeps its rank; with true MPI may renumber
        /// to fit the machine. The grid may be smaller than the communicator: processes left over
        /// get null. Collective; <see cref="MP.DimsCreate"/> chooses balanced dims. Dispose the
        /// result when
        /// done.</summary>
        /// <exception cref="ArgumentNullException">dims or periods is null.</exception>
        /// <exception cref="ArgumentException">dims and periods differ in length, or dims multiply
        /// to more than Size.</exception>
        /// <exception cref="ArgumentOutOfRangeException">an entry of dims is below 1.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public CartComm CreateCart(int[] dims, bool[] periods, bool reorder)
        {
            int newComm;
            Errors.Check(
                MPDirect.CartCreate(handle, Size, dims, periods, reorder ? 1 : 0, out newComm));
            return newComm == NullHandle ? null : new CartComm(newComm);
        }

        /// <summary>An intercommunicator between this communicator's processes (the local group)
        /// and those of another, disjoint intracommunicator (MPI_Intercomm_create). Collective over
        /// both groups. The two leaders — <paramref name="localLeader"/>, a rank here, and
        /// <paramref name="remoteLeader"/>, the other group's leader as a rank of
        /// <paramref name="peer"/> — talk through peer, a communicator both belong to (often
        /// World) with <paramref name="tag"/>; peer and remoteLeader matter at the local leader
        /// only (peer may be null elsewhere). Dispose the result when done.</summary>
        /// <exception cref="ArgumentNullException">peer is null at the local leader.</exception>
        /// <exception cref="ArgumentOutOfRangeException">localLeader lies outside 0..Size-1,
        /// remoteLeader outside peer, or is the local leader itself; tag is negative or above
        /// MP.TagUpperBound.</exception>
        /// <exception cref="ObjectDisposedException">this communicator or peer has been
        /// disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Intercomm CreateIntercomm(int localLeader, Intracomm peer, int remoteLeader, int tag)
        {
            int peerHandle = NullHandle, peerSize = 0, peerRank = -1;
            if (peer != null) {
                if (peer.handle == NullHandle)
                    throw new ObjectDisposedException("peer", "System.MP: peer has been disposed");
                peerHandle = peer.handle;
                peerSize = peer.Size;
                peerRank = peer.Rank;
            }
            int newComm;
            Errors.Check(
                MPDirect.IntercommCreate(handle, Size, Rank, localLeader, peerHandle, peerSize,
                                         peerRank, remoteLeader, tag, out newComm));
            return new Intercomm(newComm, true);
        }

        /// <summary>Starts <paramref name="maxProcs"/> copies of the C# program
        /// <paramref name="program"/> (a path to its .exe, relative to the current directory)
        /// with <paramref name="args"/>, under the same host as this process — motor under motor,
        /// stock mono under mono — in this process's current directory, and returns the
        /// intercommunicator to them (MPI_Comm_spawn): its remote group is the new processes,
        /// which find this communicator's processes as their <see cref="MP.Parent"/>. Collective:
        /// program, args and maxProcs matter at <paramref name="root"/> only. Dispose the result
        /// when done.</summary>
        /// <remarks>Where the MPI library cannot start processes — Debian 12's MPICH 4.0.2 with
        /// the ch4:ucx device has no dynamic processes (MPI_Open_port fails, and MPI_Comm_spawn
        /// reports "Error in spawn call") — every process raises NotSupportedException naming
        /// that limitation: the root learns it and tells the others before anyone enters MPI, so no
        /// process waits. An argument refused at the root is reported on every process the same
        /// way.</remarks>
        /// <exception cref="NotSupportedException">this MPI library cannot start
        /// processes.</exception> <exception cref="ArgumentNullException">program is null at the
        /// root, or an element of args.</exception> <exception cref="ArgumentException">program
        /// names no file at the root.</exception> <exception
        /// cref="ArgumentOutOfRangeException">root lies outside 0..Size-1, or maxProcs is
        /// below 1.</exception> <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        public Intercomm Spawn(string program, string[] args, int maxProcs, int root)
        {
            int refusal = 0;
            byte[] refusalText = null, command = null;
            if (Rank == root) {
                string argument = null, why = null;
                if (program == null) {
                    refusal = Errors.NullArgument;
                    argument = nameof(program);
                    why = "program must not be null at the root";
                } else if (program.Length == 0 || !File.Exists(program)) {
                    refusal = Errors.BadArgument;
                    argument = nameof(program);
                    why = "program '" + program + "' names no file (looked in " +
                          Environment.CurrentDirectory + ")";
                } else if (maxProcs < 1) {
                    refusal = Errors.OutOfRange;
                    argument = nameof(maxProcs);
                    why = "maxProcs " + maxProcs + ": Spawn starts 1 process or more";
                } else if (args != null && Array.IndexOf(args, null) >= 0) {
                    refusal = Errors.NullArgument;
                    argument = nameof(args);
                    why = "args[" + Array.IndexOf(args, null) + "] is null";
                }
                if (refusal == 0) {
                    // whatever goes wrong here must reach the other processes too
                    try {
                        command = CommandLine(Path.GetFullPath(program), args ?? new string[0]);
                    } catch (NotSupportedException e) {
                        refusal = Errors.NotSupported;
                        argument = "";
                        why = e.Message;
                    } catch (Exception e) {
                        refusal = Errors.BadArgument;
                        argument = nameof(program);
                        why = "program '" + program + "': " + e.Message;
                    }
                }
                if (refusal != 0)
                    refusalText = Encoding.UTF8.GetBytes(argument + "\n" + why);
            }
            return SpawnCollective(root, refusal, refusalText, command, maxProcs);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        Intercomm SpawnCollective(int root, int refusal, byte[] refusalText, byte[] command,
                                  int maxProcs)
        {
            int newComm;
            Errors.Check(MPDirect.CommSpawn(handle, Size, Rank, root, refusal, refusalText, command,
                                            maxProcs, out newComm));
            return new Intercomm(newComm, true);
        }

        /// <summary>The working directory, this process's host executable (motor or mono: what
        /// /proc/self/exe links to) and its arguments — the program, then args — each ended
        /// by NUL.</summary>
        static byte[] CommandLine(string program, string[] args)
        {
            var text = new StringBuilder();
            text.Append(Environment.CurrentDirectory).Append('\0');
            text.Append(HostExecutable()).Append('\0');
            text.Append(program).Append('\0');
            foreach (string a in args)
                text.Append(a).Append('\0');
            return Encoding.UTF8.GetBytes(text.ToString());
        }

        /// <summary>The executable this process runs: motor when hosted (Core.Hosted), else the
        /// mono that runs it.</summary>
        static string HostExecutable()
        {
            var buffer = new byte[4096];
            long n = readlink("/proc/self/exe", buffer, buffer.Length - 1);
            if (n <= 0)
                throw new NotSupportedException(
                    "Spawn cannot find this process's executable (/proc/self/exe)");
            return Encoding.UTF8.GetString(buffer, 0, (int)n);
        }

        [DllImport("libc", SetLastError = true)]
        static extern long readlink(string path, byte[] buffer, long size);
    }
}
