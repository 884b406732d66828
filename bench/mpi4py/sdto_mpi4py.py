"""sdto_mpi4py — the LinkedArray ping-pong of bench/Sdto.cs for Python: the same list (N elements,
each an array('i') buffer and a next reference, 4096 ints in total) sent with mpi4py's pickle
path (lower-case send/recv: the whole list pickled into one message; recv matches the message
with a probe and allocates it, no size guess). Debian's python3-mpi4py is built against Open MPI:
its figures compare Python *and* another MPI library with the C reference on MPICH.
  mpiexec.openmpi -n 2 python3 sdto_mpi4py.py MIN_N MAX_N REPS
Rows as Sdto.exe's, all printed by rank 0: "mpi4py-pickle,N,rep,iterations,µs" (half round
trip), then "peak,mpi4py-pickle,rank,KiB" for each rank."""
import array
import resource
import sys
import time

from mpi4py import MPI

NAME = "mpi4py-pickle"
# pickle recurses once per list node (and once more through its __dict__): a 4096-node list
# needs more than Python's default depth of 1000
sys.setrecursionlimit(100000)


class LinkedArray:
    def __init__(self, buffer, next):
        self.buffer = buffer
        self.next = next


def build(n):
    head = None
    for _ in range(n):
        head = LinkedArray(array.array("i", bytes(4 * (4096 // n))), head)
    return head


def length(head):
    n = 0
    while head is not None:
        if len(head.buffer) == 0:
            raise SystemExit("an element arrived without its buffer")
        n, head = n + 1, head.next
    return n


def main():
    world = MPI.COMM_WORLD
    rank, peer = world.Get_rank(), 1 - world.Get_rank()
    lo, hi, reps = (int(x) for x in sys.argv[1:4])
    n = lo
    while n <= hi:
        graph, mine = build(n), build(n)
        iters = max(5, 2000 // n)
        for rep in range(-1, reps):
            world.Barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                if rank == 0:
                    world.send(graph, dest=peer, tag=0)
                    graph = world.recv(source=peer, tag=0)
                elif rank == 1:
                    mine = world.recv(source=peer, tag=0)
                    world.send(mine, dest=peer, tag=0)
            us = (time.perf_counter() - t0) * 1e6 / (2 * iters)
            if rank == 0 and rep >= 0:
                print(f"{NAME},{n},{rep},{iters},{us:.6f}", flush=True)
        if length(graph if rank == 0 else mine) != n:
            raise SystemExit(f"the list of {n} arrived with another length")
        n *= 4
    # rank 0 prints every line: Open MPI forwards each rank's output on its own and may splice them
    peaks = world.gather(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, root=0)
    if rank == 0:
        for r, kib in enumerate(peaks):
            print(f"peak,{NAME},{r},{kib}", flush=True)


if __name__ == "__main__":
    main()
