// Comm's name and comparison (MPI_Comm_set_name / get_name, MPI_Comm_compare), and
// Intracomm.SplitShared: the ranks of one host (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED).
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>How two communicators relate (<see cref="Comm.Compare"/>,
    /// MPI_Comm_compare).</summary>
    public enum Comparison
    {
        // the values: OPI_COMPARISONS (opi/opi_constants.h), checked by ContractTest
        /// <summary>The same communicator (MPI_IDENT): the same object on this rank, or two
        /// System.MP objects of one MPI communicator.</summary>
        Identical = 0,
        /// <summary>Different communicators of the same processes in the same rank order
        /// (MPI_CONGRUENT): a <see cref="Comm.Dup"/>, a Split that kept everyone in
        /// order.</summary>
        Congruent = 1,
        /// <summary>The same processes in another rank order (MPI_SIMILAR).</summary>
        Similar = 2,
        /// <summary>Not the same processes (MPI_UNEQUAL).</summary>
        Unequal = 3,
    }

    public partial class Comm
    {
        // The longest name that round-trips (OPI_COMM_LIMITS, opi/opi_constants.h; checked by
        // ContractTest): MPI keeps MPI_MAX_OBJECT_NAME - 1 = 127 characters.
        const int MaxName = 127;

        /// <summary>The communicator's name, for people reading logs and debuggers
        /// (MPI_Comm_set_name / MPI_Comm_get_name). A communicator made by Dup, Split, Create,
        /// CreateCart, SplitShared … starts with the name "" (a name is never inherited);
        /// <see cref="MP.World"/> is "MPI_COMM_WORLD" and <see cref="MP.Self"/> "MPI_COMM_SELF"
        /// until renamed. The name is local: each rank sets and reads its own (setting it on every
        /// rank is not required, and is no collective).</summary>
        /// <example><code>
        /// using (Intracomm rows = MP.World.Split(MP.World.Rank / 4, 0)) {
        ///     rows.Name = "rows " + MP.World.Rank / 4;
        ///     Console.WriteLine($"{rows.Name}: rank {rows.Rank} of {rows.Size}");
        /// }
        /// </code></example>
        /// <exception cref="ArgumentNullException">the name set is null.</exception>
        /// <exception cref="ArgumentException">the name set is longer than 127 characters, or
        /// holds a character outside ASCII 1..127 (MPI names are C strings of ASCII characters:
        /// others would not read back as they were written).</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        public string Name
        {
            [MethodImpl(MethodImplOptions.NoInlining)]
            get
            {
                var buffer = new byte[MaxName];
                int length;
                Errors.Check(MPDirect.CommGetName(handle, buffer, out length));
                return Text.Encoding.ASCII.GetString(buffer, 0, length);
            }
            [MethodImpl(MethodImplOptions.NoInlining)]
            set
            {
                if (value == null)
                    throw new ArgumentNullException(nameof(value),
                                                    "System.MP: a communicator's name cannot be " +
                                                        "null (\"\" clears it)");
                if (value.Length > MaxName)
                    throw new ArgumentException(
                        $"System.MP: a communicator's name is at most {MaxName} characters; " +
                            $"this one has {value.Length} (\"{value.Substring(0, 20)}...\")",
                        nameof(value));
                var bytes = new byte[value.Length];
                for (int i = 0; i < value.Length; i++) {
                    char c = value[i];
                    if (c == '\0' || c > '\x7f')
                        throw new ArgumentException(
                            $"System.MP: character {i} of the name is U+{(int)c:X4}: a " +
                                "communicator's name is ASCII characters (U+0001..U+007F)",
                            nameof(value));
                    bytes[i] = (byte)c;
                }
                Errors.Check(MPDirect.CommSetName(handle, bytes));
            }
        }

        /// <summary>How communicators a and b relate (MPI_Comm_compare):
        /// <see cref="Comparison.Identical"/> for one communicator,
        /// <see cref="Comparison.Congruent"/> for the same processes in the same order (a Dup),
        /// <see cref="Comparison.Similar"/> for the same processes in another order,
        /// <see cref="Comparison.Unequal"/> otherwise. Local: no message is sent.</summary>
        /// <example><code>
        /// using (Intracomm copy = MP.World.Dup())
        ///     Console.WriteLine(Comm.Compare(MP.World, copy));   // Congruent
        /// </code></example>
        /// <exception cref="ArgumentNullException">a or b is null.</exception>
        /// <exception cref="ObjectDisposedException">a or b has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static Comparison Compare(Comm a, Comm b)
        {
            if (a == null)
                throw new ArgumentNullException(nameof(a));
            if (b == null)
                throw new ArgumentNullException(nameof(b));
            int result;
            Errors.Check(MPDirect.CommCompare(a.handle, b.handle, out result));
            return (Comparison)result;
        }
    }

    public partial class Intracomm
    {
        /// <summary>A communicator of the ranks of this one that run on this rank's host (that
        /// can share memory: MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), ordered by key, ties
        /// by rank here. Collective: every rank calls it; each gets the communicator of its own
        /// host, never null. Dispose it when done.</summary>
        /// <example><code>
        /// using (Intracomm host = MP.World.SplitShared(0)) {
        ///     // host.Rank == 0: one rank per machine, e.g. to write one log file each
        ///     Console.WriteLine($"{MP.ProcessorName}: {host.Size} ranks here");
        /// }
        /// </code></example>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Intracomm SplitShared(int key)
        {
            int newComm;
            Errors.Check(MPDirect.CommSplitShared(handle, key, out newComm));
            return new Intracomm(newComm, true);
        }
    }
}
