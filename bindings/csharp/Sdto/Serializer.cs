// Serializer — the SDTO format (serializer/FORMAT.md) for user-managed buffers.
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>The structured data transport's serializer for buffers you manage: the same
    /// format as OSend/ORecv (reference fields travel when [Transportable]; shared references
    /// and cycles are kept), to store graphs or send them your own way.</summary>
    public static class Serializer
    {
        /// <summary>The graph's bytes: exactly Measure(graph) of them.</summary>
        public static byte[] Serialize(object graph)
        {
            Core.Ensure();
            int size = Write(graph, true);
            var bytes = new byte[size];
            CopyTo(bytes, 0);
            return bytes;
        }

        /// <summary>Writes the graph at buffer[offset..]; returns the bytes written.
        /// ArgumentException if it does not fit.</summary>
        public static int Serialize(object graph, byte[] buffer, int offset)
        {
            if (buffer == null)
                throw new ArgumentNullException(nameof(buffer));
            if (offset < 0 || offset > buffer.Length)
                throw new ArgumentOutOfRangeException(nameof(offset));
            Core.Ensure();
            int size = Write(graph, true);
            if (size > buffer.Length - offset)
                throw new ArgumentException(
                    $"the graph needs {size} bytes; {buffer.Length - offset} are left in the " +
                        "buffer",
                    nameof(buffer));
            CopyTo(buffer, offset);
            return size;
        }

        /// <summary>The number of bytes Serialize(graph) writes, without writing them.</summary>
        public static int Measure(object graph)
        {
            Core.Ensure();
            return Write(graph, false);
        }

        /// <summary>Reads a graph whose root must be a T; corrupt, hostile or mismatched bytes
        /// raise MPSerializationException and create no object of an unexpected type, and so
        /// does a graph over the process's <see cref="MP.ReceiveBudget"/>.</summary>
        public static T Deserialize<T>(byte[] buffer, int offset, int count)
        {
            if (buffer == null)
                throw new ArgumentNullException(nameof(buffer));
            if (offset < 0 || offset > buffer.Length)
                throw new ArgumentOutOfRangeException(nameof(offset));
            if (count < 0 || count > buffer.Length - offset)
                throw new ArgumentOutOfRangeException(nameof(count));
            Core.Ensure();
            object result = Read(buffer, offset, count, typeof(T));
            return result == null ? default(T) : (T)result;
        }

        /// <summary>Writes the graph into a native buffer; keep holds it for CopyTo.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Write(object graph, bool keep)
        {
            int size;
            Errors.Check(MPDirect.SdWrite(graph, keep ? 1 : 0, out size));
            return size;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void CopyTo(byte[] dest, int offset) => Errors.Check(MPDirect.SdCopy(dest, offset));

        [MethodImpl(MethodImplOptions.NoInlining)]
        static object Read(byte[] buffer, int offset, int count, Type expected)
        {
            object result;
            using (new ReceiveBudget.Scope(MP.ReceiveBudget))
                Errors.Check(MPDirect.SdRead(buffer, offset, count, expected, out result));
            return result;
        }
    }
}
