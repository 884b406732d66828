// Core — starts the native core once, before any internal call is compiled.
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace System.MP
{
    internal static class Core
    {
        static readonly object gate = new object();
        static volatile bool ready;
        static Intracomm world, self;

        internal static Intracomm World
        {
            get {
                Ensure();
                return world;
            }
        }
        internal static Intracomm Self
        {
            get {
                Ensure();
                return self;
            }
        }

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
            lock (gate)
            {
                if (ready)
                    return;
                RefuseUnsafeSuspendMode();
                // Under stock mono, libucs (loaded with MPICH) would replace Mono's SIGSEGV
                // handler and turn every NullReferenceException into a crash. The variable must
                // be set before the library loads, i.e. before InstallNative runs.
                if (Environment.GetEnvironmentVariable("UCX_HANDLE_ERRORS") == null)
                    Environment.SetEnvironmentVariable("UCX_HANDLE_ERRORS", "none");
                int rc = InstallNative();
                if (rc != 0 && rc != 1)
                    throw new MPException(
                        "System.MP: cannot start the Motor core (code " + rc + ")", rc);
                Hosted = rc == 1;
                CreateCommunicators();
                worldSize = world.Size;
                RefuseMixedJob();
                // Both hosts: Environment.Exit must end MPI here. Later Mono waits for every other
                // thread to stop before it exits, and a thread waiting inside MPI never does.
                processExit = (s, e) => EndProcess(Environment.ExitCode, s, e);
                AppDomain.CurrentDomain.ProcessExit += processExit;
                if (!Hosted) {
                    // motor has its own hook for exceptions no code catches.
                    AppDomain.CurrentDomain.UnhandledException += (s, e) =>
                    {
                        Console.Error.WriteLine("System.MP: rank {0}: unhandled exception: {1}",
                                                world.Rank, e.ExceptionObject);
                        Console.Error.Flush();
                        // MPI_Abort makes the launcher kill every process at once, and hydra was
                        // seen to drop this process's last output then (under load): an error path
                        // can spare a moment for the report to be forwarded first, as motor does.
                        Thread.Sleep(200);
                        MP.Abort(1);
                    };
                }
                ready = true;
            }
        }

        /// <summary>What a rank runs, as every rank of a job must run it: this System.MP.dll's
        /// version, the architecture, the word size and the byte order (objects travel as their
        /// bytes, so ranks that differ in any of these would misread each other).</summary>
        internal static string BuildIdentity()
        {
            var assembly = typeof(Core).Assembly.GetName();
            return string.Format("System.MP {0} on {1}, {2}-bit, {3}-endian", assembly.Version,
                                 RuntimeInformation.ProcessArchitecture, IntPtr.Size * 8,
                                 BitConverter.IsLittleEndian ? "little" : "big");
        }

        /// <summary>Every rank compares what it runs with the others' (one Allgather at start)
        /// and refuses a mixed job, naming the ranks that differ from rank 0, before any of them
        /// could corrupt another's data.</summary>
        static void RefuseMixedJob()
        {
            const int width = 96;
            var mine = new byte[width];
            byte[] text = Encoding.UTF8.GetBytes(BuildIdentity());
            Array.Copy(text, mine, Math.Min(text.Length, width));
            var all = new byte[width * worldSize];
            world.Allgather(mine, all);
            Func<int, string> Identity = rank =>
                Encoding.UTF8.GetString(all, rank * width, width).TrimEnd('\0');
            string first = Identity(0);
            var differing = new List<string>();
            for (int rank = 1; rank < worldSize; rank++)
                if (Identity(rank) != first)
                    differing.Add(string.Format("rank {0} runs {1}", rank, Identity(rank)));
            if (differing.Count > 0)
                throw new StartupRefusal(string.Format(
                    "System.MP: the ranks of this job differ: rank 0 runs {0}; {1}. Every rank " +
                        "must run the same System.MP version on the same architecture and byte " +
                        "order.",
                    first,
                    string.Join("; ", differing.Count > 4 ? differing.GetRange(0, 4) : differing) +
                        (differing.Count > 4 ? string.Format("; and {0} more", differing.Count - 4)
                                             : "")));
        }

        /// <summary>Under preemptive suspend a thread is stopped by a signal anywhere, also inside
        /// a raw (GC-unsafe) internal call holding object pointers in native frames, and objects
        /// may move under it. Mono 6.8 reads the mode from MONO_THREADS_SUSPEND only. motor
        /// refuses the setting before Mono starts; under stock mono the process ends here as
        /// motor's does, with one line and status 2, before MPI or the core is touched (an
        /// exception would reach the user as Mono's "FATAL UNHANDLED EXCEPTION", twice, with
        /// status 1).</summary>
        static void RefuseUnsafeSuspendMode()
        {
            if (Environment.GetEnvironmentVariable("MONO_THREADS_SUSPEND") != "preemptive")
                return;
            Console.Error.WriteLine(
                "System.MP: MONO_THREADS_SUSPEND=preemptive is not supported (raw internal " +
                "calls must not be preempted); use hybrid (the default) or coop");
            Console.Error.Flush();
            Environment.Exit(2);
        }

        /// <summary>ProcessExit: Environment.Exit, or (under stock mono) the end of Main. A
        /// non-zero code from one rank of several ends the whole job through MPI_Abort with that
        /// code: the other ranks may be waiting for this one, so MPI_Finalize would wait forever.
        /// A job of one rank ends the process with the code at once, without MPI_Finalize:
        /// nothing waits for it, another thread may still be inside MPI (finalizing then crashed
        /// the process), and Mono would wait for that thread forever before exiting. Either way
        /// the ProcessExit handlers registered after this one run first. Zero finalizes MPI (a
        /// no-op when the host already did).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void EndProcess(int code, object sender, EventArgs args)
        {
            if (code != 0) {
                RunLaterProcessExitHandlers(sender, args);
                Console.Out.Flush();
                Console.Error.Flush();
                if (worldSize == 1)
                    Libc.Exit(code);
                int rc = MPDirect.Abort(MPDirect.WorldHandle(), code);   // returns only on failure
                Console.Error.WriteLine(
                    "System.MP: MPI_Abort failed (code {0}); finalizing instead", rc);
            }
            MPDirect.Finalize();
        }

        static EventHandler processExit;

        /// <summary>Runs the ProcessExit handlers subscribed after ours, which ending the process
        /// here would otherwise skip (Mono keeps the event in AppDomain's
        /// field ProcessExit).</summary>
        static void RunLaterProcessExitHandlers(object sender, EventArgs args)
        {
            var field = typeof(AppDomain).GetField("ProcessExit",
                                                   BindingFlags.Instance | BindingFlags.NonPublic);
            if (!(field?.GetValue(AppDomain.CurrentDomain) is EventHandler all))
                return;
            bool after = false;
            foreach (EventHandler handler in all.GetInvocationList()) {
                if (after) {
                    try {
                        handler(sender, args);
                    } catch (Exception e) {
                        Console.Error.WriteLine("System.MP: a ProcessExit handler failed: {0}",
                                                e.Message);
                    }
                } else {
                    after = handler == processExit;
                }
            }
        }

        static int worldSize;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int InstallNative() { return NativeCore.Ensure(); }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void CreateCommunicators()
        {
            Errors.Check(
                MPDirect.SdInit(typeof(TransportableAttribute), SdtoFactories.Maker.ToInt64()));
            world = new Intracomm(MPDirect.WorldHandle(), false);
            self = new Intracomm(MPDirect.SelfHandle(), false);
        }

        /// <summary>Reads text an internal call writes into a byte buffer; fill returns its
        /// full length.</summary>
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

        /// <summary>Finds libmotorcore.so, loads it and calls motor_core_ensure. Under a host
        /// the library is already loaded. Otherwise, in this order: beside System.MP.dll, one
        /// directory up (the installed layout: System.MP.dll in &lt;libdir&gt;/motor), $MOTOR_CORE
        /// (the library or its directory), beside the first `motor` on PATH (and behind its
        /// symbolic link) and in its ../lib, then <see cref="InstallLibDir"/>. The library is
        /// loaded with dlopen and its entry point called through dlsym, so no DllImport search path
        /// is involved.</summary>
        static class NativeCore
        {
            internal const string LibraryName = "libmotorcore.so";
            internal const string PathVariable = "MOTOR_CORE";
            /// <summary>Where the library lands when installed with CMake's
            /// default prefix.</summary>
            internal const string InstallLibDir = "/usr/local/lib";
            const string Hint =
                "set MOTOR_CORE to libmotorcore.so or its directory (it is built into the build " +
                "directory beside motor), or run the program under motor";

            // <dlfcn.h> on glibc/Linux.
            const int RTLD_NOW = 2, RTLD_NOLOAD = 4, RTLD_GLOBAL = 0x100;

            [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
            delegate int EnsureFunction();

            internal static int Ensure()
            {
                IntPtr library = Load();
                IntPtr entry = Dl.dlsym(library, "motor_core_ensure");
                if (entry == IntPtr.Zero)
                    throw new CoreNotFound(
                        "System.MP: " + LibraryName + " has no motor_core_ensure (" + Dl.Error() +
                        "); " + Hint);
                var ensure =
                    (EnsureFunction)Marshal.GetDelegateForFunctionPointer(entry,
                                                                          typeof(EnsureFunction));
                return ensure();
            }

            static IntPtr Load()
            {
                // A host linked it (glibc matches the name against the loaded library's SONAME).
                IntPtr library = Dl.dlopen(LibraryName, RTLD_NOW | RTLD_NOLOAD);
                if (library != IntPtr.Zero)
                    return library;
                var looked = new List<string>();
                string found = Find(looked);
                if (found == null)
                    throw new CoreNotFound(
                        "System.MP: cannot find " + LibraryName + " (looked in " +
                        string.Join(", ", looked) + "); " + Hint);
                // GLOBAL: the core's symbols serve every later lookup of the same library.
                library = Dl.dlopen(found, RTLD_NOW | RTLD_GLOBAL);
                if (library == IntPtr.Zero)
                    throw new CoreNotFound("System.MP: cannot load " + found + ": " + Dl.Error());
                return library;
            }

            /// <summary>The first candidate that exists, or null; looked receives every
            /// place tried.</summary>
            static string Find(List<string> looked)
            {
                string own = typeof(Core).Assembly.Location;
                if (!string.IsNullOrEmpty(own) &&
                    Exists(Path.GetDirectoryName(own), looked, out string beside))
                    return beside;
                // installed: System.MP.dll in <libdir>/motor, the library in <libdir>
                if (!string.IsNullOrEmpty(own) &&
                    Exists(Path.GetDirectoryName(Path.GetDirectoryName(own)), looked,
                           out string up))
                    return up;

                string variable = Environment.GetEnvironmentVariable(PathVariable);
                if (!string.IsNullOrEmpty(variable)) {
                    string path =
                        Directory.Exists(variable) ? Path.Combine(variable, LibraryName) : variable;
                    if (File.Exists(path))
                        return path;
                    // An explicit choice that names nothing is an error, not a reason to pick
                    // some other copy silently.
                    throw new CoreNotFound("System.MP: " + PathVariable + "=" + variable +
                                           " names no " + LibraryName + "; " + Hint);
                }
                looked.Add("$" + PathVariable + " (unset)");

                string motor = MotorOnPath();
                if (motor == null) {
                    looked.Add("beside motor (none on PATH)");
                } else {
                    var dirs = new List<string> { Path.GetDirectoryName(motor) };
                    string target = Dl.RealPath(motor);
                    if (target != null && Path.GetDirectoryName(target) != dirs[0])
                        dirs.Add(Path.GetDirectoryName(target));
                    foreach (string dir in dirs) {
                        if (Exists(dir, looked, out string path) ||
                            Exists(Path.GetFullPath(Path.Combine(dir, "..", "lib")), looked,
                                   out path))
                            return path;
                    }
                }
                return Exists(InstallLibDir, looked, out string installed) ? installed : null;
            }

            static bool Exists(string dir, List<string> looked, out string path)
            {
                path = Path.Combine(dir, LibraryName);
                looked.Add(dir);
                return File.Exists(path);
            }

            static string MotorOnPath()
            {
                string path = Environment.GetEnvironmentVariable("PATH") ?? "";
                foreach (string dir in path.Split(Path.PathSeparator)) {
                    if (dir.Length == 0)
                        continue;
                    string candidate = Path.Combine(dir, "motor");
                    if (File.Exists(candidate))
                        return Path.GetFullPath(candidate);
                }
                return null;
            }
        }

        /// <summary>libc's _exit: ends the process at once, without runtime shutdown.</summary>
        static class Libc
        {
            [DllImport("libc", EntryPoint = "_exit")]
            internal static extern void Exit(int status);
        }

        /// <summary>The dynamic loader. libdl.so.2 resolves dlopen on every glibc (since 2.34
        /// the functions live in libc, which libdl.so.2 depends on).</summary>
        static class Dl
        {
            [DllImport("libdl.so.2")]
            internal static extern IntPtr dlopen(string file, int mode);
            [DllImport("libdl.so.2")]
            internal static extern IntPtr dlsym(IntPtr handle, string name);
            [DllImport("libdl.so.2")]
            static extern IntPtr dlerror();
            [DllImport("libc", EntryPoint = "realpath")]
            static extern IntPtr realpath(string path, IntPtr resolved);
            [DllImport("libc", EntryPoint = "free")]
            static extern void free(IntPtr memory);

            /// <summary>dlerror's text on one line.</summary>
            internal static string Error()
            {
                IntPtr text = dlerror();
                return text == IntPtr.Zero ? "unknown error"
                                           : Marshal.PtrToStringAnsi(text).Replace('\n', ' ');
            }

            /// <summary>The canonical path (symbolic links resolved), or null.</summary>
            internal static string RealPath(string path)
            {
                IntPtr resolved = realpath(path, IntPtr.Zero);
                if (resolved == IntPtr.Zero)
                    return null;
                try {
                    return Marshal.PtrToStringAnsi(resolved);
                } finally {
                    free(resolved);
                }
            }
        }
    }

    /// <summary>System.MP cannot run in this process's configuration (see the message). Its text
    /// is the whole report: the stack trace says nothing about the configuration, so an
    /// uncaught one prints as one line.</summary>
    internal sealed class StartupRefusal : NotSupportedException
    {
        internal StartupRefusal(string message) : base(message) { }

        /// <summary>The message alone.</summary>
        public override string ToString() => Message;
    }

    /// <summary>libmotorcore.so cannot be found or loaded; the message says where System.MP
    /// looked and what to do. Printed as that one line when uncaught.</summary>
    internal sealed class CoreNotFound : DllNotFoundException
    {
        internal CoreNotFound(string message) : base(message) { }

        /// <summary>The message alone.</summary>
        public override string ToString() => Message;
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
