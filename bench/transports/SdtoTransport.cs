// sdto — System.MP's structured data transport: the payload is an object graph, a linked list
// of Chunk objects each holding up to 256 payload bytes, so a message of s bytes is about
// 2·s/256 objects. Blocking calls are OSend/ORecv (one message per graph, matched probe on
// receipt). Non-blocking calls: the same serializer into a per-slot buffer (Serializer.Serialize,
// the wire format OSend uses) moved with OPI Isend/Irecv, deserialized at WaitAll — the API has
// no non-blocking OSend, and this is how a user would overlap structured messages.
using System;
using System.MP;

sealed class Chunk
{
    [Transportable]
    public byte[] Data;
    [Transportable]
    public Chunk Next;
}

sealed class SdtoTransport : Transport
{
    public const int ChunkBytes = 256;
    readonly Intracomm world = MP.World;
    Request[] requests = new Request[0];
    byte[][] buffers = new byte[0][];
    int[] receiveLength = new int[0];   // > 0: a receive of that many bytes is pending in the slot
    object[] received = new object[0];

    public override string Name => "sdto";
    public override string Label => "C# System.MP structured (graph)";

    public override object NewMessage(long bytes)
    {
        Chunk head = null;
        long chunks = Math.Max(1, (bytes + ChunkBytes - 1) / ChunkBytes);
        for (long c = chunks - 1; c >= 0; c--)   // built back to front
            head = new Chunk { Data = new byte[Math.Min(ChunkBytes, bytes - c * ChunkBytes)],
                               Next = head };
        return head;
    }

    public override void Send(object m, int dest, int tag) => world.OSend(m, dest, tag);
    public override object Recv(object m, int source, int tag) => world.ORecv<Chunk>(source, tag);

    public override void ReserveSlots(int slots)
    {
        if (requests.Length >= slots)
            return;
        requests = new Request[slots];
        buffers = new byte[slots][];
        receiveLength = new int[slots];
        received = new object[slots];
    }

    byte[] Buffer(int slot, int length)
    {
        if (buffers[slot] == null || buffers[slot].Length < length)
            buffers[slot] = new byte[length];
        return buffers[slot];
    }

    public override void Isend(int slot, object m, int dest, int tag)
    {
        int length = Serializer.Measure(m);
        byte[] b = Buffer(slot, length);
        Serializer.Serialize(m, b, 0);
        requests[slot] = world.Isend(b, 0, length, dest, tag);
        receiveLength[slot] = 0;
    }

    /// <summary>The incoming graph has the shape of <paramref name="m"/>: its size
    /// is known.</summary>
    public override void Irecv(int slot, object m, int source, int tag)
    {
        int length = Serializer.Measure(m);
        requests[slot] = world.Irecv(Buffer(slot, length), 0, length, source, tag);
        receiveLength[slot] = length;
    }

    public override void WaitAll(int count)
    {
        for (int i = 0; i < count; i++) {
            Status s = requests[i].Wait();
            if (receiveLength[i] > 0)
                received[i] = Serializer.Deserialize<Chunk>(buffers[i], 0, s.Count);
        }
    }

    public override object Received(int slot) => received[slot];

    public override void Stamp(object m, int seed)
    {
        long first = 0;
        for (var c = (Chunk)m; c != null; c = c.Next) {
            StampBytes(c.Data, first, seed);
            first += c.Data.Length;
        }
    }

    public override long Verify(object m, int seed)
    {
        long first = 0;
        for (var c = (Chunk)m; c != null; c = c.Next) {
            if (c.Data == null || !BytesMatch(c.Data, first, seed))
                return -1;
            first += c.Data.Length;
        }
        return first;
    }
}
