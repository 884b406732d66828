#!/usr/bin/env bash
# host_test.sh BUILD_DIR — the motor host's command line, exit codes and failure handling, and
# System.MP under stock mono. Every job runs under `timeout`: a hang is a failure.
set -u
build=$1
motor=$build/motor
probe=$build/tests/HostProbe.exe
mpiexec=mpiexec.mpich
. "$(dirname "$0")/check_kit.sh"

has() { grep -q -- "$1" "$2"; }
lines() { [ "$(grep -c . "$2")" -eq "$1" ]; }
lacks() { ! grep -q -- "$1" "$2"; }
only() { ! grep -v -q -- "$1" "$2"; }   # every line of the file matches
ended() { [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; }   # the job failed, and did not hang
ring_ok() { [ $rc -eq 0 ] && [ "$(grep -c 'ring ok' "$out")" -eq 2 ]; }

run 20 "$motor" --help
check "--help exits 0" [ $rc -eq 0 ]
check "--help shows usage" has "usage: motor" "$out"
run 20 "$motor" --version
check "--version" has "motor 0\." "$out"
run 20 "$motor"
check "no program: exit 2" [ $rc -eq 2 ]
run 20 "$motor" --bogus
check "unknown option: exit 2" [ $rc -eq 2 ]

run 20 "$motor" /nonexistent/app.exe
check "missing assembly: non-zero exit" [ $rc -ne 0 ]
check "missing assembly: one-line error" lines 1 "$err"
check "missing assembly: says what" has "cannot read program '/nonexistent/app.exe'" "$err"

notdll=$(mktemp --suffix=.exe)
echo "this is not an assembly" >"$notdll"
run 20 "$motor" "$notdll"
check "invalid assembly: non-zero exit" [ $rc -ne 0 ]
check "invalid assembly: error names it" has "is not a valid .NET assembly" "$err"
check "invalid assembly: one line from motor" lines 1 <(grep '^motor:' "$err")
rm -f "$notdll"

run 20 "$motor" "$build/System.MP.dll"
check "library: non-zero exit" [ $rc -ne 0 ]
check "library: no entry point" has "has no entry point" "$err"

run 30 "$mpiexec" -n 1 "$motor" "$probe" exit 7
check "Main's return value is the exit code" [ $rc -eq 7 ]
run 30 "$mpiexec" -n 2 "$motor" "$probe" args a "b c" d
check "arguments reach Main" [ "$(grep -c 'args:a|b c|d' "$out")" -eq 2 ]

run 60 "$mpiexec" -n 3 "$motor" "$probe" throw 1
check "uncaught exception: job fails" [ $rc -ne 0 ] 
check "uncaught exception: job does not hang" [ $rc -ne 124 ]
check "uncaught exception: printed with the rank" has "rank 1: unhandled exception: System.InvalidOperationException: probe failure on purpose" "$err"

run 60 "$mpiexec" -n 2 "$motor" "$probe" thread-throw
check "exception on another thread: job fails without hanging" [ $rc -ne 0 ] && [ $rc -ne 124 ]
check "exception on another thread: printed" has "thread failure on purpose" "$err"

run 60 "$mpiexec" -n 2 "$motor" "$probe" abort
check "MP.Abort ends the job with its code" [ $rc -eq 5 ]

run 60 "$mpiexec" -n 2 "$motor" "$probe" nullref
check "NullReferenceException is catchable under motor" [ "$(grep -c 'nullref caught' "$out")" -eq 2 ]

# A rank that ends with a non-zero status ends the job with that status, never a hang, while the
# others wait for it (MPI_Abort; MPI_Finalize would wait for them, and a rank leaving without
# either makes hydra kill the rest and report 9 or the status at random).
run 60 "$mpiexec" -n 4 "$motor" "$probe" env-exit 3
check "Environment.Exit(3) on one rank: job status 3" [ $rc -eq 3 ]
run 60 "$mpiexec" -n 1 "$motor" "$probe" env-exit 3
check "Environment.Exit(3), one rank: status 3" [ $rc -eq 3 ]
check "Environment.Exit(3): ProcessExit handlers registered after System.MP's still run" has "late ProcessExit handler ran on rank 0" "$out"
run 60 "$mpiexec" -n 2 "$motor" "$probe" env-exit-thread 3
check "Environment.Exit(3) from a second thread while the main thread waits in MPI: job status 3" [ $rc -eq 3 ]
run 60 "$mpiexec" -n 3 "$motor" "$probe" return-while-waiting 6
check "Main returns 6 on one rank while the others wait: job status 6" [ $rc -eq 6 ]
run 60 "$mpiexec" -n 4 "$motor" "$probe" env-exit-without-mp 4
check "Environment.Exit(4) before System.MP is used: job status 4" [ $rc -eq 4 ]

# A collection started by another thread while MPI_Finalize runs: its GC hook once called MPI
# on freed state (SIGSEGV, or heap corruption found at cleanup: status 6 in most runs). The
# receives the program dropped are cancelled before MPI_Finalize, which found them pending and
# had UCX print a line for each.
ends_while_collecting() { # ends_while_collecting LABEL RUNS COMMAND... (the probe, its mode added)
    local label=$1 runs=$2 crashed=0 noisy=0
    shift 2
    for ((i = 0; i < runs; i++)); do
        run 60 "$@" end-while-collecting
        if [ $rc -ne 0 ] || has "Native Crash" "$err"; then crashed=$((crashed + 1)); fi
        if has "not returned to mpool" "$out" || has "not returned to mpool" "$err"; then noisy=$((noisy + 1)); fi   # (UCX logs to stdout)
    done
    check "$label: collections while MPI_Finalize runs: $runs clean ends ($crashed crashed)" [ $crashed -eq 0 ]
    check "$label: dropped receives cancelled before MPI_Finalize ($noisy of $runs runs found some pending)" [ $noisy -eq 0 ]
}
ends_while_collecting motor 6 "$mpiexec" -n 2 "$motor" "$probe"

# A program that never disposes its operator, communicators and group ends clean: what System.MP
# made is freed before MPI_Finalize (MPICH reported "yaksa: N leaked handle pool objects").
leaves_objects() { # leaves_objects LABEL COMMAND...
    local label=$1
    shift
    run 60 "$@" leave-objects
    check "$label: a program leaving MPI objects behind ends with status 0" [ $rc -eq 0 ]
    check "$label: it ran on both ranks" [ "$(grep -c 'left objects' "$out")" -eq 2 ]
    check "$label: no leak reported at the end" [ ! -s "$err" ]
}
leaves_objects motor "$mpiexec" -n 2 "$motor" "$probe"

# Preemptive suspend stops threads inside raw internal calls: refused at start, one line.
run 20 env MONO_THREADS_SUSPEND=preemptive "$motor" "$probe" ring
check "preemptive suspend: motor exits 2" [ $rc -eq 2 ]
check "preemptive suspend: one line says why" lines 1 "$err"
check "preemptive suspend: the line names the setting" has "^motor: MONO_THREADS_SUSPEND=preemptive is not supported" "$err"
run 60 "$mpiexec" -n 2 -genv MONO_THREADS_SUSPEND preemptive "$motor" "$probe" ring
check "preemptive suspend under mpiexec: job fails without hanging" ended
check "preemptive suspend under mpiexec: only the reason on stderr" only "^motor: MONO_THREADS_SUSPEND=preemptive is not supported" "$err"
for mode in hybrid coop; do
    run 60 "$mpiexec" -n 2 -genv MONO_THREADS_SUSPEND $mode "$motor" "$probe" ring
    check "$mode suspend accepted by motor" ring_ok
done

# stock mono, System.MP.dll copied next to the program (no MONO_PATH): System.MP finds
# libmotorcore.so beside motor on PATH (also through a symbolic link, and in ../lib), through
# MOTOR_CORE, or says in one line where it looked and what to do.
app=$(mktemp -d)
trap 'rm -f "$out" "$err"; rm -rf "$app"' EXIT
mkdir "$app/run" "$app/bin" "$app/prefix" "$app/prefix/bin" "$app/prefix/lib"
cp "$build/System.MP.dll" "$probe" "$app/run/"
ln -s "$(readlink -f "$motor")" "$app/bin/motor"
cp "$motor" "$app/prefix/bin/motor"
cp "$build/libmotorcore.so" "$app/prefix/lib/"
copied=$app/run/HostProbe.exe
nompath=(env -u MONO_PATH -u MOTOR_CORE)   # System.MP.dll only beside the program
run 60 "${nompath[@]}" PATH="$build:$PATH" "$mpiexec" -n 2 mono "$copied" ring
check "copied System.MP.dll: core found beside motor on PATH" ring_ok
run 60 "${nompath[@]}" PATH="$app/bin:$PATH" "$mpiexec" -n 2 mono "$copied" ring
check "copied System.MP.dll: core found behind a symbolic link to motor" ring_ok
run 60 "${nompath[@]}" PATH="$app/prefix/bin:$PATH" "$mpiexec" -n 2 mono "$copied" ring
check "copied System.MP.dll: core found in ../lib of motor's directory" ring_ok
run 60 "${nompath[@]}" MOTOR_CORE="$build/libmotorcore.so" "$mpiexec" -n 2 mono "$copied" ring
check "copied System.MP.dll: MOTOR_CORE names the library" ring_ok
run 60 "${nompath[@]}" MOTOR_CORE="$build" "$mpiexec" -n 2 mono "$copied" ring
check "copied System.MP.dll: MOTOR_CORE names its directory" ring_ok
run 60 "${nompath[@]}" PATH=/usr/bin:/bin "$mpiexec" -n 2 mono "$copied" ring
check "core nowhere: job fails without hanging" ended
check "core nowhere: the hint says where it looked and what to do" has "System.MP: cannot find libmotorcore.so (looked in $app/run, .*set MOTOR_CORE" "$err"
check "core nowhere: no DllNotFoundException from the loader" lacks "DllNotFoundException" "$err"
check "core nowhere: no stack trace" lacks "^ *at " "$err"
check "core nowhere: the hint is the only text but Mono's own framing" only "System.MP: cannot find libmotorcore.so\\|^Unhandled Exception:\\|^$" "$err"
run 60 "${nompath[@]}" MOTOR_CORE=/nonexistent/lib "$mpiexec" -n 1 mono "$copied" ring
check "MOTOR_CORE naming nothing: says so" has "System.MP: MOTOR_CORE=/nonexistent/lib names no libmotorcore.so" "$err"

# stock mono: System.MP installs the core itself (libmotorcore.so beside System.MP.dll)
export MONO_PATH=$build
run 60 "$mpiexec" -n 2 mono "$probe" ring
check "stock mono: ring" [ $rc -eq 0 ] && [ "$(grep -c 'ring ok' "$out")" -eq 2 ]
leaves_objects "stock mono" "$mpiexec" -n 2 mono "$probe"
# preemptive suspend, refused as motor refuses it: one line, status 2 (it was Mono's "FATAL
# UNHANDLED EXCEPTION", twice, status 1)
run 60 "$mpiexec" -n 1 -genv MONO_THREADS_SUSPEND preemptive mono "$probe" ring
check "stock mono: preemptive suspend: status 2" [ $rc -eq 2 ]
check "stock mono: preemptive suspend: one line says why" lines 1 "$err"
check "stock mono: preemptive suspend: the line names the setting" \
      has "^System.MP: MONO_THREADS_SUSPEND=preemptive is not supported" "$err"
run 60 "$mpiexec" -n 2 -genv MONO_THREADS_SUSPEND preemptive mono "$probe" ring
check "stock mono: preemptive suspend under mpiexec: job fails without hanging" ended
check "stock mono: preemptive suspend under mpiexec: only the reason on stderr" \
      only "^System.MP: MONO_THREADS_SUSPEND=preemptive is not supported" "$err"
run 60 "$mpiexec" -n 2 mono "$probe" nullref
check "stock mono: NullReferenceException is catchable (UCX handlers off)" [ "$(grep -c 'nullref caught' "$out")" -eq 2 ]
run 60 "$mpiexec" -n 3 mono "$probe" throw 2
check "stock mono: uncaught exception fails the job without hanging" [ $rc -ne 0 ] && [ $rc -ne 124 ]
check "stock mono: uncaught exception printed with the rank" has "rank 2: unhandled exception" "$err"
run 60 "$mpiexec" -n 1 mono "$probe" exit 3
check "stock mono: exit code" [ $rc -eq 3 ]
run 60 "$mpiexec" -n 4 mono "$probe" env-exit 3
check "stock mono: Environment.Exit(3) on one rank: job status 3" [ $rc -eq 3 ]
run 60 "$mpiexec" -n 1 mono "$probe" env-exit 3
check "stock mono: Environment.Exit(3), one rank: status 3" [ $rc -eq 3 ]
check "stock mono: Environment.Exit(3): ProcessExit handlers registered after System.MP's still run" has "late ProcessExit handler ran on rank 0" "$out"
run 60 "$mpiexec" -n 2 mono "$probe" env-exit-thread 3
check "stock mono: Environment.Exit(3) from a second thread while the main thread waits in MPI: job status 3" [ $rc -eq 3 ]
run 60 "$mpiexec" -n 3 mono "$probe" return-while-waiting 6
check "stock mono: Main returns 6 on one rank while the others wait: job status 6" [ $rc -eq 6 ]
ends_while_collecting "stock mono" 3 "$mpiexec" -n 2 mono "$probe"

run 60 "$mpiexec" -n 2 -genv MONO_THREADS_SUSPEND preemptive mono "$probe" ring
check "stock mono, preemptive suspend: job fails without hanging" ended
check "stock mono, preemptive suspend: System.MP says why" has "System.MP: MONO_THREADS_SUSPEND=preemptive is not supported" "$err"
check "stock mono, preemptive suspend: no stack trace" lacks "^ *at " "$err"
for mode in hybrid coop; do
    run 60 "$mpiexec" -n 2 -genv MONO_THREADS_SUSPEND $mode mono "$probe" ring
    check "stock mono: $mode suspend accepted" ring_ok
done

# A job whose ranks run different System.MP builds is refused at start, naming the ranks: rank 1
# runs a System.MP.dll built from the same sources as version 9.9.9 (libmotorcore.so beside it).
other=$(mktemp -d)
sed 's/"[0-9][0-9.]*"/"9.9.9"/' "$build/AssemblyInfo.cs" >"$other/AssemblyInfo.cs"
src=$(cd "$(dirname "$0")/.." && pwd)
# every .cs under bindings/csharp/, as CMake's GLOB_RECURSE finds them
mapfile -t mp_sources < <(find "$src/bindings/csharp" -name '*.cs' | sort)
mcs -nologo -target:library -unsafe -nowarn:1591 -out:"$other/System.MP.dll" \
    "${mp_sources[@]}" "$other/AssemblyInfo.cs" >"$out" 2>"$err"
check "a System.MP.dll of another version builds" [ $? -eq 0 ]
ln -s "$build/libmotorcore.so" "$other/libmotorcore.so"
run 60 "$mpiexec" -n 1 -env MONO_PATH "$build" mono "$probe" args x : -n 1 -env MONO_PATH "$other" mono "$probe" args x
check "mixed System.MP versions: the job fails without hanging" ended
check "mixed System.MP versions: the refusal names both builds" \
    has "rank 0 runs System.MP 0.1.0.0 on X64, 64-bit, little-endian; rank 1 runs System.MP 9.9.9.0" "$err"
check "mixed System.MP versions: no rank ran the program" lacks "args:" "$out"
rm -rf "$other"
run 60 "$mpiexec" -n 2 mono "$probe" args x
check "the same System.MP on every rank: accepted" has "args:x" "$out"

echo "host_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
