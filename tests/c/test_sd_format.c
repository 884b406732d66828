/* test_sd_format — the SDTO validator (serializer/sd_validate.c) accepts well-formed messages
 * and rejects hostile ones: every truncation, absurd lengths and counts, references and types
 * out of range, and random mutations (which must never crash). With --write-corpus DIR it
 * writes the sample messages as seeds for the fuzzer. */
#include "check.h"
#include "sd_builder.h"
#include "sd_format.h"

#include <stdio.h>
#include <stdlib.h>

static int valid(const uint8_t *p, size_t n)
{
    sd_header h;
    const char *why = NULL;
    int rc = sd_validate(p, n, &h, NULL, 0, &why);
    if (rc != 0 && !why)
        return -2; /* a rejection must say why */
    return rc == 0;
}

typedef size_t (*sample_fn)(sd_builder *);
static size_t list_acyclic(sd_builder *b) { return msg_list(b, 0); }
static size_t list_cyclic(sd_builder *b) { return msg_list(b, 1); }
/* many object records, referring forward and back (the validator's object fast path) */
static size_t graph_8(sd_builder *b) { return msg_graph(b, 4); }   /* 8 records */
static size_t graph_54(sd_builder *b) { return msg_graph(b, 50); } /* 54 records */
static const sample_fn samples[] = {msg_null,    list_acyclic,   list_cyclic, msg_arrays,
                                    msg_structs, msg_collection, graph_8,     graph_54};
enum { SAMPLES = sizeof samples / sizeof samples[0] };

/* Patches the length field so that checks past it are reached. */
static void set_total(uint8_t *p, size_t n)
{
    for (int i = 0; i < 8; i++)
        p[24 + i] = (uint8_t)((uint64_t)n >> (8 * i));
}

static void hostile(void)
{
    static sd_builder b;
    size_t n;

    header(&b, 1, 1, 0); /* an int[] claiming 2^31-1 elements with 4 bytes present */
    type(&b, 2, 1, 0, 4, 0, "System.Int32[], mscorlib");
    put32(&b, 0);
    put32(&b, 0x7fffffff);
    put32(&b, 0);
    put32(&b, 1);
    CHECK(valid(b.buf, finish(&b)) == 0, "absurd array length");

    header(&b, 1, 1,
           0); /* 65536 x 65536 elements of 8 bytes: the count overflows nothing, bytes lack */
    type(&b, 2, 2, 0, 8, 0, "System.Double[,], mscorlib");
    put32(&b, 0);
    put32(&b, 65536);
    put32(&b, 65536);
    put32(&b, 0);
    put32(&b, 0);
    CHECK(valid(b.buf, finish(&b)) == 0, "array bounds multiplying past the bytes");

    header(&b, 1, 1, 0); /* rank 32 of 0x7fffffff each: the product overflows 64 bits */
    type(&b, 2, 32, 0, 1, 0, "System.Byte[,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,], mscorlib");
    put32(&b, 0);
    for (int d = 0; d < 32; d++)
        put32(&b, 0x7fffffff);
    for (int d = 0; d < 32; d++)
        put32(&b, 0);
    CHECK(valid(b.buf, finish(&b)) == 0, "element count overflow");

    header(&b, 1, 1, 0); /* a string of 2^32-1 characters */
    type(&b, 3, 0, 0, 2, 0, "System.String, mscorlib");
    put32(&b, 0);
    put32(&b, 0xffffffffu);
    CHECK(valid(b.buf, finish(&b)) == 0, "absurd string length");

    n = msg_list(&b, 0); /* reference 7 of 3 records */
    b.buf[n - 4] = 7;
    CHECK(valid(b.buf, n) == 0, "reference out of range");
    n = msg_list(&b, 0);
    b.buf[n - 4] = 0xfe; /* -2 */
    CHECK(valid(b.buf, n) == 0, "negative reference other than null");

    n = msg_list(&b, 0);
    b.buf[16] = 3; /* root = record 3 of 3 */
    CHECK(valid(b.buf, n) == 0, "root out of range");
    n = msg_null(&b);
    b.buf[16] = 0; /* root 0 with no records */
    CHECK(valid(b.buf, n) == 0, "root without records");

    header(&b, 1, 1, 0);
    type(&b, 1, 0, 0, 0, 0, "Demo.Empty, demo");
    put32(&b, 9);
    CHECK(valid(b.buf, finish(&b)) == 0, "type index out of range");

    header(&b, 0xffffffffu, 0, -1);
    CHECK(valid(b.buf, finish(&b)) == 0, "four billion types");
    header(&b, 0, 0xffffffffu, 0);
    CHECK(valid(b.buf, finish(&b)) == 0, "four billion records");

    header(&b, 1, 0, -1); /* a type name longer than allowed */
    uint8_t head[4] = {1, 0, 0, 0};
    put_bytes(&b, head, 4);
    put32(&b, 0);
    put32(&b, 0);
    put32(&b, 5000);
    CHECK(valid(b.buf, finish(&b)) == 0, "type name too long");

    header(&b, 1, 0, -1);
    type(&b, 9, 0, 0, 0, 0, "Demo.X, demo");
    CHECK(valid(b.buf, finish(&b)) == 0, "unknown type kind");
    header(&b, 1, 0, -1);
    type(&b, 1, 0, 0, 8, 5, "Demo.X, demo");
    CHECK(valid(b.buf, finish(&b)) == 0, "more reference slots than data");
    header(&b, 1, 0, -1);
    type(&b, 2, 1, 0, 0, 0, "Demo.X[], demo");
    CHECK(valid(b.buf, finish(&b)) == 0, "zero-sized array elements");

    n = msg_arrays(&b);
    b.buf[4] = SD_VERSION + 1;
    CHECK(valid(b.buf, n) == 0, "unknown version");
    n = msg_arrays(&b);
    b.buf[4] = SD_VERSION - 1;
    CHECK(valid(b.buf, n) == 0, "the previous version (no collections)");
    CHECK(valid(b.buf, msg_collection_with(&b, 2, 0)) == 0, "a collection of rank 2");
    CHECK(valid(b.buf, msg_collection_with(&b, 1, 1)) == 0, "a collection with a lower bound");
    n = msg_collection(&b);
    b.buf[n - 2 * 10 - 4] = 9; /* the second element's reference (before two 10-byte strings) */
    CHECK(valid(b.buf, n) == 0, "a collection element referring to no record");
    n = msg_arrays(&b);
    b.buf[0] ^= 1;
    CHECK(valid(b.buf, n) == 0, "bad magic");
    n = msg_arrays(&b);
    CHECK(valid(b.buf, n - 1) == 0, "length field disagrees");
    n = msg_arrays(&b);
    b.buf[n++] = 0;
    set_total(b.buf, n);
    CHECK(valid(b.buf, n) == 0, "trailing bytes");
}

static void truncations_and_mutations(void)
{
    static sd_builder b;
    static uint8_t copy[1 << 16];
    srand(12345);
    long mutated = 0, accepted = 0;
    for (int s = 0; s < SAMPLES; s++) {
        size_t n = samples[s](&b);
        CHECK(valid(b.buf, n) == 1, "sample message is valid");
        int all_rejected = 1;
        for (size_t cut = 0; cut < n; cut++) {
            memcpy(copy, b.buf, cut);
            if (cut >= 32)
                set_total(copy, cut); /* so that the checks behind the length field run */
            all_rejected &= valid(copy, cut) == 0;
        }
        CHECK(all_rejected, "every truncation of a sample is rejected");
        for (int m = 0; m < 20000; m++) {
            memcpy(copy, b.buf, n);
            int flips = 1 + rand() % 4;
            for (int f = 0; f < flips; f++)
                copy[32 + rand() % (n > 32 ? n - 32 : 1)] ^= (uint8_t)(1 + rand() % 255);
            int v = valid(copy, n);
            mutated++;
            accepted += v == 1;
            if (v == -2) {
                CHECK(0, "a rejection without a reason");
                break;
            }
        }
    }
    printf("test_sd_format: %ld random mutations validated (%ld still well-formed)\n", mutated,
           accepted);
}

static int write_corpus(const char *dir)
{
    static sd_builder b;
    char path[4096];
    for (int s = 0; s < SAMPLES; s++) {
        size_t n = samples[s](&b);
        snprintf(path, sizeof path, "%s/sample%d", dir, s);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(b.buf, 1, n, f) != n)
            return 1;
        fclose(f);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
        return write_corpus(argv[2]);
    hostile();
    truncations_and_mutations();
    printf("test_sd_format: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
