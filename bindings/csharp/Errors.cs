// Errors — the one place where core error codes become exceptions.
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>An MPI error. The communicator and the process remain usable.</summary>
    public class MPException : Exception
    {
        /// <summary>The MPI error class (MPI_ERR_*), or the core's own negative code.</summary>
        public int ErrorClass { get; }

        /// <summary>An MPI error with its class.</summary>
        public MPException(string message, int errorClass) : base(message) { ErrorClass = errorClass; }
        /// <summary>An MPI error caused by another exception (e.g. one a user operator threw).</summary>
        public MPException(string message, int errorClass, Exception inner) : base(message, inner) { ErrorClass = errorClass; }
    }

    /// <summary>Corrupt, hostile or mismatched serialized bytes.</summary>
    public class MPSerializationException : MPException
    {
        /// <summary>Bytes that are not a valid graph of the expected type.</summary>
        public MPSerializationException(string message) : base(message, 0) { }
        /// <summary>The same, caused by another exception.</summary>
        public MPSerializationException(string message, Exception inner) : base(message, 0, inner) { }
    }

    internal static class Errors
    {
        // The codes of MPC_ERRORS in mpc/mpc.h, named alike (MPC_ERR_NOT_1D_ARRAY is Not1dArray);
        // ContractTest checks every name and value.
        internal const int NotTransportable = -8;
        internal const int NotInitialized = -1, NullArgument = -2, Dest = -3, Source = -4, Tag = -5,
                  Offset = -6, Count = -7, Not1dArray = -9,
                  SameObject = -10, CommNull = -11, Root = -12, TooLarge = -13, NoMemory = -14,
                  Runtime = -15, Request = -16, Op = -17, TypeMismatch = -18, Length = -19, Alias = -20,
                  Serialization = -21, Graph = -22,
                  PartialElement = -23;   // an MPException (the message's element type differs): the default case

        internal static void Check(int code)
        {
            if (code != 0)
                throw Make(code, null);
        }

        /// <param name="code">a core error code (0: success, nothing thrown)</param>
        /// <param name="subject">the object a NotTransportable code is about</param>
        internal static void Check(int code, object subject)
        {
            if (code != 0)
                throw Make(code, subject);
        }

        /// <summary>The serializer's own account of its last failure on this thread, if any.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static string SerializerText(string fallback)
        {
            string why = Core.Text(b => MPDirect.SdError(b));
            return why.Length > 0 ? why : fallback;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static Exception Make(int code, object subject)
        {
            string text = Core.Text(b => MPDirect.ErrorString(code, b));
            switch (code) {
            case NullArgument: return new ArgumentNullException("obj", text);
            case Dest: return new ArgumentOutOfRangeException("dest", text);
            case Source: return new ArgumentOutOfRangeException("source", text);
            case Tag: return new ArgumentOutOfRangeException("tag", text + " (0 to " + MP.TagUpperBound + ")");
            case Offset: return new ArgumentOutOfRangeException("offset", text);
            case Count: return new ArgumentOutOfRangeException("count", text);
            case Root: return new ArgumentOutOfRangeException("root", text);
            case NotTransportable: return new ArgumentException(Core.Text(b => MPDirect.TransportError(subject, b)));
            case Op:
            case TypeMismatch:
            case Length:
            case Alias:
            case Not1dArray:
            case SameObject:
            case TooLarge: return new ArgumentException(text);
            case CommNull: return new ObjectDisposedException("Comm", text);
            case NotInitialized: return new InvalidOperationException("System.MP: " + text);
            case NoMemory: return new OutOfMemoryException(text);
            case Request: return new InvalidOperationException("System.MP: " + text);
            case Serialization: return new MPSerializationException("System.MP: " + SerializerText(text));
            case Graph: return new ArgumentException("System.MP: " + SerializerText(text));
            default:
                return new MPException(code > 0 ? text : "System.MP: " + text,
                                       code > 0 ? MPDirect.ErrorClass(code) : code);
            }
        }
    }
}
