/* sd_builder.h — builds SDTO messages by hand for the format tests and the fuzzer's seeds. */
#ifndef SD_BUILDER_H
#define SD_BUILDER_H

#include "sd_format.h"

#include <stdint.h>
#include <string.h>

typedef struct sd_builder {
    uint8_t buf[1 << 16];
    size_t len;
} sd_builder;

static void put32(sd_builder *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b->buf[b->len++] = (uint8_t)(v >> (8 * i));
}

static void put_bytes(sd_builder *b, const void *p, size_t n)
{
    memcpy(b->buf + b->len, p, n);
    b->len += n;
}

static void header(sd_builder *b, uint32_t types, uint32_t records, int32_t root)
{
    b->len = 0;
    put32(b, 0x4453504Du);
    put32(b, SD_VERSION); /* the current version, flags 0 */
    put32(b, types);
    put32(b, records);
    put32(b, (uint32_t)root);
    put32(b, 0);
    put32(b, 0); /* total_bytes, patched by finish() */
    put32(b, 0);
}

static void type(sd_builder *b, uint8_t kind, uint8_t rank, uint8_t element, uint32_t data_size,
                 uint32_t ref_count, const char *name)
{
    uint8_t head[4] = {kind, rank, element, 0};
    put_bytes(b, head, 4);
    put32(b, data_size);
    put32(b, ref_count);
    put32(b, (uint32_t)strlen(name));
    put_bytes(b, name, strlen(name));
}

static size_t finish(sd_builder *b)
{
    for (int i = 0; i < 4; i++)
        b->buf[24 + i] = (uint8_t)(b->len >> (8 * i));
    return b->len;
}

/* The sample messages: each builder function returns the message length. */
static size_t msg_null(sd_builder *b)
{
    header(b, 0, 0, -1);
    return finish(b);
}

static size_t msg_list(sd_builder *b, int cyclic) /* 3 nodes: int value + one reference */
{
    header(b, 1, 3, 0);
    type(b, 1, 0, 0, 16, 1, "Demo.Node, demo");
    for (int i = 0; i < 3; i++) {
        put32(b, 0);
        uint8_t data[16] = {0};
        data[8] = (uint8_t)(i + 1);
        put_bytes(b, data, 16);
        put32(b, (uint32_t)(i < 2 ? i + 1 : cyclic ? 0 : -1));
    }
    return finish(b);
}

static size_t msg_arrays(sd_builder *b) /* object[] of { int[5], string, double[2,3] } */
{
    header(b, 4, 4, 0);
    type(b, 2, 1, 1, 8, 1, "System.Object[], mscorlib");
    type(b, 2, 1, 0, 4, 0, "System.Int32[], mscorlib");
    type(b, 3, 0, 0, 2, 0, "System.String, mscorlib");
    type(b, 2, 2, 0, 8, 0, "System.Double[,], mscorlib");
    put32(b, 0); /* object[3] */
    put32(b, 3);
    put32(b, 0);
    put32(b, 1);
    put32(b, 2);
    put32(b, 3);
    put32(b, 1); /* int[5] */
    put32(b, 5);
    put32(b, 0);
    for (uint32_t i = 0; i < 5; i++)
        put32(b, i * 7);
    put32(b, 2); /* "hello" */
    put32(b, 5);
    const uint16_t hello[5] = {'h', 'e', 'l', 'l', 'o'};
    put_bytes(b, hello, sizeof hello);
    put32(b, 3); /* double[2,3] */
    put32(b, 2);
    put32(b, 3);
    put32(b, 0);
    put32(b, 0);
    double d[6] = {1, 2, 3, 4, 5, 6};
    put_bytes(b, d, sizeof d);
    return finish(b);
}

static size_t msg_structs(sd_builder *b) /* struct { long; string } [2], both strings shared */
{
    header(b, 2, 2, 0);
    type(b, 2, 1, 2, 16, 1, "Demo.Pair[], demo");
    type(b, 3, 0, 0, 2, 0, "System.String, mscorlib");
    put32(b, 0);
    put32(b, 2);
    put32(b, 0);
    for (int i = 0; i < 2; i++) {
        uint8_t data[16] = {0};
        data[8] = (uint8_t)(40 + i);
        put_bytes(b, data, 16);
        put32(b, 1);
    }
    put32(b, 1);
    put32(b, 2);
    const uint16_t ab[2] = {'a', 'b'};
    put_bytes(b, ab, sizeof ab);
    return finish(b);
}

/* A collection (kind 4): a Dictionary<string,int> of two entries, each a KeyValuePair (16 bytes:
 * the key's slot, the value, padding) and the key's reference; lower_bound patches the record. */
static size_t msg_collection_with(sd_builder *b, uint8_t rank, int32_t lower_bound)
{
    header(b, 2, 3, 0);
    type(b, 4, rank, 2, 16, 1,
         "System.Collections.Generic.Dictionary`2[[System.String, mscorlib],[System.Int32, mscorlib]], mscorlib");
    type(b, 3, 0, 0, 2, 0, "System.String, mscorlib");
    put32(b, 0);
    put32(b, 2);
    put32(b, (uint32_t)lower_bound);
    for (int e = 0; e < 2; e++) {
        uint8_t data[16] = {0};
        data[8] = (uint8_t)(10 + e);
        put_bytes(b, data, 16);
        put32(b, (uint32_t)(e + 1));
    }
    for (int e = 0; e < 2; e++) {
        put32(b, 1);
        put32(b, 1);
        const uint16_t key = (uint16_t)('k' + e);
        put_bytes(b, &key, sizeof key);
    }
    return finish(b);
}

static size_t msg_collection(sd_builder *b) { return msg_collection_with(b, 1, 0); }

/* A Demo.Node[] of n nodes and three shared strings (n + 4 records), for the validator's object
 * fast path: each node (40 bytes: three reference slots and a long) refers forward to the next
 * (the last back into the middle), back to the node or array at half its index, and to a string;
 * every seventh name is null. */
static size_t msg_graph(sd_builder *b, uint32_t n)
{
    header(b, 3, n + 4, 0);
    type(b, 2, 1, 1, 8, 1, "Demo.Node[], demo");
    type(b, 1, 0, 0, 40, 3, "Demo.Node, demo");
    type(b, 3, 0, 0, 2, 0, "System.String, mscorlib");
    put32(b, 0); /* the array: record 0, nodes at 1..n */
    put32(b, n);
    put32(b, 0);
    for (uint32_t i = 0; i < n; i++)
        put32(b, i + 1);
    for (uint32_t i = 0; i < n; i++) {
        put32(b, 1);
        uint8_t data[40] = {0};
        data[24] = (uint8_t)i;
        put_bytes(b, data, 40);
        put32(b, i + 1 < n ? i + 2 : n / 2 + 1);
        put32(b, (i + 1) / 2);
        put32(b, i % 7 == 6 ? (uint32_t)-1 : n + 1 + i % 3);
    }
    for (uint32_t k = 0; k < 3; k++) { /* records n+1..n+3 */
        put32(b, 2);
        put32(b, 2);
        const uint16_t name[2] = {'n', (uint16_t)('0' + k)};
        put_bytes(b, name, sizeof name);
    }
    return finish(b);
}

#endif
