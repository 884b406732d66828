// MPFile — a parallel file (MPI-IO) read and written from managed arrays, zero-copy. The MPI
// file lives in the core (opi/opi_file.c), held here by id: an MPFile dropped without Dispose is
// closed when MPI ends (a warning on stderr), its written data intact.
using System.Collections.Generic;
using System.IO;
using System.Runtime.CompilerServices;
using System.Text;

namespace System.MP
{
    /// <summary>A file opened by every rank of a communicator together (MPI-IO), read and
    /// written straight from and into managed arrays: no copy, the array pinned only while MPI
    /// touches it. The data in the file is the arrays' elements in native byte order,
    /// row-major, with no header, so a file written by blocks through a view
    /// (<see cref="SetView"/> + <see cref="WriteAll"/>) is byte for byte what one serial
    /// program writing the whole array would write.</summary>
    /// <remarks>Collective members (<see cref="Open"/>, <see cref="SetLength"/>,
    /// <see cref="SetView"/>, <see cref="ReadAll"/>, <see cref="WriteAll"/>,
    /// <see cref="ReadAtAll"/>, <see cref="WriteAtAll"/>, <see cref="Sync"/>,
    /// <see cref="Dispose"/>) must be called by every rank of the communicator, in the same
    /// order. An MPFile, like a FileStream, is used by one thread at a time. It has no
    /// finalizer (closing is collective): one never disposed is closed when MPI ends, with a
    /// warning on stderr, its written data intact.</remarks>
    /// <example><code>
    /// // rank r of p writes rows [r*n/p, (r+1)*n/p) of a global double[n, m]
    /// using (var f = MPFile.Open(MP.World, "field.bin", FileMode.Create, FileAccess.Write)) {
    ///     f.SetView(0, typeof(double), new[] { n, m }, new Region(new[] { first, 0 },
    ///                                                              new[] { rows, m }));
    ///     f.WriteAll(myRows);   // a double[rows, m]
    /// }
    /// </code></example>
    public sealed class MPFile : IDisposable
    {
        int id;   // the core's record; 0 once disposed
        readonly string path;
        readonly FileAccess access;
        Type viewType;   // null: no view (explicit offsets in bytes)
        long viewCount;
        readonly List<Request> pending =
            new List<Request>();   // IreadAt/IwriteAt not yet seen done

        MPFile(int id, string path, FileAccess access)
        {
            this.id = id;
            this.path = path;
            this.access = access;
        }

        static byte[] PathBytes(string path)
        {
            if (path == null)
                throw new ArgumentNullException(nameof(path));
            if (path.Length == 0 || path.IndexOf('\0') >= 0)
                throw new ArgumentException("System.MP: path is empty or holds a NUL character",
                                            nameof(path));
            return Encoding.UTF8.GetBytes(path + "\0");
        }

        /// <summary>Opens (or creates) the file at path on every rank of comm. Collective: every
        /// rank passes the same path, mode and access; every rank returns the file, or every
        /// rank raises the same exception (none is left inside Open).</summary>
        /// <param name="comm">The ranks that share the file.</param>
        /// <param name="path">The file's path, as each rank sees it (relative to the working
        /// directory).</param>
        /// <param name="mode">As for FileStream: CreateNew (fails if it exists), Create
        /// (truncates an existing file), Open, OpenOrCreate, Truncate (an existing file, emptied),
        /// Append (created if missing; needs FileAccess.Write).</param>
        /// <param name="access">Read, Write or ReadWrite.</param>
        /// <returns>The open file; dispose it (collectively) when done.</returns>
        /// <exception cref="ArgumentNullException">comm or path is null.</exception>
        /// <exception cref="ArgumentException">path is empty; or mode needs write access that
        /// access does not give (CreateNew, Create, Truncate and Append with Read; Append with
        /// ReadWrite), as FileStream.</exception>
        /// <exception cref="ArgumentOutOfRangeException">mode or access is not a value of its
        /// enumeration.</exception>
        /// <exception cref="FileNotFoundException">Open or Truncate of a missing file.</exception>
        /// <exception cref="DirectoryNotFoundException">A directory of the path is
        /// missing.</exception>
        /// <exception cref="UnauthorizedAccessException">Permission denied, or a read-only file
        /// system.</exception>
        /// <exception cref="IOException">CreateNew of an existing file; any other I/O
        /// error.</exception>
        /// <exception cref="ObjectDisposedException">comm has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static MPFile Open(Intracomm comm, string path, FileMode mode, FileAccess access)
        {
            if (comm == null)
                throw new ArgumentNullException(nameof(comm));
            byte[] bytes = PathBytes(path);
            int made;
            int rc = MPDirect.FileOpen(comm.handle, bytes, (int)mode, (int)access, out made);
            GC.KeepAlive(comm);
            if (rc == Errors.FileNotFound)   // with the path as its FileName
                throw new FileNotFoundException(Errors.Make(rc).Message, path);
            Errors.Check(rc);
            return new MPFile(made, path, access);
        }

        /// <summary>Deletes the file at path (MPI_File_delete): not collective, call it on one
        /// rank. As File.Delete, a missing file is no error.</summary>
        /// <param name="path">The file to delete.</param>
        /// <exception cref="ArgumentNullException">path is null.</exception>
        /// <exception cref="ArgumentException">path is empty.</exception>
        /// <exception cref="DirectoryNotFoundException">A directory of the path is
        /// missing.</exception>
        /// <exception cref="UnauthorizedAccessException">Permission denied.</exception>
        /// <exception cref="IOException">Another I/O error (the file is open, ...).</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Delete(string path) =>
            Errors.Check(MPDirect.FileDelete(PathBytes(path)));

        /// <summary>The path the file was opened with.</summary>
        public string Path => path;

        int Id
        {
            get {
                if (id == 0)
                    throw new ObjectDisposedException(
                        nameof(MPFile), $"System.MP: the MPFile \"{path}\" is disposed");
                return id;
            }
        }

        /// <summary>The file's size in bytes (MPI_File_get_size), whatever the view.</summary>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        public long Length
        {
            [MethodImpl(MethodImplOptions.NoInlining)]
            get
            {
                long bytes;
                Errors.Check(MPDirect.FileSize(Id, out bytes));
                return bytes;
            }
        }

        /// <summary>Truncates or extends the file to bytes bytes (MPI_File_set_size; extended
        /// bytes read as zeros). Collective, with the same value on every rank.</summary>
        /// <param name="bytes">The new size, in bytes.</param>
        /// <exception cref="ArgumentOutOfRangeException">bytes is negative.</exception>
        /// <exception cref="NotSupportedException">The file was opened with
        /// FileAccess.Read.</exception>
        /// <exception cref="IOException">The file system refused.</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void SetLength(long bytes) => Errors.Check(MPDirect.FileSetSize(Id, bytes));

        void CheckViewType(Array array)
        {
            if (viewType != null && array != null && array.GetType().GetElementType() != viewType)
                throw new ArgumentException(
                    $"System.MP: the view's elements are {viewType}, array's " +
                        $"{array.GetType().GetElementType()}: with a view, offsets and counts " +
                        "are elements of the view's type, and the array must hold that type",
                    nameof(array));
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        Status At(long offset, Array array, int arrayOffset, int count, int kind)
        {
            int file = Id;
            CheckViewType(array);
            var st = new StatusData();
            Errors.Check(MPDirect.FileAt(file, offset, array, arrayOffset, count, kind, ref st));
            return Status.Of(ref st);
        }

        /// <summary>Reads count elements into array[arrayOffset ..] from the explicit offset:
        /// bytes from the start of the file without a view, elements of the view's type over this
        /// rank's part with one. Independent (only this rank).</summary>
        /// <param name="offset">Where to read: bytes (no view) or view elements.</param>
        /// <param name="array">An array of a transportable element type (any rank: arrayOffset
        /// and count are linear row-major indices).</param>
        /// <param name="arrayOffset">The first element of array to fill.</param>
        /// <param name="count">How many elements to read.</param>
        /// <returns>Count: the whole elements read (fewer at the end of the file); Bytes: the
        /// bytes read; Source MP.AnySource, Tag MP.AnyTag.</returns>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">offset is negative; arrayOffset or
        /// count outside array.</exception>
        /// <exception cref="ArgumentException">array's elements are not transportable, or not
        /// the view's type.</exception>
        /// <exception cref="NotSupportedException">The file was opened with
        /// FileAccess.Write.</exception>
        /// <exception cref="IOException">The read failed.</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status ReadAt(long offset, Array array, int arrayOffset,
                             int count) => At(offset, array, arrayOffset, count, 0);

        /// <summary>Writes array[arrayOffset .. arrayOffset + count) at the explicit offset
        /// (bytes without a view, view elements with one). Independent.</summary>
        /// <param name="offset">Where to write: bytes (no view) or view elements.</param>
        /// <param name="array">The elements to write.</param>
        /// <param name="arrayOffset">The first element of array to write.</param>
        /// <param name="count">How many elements.</param>
        /// <returns>Count and Bytes written.</returns>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">offset is negative; arrayOffset or
        /// count outside array.</exception>
        /// <exception cref="ArgumentException">array's elements are not transportable, or not
        /// the view's type.</exception>
        /// <exception cref="NotSupportedException">The file was opened with
        /// FileAccess.Read.</exception>
        /// <exception cref="IOException">The write failed (no space, ...).</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status WriteAt(long offset, Array array, int arrayOffset,
                              int count) => At(offset, array, arrayOffset, count, 1);

        /// <summary>ReadAt, collective (MPI_File_read_at_all): every rank calls it, each with its
        /// own offset and count (0 allowed); MPI may combine the ranks' accesses.</summary>
        /// <param name="offset">Where to read: bytes (no view) or view elements.</param>
        /// <param name="array">The array to fill.</param>
        /// <param name="arrayOffset">The first element of array to fill.</param>
        /// <param name="count">How many elements to read.</param>
        /// <returns>As ReadAt.</returns>
        /// <exception cref="ArgumentException">As ReadAt (a refused rank does not enter the
        /// collective: check arguments on every rank alike).</exception>
        /// <exception cref="NotSupportedException">The file was opened with
        /// FileAccess.Write.</exception>
        /// <exception cref="IOException">The read failed.</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status ReadAtAll(long offset, Array array, int arrayOffset,
                                int count) => At(offset, array, arrayOffset, count, 2);

        /// <summary>WriteAt, collective (MPI_File_write_at_all).</summary>
        /// <param name="offset">Where to write: bytes (no view) or view elements.</param>
        /// <param name="array">The elements to write.</param>
        /// <param name="arrayOffset">The first element of array to write.</param>
        /// <param name="count">How many elements.</param>
        /// <returns>As WriteAt.</returns>
        /// <exception cref="ArgumentException">As WriteAt.</exception>
        /// <exception cref="NotSupportedException">The file was opened with
        /// FileAccess.Read.</exception>
        /// <exception cref="IOException">The write failed.</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status WriteAtAll(long offset, Array array, int arrayOffset,
                                 int count) => At(offset, array, arrayOffset, count, 3);

        [MethodImpl(MethodImplOptions.NoInlining)]
        Request Iat(long offset, Array array, int arrayOffset, int count, int write)
        {
            int file = Id;
            CheckViewType(array);
            Prune();
            var request = new Request();
            var st = new StatusData();
            long reqId;
            Errors.Check(MPDirect.FileIat(file, offset, array, arrayOffset, count, write, request,
                                          out reqId, ref st));
            request.Started(reqId, ref st);
            if (reqId >= 0)
                pending.Add(request);
            return request;
        }

        // Forgets requests seen complete, so that the list stays short.
        void Prune()
        {
            if (pending.Count < 32)
                return;
            pending.RemoveAll(r =>
                              {
                                  try {
                                      Status unused;
                                      return r.Test(out unused);
                                  } catch (Exception) {
                                      return true;   // failed: complete (its Wait raises it again)
                                  }
                              });
        }

        /// <summary>Starts reading count elements into array[arrayOffset ..] from the explicit
        /// offset (MPI_File_iread_at). The array stays in place (and alive) until the request
        /// completes; do not touch it before. Wait's Status is ReadAt's.</summary>
        /// <param name="offset">Where to read: bytes (no view) or view elements.</param>
        /// <param name="array">The array to fill.</param>
        /// <param name="arrayOffset">The first element of array to fill.</param>
        /// <param name="count">How many elements.</param>
        /// <returns>The request; Dispose of the file completes it if you have not.</returns>
        /// <exception cref="ArgumentException">As ReadAt.</exception>
        /// <exception cref="NotSupportedException">The file was opened with
        /// FileAccess.Write.</exception>
        /// <exception cref="IOException">The read could not start.</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request IreadAt(long offset, Array array, int arrayOffset,
                               int count) => Iat(offset, array, arrayOffset, count, 0);

        /// <summary>Starts writing array[arrayOffset .. arrayOffset + count) at the explicit
        /// offset (MPI_File_iwrite_at). Do not change the array before the request
        /// completes.</summary>
        /// <param name="offset">Where to write: bytes (no view) or view elements.</param>
        /// <param name="array">The elements to write.</param>
        /// <param name="arrayOffset">The first element of array to write.</param>
        /// <param name="count">How many elements.</param>
        /// <returns>The request.</returns>
        /// <exception cref="ArgumentException">As WriteAt.</exception>
        /// <exception cref="NotSupportedException">The file was opened with
        /// FileAccess.Read.</exception>
        /// <exception cref="IOException">The write could not start.</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request IwriteAt(long offset, Array array, int arrayOffset,
                                int count) => Iat(offset, array, arrayOffset, count, 1);

        /// <summary>Makes this rank see the file, from displacement bytes on, as a row-major
        /// global array of elementType with sizes globalSizes, of which it reads and writes the
        /// box local (MPI_File_set_view with a subarray filetype, "native" representation).
        /// Collective: every rank gives the same displacement, elementType and globalSizes, and
        /// its own part (parts may differ in size, be empty, or overlap for reading). From here
        /// on explicit offsets count elements of this rank's part.</summary>
        /// <param name="displacement">Bytes skipped at the start of the file (a
        /// header).</param>
        /// <param name="elementType">The element type (a primitive or transportable
        /// struct).</param>
        /// <param name="globalSizes">The global array's length in each dimension.</param>
        /// <param name="local">This rank's box: a Region of starts and sizes in the global array
        /// (a size -1 for the rest of a dimension); not Region.Strided.</param>
        /// <exception cref="ArgumentNullException">elementType or globalSizes is
        /// null.</exception>
        /// <exception cref="ArgumentException">elementType is not transportable; local is
        /// default, strided, or of another rank than globalSizes.</exception>
        /// <exception cref="ArgumentOutOfRangeException">displacement or a size is negative;
        /// local passes the end of the global array.</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void SetView(long displacement, Type elementType, int[] globalSizes, Region local)
        {
            int file = Id;
            if (elementType == null)
                throw new ArgumentNullException(nameof(elementType));
            Array sample;
            try {
                sample = Array.CreateInstance(elementType, 1);
            } catch (Exception e) when (e is NotSupportedException || e is ArgumentException) {
                throw new ArgumentException(
                    $"System.MP: elementType {elementType} cannot be an array element", e);
            }
            int[] spec = local.Spec(nameof(local));
            long count;
            Errors.Check(
                MPDirect.FileSetView(file, displacement, sample, globalSizes, spec, out count));
            viewType = elementType;
            viewCount = count;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        void All(Array array, int write)
        {
            int file = Id;
            if (array == null)
                throw new ArgumentNullException(nameof(array));
            if (viewType == null)
                throw new InvalidOperationException(
                    $"System.MP: {(write != 0 ? "WriteAll" : "ReadAll")} needs a view: call " +
                    "SetView first");
            CheckViewType(array);
            if (array.LongLength != viewCount)
                throw new ArgumentException(
                    $"System.MP: array holds {array.LongLength} elements and this rank's part of " +
                        $"the view {viewCount}: they must be equal",
                    nameof(array));
            Errors.Check(MPDirect.FileAll(file, array, write));
        }

        /// <summary>Reads this rank's whole part of the view into array, collectively
        /// (MPI_File_read_at_all at offset 0): array holds exactly the part's element count of
        /// the view's type (any rank of array, filled in row-major order; 0 allowed).</summary>
        /// <param name="array">The array to fill.</param>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">array's element type is not the view's, or its
        /// length is not the part's element count.</exception>
        /// <exception cref="InvalidOperationException">No view was set.</exception>
        /// <exception cref="NotSupportedException">The file was opened with
        /// FileAccess.Write.</exception>
        /// <exception cref="IOException">The read failed, or the file ends inside this rank's
        /// part (what was there is read).</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void ReadAll(Array array) => All(array, 0);

        /// <summary>Writes array as this rank's whole part of the view, collectively
        /// (MPI_File_write_at_all at offset 0).</summary>
        /// <param name="array">The part's elements in row-major order.</param>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">array's element type is not the view's, or its
        /// length is not the part's element count.</exception>
        /// <exception cref="InvalidOperationException">No view was set.</exception>
        /// <exception cref="NotSupportedException">The file was opened with
        /// FileAccess.Read.</exception>
        /// <exception cref="IOException">The write failed.</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void WriteAll(Array array) => All(array, 1);

        /// <summary>Makes what every rank wrote durable and visible to the others
        /// (MPI_File_sync). Collective; does nothing on a file opened with
        /// FileAccess.Read.</summary>
        /// <exception cref="IOException">The file system failed.</exception>
        /// <exception cref="ObjectDisposedException">The file is disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Sync() => Errors.Check(MPDirect.FileSync(Id));

        /// <summary>Completes the IreadAt and IwriteAt requests still outstanding (their
        /// failures stay with them, for their Wait), then closes the file on every rank
        /// (MPI_File_close). Collective. Idempotent.</summary>
        /// <exception cref="IOException">Closing failed (the file is closed
        /// anyway).</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Dispose()
        {
            if (id == 0)
                return;
            foreach (Request r in pending) {
                try {
                    r.Wait();
                } catch (Exception) {
                    // the request keeps its failure: its own Wait raises it
                }
            }
            pending.Clear();
            int file = id;
            id = 0;
            Errors.Check(MPDirect.FileClose(file));
        }

        /// <summary>The path, the access and whether the file is open.</summary>
        public override string
        ToString() => $"MPFile(\"{path}\", {access}{(id == 0 ? ", disposed" : "")})";
    }
}
