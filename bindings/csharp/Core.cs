// Core — starts the native core once, before any internal call is compiled.
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace System.MP
{
    internal static class Core
    {
        static readonly object gate = new object();
        static volatile bool ready;
        static Intracomm world, self;

        internal static Intracomm World { get { Ensure(); return world; } }
        internal static Intracomm Self { get { Ensure(); return self; } }

        /// <summary>true when a host (motor) installed the core; false under stock mono.</summary>
        internal static bool Hosted { get; private set; }

        internal static void Ensure()
        {
            if (!ready)
                Start();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Start()
        {
            lock (gate) {
                if (ready)
                    return;
                // Under stock mono, libucs (loaded with MPICH) would replace Mono's SIGSEGV
                // handler and turn every NullReferenceException into a crash. The variable must
                // be set before the library loads, i.e. before InstallNative is compiled.
                if (Environment.GetEnvironmentVariable("UCX_HANDLE_ERRORS") == null)
                    Environment.SetEnvironmentVariable("UCX_HANDLE_ERRORS", "none");
                int rc = InstallNative();
                if (rc != 0 && rc != 1)
                    throw new MPException("System.MP: cannot start the Motor core (code " + rc + ")", rc);
                Hosted = rc == 1;
                CreateCommunicators();
                if (!Hosted) {
                    AppDomain.CurrentDomain.ProcessExit += (s, e) => FinalizeNative();
                    AppDomain.CurrentDomain.UnhandledException += (s, e) => {
                        Console.Error.WriteLine("System.MP: rank {0}: unhandled exception: {1}", world.Rank, e.ExceptionObject);
                        MP.Abort(1);
                    };
                }
                ready = true;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int InstallNative() { return NativeCore.motor_core_ensure(); }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void CreateCommunicators()
        {
            Errors.Check(MPDirect.SdInit(typeof(TransportableAttribute)));
            world = new Intracomm(MPDirect.WorldHandle(), false);
            self = new Intracomm(MPDirect.SelfHandle(), false);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void FinalizeNative() { MPDirect.Finalize(); }

        /// <summary>Reads text an internal call writes into a byte buffer; fill returns its full length.</summary>
        internal static string Text(Func<byte[], int> fill)
        {
            var buffer = new byte[256];
            int length = fill(buffer);
            if (length > buffer.Length) {
                buffer = new byte[length];
                length = fill(buffer);
            }
            return Encoding.UTF8.GetString(buffer, 0, Math.Max(0, Math.Min(length, buffer.Length)));
        }

        static class NativeCore
        {
            [DllImport("motorcore")]
            internal static extern int motor_core_ensure();
        }
    }

    /// <summary>Mirrors opi_status in opi/opi_internal.h.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct StatusData
    {
        internal int Source, Tag, Count, Cancelled;
        internal long Bytes;
        internal int Error, Reserved;   // Error: a non-blocking transfer that failed at once
    }
}
