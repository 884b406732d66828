// Region — a box of a multi-dimensional array, or every stride-th element of a one-dimensional
// one, that point-to-point calls, persistent requests, matched receives and neighbourhood
// collectives move in place: the core describes it to MPI as a derived datatype (built once per
// shape and element type, then reused), so nothing is packed or copied in the binding.

namespace System.MP
{
    /// <summary>An immutable box of an array: a start and a size per dimension (row-major, as C#
    /// lays out <c>double[,]</c>), or every stride-th element of a one-dimensional array. Its
    /// elements travel in row-major order of the region, so a column of a <c>double[100,100]</c>
    /// arrives in a <c>double[100]</c> as 100 consecutive values; sender and receiver regions may
    /// differ in shape as long as the element type agrees.</summary>
    /// <example><code>
    /// var field = new double[n, n];
    /// // the last column to the right neighbour, the first column from the left one
    /// comm.Sendrecv(field, Region.Columns(n - 2, 1), right, 0,
    ///               field, Region.Columns(0, 1), left, 0);
    /// </code></example>
    public struct Region
    {
        // What the core reads: [stride, ndims, starts[ndims], sizes[ndims]]. stride 0 is a box;
        // a size of -1 is the whole dimension (Rows, Columns). null for default(Region).
        readonly int[] spec;

        Region(int[] spec) { this.spec = spec; }

        /// <summary>A box: starts[d] and sizes[d] for each dimension d of the array it will be
        /// applied to (row-major). The arrays are copied.</summary>
        /// <exception cref="ArgumentNullException">starts or sizes is null.</exception>
        /// <exception cref="ArgumentException">starts and sizes differ in length, or are
        /// empty.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a start or a size is
        /// negative.</exception>
        public Region(int[] starts, int[] sizes)
        {
            if (starts == null)
                throw new ArgumentNullException(nameof(starts));
            if (sizes == null)
                throw new ArgumentNullException(nameof(sizes));
            if (starts.Length != sizes.Length)
                throw new ArgumentException(
                    $"starts has {starts.Length} dimensions and sizes {sizes.Length}: a region " +
                        "needs a start and a size per dimension",
                    nameof(sizes));
            if (starts.Length == 0)
                throw new ArgumentException("a region needs at least one dimension",
                                            nameof(starts));
            int n = starts.Length;
            spec = new int[2 + 2 * n];
            spec[1] = n;
            for (int d = 0; d < n; d++) {
                if (starts[d] < 0)
                    throw new ArgumentOutOfRangeException(nameof(starts), starts[d],
                                                          $"starts[{d}] is negative");
                if (sizes[d] < 0)
                    throw new ArgumentOutOfRangeException(nameof(sizes), sizes[d],
                                                          $"sizes[{d}] is negative");
                spec[2 + d] = starts[d];
                spec[2 + n + d] = sizes[d];
            }
        }

        /// <summary>Whole rows first .. first + count - 1 of a two-dimensional array.</summary>
        /// <exception cref="ArgumentOutOfRangeException">first or count is negative.</exception>
        public static Region Rows(int first, int count)
        {
            NonNegative(first, nameof(first));
            NonNegative(count, nameof(count));
            return new Region(new[] { 0, 2, first, 0, count, -1 });
        }

        /// <summary>Whole columns first .. first + count - 1 of a two-dimensional
        /// array.</summary>
        /// <exception cref="ArgumentOutOfRangeException">first or count is negative.</exception>
        public static Region Columns(int first, int count)
        {
            NonNegative(first, nameof(first));
            NonNegative(count, nameof(count));
            return new Region(new[] { 0, 2, 0, first, -1, count });
        }

        /// <summary>count elements of a one-dimensional array: first, first + stride, first +
        /// 2 stride, ...</summary>
        /// <exception cref="ArgumentOutOfRangeException">first or count is negative, or stride
        /// is less than 1.</exception>
        public static Region Strided(int first, int count, int stride)
        {
            NonNegative(first, nameof(first));
            NonNegative(count, nameof(count));
            if (stride < 1)
                throw new ArgumentOutOfRangeException(nameof(stride), stride,
                                                      "stride must be at least 1");
            return new Region(new[] { stride, 1, first, count });
        }

        static void NonNegative(int value, string name)
        {
            if (value < 0)
                throw new ArgumentOutOfRangeException(name, value, name + " is negative");
        }

        int Dimensions => spec == null ? 0 : spec[1];

        /// <summary>The start in each dimension (a copy); empty for
        /// <c>default(Region)</c>.</summary>
        public int[] Starts
        {
            get {
                var starts = new int[Dimensions];
                if (spec != null)
                    Array.Copy(spec, 2, starts, 0, starts.Length);
                return starts;
            }
        }

        /// <summary>The size in each dimension (a copy); -1 for "the whole dimension" of Rows
        /// and Columns until the region is applied to an array.</summary>
        public int[] Sizes
        {
            get {
                var sizes = new int[Dimensions];
                if (spec != null)
                    Array.Copy(spec, 2 + sizes.Length, sizes, 0, sizes.Length);
                return sizes;
            }
        }

        /// <summary>The number of elements in the region; -1 while a size is "the whole
        /// dimension" (Rows, Columns), 0 for <c>default(Region)</c>.</summary>
        public int Count
        {
            get {
                if (spec == null)
                    return 0;
                long count = 1;
                for (int d = 0; d < spec[1]; d++) {
                    int size = spec[2 + spec[1] + d];
                    if (size < 0)
                        return -1;
                    count *= size;
                }
                return count > int.MaxValue? int.MaxValue : (int)count;
            }
        }

        /// <summary>The spec the core reads; ArgumentException for default(Region).</summary>
        internal int[] Spec(string name)
        {
            if (spec == null)
                throw new ArgumentException(
                    "the region is default(Region): make one with new Region(starts, sizes), " +
                        "Region.Rows, Region.Columns or Region.Strided",
                    name);
            return spec;
        }

        /// <summary>The starts and sizes (and stride) on one line.</summary>
        public override string ToString()
        {
            if (spec == null)
                return "Region(default)";
            string box = $"Region(starts=[{string.Join(",", Starts)}], " +
                         $"sizes=[{string.Join(",", Sizes)}]";
            return spec[0] > 0 ? box + $", stride={spec[0]})" : box + ")";
        }
    }
}
