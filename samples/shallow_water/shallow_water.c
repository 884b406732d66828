/* shallow_water.c — the shallow-water case study in plain C on MPICH: the same model, the same
 * master–worker decomposition and the same operation order as ShallowWater.cs, so the results
 * agree bit for bit. The Res record (a block and its position) travels as an MPI derived
 * datatype (a struct of three ints and the block).
 *   mpiexec.mpich -n 3 shallow_water_c [M N STEPS] [--checksum] */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DT 90.0
#define DX 1e5
#define DY 1e5
#define A 1e6
#define ALPHA 0.001

typedef struct slab {
    int rows, n, row0, step;
    double tdt;
    double *u, *v, *p, *uold, *vold, *pold, *unew, *vnew, *pnew, *cu, *cv, *z, *h;
} slab;

/* Row i's cell j in a field of rows n wide, the south halo row first. */
static int cell(int n, int i, int j) { return (i + 1) * n + j; }
static int at(const slab *s, int i, int j) { return cell(s->n, i, j); }

/* Each field starts a different number of cache lines past a page boundary: large callocs are
 * page-aligned mmaps, and 13 arrays streamed by one loop at equal offsets modulo 4 KiB conflict
 * in the L1 and L2 sets (4K aliasing). Fields live as long as the process. */
static double *field(int rows, int n)
{
    static int made;
    size_t stagger = (size_t)(made++ % 16) * 5 * 64;
    char *block = calloc((size_t)(rows + 2) * n * sizeof(double) + stagger, 1);
    return block ? (double *)(block + stagger) : NULL;
}

static void slab_init(slab *s, int n, int row0, int rows)
{
    s->rows = rows;
    s->n = n;
    s->row0 = row0;
    s->step = 0;
    s->tdt = DT;
    double **f[] = {&s->u,    &s->v,    &s->p,  &s->uold, &s->vold, &s->pold, &s->unew,
                    &s->vnew, &s->pnew, &s->cu, &s->cv,   &s->z,    &s->h};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        if (!(*f[k] = field(rows, n)))
            MPI_Abort(MPI_COMM_WORLD, 2);
}

static void initial(int m, int n, double *u, double *v, double *p) /* m*n each, row-major */
{
    double el = n * DX, pcf = M_PI * M_PI * A * A / (el * el), di = 2 * M_PI / m, dj = 2 * M_PI / n;
    double *psi = malloc(sizeof(double) * m * n);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            psi[i * n + j] = A * sin((i + 0.5) * di) * sin((j + 0.5) * dj);
            p[i * n + j] = pcf * (cos(2 * i * di) + cos(2 * j * dj)) + 50000;
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            u[i * n + j] = -(psi[i * n + j] - psi[i * n + (j + n - 1) % n]) / DY;
            v[i * n + j] = (psi[i * n + j] - psi[((i + m - 1) % m) * n + j]) / DX;
        }
    free(psi);
}

/* The kernels have the C# program's loop structure (ShallowWater.cs): row offsets computed once
 * per row, the two edge columns (whose west or east neighbour wraps around the row) done apart
 * and the columns between them in a loop whose neighbours are plain offsets, the fields in
 * restrict pointers, and the arithmetic of each point written exactly as there, so results
 * agree bit for bit. gcc vectorizes the loops between the edges (two points per SSE2 operation),
 * as the C# program does by hand: at -O3 (samples/CMakeLists.txt; -O2's cost model takes no
 * loop whose trip count is only known at run time) and with the loops in functions of their own
 * (noinline: inlined into their callers, gcc lost what restrict says and vectorized nothing). */
#define RD const double *restrict
#define WR double *restrict
#define KERNEL __attribute__((noinline)) static void

/* One point of phase 1: c, its west and east neighbours in the row, so, sw south, nn north. */
static inline void flux_point(int c, int w, int e, int so, int sw, int nn, RD u, RD v, RD p, WR cu,
                              WR cv, WR z, WR h)
{
    double fsdx = 4 / DX, fsdy = 4 / DY;
    cu[c] = 0.5 * (p[c] + p[so]) * u[c];
    cv[c] = 0.5 * (p[c] + p[w]) * v[c];
    z[c] = (fsdx * (v[c] - v[so]) - fsdy * (u[c] - u[w])) / (p[sw] + p[w] + p[c] + p[so]);
    h[c] = p[c] + 0.25 * (u[nn] * u[nn] + u[c] * u[c] + v[e] * v[e] + v[c] * v[c]);
}

KERNEL flux_rows(int rows, int n, RD u, RD v, RD p, WR cu, WR cv, WR z, WR h)
{
    for (int i = 0; i < rows; i++) {
        int row = cell(n, i, 0), south = cell(n, i - 1, 0), north = cell(n, i + 1, 0);
        flux_point(row, row + n - 1, row + 1, south, south + n - 1, north, u, v, p, cu, cv, z, h);
        for (int j = 1; j < n - 1; j++)
            flux_point(row + j, row + j - 1, row + j + 1, south + j, south + j - 1, north + j, u, v,
                       p, cu, cv, z, h);
        flux_point(row + n - 1, row + n - 2, row, south + n - 1, south + n - 2, north + n - 1, u, v,
                   p, cu, cv, z, h);
    }
}

static void fluxes(slab *s)
{
    flux_rows(s->rows, s->n, s->u, s->v, s->p, s->cu, s->cv, s->z, s->h);
}

typedef struct steps {
    double tdts8, tdtsdx, tdtsdy;
} steps;

/* One point of phase 2: c, w and e in the row, so and se south, nn and nw north. */
static inline void advance_point(steps t, int c, int w, int e, int so, int se, int nn, int nw,
                                 RD uo, RD vo, RD po, RD cu, RD cv, RD z, RD h, WR un, WR vn, WR pn)
{
    un[c] = uo[c] + t.tdts8 * (z[e] + z[c]) * (cv[e] + cv[se] + cv[so] + cv[c]) -
            t.tdtsdx * (h[c] - h[so]);
    vn[c] = vo[c] - t.tdts8 * (z[nn] + z[c]) * (cu[nn] + cu[c] + cu[w] + cu[nw]) -
            t.tdtsdy * (h[c] - h[w]);
    pn[c] = po[c] - t.tdtsdx * (cu[nn] - cu[c]) - t.tdtsdy * (cv[e] - cv[c]);
}

KERNEL advance_rows(int rows, int n, steps t, RD uo, RD vo, RD po, RD cu, RD cv, RD z, RD h, WR un,
                    WR vn, WR pn)
{
    for (int i = 0; i < rows; i++) {
        int row = cell(n, i, 0), south = cell(n, i - 1, 0), north = cell(n, i + 1, 0);
        advance_point(t, row, row + n - 1, row + 1, south, south + 1, north, north + n - 1, uo, vo,
                      po, cu, cv, z, h, un, vn, pn);
        for (int j = 1; j < n - 1; j++)
            advance_point(t, row + j, row + j - 1, row + j + 1, south + j, south + j + 1, north + j,
                          north + j - 1, uo, vo, po, cu, cv, z, h, un, vn, pn);
        advance_point(t, row + n - 1, row + n - 2, row, south + n - 1, south, north + n - 1,
                      north + n - 2, uo, vo, po, cu, cv, z, h, un, vn, pn);
    }
}

/* The Robert–Asselin filter (from the second step on), then the new fields become current. */
KERNEL filter(int first, int last, int filtered, WR u, WR v, WR p, WR uo, WR vo, WR po, RD un,
              RD vn, RD pn)
{
    if (filtered)
        for (int c = first; c < last; c++) {
            uo[c] = u[c] + ALPHA * (un[c] - 2 * u[c] + uo[c]);
            vo[c] = v[c] + ALPHA * (vn[c] - 2 * v[c] + vo[c]);
            po[c] = p[c] + ALPHA * (pn[c] - 2 * p[c] + po[c]);
            u[c] = un[c];
            v[c] = vn[c];
            p[c] = pn[c];
        }
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

static void advance(slab *s)
{
    steps t = {s->tdt / 8, s->tdt / DX, s->tdt / DY};
    advance_rows(s->rows, s->n, t, s->uold, s->vold, s->pold, s->cu, s->cv, s->z, s->h, s->unew,
                 s->vnew, s->pnew);
    filter(at(s, 0, 0), at(s, s->rows, 0), s->step > 0, s->u, s->v, s->p, s->uold, s->vold, s->pold,
           s->unew, s->vnew, s->pnew);
    if (s->step++ == 0)
        s->tdt += s->tdt;
}

static void wrap(slab *s, double *f)
{
    memcpy(f + at(s, -1, 0), f + at(s, s->rows - 1, 0), sizeof(double) * s->n);
    memcpy(f + at(s, s->rows, 0), f + at(s, 0, 0), sizeof(double) * s->n);
}

/* Every MPI call is checked, although MPI_COMM_WORLD's handler is MPI_ERRORS_ARE_FATAL. */
static void check(int rc)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "shallow_water: MPI error %d\n", rc);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* Edge rows to and from the neighbours: one MPI_Sendrecv per direction. */
static void exchange(slab *s, int up, int down, double **fields, int count)
{
    for (int k = 0; k < count; k++) {
        double *f = fields[k];
        check(MPI_Sendrecv(f + at(s, s->rows - 1, 0), s->n, MPI_DOUBLE, down, 10 + k,
                           f + at(s, -1, 0), s->n, MPI_DOUBLE, up, 10 + k, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
        check(MPI_Sendrecv(f + at(s, 0, 0), s->n, MPI_DOUBLE, up, 20 + k, f + at(s, s->rows, 0),
                           s->n, MPI_DOUBLE, down, 20 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

static void rows_of(int m, int workers, int w, int *row0, int *rows)
{
    int base = m / workers, extra = m % workers;
    *row0 = w * base + (w < extra ? w : extra);
    *rows = base + (w < extra);
}

/* Res: {row0, rows, field} then rows*n doubles, as one derived datatype per block size. */
static MPI_Datatype res_type(int rows, int n)
{
    int lengths[2] = {3, rows * n};
    MPI_Aint displs[2] = {0, 0};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_Aint base, data;
    static struct {
        int head[3];
        double block[1];
    } probe;
    check(MPI_Get_address(&probe, &base));
    check(MPI_Get_address(&probe.block, &data));
    displs[1] = data - base;
    check(MPI_Type_create_struct(2, lengths, displs, types, &t));
    check(MPI_Type_commit(&t));
    return t;
}

static double mass(const double *p, size_t count)
{
    double s = 0;
    for (size_t k = 0; k < count; k++)
        s += p[k];
    return s;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    check(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int nums[3] = {256, 256, 100}, k = 0, checksum = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--checksum"))
            checksum = 1;
        else if (k < 3)
            nums[k++] = atoi(argv[a]);
    }
    int m = nums[0], n = nums[1], steps = nums[2], workers = size > 1 ? size - 1 : 1;
    if (m < 2 * workers || n < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: shallow_water_c [ROWS COLUMNS STEPS] [--checksum] (2 rows per "
                            "worker at least)\n");
        check(MPI_Finalize());
        return 2;
    }
    double t_start = MPI_Wtime();
    size_t cells = (size_t)m * n;
    double *u0 = malloc(cells * 8), *v0 = malloc(cells * 8), *p0 = malloc(cells * 8);
    double *result[3] = {malloc(cells * 8), malloc(cells * 8), malloc(cells * 8)};
    initial(m, n, u0, v0, p0);
    double times[3] = {0, 0, 0};
    if (size == 1) {
        slab s;
        slab_init(&s, n, 0, m);
        memcpy(s.u + at(&s, 0, 0), u0, cells * 8);
        memcpy(s.v + at(&s, 0, 0), v0, cells * 8);
        memcpy(s.p + at(&s, 0, 0), p0, cells * 8);
        memcpy(s.uold, s.u, (cells + 2 * n) * 8);
        memcpy(s.vold, s.v, (cells + 2 * n) * 8);
        memcpy(s.pold, s.p, (cells + 2 * n) * 8);
        for (int t = 0; t < steps; t++) {
            wrap(&s, s.u);
            wrap(&s, s.v);
            wrap(&s, s.p);
            fluxes(&s);
            wrap(&s, s.cu);
            wrap(&s, s.cv);
            wrap(&s, s.z);
            wrap(&s, s.h);
            advance(&s);
        }
        memcpy(result[0], s.u + at(&s, 0, 0), cells * 8);
        memcpy(result[1], s.v + at(&s, 0, 0), cells * 8);
        memcpy(result[2], s.p + at(&s, 0, 0), cells * 8);
        times[0] = MPI_Wtime() - t_start;
    } else if (rank == 0) {
        for (int w = 0; w < workers; w++) {
            int row0, rows;
            rows_of(m, workers, w, &row0, &rows);
            double *f[3] = {u0, v0, p0};
            for (int q = 0; q < 3; q++)
                check(MPI_Send(f[q] + (size_t)row0 * n, rows * n, MPI_DOUBLE, w + 1, 1,
                               MPI_COMM_WORLD));
        }
        int max_rows = m / workers + 1;
        int *rec = malloc(sizeof(int) * 4 + sizeof(double) * (size_t)max_rows * n);
        for (int q = 0; q < 3 * workers; q++) {
            MPI_Status st;
            /* idle 1 ms between looks, as ShallowWater.cs: the workers get the cores */
            int waiting = 0;
            while (check(MPI_Iprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &waiting, &st)), !waiting)
                nanosleep(&(struct timespec){0, 1000000}, NULL);
            int row0, rows;
            rows_of(m, workers, st.MPI_SOURCE - 1, &row0, &rows);
            MPI_Datatype t = res_type(rows, n);
            check(MPI_Recv(rec, 1, t, st.MPI_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check(MPI_Type_free(&t));
            MPI_Aint base, data;
            static struct {
                int head[3];
                double block[1];
            } layout;
            check(MPI_Get_address(&layout, &base));
            check(MPI_Get_address(&layout.block, &data));
            memcpy(result[rec[2]] + (size_t)rec[0] * n, (char *)rec + (data - base),
                   (size_t)rec[1] * n * 8);
        }
        free(rec);
    } else {
        int w = rank - 1, row0, rows;
        rows_of(m, workers, w, &row0, &rows);
        slab s;
        slab_init(&s, n, row0, rows);
        double *f[3] = {s.u, s.v, s.p};
        for (int q = 0; q < 3; q++)
            check(MPI_Recv(f[q] + at(&s, 0, 0), rows * n, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
        size_t all = (size_t)(rows + 2) * n * 8;
        memcpy(s.uold, s.u, all);
        memcpy(s.vold, s.v, all);
        memcpy(s.pold, s.p, all);
        int up = (w + workers - 1) % workers + 1, down = (w + 1) % workers + 1;
        double *first[3] = {s.u, s.v, s.p}, *second[4] = {s.cu, s.cv, s.z, s.h};
        /* After a compute phase the clock's own code path is cold too: each exchange is timed by a
         * second reading (as ShallowWater.cs does), so no implementation counts its clock. */
        for (int t = 0; t < steps; t++) {
            MPI_Wtime();
            double t0 = MPI_Wtime();
            exchange(&s, up, down, first, 3);
            double t1 = MPI_Wtime();
            fluxes(&s);
            MPI_Wtime();
            double t2 = MPI_Wtime();
            exchange(&s, up, down, second, 4);
            double t3 = MPI_Wtime();
            advance(&s);
            times[0] += (t2 - t1) + (MPI_Wtime() - t3);
            times[1] += (t1 - t0) + (t3 - t2);
        }
        double t4 = MPI_Wtime();
        MPI_Datatype t = res_type(rows, n);
        static struct {
            int head[3];
            double block[1];
        } layout;
        MPI_Aint base, data;
        check(MPI_Get_address(&layout, &base));
        check(MPI_Get_address(&layout.block, &data));
        char *rec = malloc((size_t)(data - base) + (size_t)rows * n * 8);
        for (int q = 0; q < 3; q++) {
            int head[3] = {row0, rows, q};
            memcpy(rec, head, sizeof head);
            memcpy(rec + (data - base), f[q] + at(&s, 0, 0), (size_t)rows * n * 8);
            check(MPI_Send(rec, 1, t, 0, 2, MPI_COMM_WORLD));
        }
        check(MPI_Type_free(&t));
        free(rec);
        times[2] = MPI_Wtime() - t4;
    }
    /* per-worker times to the master */
    double *all_times = rank == 0 ? malloc(sizeof(double) * 3 * size) : NULL;
    check(MPI_Gather(times, 3, MPI_DOUBLE, all_times, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        printf("shallow water (native C) %dx%d, %d steps, %d rank(s) (%d worker(s)): %.6f s\n", m,
               n, steps, size, workers, MPI_Wtime() - t_start);
        printf("  slave  processing(s)  MPI communication(s)  structured transport(s)\n");
        for (int w = 0; w < workers; w++) {
            double *t = all_times + 3 * (size > 1 ? w + 1 : 0);
            printf("  %5d  %13.6f  %20.6f  %23.6f\n", w + 1, t[0], t[1], t[2]);
        }
        double m0 = mass(p0, cells), m1 = mass(result[2], cells);
        printf("  mass   %.10E -> %.10E (relative change %.2E)\n", m0, m1, (m1 - m0) / m0);
        if (checksum) { /* FNV-1a over the bits of u, v, p: equal results, equal checksums */
            uint64_t hsh = 1469598103934665603ull;
            for (int q = 0; q < 3; q++)
                for (size_t c = 0; c < cells; c++) {
                    uint64_t bits;
                    memcpy(&bits, &result[q][c], 8);
                    for (int b = 0; b < 8; b++)
                        hsh = (hsh ^ ((bits >> (8 * b)) & 0xff)) * 1099511628211ull;
                }
            printf("checksum %016llx\n", (unsigned long long)hsh);
        }
        free(all_times);
    }
    check(MPI_Finalize());
    return 0;
}
