// ShallowWater — the classic finite-difference shallow-water model (Sadourny's scheme on a
// periodic C-grid, leap-frog time stepping with a Robert–Asselin filter, the form of the SWM /
// "swim" benchmark), parallelised master–worker as in the Motor paper on System.MP:
//   - the master (rank 0) initialises the fields as double[,] and sends each worker its rows;
//   - workers step in time, exchanging edge rows with their neighbours every step through OPI
//     Sendrecv of array subsets (offset, count) — zero-copy, in place, one call per direction;
//     the neighbours come from CartComm.Shift on the workers' periodic ring;
//   - at the end each worker sends its rows back as a Res record (structured transport: OSend),
//     which the master recomposes.
//   mpiexec.mpich -n 3 motor ShallowWater.exe [M N STEPS] [--verify] [--checksum] [--neighbour]
//                                           [--checkpoint FILE] [--dump FILE]
// --neighbour does each exchange phase (u, v, p; then cu, cv, z, h) in one call instead: a
// NeighborAlltoall of regions (the edge and halo rows of every field) over a distributed graph of
// the ring with an edge per field and direction, from the fields themselves (NeighbourHalo).
// With one rank the master computes alone. --verify also runs the serial model on the master
// and compares the parallel result bit for bit (exit code 1 when they differ); --checksum prints
// a hash of the final fields that shallow_water.c prints too (the implementations agree).
// --checkpoint FILE writes the final u, v and p (each the global double[M, N], row-major, one
// after the other, no header) with MPI-IO: every rank opens FILE together, and each worker writes
// its rows straight from its slab through a view of the global array (the master, owning no rows,
// takes part with none). --dump FILE writes the same bytes from the master's gathered fields with
// one serial FileStream write per field: the two files are equal byte for byte.
using System;
using System.Diagnostics;
using System.IO;
using System.MP;
using System.Threading;
using Mono.Simd;

// Mono.Simd is marked obsolete in favour of System.Numerics.Vectors, whose Vector<T> Mono 6.8's JIT
// does not accelerate (Vector.IsHardwareAccelerated is false there, and such loops ran slower than
// scalar code): the kernels use Mono.Simd's Vector2d, which it compiles to SSE2.
#pragma warning disable 618

/// <summary>What a worker sends back: its block of rows and where it goes.</summary>
[Serializable]   // for the BinaryFormatter baseline only; System.MP needs no attribute on the class
class Res
{
    public int Row0, Rows, Field;
    [Transportable]
    public double[,] Block;
}

/// <summary>The messages the case study sends, over System.MP or over the
/// P/Invoke baseline.</summary>
interface ISwmTransport
{
    string Name { get; }
    /// <summary>MPI_Wtime through this binding: each implementation times its phases with the clock
    /// shallow_water.c uses. (A Stopwatch reading costs ~1–2 µs when caches are cold after a
    /// compute phase — more than a halo message — and would be counted
    /// as communication.)</summary>
    double Wtime();
    void Send(double[] data, int offset, int count, int dest, int tag);
    void Recv(double[] data, int offset, int count, int source, int tag);
    /// <summary>Fills halo rows from up and down while sending edge rows the other way.</summary>
    void Exchange(double[] f, int haloUp, int haloDown, int edgeDown, int edgeUp, int n, int up,
                  int down, int tag);
    void SendRes(Res r, int dest, int tag);
    /// <summary>Is a Res record with this tag waiting (from any worker)?</summary>
    bool ResWaiting(int tag);
    Res RecvRes(int tag);
}

sealed class SystemMpTransport : ISwmTransport
{
    readonly Intracomm world = MP.World;
    public string Name => "System.MP";
    public double Wtime() => MP.Wtime();
    public void Send(double[] d, int offset, int count, int dest,
                     int tag) => world.Send(d, offset, count, dest, tag);
    public void Recv(double[] d, int offset, int count, int source,
                     int tag) => world.Recv(d, offset, count, source, tag);

    public void Exchange(double[] f, int haloUp, int haloDown, int edgeDown, int edgeUp, int n,
                         int up, int down, int tag)
    {
        world.Sendrecv(f, edgeDown, n, down, 10 + tag, f, haloUp, n, up, 10 + tag);
        world.Sendrecv(f, edgeUp, n, up, 20 + tag, f, haloDown, n, down, 20 + tag);
    }

    public void SendRes(Res r, int dest, int tag) => world.OSend(r, dest, tag);
    public bool ResWaiting(int tag) => world.Iprobe(MP.AnySource, tag) != null;
    public Res RecvRes(int tag) => world.ORecv<Res>(MP.AnySource, tag);
}

/// <summary>BASELINE: the "external binding" of the paper — DllImport'ed MPICH with a GCHandle
/// per call, Res through BinaryFormatter (bench/baselines/PInvokeMpi.cs).</summary>
sealed class PInvokeTransport : ISwmTransport
{
    readonly System.Runtime.Serialization.Formatters.Binary.BinaryFormatter formatter =
        new System.Runtime.Serialization.Formatters.Binary.BinaryFormatter();
    public string Name => "P/Invoke + BinaryFormatter";
    public double Wtime() => PInvokeMpi.Wtime();
    public void Send(double[] d, int offset, int count, int dest,
                     int tag) => PInvokeMpi.SendDoubles(d, offset, count, dest, tag);
    public void Recv(double[] d, int offset, int count, int source,
                     int tag) => PInvokeMpi.RecvDoubles(d, offset, count, source, tag);

    public void Exchange(double[] f, int haloUp, int haloDown, int edgeDown, int edgeUp, int n,
                         int up, int down, int tag)
    {
        PInvokeMpi.SendrecvDoubles(f, edgeDown, n, down, 10 + tag, haloUp, up, 10 + tag);
        PInvokeMpi.SendrecvDoubles(f, edgeUp, n, up, 20 + tag, haloDown, down, 20 + tag);
    }

    public void SendRes(Res r, int dest, int tag)
    {
        var m = new System.IO.MemoryStream();
        formatter.Serialize(m, r);
        byte[] bytes = m.ToArray();
        PInvokeMpi.Send(bytes, bytes.Length, dest, tag);
    }

    public bool ResWaiting(int tag) => PInvokeMpi.Iprobe(tag);

    public Res RecvRes(int tag)
    {
        int source, count;
        PInvokeMpi.Probe(tag, out source, out count);
        var bytes = new byte[count];
        PInvokeMpi.Recv(bytes, count, source, tag);
        return (Res)formatter.Deserialize(new System.IO.MemoryStream(bytes));
    }
}

/// <summary>--neighbour: a whole exchange phase in one neighbourhood collective. The workers'
/// ring becomes a distributed graph with two edges per field: this worker sends its first row up
/// and its last row down, and receives its lower halo from below and its upper halo from above.
/// A graph's k-th edge between two workers carries the k-th block one lists for the other, so with
/// the sources listed (down, up) per field the rows land in the right halos for any number of
/// workers — also two (above and below are one worker) and one (itself). The regions are rows of
/// the flattened fields (Region boxes of a double[]), moved in place: nothing is packed.</summary>
sealed class NeighbourHalo : IDisposable
{
    readonly DistGraphComm graph;
    readonly Array[] arrays;
    readonly Region[] edges, halos;

    /// <summary>up, down: ranks of workersComm.</summary>
    public NeighbourHalo(Intracomm workersComm, int up, int down, Slab s, double[][] fields)
    {
        int k = fields.Length;
        var sources = new int[2 * k];
        var destinations = new int[2 * k];
        arrays = new Array[2 * k];
        edges = new Region[2 * k];
        halos = new Region[2 * k];
        Func<int, Region> row = r => new Region(new[] { s.At(r, 0) }, new[] { s.N });
        for (int f = 0; f < k; f++) {
            destinations[2 * f] = up;   // the first row, into the upper worker's lower halo
            edges[2 * f] = row(0);
            destinations[2 * f + 1] = down;   // the last row, into the lower one's upper halo
            edges[2 * f + 1] = row(s.Rows - 1);
            sources[2 * f] = down;   // the lower halo, from below
            halos[2 * f] = row(s.Rows);
            sources[2 * f + 1] = up;   // the upper halo, from above
            halos[2 * f + 1] = row(-1);
            arrays[2 * f] = arrays[2 * f + 1] = fields[f];
        }
        graph = workersComm.CreateDistGraphAdjacent(sources, destinations, false);
    }

    public void Exchange() => graph.NeighborAlltoall(arrays, edges, arrays, halos);

    public void Dispose() => graph.Dispose();
}

/// <summary>One slab of the model: rows [0, rows) owned, plus a halo row above and below, stored
/// row-major in one-dimensional arrays so that rows travel as array subsets.</summary>
sealed class Slab
{
    const double Dt = 90, Dx = 1e5, Dy = 1e5, A = 1e6, Alpha = 0.001;
    public readonly int Rows, N, Row0, M;
    public double[] U, V, P, UOld, VOld, POld, UNew, VNew, PNew, Cu, Cv, Z, H;
    double tdt = Dt;
    int step;

    public Slab(int m, int n, int row0, int rows)
    {
        M = m;
        N = n;
        Row0 = row0;
        Rows = rows;
        Func<double[]> make = () => new double[(rows + 2) * n];
        U = make();
        V = make();
        P = make();
        UOld = make();
        VOld = make();
        POld = make();
        UNew = make();
        VNew = make();
        PNew = make();
        Cu = make();
        Cv = make();
        Z = make();
        H = make();
    }

    // localRow -1 and Rows are halos
    public int At(int localRow, int j) => (localRow + 1) * N + j;

    /// <summary>Initial state of the whole grid (global indices, periodic).</summary>
    public static void Initial(int m, int n, out double[,] u, out double[,] v, out double[,] p)
    {
        double el = n * Dx, pcf = Math.PI * Math.PI * A * A / (el * el);
        double di = 2 * Math.PI / m, dj = 2 * Math.PI / n;
        var psi = new double[m, n];
        u = new double[m, n];
        v = new double[m, n];
        p = new double[m, n];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                psi[i, j] = A * Math.Sin((i + 0.5) * di) * Math.Sin((j + 0.5) * dj);
                p[i, j] = pcf * (Math.Cos(2 * i * di) + Math.Cos(2 * j * dj)) + 50000;
            }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                u[i, j] = -(psi[i, j] - psi[i, (j + n - 1) % n]) / Dy;
                v[i, j] = (psi[i, j] - psi[(i + m - 1) % m, j]) / Dx;
            }
    }

    // The kernels index raw pointers (no bounds checks). The two edge columns of a row, whose
    // west or east neighbour wraps around, go point by point; the columns between them go two at
    // a time in SSE2 registers (Mono.Simd's Vector2d, which Mono's JIT compiles to packed double
    // instructions: Mono 6.8 does not vectorize loops itself). Those loops walk byte pointers and
    // reach the other fields, rows and neighbours at fixed byte distances from them: indexing with
    // an int made the JIT sign-extend, scale and add for every load, which was measurably slower.
    // Each lane does exactly the native C program's arithmetic, in its order, so results agree
    // bit for bit.

    /// <summary>Phase 1 on owned rows: fluxes, vorticity, height (needs u, v, p halos).</summary>
    public unsafe void Fluxes()
    {
        int n = N;
        Vector2d half = new Vector2d(0.5, 0.5), quarter = new Vector2d(0.25, 0.25);
        Vector2d fsdx = new Vector2d(4 / Dx, 4 / Dx), fsdy = new Vector2d(4 / Dy, 4 / Dy);
        fixed(double* u = U, v = V, p = P, cu = Cu, cv = Cv, z = Z, h = H)
        {
            // byte distances from p to the fields written, and from a row to the rows south
            // and north
            long toCu = (byte*)cu - (byte*)p, toCv = (byte*)cv - (byte*)p,
                 toZ = (byte*)z - (byte*)p;
            long toH = (byte*)h - (byte*)p, south = -8L * n, north = 8L * n;
            for (int i = 0; i < Rows; i++) {
                int row = (i + 1) * n;
                FluxPoint(row, row + n - 1, row + 1, row - n, row - 1, row + n, u, v, p, cu, cv, z,
                          h);
                byte *c = (byte*)(p + row + 1), uAt = (byte*)(u + row + 1),
                     vAt = (byte*)(v + row + 1);
                byte* pairsEnd = (byte*)(p + row + n - 2);
                // p[c], p[c + 1] and their neighbours
                for (; c < pairsEnd; c += 16, uAt += 16, vAt += 16) {
                    Vector2d pc = *(Vector2d*)c, ps = *(Vector2d*)(c + south),
                             pw = *(Vector2d*)(c - 8);
                    Vector2d psw = *(Vector2d*)(c + south - 8), uc = *(Vector2d*)uAt,
                             vc = *(Vector2d*)vAt;
                    Vector2d un = *(Vector2d*)(uAt + north), ve = *(Vector2d*)(vAt + 8);
                    *(Vector2d*)(c + toCu) = half * (pc + ps) * uc;
                    *(Vector2d*)(c + toCv) = half * (pc + pw) * vc;
                    *(Vector2d*)(c + toZ) = (fsdx * (vc - *(Vector2d*)(vAt + south)) -
                                             fsdy * (uc - *(Vector2d*)(uAt - 8))) /
                                            (psw + pw + pc + ps);
                    *(Vector2d*)(c + toH) = pc + quarter * (un * un + uc * uc + ve * ve + vc * vc);
                }
                for (int k = (int)((double*)c - p); k < row + n - 1; k++)   // a column left over
                    FluxPoint(k, k - 1, k + 1, k - n, k - n - 1, k + n, u, v, p, cu, cv, z, h);
                int last = row + n - 1;
                FluxPoint(last, last - 1, row, last - n, last - n - 1, last + n, u, v, p, cu, cv, z,
                          h);
            }
        }
    }

    /// <summary>One point of phase 1: c, its west and east neighbours w and e, s and sw south of
    /// it, nn north.</summary>
    static unsafe void FluxPoint(int c, int w, int e, int s, int sw, int nn, double* u, double* v,
                                 double* p, double* cu, double* cv, double* z, double* h)
    {
        double fsdx = 4 / Dx, fsdy = 4 / Dy;
        cu[c] = 0.5 * (p[c] + p[s]) * u[c];
        cv[c] = 0.5 * (p[c] + p[w]) * v[c];
        z[c] = (fsdx * (v[c] - v[s]) - fsdy * (u[c] - u[w])) / (p[sw] + p[w] + p[c] + p[s]);
        h[c] = p[c] + 0.25 * (u[nn] * u[nn] + u[c] * u[c] + v[e] * v[e] + v[c] * v[c]);
    }

    /// <summary>Phase 2 on owned rows: the new fields, then the time filter (needs cu, cv, z,
    /// h halos).</summary>
    public unsafe void Advance()
    {
        int n = N, first = At(0, 0), last = At(Rows, 0);
        var k = new Steps { Tdts8 = tdt / 8, Tdtsdx = tdt / Dx, Tdtsdy = tdt / Dy };
        Vector2d tdts8 = new Vector2d(k.Tdts8, k.Tdts8), tdtsdx = new Vector2d(k.Tdtsdx, k.Tdtsdx);
        Vector2d tdtsdy = new Vector2d(k.Tdtsdy, k.Tdtsdy);
        fixed(double* u = U, v = V, p = P, uo = UOld, vo = VOld, po = POld, un = UNew, vn = VNew,
              pn = PNew, cu = Cu, cv = Cv, z = Z, h = H)
        {
            var f = new Fields { Uo = uo, Vo = vo, Po = po, Un = un, Vn = vn,
                                 Pn = pn, Cu = cu, Cv = cv, Z = z,   H = h };
            // byte distances from z to the fields read and written at the point only, and from a
            // row to the rows south and north of it; z, cu, cv and h, read with neighbours,
            // are walked
            long toUo = (byte*)uo - (byte*)z, toVo = (byte*)vo - (byte*)z,
                 toPo = (byte*)po - (byte*)z;
            long toUn = (byte*)un - (byte*)z, toVn = (byte*)vn - (byte*)z,
                 toPn = (byte*)pn - (byte*)z;
            long south = -8L * n, north = 8L * n;
            for (int i = 0; i < Rows; i++) {
                int row = (i + 1) * n;
                AdvancePoint(ref f, ref k, row, row + n - 1, row + 1, row - n, row - n + 1, row + n,
                             row + 2 * n - 1);
                byte *c = (byte*)(z + row + 1), pairsEnd = (byte*)(z + row + n - 2);
                byte *cuAt = (byte*)(cu + row + 1), cvAt = (byte*)(cv + row + 1),
                     hAt = (byte*)(h + row + 1);
                // z[c], z[c + 1] and their neighbours
                for (; c < pairsEnd; c += 16, cuAt += 16, cvAt += 16, hAt += 16) {
                    Vector2d zc = *(Vector2d*)c, cuc = *(Vector2d*)cuAt, cvc = *(Vector2d*)cvAt;
                    Vector2d hc = *(Vector2d*)hAt, cun = *(Vector2d*)(cuAt + north),
                             cve = *(Vector2d*)(cvAt + 8);
                    *(Vector2d*)(c + toUn) =
                        *(Vector2d*)(c + toUo) +
                        tdts8 * (*(Vector2d*)(c + 8) + zc) *
                            (cve + *(Vector2d*)(cvAt + south + 8) + *(Vector2d*)(cvAt + south) +
                             cvc) -
                        tdtsdx * (hc - *(Vector2d*)(hAt + south));
                    *(Vector2d*)(c + toVn) =
                        *(Vector2d*)(c + toVo) -
                        tdts8 * (*(Vector2d*)(c + north) + zc) *
                            (cun + cuc + *(Vector2d*)(cuAt - 8) + *(Vector2d*)(cuAt + north - 8)) -
                        tdtsdy * (hc - *(Vector2d*)(hAt - 8));
                    *(Vector2d*)(c + toPn) =
                        *(Vector2d*)(c + toPo) - tdtsdx * (cun - cuc) - tdtsdy * (cve - cvc);
                }
                for (int q = (int)((double*)c - z); q < row + n - 1; q++)   // a column left over
                    AdvancePoint(ref f, ref k, q, q - 1, q + 1, q - n, q - n + 1, q + n, q + n - 1);
                int end = row + n - 1;
                AdvancePoint(ref f, ref k, end, end - 1, row, end - n, row - n, end + n,
                             end + n - 1);
            }
            if (step > 0)   // Robert–Asselin filter
                Filter(first, last, u, v, p, uo, vo, po, un, vn, pn);
            else
                for (int c = first; c < last; c++) {
                    uo[c] = u[c];
                    vo[c] = v[c];
                    po[c] = p[c];
                    u[c] = un[c];
                    v[c] = vn[c];
                    p[c] = pn[c];
                }
        }
        if (step++ == 0)
            tdt += tdt;   // leap-frog from the second step on
    }

    /// <summary>The Robert–Asselin filter of cells [first, last), then the new fields become
    /// current: two cells at a time, walking u, v and p (see Fluxes).</summary>
    static unsafe void Filter(int first, int last, double* u, double* v, double* p, double* uo,
                              double* vo, double* po, double* un, double* vn, double* pn)
    {
        Vector2d alpha = new Vector2d(Alpha, Alpha), two = new Vector2d(2, 2);
        // u, v, p and their old values walked; the new values at byte distances from u, v and p
        long toNew = (byte*)un - (byte*)u, vToNew = (byte*)vn - (byte*)v,
             pToNew = (byte*)pn - (byte*)p;
        long toOld = (byte*)uo - (byte*)u, vToOld = (byte*)vo - (byte*)v,
             pToOld = (byte*)po - (byte*)p;
        byte *c = (byte*)(u + first), vAt = (byte*)(v + first), pAt = (byte*)(p + first),
             pairsEnd = (byte*)(u + last - 1);
        for (; c < pairsEnd; c += 16, vAt += 16, pAt += 16) {
            Vector2d uc = *(Vector2d*)c, vc = *(Vector2d*)vAt, pc = *(Vector2d*)pAt;
            Vector2d unc = *(Vector2d*)(c + toNew), vnc = *(Vector2d*)(vAt + vToNew),
                     pnc = *(Vector2d*)(pAt + pToNew);
            *(Vector2d*)(c + toOld) = uc + alpha * (unc - two * uc + *(Vector2d*)(c + toOld));
            *(Vector2d*)(vAt + vToOld) = vc + alpha * (vnc - two * vc + *(Vector2d*)(vAt + vToOld));
            *(Vector2d*)(pAt + pToOld) = pc + alpha * (pnc - two * pc + *(Vector2d*)(pAt + pToOld));
            *(Vector2d*)c = unc;
            *(Vector2d*)vAt = vnc;
            *(Vector2d*)pAt = pnc;
        }
        for (int q = (int)((double*)c - u); q < last; q++) {   // a cell left over
            uo[q] = u[q] + Alpha * (un[q] - 2 * u[q] + uo[q]);
            vo[q] = v[q] + Alpha * (vn[q] - 2 * v[q] + vo[q]);
            po[q] = p[q] + Alpha * (pn[q] - 2 * p[q] + po[q]);
            u[q] = un[q];
            v[q] = vn[q];
            p[q] = pn[q];
        }
    }

    /// <summary>The fields phase 2 reads and writes, for its edge points.</summary>
    unsafe struct Fields
    {
        public double *Uo, Vo, Po, Un, Vn, Pn, Cu, Cv, Z, H;
    }

    /// <summary>Phase 2's time-step factors.</summary>
    struct Steps
    {
        public double Tdts8, Tdtsdx, Tdtsdy;
    }

    /// <summary>One point of phase 2: c, w and e in its row, s and se south, nn and
    /// nw north.</summary>
    static unsafe void AdvancePoint(ref Fields f, ref Steps k, int c, int w, int e, int s, int se,
                                    int nn, int nw)
    {
        double *z = f.Z, cu = f.Cu, cv = f.Cv, h = f.H;
        f.Un[c] = f.Uo[c] + k.Tdts8 * (z[e] + z[c]) * (cv[e] + cv[se] + cv[s] + cv[c]) -
                  k.Tdtsdx * (h[c] - h[s]);
        f.Vn[c] = f.Vo[c] - k.Tdts8 * (z[nn] + z[c]) * (cu[nn] + cu[c] + cu[w] + cu[nw]) -
                  k.Tdtsdy * (h[c] - h[w]);
        f.Pn[c] = f.Po[c] - k.Tdtsdx * (cu[nn] - cu[c]) - k.Tdtsdy * (cv[e] - cv[c]);
    }

    /// <summary>Periodic halos of one field from the slab itself (one rank owns
    /// every row).</summary>
    public void WrapHalos(double[] f)
    {
        Array.Copy(f, At(Rows - 1, 0), f, At(-1, 0), N);
        Array.Copy(f, At(0, 0), f, At(Rows, 0), N);
    }
}

static class ShallowWater
{
    static bool checksum, neighbour;
    static string checkpoint, dump;   // --checkpoint FILE, --dump FILE (null: none)

    /// <summary>The argument after name (null when absent); removes both from args.</summary>
    static string Option(ref string[] args, string name)
    {
        int at = Array.IndexOf(args, name);
        if (at < 0 || at + 1 >= args.Length)
            return null;
        string value = args[at + 1];
        var rest = new System.Collections.Generic.List<string>(args);
        rest.RemoveRange(at, 2);
        args = rest.ToArray();
        return value;
    }

    /// <summary>--checkpoint: the fields u, v, p one after the other in FILE, each a global
    /// double[m, n]. Collective over world: this rank's rows [row0, row0 + rows) of each field
    /// are fields[k][first .. first + rows * n) (a slab's owned rows: the halos are left out by
    /// the offset and count); a rank with no rows passes rows 0.</summary>
    static void Checkpoint(Intracomm world, int m, int n, int row0, int rows, double[][] fields,
                           int first)
    {
        using (MPFile file = MPFile.Open(world, checkpoint, FileMode.Create, FileAccess.Write))
        {
            var part = new Region(new[] { row0, 0 }, new[] { rows, n });
            for (int k = 0; k < fields.Length; k++) {
                // field k starts k * m * n doubles into the file; offsets count this rank's part
                file.SetView((long)k * m * n * sizeof(double), typeof(double), new[] { m, n },
                             part);
                file.WriteAtAll(0, fields[k], first, rows * n);
            }
        }
    }

    /// <summary>--dump: the master's gathered fields, serially, one FileStream write
    /// each.</summary>
    static void Dump(double[][,] r)
    {
        using (var f = new FileStream(dump, FileMode.Create, FileAccess.Write))
        {
            foreach (double[,] field in r) {
                var bytes = new byte[Buffer.ByteLength(field)];
                Buffer.BlockCopy(field, 0, bytes, 0, bytes.Length);
                f.Write(bytes, 0, bytes.Length);
            }
        }
    }

    static void Main(string[] args) { Environment.ExitCode = Run(args); }

    static int Run(string[] args)
    {
        Intracomm world = MP.World;
        bool verify = Array.IndexOf(args, "--verify") >= 0;
        checksum = Array.IndexOf(args, "--checksum") >= 0;
        bool pinvoke = Array.IndexOf(args, "--pinvoke") >= 0;
        neighbour = Array.IndexOf(args, "--neighbour") >= 0;
        checkpoint = Option(ref args, "--checkpoint");
        dump = Option(ref args, "--dump");
        ISwmTransport net =
            pinvoke ? (ISwmTransport) new PInvokeTransport() : new SystemMpTransport();
        var nums = Array.FindAll(args, a => !a.StartsWith("--"));
        int m = 256, n = 256, steps = 100;
        if ((nums.Length > 0 && !int.TryParse(nums[0], out m)) ||
            (nums.Length > 1 && !int.TryParse(nums[1], out n)) ||
            (nums.Length > 2 && !int.TryParse(nums[2], out steps)) || nums.Length > 3 || m < 2 ||
            n < 2 || steps < 0 || (pinvoke && neighbour)) {
            if (world.Rank == 0)
                Console.Error.WriteLine("usage: ShallowWater.exe [ROWS COLUMNS STEPS] [--verify] " +
                                        "[--checksum] [--pinvoke | --neighbour] " +
                                        "[--checkpoint FILE] [--dump FILE]");
            return 2;
        }
        int workers = Math.Max(1, world.Size - 1);
        if (m < 2 * workers) {
            if (world.Rank == 0)
                Console.Error.WriteLine(
                    $"shallow water: {m} rows cannot feed {workers} workers (2 rows each at " +
                    "least)");
            return 2;
        }
        double[,] u0, v0, p0;
        // every rank can compute it; the master sends it
        Slab.Initial(m, n, out u0, out v0, out p0);
        if (world.Size == 1) {
            var sw = Stopwatch.StartNew();
            Slab s = Serial(m, n, steps, u0, v0, p0);
            Report(world, m, n, steps, Gather(s), p0, u0, v0,
                   new[] { new double[] { sw.Elapsed.TotalSeconds, 0, 0 } },
                   sw.Elapsed.TotalSeconds);
            if (checkpoint != null)
                Checkpoint(world, m, n, 0, m, new[] { s.U, s.V, s.P }, s.At(0, 0));
            if (dump != null)
                Dump(Gather(s));
            return 0;
        }
        // The workers alone (the master takes no part in the stencil): their periodic ring is a
        // Cartesian grid over this communicator; the master gets null.
        using (Intracomm workersComm = world.Split(world.Rank == 0 ? -1 : 0, world.Rank))
        {
            if (world.Rank == 0)
                return Master(world, net, m, n, steps, workers, u0, v0, p0, verify);
            Worker(world, workersComm, net, m, n, steps, workers);
        }
        return 0;
    }

    /// <summary>The ranks of a worker's neighbours: the model is periodic north-south, so the
    /// workers' slabs form a ring, a periodic one-dimensional Cartesian grid whose Shift by one
    /// gives the worker above (source) and below (dest) — as ranks of the ring (those of
    /// workersComm: reorder is false), and translated into World's, which both transports
    /// address.</summary>
    static void Neighbours(Intracomm world, Intracomm workersComm, int workers, out int up,
                           out int down, out int ringUp, out int ringDown)
    {
        // clang-format off
        using (CartComm ring = workersComm.CreateCart(new[] { workers }, new[] { true }, false))
        using (Group ringGroup = ring.Group)
        using (Group worldGroup = world.Group) {
            // clang-format on
            ring.Shift(0, 1, out ringUp, out ringDown);
            int[] inWorld = ringGroup.TranslateRanks(new[] { ringUp, ringDown }, worldGroup);
            up = inWorld[0];
            down = inWorld[1];
        }
    }

    static void Rows(int m, int workers, int w, out int row0, out int rows)
    {
        int baseRows = m / workers, extra = m % workers;
        row0 = w * baseRows + Math.Min(w, extra);
        rows = baseRows + (w < extra ? 1 : 0);
    }

    static int Master(Intracomm world, ISwmTransport net, int m, int n, int steps, int workers,
                      double[,] u0, double[,] v0, double[,] p0, bool verify)
    {
        var total = Stopwatch.StartNew();
        var block = new double[0];
        for (int w = 0; w < workers; w++) {   // each worker's rows of u, v, p: one message each
            int row0, rows;
            Rows(m, workers, w, out row0, out rows);
            if (block.Length != rows * n)
                block = new double[rows * n];
            foreach (double[,] f in new[] { u0, v0, p0 }) {
                Buffer.BlockCopy(f, row0 * n * 8, block, 0, rows * n * 8);
                net.Send(block, 0, rows * n, w + 1, 1);
            }
        }
        var result = new[] { new double[m, n], new double[m, n], new double[m, n] };
        // clang-format off
        var times = new double[workers][];
        // clang-format on
        for (int k = 0; k < 3 * workers; k++) {   // Res records, in any order
            // The master idles while the workers compute: it sleeps 1 ms between looks instead
            // of busy-polling in a blocking receive, which with more ranks than cores takes a
            // core from the workers (3 ranks on 2 cores: every implementation twice as fast).
            // Thread.Yield was not enough: the scheduler gives the core straight back.
            while (!net.ResWaiting(2))
                Thread.Sleep(1);
            Res r = net.RecvRes(2);
            Buffer.BlockCopy(r.Block, 0, result[r.Field], r.Row0 * n * 8, r.Rows * n * 8);
        }
        for (int w = 0; w < workers; w++) {
            var t = new double[3];
            net.Recv(t, 0, 3, w + 1, 3);
            times[w] = t;
        }
        double elapsed = total.Elapsed.TotalSeconds;
        if (checkpoint != null)   // (after the workers' messages: they checkpoint after sending)
            Checkpoint(world, m, n, 0, 0, new[] { new double[0], new double[0], new double[0] }, 0);
        if (dump != null)
            Dump(result);
        Console.WriteLine(
            "transport: " + net.Name + (neighbour ? ", halos by NeighborAlltoall of regions" : ""));
        Report(world, m, n, steps, result, p0, u0, v0, times, elapsed);
        if (!verify)
            return 0;
        double[][,] serial = Gather(Serial(m, n, steps, u0, v0, p0));
        long differ = 0;
        for (int f = 0; f < 3; f++)
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++)
                    if (BitConverter.DoubleToInt64Bits(serial[f][i, j]) !=
                        BitConverter.DoubleToInt64Bits(result[f][i, j]))
                        differ++;
        Console.WriteLine(
            differ == 0
                ? $"verify: the parallel result equals the serial run bit for bit ({3L * m * n} " +
                      "values)"
                : $"verify: {differ} values differ from the serial run");
        double drift = Math.Abs(Mass(result[2]) - Mass(p0)) / Mass(p0);
        Console.WriteLine(drift < 1e-12 ? $"verify: mass conserved to round-off ({drift:E2})"
                                        : $"verify: mass drifted by {drift:E2}");
        return differ == 0 && drift < 1e-12 ? 0 : 1;
    }

    static void Worker(Intracomm world, Intracomm workersComm, ISwmTransport net, int m, int n,
                       int steps, int workers)
    {
        int w = workersComm.Rank, row0, rows;
        Rows(m, workers, w, out row0, out rows);
        var s = new Slab(m, n, row0, rows);
        foreach (double[] f in new[] { s.U, s.V, s.P })
            net.Recv(f, s.At(0, 0), rows * n, 0, 1);
        Array.Copy(s.U, s.UOld, s.U.Length);
        Array.Copy(s.V, s.VOld, s.V.Length);
        Array.Copy(s.P, s.POld, s.P.Length);
        int up, down, ringUp, ringDown;   // World's ranks of the neighbours, and the ring's
        Neighbours(world, workersComm, workers, out up, out down, out ringUp, out ringDown);
        double compute = 0, comm = 0;
        double start = net.Wtime();
        // long runs say how far they are
        bool progress = w == 0 && (long)m * n * steps >= 200_000_000;
        // built once, as shallow_water.c's arrays of field pointers (a params array per call would
        // allocate inside the timed exchange)
        double[][] first = { s.U, s.V, s.P }, second = { s.Cu, s.Cv, s.Z, s.H };
        NeighbourHalo firstHalo = null, secondHalo = null;
        if (neighbour) {
            firstHalo = new NeighbourHalo(workersComm, ringUp, ringDown, s, first);
            secondHalo = new NeighbourHalo(workersComm, ringUp, ringDown, s, second);
        }
        for (int t = 0; t < steps; t++) {
            if (progress && t > 0 && t % Math.Max(1, steps / 10) == 0)
                Console.Error.WriteLine(
                    $"shallow water: step {t}/{steps} ({net.Wtime() - start:F1} s)");
            // Each exchange is timed by a second clock reading: after a compute phase the clock's
            // own path is as cold as MPI's, and its cost is not communication
            // (shallow_water.c alike).
            net.Wtime();
            double t0 = net.Wtime();
            if (neighbour)
                firstHalo.Exchange();
            else
                Exchange(net, s, up, down, first);
            double t1 = net.Wtime();
            s.Fluxes();
            net.Wtime();
            double t2 = net.Wtime();
            if (neighbour)
                secondHalo.Exchange();
            else
                Exchange(net, s, up, down, second);
            double t3 = net.Wtime();
            s.Advance();
            compute += (t2 - t1) + (net.Wtime() - t3);
            comm += (t1 - t0) + (t3 - t2);
        }
        if (neighbour) {
            firstHalo.Dispose();
            secondHalo.Dispose();
        }
        double sdt0 = net.Wtime();
        int field = 0;
        foreach (double[] f in new[] { s.U, s.V, s.P }) {
            var block = new double[rows, n];
            Buffer.BlockCopy(f, s.At(0, 0) * 8, block, 0, rows * n * 8);
            net.SendRes(new Res { Row0 = row0, Rows = rows, Field = field++, Block = block }, 0, 2);
        }
        double sdto = net.Wtime() - sdt0;
        net.Send(new[] { compute, comm, sdto }, 0, 3, 0, 3);
        if (checkpoint != null)
            Checkpoint(world, m, n, row0, rows, new[] { s.U, s.V, s.P }, s.At(0, 0));
    }

    /// <summary>Edge rows to and from the neighbours, in place: first row up / last row down;
    /// halos filled from the neighbours' edges (a single worker is its own neighbour).</summary>
    static void Exchange(ISwmTransport net, Slab s, int up, int down, double[][] fields)
    {
        for (int k = 0; k < fields.Length; k++)
            net.Exchange(fields[k], s.At(-1, 0), s.At(s.Rows, 0), s.At(s.Rows - 1, 0), s.At(0, 0),
                         s.N, up, down, k);
    }

    static Slab Serial(int m, int n, int steps, double[,] u0, double[,] v0, double[,] p0)
    {
        var s = new Slab(m, n, 0, m);
        Buffer.BlockCopy(u0, 0, s.U, s.At(0, 0) * 8, m * n * 8);
        Buffer.BlockCopy(v0, 0, s.V, s.At(0, 0) * 8, m * n * 8);
        Buffer.BlockCopy(p0, 0, s.P, s.At(0, 0) * 8, m * n * 8);
        Array.Copy(s.U, s.UOld, s.U.Length);
        Array.Copy(s.V, s.VOld, s.V.Length);
        Array.Copy(s.P, s.POld, s.P.Length);
        for (int t = 0; t < steps; t++) {
            s.WrapHalos(s.U);
            s.WrapHalos(s.V);
            s.WrapHalos(s.P);
            s.Fluxes();
            s.WrapHalos(s.Cu);
            s.WrapHalos(s.Cv);
            s.WrapHalos(s.Z);
            s.WrapHalos(s.H);
            s.Advance();
        }
        return s;
    }

    static double[][,] Gather(Slab s)
    {
        var r = new[] { new double[s.M, s.N], new double[s.M, s.N], new double[s.M, s.N] };
        Buffer.BlockCopy(s.U, s.At(0, 0) * 8, r[0], 0, s.M * s.N * 8);
        Buffer.BlockCopy(s.V, s.At(0, 0) * 8, r[1], 0, s.M * s.N * 8);
        Buffer.BlockCopy(s.P, s.At(0, 0) * 8, r[2], 0, s.M * s.N * 8);
        return r;
    }

    static double Mass(double[,] p)
    {
        double s = 0;
        foreach (double x in p)
            s += x;
        return s;
    }

    static double Energy(double[,] u, double[,] v, double[,] p)
    {
        double e = 0;
        for (int i = 0; i < p.GetLength(0); i++)
            for (int j = 0; j < p.GetLength(1); j++)
                e += 0.5 * p[i, j] * (u[i, j] * u[i, j] + v[i, j] * v[i, j]) +
                     0.5 * p[i, j] * p[i, j];
        return e;
    }

    static void Report(Intracomm world, int m, int n, int steps, double[][,] r, double[,] p0,
                       double[,] u0, double[,] v0, double[][] times, double elapsed)
    {
        Console.WriteLine($"shallow water {m}x{n}, {steps} steps, {world.Size} rank(s) " +
                          $"({Math.Max(1, world.Size - 1)} worker(s)): {elapsed:F6} s");
        Console.WriteLine("  slave  processing(s)  MPI communication(s)  structured transport(s)");
        for (int w = 0; w < times.Length; w++)
            Console.WriteLine(
                $"  {w + 1,5}  {times[w][0],13:F6}  {times[w][1],20:F6}  {times[w][2],23:F6}");
        double m0 = Mass(p0), m1 = Mass(r[2]), e0 = Energy(u0, v0, p0),
               e1 = Energy(r[0], r[1], r[2]);
        Console.WriteLine($"  mass   {m0:E10} -> {m1:E10} (relative change {(m1 - m0) / m0:E2})");
        Console.WriteLine($"  energy {e0:E10} -> {e1:E10} (relative change {(e1 - e0) / e0:E2})");
        if (checksum) {   // FNV-1a over the bits of u, v, p, as shallow_water.c computes it
            ulong h = 1469598103934665603UL;
            foreach (double[,] f in r)
                foreach (double x in f) {
                    ulong bits = (ulong)BitConverter.DoubleToInt64Bits(x);
                    for (int b = 0; b < 8; b++)
                        h = (h ^ ((bits >> (8 * b)) & 0xff)) * 1099511628211UL;
                }
            Console.WriteLine($"checksum {h:x16}");
        }
    }
}
