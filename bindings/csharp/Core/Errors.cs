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
        public MPException(string message, int errorClass) : base(message)
        {
            ErrorClass = errorClass;
        }
        /// <summary>An MPI error caused by another exception (e.g. one a user
        /// operator threw).</summary>
        public MPException(string message, int errorClass, Exception inner) : base(message, inner)
        {
            ErrorClass = errorClass;
        }
    }

    /// <summary>Corrupt, hostile or mismatched serialized bytes.</summary>
    public class MPSerializationException : MPException
    {
        /// <summary>Bytes that are not a valid graph of the expected type.</summary>
        public MPSerializationException(string message) : base(message, 0) { }
        /// <summary>The same, caused by another exception.</summary>
        public MPSerializationException(string message, Exception inner) : base(message, 0, inner)
        { }
    }

    internal static class Errors
    {
        // The one error list (MOTOR_ERRORS in opi/opi_errors.h), each layer's codes in its own
        // range, named alike (OPI_ERR_NOT_1D_ARRAY is Not1dArray); ContractTest checks every name
        // and value.
        // mpc (mpc/mpc_errors.h): MPI's vocabulary
        internal const int NotInitialized = -1, Dest = -2, Source = -3, Tag = -4, Root = -5,
                           CommNull = -6, TooLarge = -7, NoMemory = -8, Request = -9;
        // the managed runtime (object_model/rt_errors.h)
        internal const int Runtime = -100;
        // the serializer (serializer/sd_errors.h)
        internal const int Serialization = -200, Graph = -201;
        // OPI (opi/opi_errors.h): objects and arrays
        // PartialElement: an MPException (the message's element type differs): the default case
        internal const int NullArgument = -300, Offset = -301, Count = -302,
                           NotTransportable = -303, Not1dArray = -304, SameObject = -305, Op = -306,
                           TypeMismatch = -307, Length = -308, Alias = -309, PartialElement = -310;
        // receive blocks that overlap (ArgumentException); a block whose size the sender and
        // the receiver disagree on, found as it arrives (MPException: the default case)
        internal const int BlocksOverlap = -311, BlockMismatch = -312;

        // OPI: groups, topologies, intercommunicators, spawn (opi/opi_comms.c)
        internal const int NotSupported = -319, GroupRank = -320, DuplicateRank = -321,
                           OutOfRange = -322, Dims = -323, BadArgument = -324;
        // OPI: one-sided communication (opi/opi_window.c): an operation outside an epoch that
        // allows it (MPException with MPI's class MPI_ERR_RMA_SYNC); a window disposed
        internal const int WinEpoch = -355, WinDisposed = -356;

        // OPI: files (opi/opi_file.c): System.IO's exceptions, as FileStream raises them
        internal const int FileNotFound = -350, DirectoryNotFound = -351, FileAccess = -352,
                           FileExists = -353, FileIo = -354;

        /// <param name="code">what an internal call returned (0: success, nothing thrown)</param>
        /// <remarks>Inlined at every call: the success test costs a compare, the throw stays
        /// in Make.</remarks>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static void Check(int code)
        {
            if (code != 0)
                throw Make(code);
        }

        /// <summary>The exception for an internal call that just returned code (non-zero), built
        /// from this thread's error record: the failing layer's account, with the argument it is
        /// about and the values involved. Call it right after the failing call, before any other
        /// internal call on this thread: the next failure replaces the record.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static Exception Make(int code)
        {
            string record = Core.Text(b => MPDirect.LastError(code, b));
            int cut = record.IndexOf('\n');
            string argument = cut > 0 ? record.Substring(0, cut) : null;
            string text = record.Substring(cut + 1);
            switch (code) {
            case NullArgument: return new ArgumentNullException(argument, text);
            case Dest:
            case Source:
            case Tag:
            case Offset:
            case Count:
            case Root: return new ArgumentOutOfRangeException(argument, text);
            case NotTransportable:
            case Op:
            case TypeMismatch:
            case Length:
            case Alias:
            case Not1dArray:
            case SameObject:
            case BlocksOverlap:
            case TooLarge: return new ArgumentException(text, argument);
            case CommNull: return new ObjectDisposedException("Comm", text);
            case WinDisposed: return new ObjectDisposedException("Window", text);
            case WinEpoch: return new MPException("System.MP: " + text, Window.RmaSyncClass);
            case NotInitialized: return new InvalidOperationException("System.MP: " + text);
            case NoMemory: return new OutOfMemoryException(text);
            case Request: return new InvalidOperationException("System.MP: " + text);
            case Serialization: return new MPSerializationException("System.MP: " + text);
            case Graph: return new ArgumentException("System.MP: " + text, argument);
            // topo
            case NotSupported: return new NotSupportedException("System.MP: " + text);
            case GroupRank:
            case OutOfRange: return new ArgumentOutOfRangeException(argument, text);
            case DuplicateRank:
            case Dims:
            case BadArgument: return new ArgumentException(text, argument);
            // files (MPFile.Open gives FileNotFoundException its FileName)
            case FileNotFound: return new IO.FileNotFoundException("System.MP: " + text);
            case DirectoryNotFound: return new IO.DirectoryNotFoundException("System.MP: " + text);
            case FileAccess: return new UnauthorizedAccessException("System.MP: " + text);
            case FileExists:
            case FileIo: return new IO.IOException("System.MP: " + text);
            default:
                return new MPException(code > 0 ? text : "System.MP: " + text,
                                       code > 0 ? MPDirect.ErrorClass(code) : code);
            }
        }
    }
}
