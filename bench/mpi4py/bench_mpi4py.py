"""bench_mpi4py — the optional mpi4py transport of the benchmark framework: the patterns of
bench/patterns/ (C#) written once more in Python, over mpi4py's buffer interface (upper-case
Send/Recv/Isend/Irecv on bytearrays: the fast path mpi4py offers, no pickling). Debian's
python3-mpi4py is built against Open MPI, not MPICH: its figures compare the Python binding
*and* another MPI library with the native C (MPICH) reference.
  mpiexec.openmpi -n N python3 bench_mpi4py.py PATTERN mpi4py MIN MAX REPS WARMUP MAX_ITERATIONS [check]
Output rows as Bench.exe and bench_native."""
import sys
import time

from mpi4py import MPI

WINDOW, LOGGP_N = 64, 16
world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
NAME = "mpi4py"
RAMP = bytes(range(256))


def bench_iterations(nbytes):
    n = 200000000 // (nbytes + 20000)
    return max(20, min(10000, n))


class Context:
    def __init__(self, check):
        self.check, self.verified, self.metrics = check, 0, []
        self.slots = []

    def emit(self, metric, value):
        self.metrics.append((metric, value))

    @staticmethod
    def expected(seed, nbytes):
        """Byte i is (seed * 131 + i) mod 256: a slice of the repeated 0..255 ramp."""
        start = (seed * 131) & 0xFF
        return (RAMP * (nbytes // 256 + 2))[start:start + nbytes]

    def stamp(self, m, seed):
        if self.check:
            m[:] = self.expected(seed, len(m))

    def verify(self, m, nbytes, seed):
        if not self.check:
            return
        if len(m) != nbytes or m != self.expected(seed, nbytes):
            raise RuntimeError(f"rank {rank}: message (seed {seed}) of {nbytes} bytes arrived wrong (mpi4py)")
        self.verified += 1


def emit_row(line):
    """One write per line: Open MPI forwards output in write-sized pieces."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def seed_of(sender, iteration, slot=0):
    return sender * 7919 + iteration * 67 + slot


def send(m, dest, tag):
    world.Send([m, MPI.BYTE], dest, tag)


def recv(m, source, tag):
    world.Recv([m, MPI.BYTE], source, tag)


def delay(us):
    until = time.perf_counter() + us * 1e-6
    while time.perf_counter() < until:
        pass


def pingpong(c, nbytes, iters, msgs):
    if rank > 1:
        return
    m, peer = msgs[0], 1 - rank
    t0 = MPI.Wtime()
    for i in range(iters):
        if rank == 0:
            c.stamp(m, seed_of(0, i))
            send(m, peer, 0)
            recv(m, peer, 0)
            c.verify(m, nbytes, seed_of(1, i))
        else:
            recv(m, peer, 0)
            c.verify(m, nbytes, seed_of(0, i))
            c.stamp(m, seed_of(1, i))
            send(m, peer, 0)
    c.emit("time", (MPI.Wtime() - t0) * 1e6 / (2.0 * iters))


def pingping(c, nbytes, iters, msgs):
    if rank > 1:
        return
    peer = 1 - rank
    t0 = MPI.Wtime()
    for i in range(iters):
        c.stamp(msgs[0], seed_of(rank, i))
        r = world.Isend([msgs[0], MPI.BYTE], peer, 0)
        recv(msgs[1], peer, 0)
        r.Wait()
        c.verify(msgs[1], nbytes, seed_of(peer, i))
    c.emit("time", (MPI.Wtime() - t0) * 1e6 / iters)


def window(c, nbytes, iters, msgs):
    if rank > 1:
        return
    ack = bytearray(1)
    t0 = MPI.Wtime()
    for i in range(iters):
        reqs = []
        for w in range(WINDOW):
            if rank == 0:
                c.stamp(msgs[w], seed_of(0, i, w))
                reqs.append(world.Isend([msgs[w], MPI.BYTE], 1, w))
            else:
                reqs.append(world.Irecv([msgs[w], MPI.BYTE], 0, w))
        MPI.Request.Waitall(reqs)
        if rank == 0:
            recv(ack, 1, WINDOW)
            c.verify(ack, 1, seed_of(1, i))
        else:
            for w in range(WINDOW):
                c.verify(msgs[w], nbytes, seed_of(0, i, w))
            c.stamp(ack, seed_of(1, i))
            send(ack, 0, WINDOW)
    c.emit("time", (MPI.Wtime() - t0) * 1e6 / (iters * WINDOW))


def server_rounds(c, nbytes, iters, serve, client):
    """1:n and n:1: rank 0 serves ranks 1..n; time per round and aggregate MB/s (n·s / time)."""
    n = size - 1
    t0 = MPI.Wtime()
    for i in range(iters):
        if rank == 0:
            serve(i, n)
        else:
            client(i)
    us = (MPI.Wtime() - t0) * 1e6 / iters
    c.emit("time", us)
    c.emit("MBps", n * nbytes / us)


def onetomany(c, nbytes, iters, msgs):
    acks = [bytearray(1) for _ in range(max(size - 1, 1))]

    def serve(i, n):
        reqs = [world.Irecv([acks[k], MPI.BYTE], k + 1, 2) for k in range(n)]
        for k in range(n):
            c.stamp(msgs[k], seed_of(0, i, k + 1))
            reqs.append(world.Isend([msgs[k], MPI.BYTE], k + 1, 1))
        MPI.Request.Waitall(reqs)
        for k in range(n):
            c.verify(acks[k], 1, seed_of(k + 1, i))

    def client(i):
        recv(msgs[0], 0, 1)
        c.verify(msgs[0], nbytes, seed_of(0, i, rank))
        c.stamp(acks[0], seed_of(rank, i))
        send(acks[0], 0, 2)

    server_rounds(c, nbytes, iters, serve, client)


def manytoone(c, nbytes, iters, msgs):
    acks = [bytearray(1) for _ in range(max(size - 1, 1))]

    def serve(i, n):
        MPI.Request.Waitall([world.Irecv([msgs[k], MPI.BYTE], k + 1, 1) for k in range(n)])
        reqs = []
        for k in range(n):
            c.verify(msgs[k], nbytes, seed_of(k + 1, i))
            c.stamp(acks[k], seed_of(0, i, k + 1))
            reqs.append(world.Isend([acks[k], MPI.BYTE], k + 1, 2))
        MPI.Request.Waitall(reqs)

    def client(i):
        c.stamp(msgs[0], seed_of(rank, i))
        send(msgs[0], 0, 1)
        recv(acks[0], 0, 2)
        c.verify(acks[0], 1, seed_of(0, i, rank))

    server_rounds(c, nbytes, iters, serve, client)


def prtt(c, nbytes, iters, m, n, d):
    t0 = MPI.Wtime()
    for i in range(iters):
        if rank == 0:
            for k in range(n):
                if k > 0 and d > 0:
                    delay(d)
                c.stamp(m, seed_of(0, i, k))
                send(m, 1, 0)
            recv(m, 1, 1)
            c.verify(m, nbytes, seed_of(1, i))
        else:
            for k in range(n):
                recv(m, 0, 0)
                c.verify(m, nbytes, seed_of(0, i, k))
            c.stamp(m, seed_of(1, i))
            send(m, 0, 1)
    return (MPI.Wtime() - t0) * 1e6 / iters


def receive_overhead(c, nbytes, iters, m, d):
    in_recv = 0.0
    for i in range(iters):
        if rank == 0:
            c.stamp(m, seed_of(0, i))
            send(m, 1, 0)
            delay(d)
            r0 = MPI.Wtime()
            recv(m, 1, 1)
            in_recv += MPI.Wtime() - r0
            c.verify(m, nbytes, seed_of(1, i))
        else:
            recv(m, 0, 0)
            c.verify(m, nbytes, seed_of(0, i))
            c.stamp(m, seed_of(1, i))
            send(m, 0, 1)
    return in_recv * 1e6 / iters


def loggp(c, nbytes, iters, msgs):
    if rank > 1:
        return
    m = msgs[0]
    prtt1 = prtt(c, nbytes, iters, m, 1, 0)
    prttn = prtt(c, nbytes, iters, m, LOGGP_N, 0)
    prttd = prtt(c, nbytes, iters, m, LOGGP_N, prtt1 if rank == 0 else 0)
    o_r = receive_overhead(c, nbytes, iters, m, 2 * prtt1)
    c.emit("prtt1", prtt1)
    c.emit("os", (prttd - prtt1) / (LOGGP_N - 1) - prtt1)
    c.emit("T", (prttn - prtt1) / (LOGGP_N - 1))
    c.emit("or", o_r)


HALO_FIELDS, EVICT_BYTES = 7, 32 << 20
evict = None


def halo(c, nbytes, iters, msgs):
    """bench/patterns/Halo.cs: rank 0 exchanges HALO_FIELDS fields' edges with itself in both
    directions after sweeping a last-level-cache-sized buffer; µs per Sendrecv and of the first."""
    global evict
    if rank != 0:
        return
    if evict is None:
        evict = bytearray(EVICT_BYTES)
    send_down, recv_up, send_up, recv_down = (msgs[k * HALO_FIELDS:(k + 1) * HALO_FIELDS] for k in range(4))
    total = first = 0.0
    for i in range(iters):
        for f in range(HALO_FIELDS):
            c.stamp(send_down[f], seed_of(0, i, f))
            c.stamp(send_up[f], seed_of(0, i, HALO_FIELDS + f))
        evict[:] = evict[1:] + evict[:1]   # reads and writes every line (in C, through bytes objects)
        t0 = MPI.Wtime()
        t1 = t0
        for f in range(HALO_FIELDS):
            world.Sendrecv([send_down[f], MPI.BYTE], 0, f, [recv_up[f], MPI.BYTE], 0, f)
            if f == 0:
                t1 = MPI.Wtime()
            world.Sendrecv([send_up[f], MPI.BYTE], 0, HALO_FIELDS + f, [recv_down[f], MPI.BYTE], 0, HALO_FIELDS + f)
        t2 = MPI.Wtime()
        total += t2 - t0
        first += t1 - t0
        for f in range(HALO_FIELDS):
            c.verify(recv_up[f], nbytes, seed_of(0, i, f))
            c.verify(recv_down[f], nbytes, seed_of(0, i, HALO_FIELDS + f))
    c.emit("time", total * 1e6 / (iters * 2 * HALO_FIELDS))
    c.emit("first", first * 1e6 / iters)


# name: (function, iterations rule as bench_native: (volume factor, divisor, extra))
PATTERNS = {"pingpong": (pingpong, 1, 1, 0), "pingping": (pingping, 1, 1, 0),
            "window": (window, WINDOW, 4, 5), "onetomany": (onetomany, 2, 2, 5),
            "manytoone": (manytoone, 2, 2, 5), "loggp": (loggp, LOGGP_N, LOGGP_N, 3),
            "halo": (halo, 0, 500, 0)}


def main():
    if sys.argv[1:] == ["--list"]:
        if rank == 0:
            print(f"transport,{NAME},blocking+nonblocking,default,Python mpi4py (Open MPI)")
        return
    if len(sys.argv) < 8 or sys.argv[1] not in PATTERNS or sys.argv[2] != NAME or size < (sys.argv[1] != "halo") + 1:
        if rank == 0:
            print("usage: bench_mpi4py.py PATTERN mpi4py MIN MAX REPS WARMUP MAX_ITERATIONS [check] "
                  "(2 or more ranks; halo: 1 or more)", file=sys.stderr)
        world.Abort(2)
    fn, factor, divisor, extra = PATTERNS[sys.argv[1]]
    lo, hi, reps, warmup, max_iters = (int(x) for x in sys.argv[3:8])
    c = Context(len(sys.argv) > 8 and sys.argv[8] == "check")
    if c.check and (max_iters == 0 or max_iters > 20):
        max_iters = 20
    count = {"window": WINDOW, "onetomany": size, "manytoone": size, "halo": 4 * HALO_FIELDS}.get(sys.argv[1], 2)
    nbytes = lo
    while nbytes <= hi:
        msgs = [bytearray(nbytes) for _ in range(count)]
        iters = bench_iterations(nbytes * factor) // divisor + extra
        if max_iters > 0:
            iters = min(iters, max_iters)
        for rep in range(-warmup, reps):
            world.Barrier()
            c.metrics = []
            fn(c, nbytes, iters, msgs)
            if rank == 0 and rep >= 0:
                for metric, value in c.metrics:
                    emit_row(f"{NAME},{nbytes},{rep},{iters},{value:.6f},{metric}")
        nbytes = 1 if nbytes == 0 else nbytes * 2
    if c.check:
        emit_row(f"checked,{NAME},{sys.argv[1]},{rank},{c.verified}")
    with open("/proc/self/status") as f:
        peak = next((line.split()[1] for line in f if line.startswith("VmHWM:")), "-1")
    emit_row(f"peak,{NAME},{rank},{peak}")


if __name__ == "__main__":
    main()
