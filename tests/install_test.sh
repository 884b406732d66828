#!/usr/bin/env bash
# install_test.sh BUILD_DIR — the installed files alone are enough: `cmake --install` into a
# temporary prefix, then, from an unrelated directory, a C# program compiled against the
# installed System.MP.dll runs under the installed motor and under stock mono (System.MP.dll on
# MONO_PATH, or copied beside the program with motor on PATH), and a C program built with
# `pkg-config motor` runs under mpiexec.mpich — also when PKG_CONFIG_PATH is a relative path
# (the RUNPATH must still be absolute) and the program is started from another directory. Also:
# the package rules make a .deb holding the same files. Every job runs under `timeout`.
set -u
b=$1
scale=${MOTOR_TIMEOUT_SCALE:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
app=$work/app
mkdir -p "$app"
passed=0 failed=0
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@" >"$work/out" 2>&1; then passed=$((passed + 1)); else
        failed=$((failed + 1)); echo "FAIL: $what"; head -c 1500 "$work/out"; echo; fi
}
sums() { [ "$(grep -c "sum 3$" "$work/out")" -eq 2 ]; }

check "cmake --install into a fresh prefix" cmake --install "$b" --prefix "$prefix"
libdir=$(cd "$prefix" && ls -d lib*/motor | head -1 | xargs dirname)
for f in bin/motor "$libdir/libmotorcore.so" "$libdir/motor/System.MP.dll" "$libdir/motor/System.MP.xml" \
         include/motor/mpc.h include/motor/mpc_errors.h include/motor/motor_core.h "$libdir/pkgconfig/motor.pc"; do
    check "installed: $f" test -s "$prefix/$f"
done

cat >"$app/Hello.cs" <<'CS'
using System;
using System.MP;
class Hello {
    static int Main() {
        Intracomm w = MP.World;
        int sum = w.Allreduce(w.Rank + 1, Op.Sum);
        Console.WriteLine($"rank {w.Rank} of {w.Size}: sum {sum}");
        return sum == w.Size * (w.Size + 1) / 2 ? 0 : 1;
    }
}
CS
cd "$app"
check "C#: compiles against the installed System.MP.dll" mcs -nologo -r:"$prefix/$libdir/motor/System.MP.dll" Hello.cs
run() { timeout $((60 * scale)) "$@" </dev/null; }
check "C#: runs under the installed motor" run mpiexec.mpich -n 2 "$prefix/bin/motor" Hello.exe
sums || { failed=$((failed + 1)); echo "FAIL: motor: wrong output"; cat "$work/out"; }
check "C#: runs under stock mono with MONO_PATH=<libdir>/motor" \
    run env MONO_PATH="$prefix/$libdir/motor" mpiexec.mpich -n 2 mono Hello.exe
sums || { failed=$((failed + 1)); echo "FAIL: mono: wrong output"; cat "$work/out"; }
cp "$prefix/$libdir/motor/System.MP.dll" .
check "C#: System.MP.dll copied beside the program, motor on PATH, stock mono" \
    run env -u MONO_PATH PATH="$prefix/bin:$PATH" mpiexec.mpich -n 2 mono Hello.exe
sums || { failed=$((failed + 1)); echo "FAIL: copied: wrong output"; cat "$work/out"; }

cat >"$app/hello.c" <<'C'
#include <mpc.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int provided, rank, size, one = 1, sum = 0;
    if (mpc_init(&argc, &argv, MPI_THREAD_SINGLE, &provided) != MPC_OK)
        return 1;
    if (mpc_comm_rank(mpc_comm_world(), &rank) != MPC_OK || mpc_comm_size(mpc_comm_world(), &size) != MPC_OK ||
        mpc_allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, mpc_comm_world()) != MPC_OK)
        return 1;
    printf("rank %d of %d: sum %d\n", rank, size, sum + 1);
    return mpc_finalize() == MPC_OK ? 0 : 1;
}
C
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
check "C: pkg-config motor" pkg-config --exists motor
check "C: compiles and links with pkg-config motor" \
    sh -c "cc -std=c11 -Wall -Werror hello.c \$(pkg-config --cflags --libs motor) -o hello"
check "C: runs" run mpiexec.mpich -n 2 ./hello
sums || { failed=$((failed + 1)); echo "FAIL: C: wrong output"; cat "$work/out"; }

# A relative PKG_CONFIG_PATH: pkg-config's ${pcfiledir} is then relative, and a prefix derived
# from it would give a relative RUNPATH, which the loader resolves against the directory the
# program is started from. The RUNPATH must be absolute, and the program must run from elsewhere.
relpc=$(realpath --relative-to="$app" "$prefix/$libdir/pkgconfig")
check "C: compiles with a relative PKG_CONFIG_PATH ($relpc)" \
    sh -c "PKG_CONFIG_PATH='$relpc' cc -std=c11 -Wall -Werror hello.c \$(PKG_CONFIG_PATH='$relpc' pkg-config --cflags --libs motor) -o hello_rel"
check "C: relative PKG_CONFIG_PATH: every RUNPATH/RPATH entry is absolute" sh -c '
    paths=$(readelf -d hello_rel | sed -n "s/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]$/\2/p" | tr ":" "\n")
    echo "RUNPATH: $paths"
    [ -n "$paths" ] || exit 1
    for d in $paths; do case $d in /*) ;; *) echo "relative: $d"; exit 1 ;; esac; done'
# from / (a sibling of $app could resolve the relative path by luck)
check "C: relative PKG_CONFIG_PATH: runs from another directory" \
    sh -c "cd / && timeout $((60 * scale)) mpiexec.mpich -n 2 '$app/hello_rel' </dev/null"
sums || { failed=$((failed + 1)); echo "FAIL: C (relative PKG_CONFIG_PATH): wrong output"; cat "$work/out"; }

# the Debian package from the same rules
check "cpack -G DEB" sh -c "cd '$b' && cpack -G DEB -B '$work/deb' >/dev/null"
deb=$(ls "$work"/deb/motor_*.deb 2>/dev/null | head -1)
check "a .deb was made" test -s "$deb"
if [ -s "$deb" ]; then
    dpkg-deb -c "$deb" >"$work/contents"
    for f in usr/bin/motor libmotorcore.so motor/System.MP.dll motor/System.MP.xml include/motor/mpc.h pkgconfig/motor.pc; do
        check ".deb holds $f" grep -q "$f" "$work/contents"
    done
    check ".deb's motor.pc names the prefix /usr" \
        sh -c "dpkg-deb --fsys-tarfile '$deb' | tar -xO --wildcards '*/pkgconfig/motor.pc' | grep -qx 'prefix=/usr'"
    check ".deb depends on MPICH and Mono" sh -c "dpkg-deb -f '$deb' Depends | grep -q mpich && dpkg-deb -f '$deb' Depends | grep -q mono"
fi
echo "install_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
