// Transport — a communication module of the benchmark framework (Netgauge's split): how one
// message of a pattern travels. Patterns (bench/patterns/) only talk to this class, so a new
// transport gets every pattern. Messages are whatever the transport moves (a byte[] for OPI and
// P/Invoke, an object graph for the structured transport) and always carry `bytes` payload bytes.
// Non-blocking operations work on numbered slots so that no wrapper object is allocated per call.
using System;

[Flags]
enum TransportCaps
{
    Blocking = 1,
    NonBlocking = 2
}

abstract class Transport
{
    public abstract string Name { get; }
    /// <summary>How tables and plots name it.</summary>
    public abstract string Label { get; }
    public virtual TransportCaps Caps => TransportCaps.Blocking | TransportCaps.NonBlocking;

    /// <summary>A message carrying exactly <paramref name="bytes"/> payload bytes.</summary>
    public abstract object NewMessage(long bytes);

    public abstract void Send(object message, int dest, int tag);
    /// <summary>Receives into <paramref name="message"/> when the transport works in place, or a
    /// new message of the same shape; returns the message received.</summary>
    public abstract object Recv(object message, int source, int tag);

    /// <summary>Sends one message and receives another in one blocking call; returns the message
    /// received. The default posts both non-blocking in slots 0 and 1 (which the pattern reserves)
    /// and waits for the pair.</summary>
    public virtual object Sendrecv(object send, int dest, object recv, int source, int tag)
    {
        Irecv(0, recv, source, tag);
        Isend(1, send, dest, tag);
        WaitAll(2);
        return Received(0);
    }

    /// <summary>Slots 0..slots-1 may be used by Isend/Irecv before a WaitAll.</summary>
    public abstract void ReserveSlots(int slots);
    public abstract void Isend(int slot, object message, int dest, int tag);
    public abstract void Irecv(int slot, object message, int source, int tag);
    /// <summary>Completes the operations in slots 0..count-1.</summary>
    public abstract void WaitAll(int count);
    /// <summary>The message an Irecv in this slot delivered (after WaitAll).</summary>
    public abstract object Received(int slot);

    // Data checks (the tests' --check mode; never timed): every payload byte i of a message
    // stamped with seed s is (byte)(s * 131 + i).
    public abstract void Stamp(object message, int seed);
    /// <summary>The payload length when every byte matches <paramref name="seed"/>,
    /// else -1.</summary>
    public abstract long Verify(object message, int seed);

    protected static void StampBytes(byte[] b, long first, int seed)
    {
        for (int i = 0; i < b.Length; i++)
            b[i] = (byte)(seed * 131 + first + i);
    }

    protected static bool BytesMatch(byte[] b, long first, int seed)
    {
        for (int i = 0; i < b.Length; i++)
            if (b[i] != (byte)(seed * 131 + first + i))
                return false;
        return true;
    }

    /// <summary>The registry: a new transport is one file and one line here. The driver and the
    /// tests learn names, capabilities and labels from `Bench.exe --list`.</summary>
    static readonly Func<Transport>[] registry = {
        () => new SystemMpTransport(),
        () => new PInvokeTransport(),
        () => new PInvokeFixedTransport(),
        () => new SdtoTransport(),
    };

    public static Transport[] All() => Array.ConvertAll(registry, make => make());

    public static Transport Create(string name)
    {
        foreach (Transport t in All())
            if (t.Name == name)
                return t;
        throw new ArgumentException("unknown C# transport '" + name + "' (Bench.exe --list)");
    }

    /// <summary>"transport,NAME,CAPS,default,LABEL": what --list prints for it.</summary>
    public string Describe() =>
        $"transport,{Name}," +
        $"{((Caps & TransportCaps.NonBlocking) != 0 ? "blocking+nonblocking" : "blocking")}" +
        $",default,{Label}";
}

/// <summary>A transport whose messages are plain byte arrays moved in place.</summary>
abstract class ByteArrayTransport : Transport
{
    public override object NewMessage(long bytes) => new byte[bytes];
    public override object Received(int slot) => received[slot];
    public override void Stamp(object m, int seed) => StampBytes((byte[])m, 0, seed);
    public override long Verify(object m, int seed) =>
        BytesMatch((byte[])m, 0, seed) ? ((byte[])m).Length : -1;

    protected object[] received = new object[0];

    public override void ReserveSlots(int slots)
    {
        if (received.Length < slots) {
            received = new object[slots];
            Grow(slots);
        }
    }

    protected abstract void Grow(int slots);
}
