/* sd_format.h — the SDTO wire format (FORMAT.md): constants and a bounds-checked parser shared
 * by the validator, the reader and the writer. Pure C, no Mono: the validator is fuzzable. */
#ifndef SD_FORMAT_H
#define SD_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define SD_MAGIC 0x4453504Du
#define SD_VERSION 2
#define SD_HEADER_BYTES 32
#define SD_MAX_RANK 32
#define SD_MAX_NAME 1024
#define SD_MAX_TYPES 4096

/* SD_COLLECTION: a standard collection (List, Dictionary...), carried as a zero-based
 * one-dimensional array of its elements would be (rank 1, lower bound 0). */
enum sd_kind { SD_OBJECT = 1, SD_ARRAY = 2, SD_STRING = 3, SD_COLLECTION = 4 };
enum sd_element { SD_ELEM_RAW = 0, SD_ELEM_REFS = 1, SD_ELEM_STRUCTS = 2 };

typedef struct sd_header {
    uint32_t type_count;
    uint32_t record_count;
    int32_t root;
    uint64_t total_bytes;
} sd_header;

typedef struct sd_type {
    uint8_t kind, rank, element;
    uint32_t data_size, ref_count;
    const char *name; /* not NUL-terminated */
    uint32_t name_len;
} sd_type;

/* One record, as parsed: where its pieces lie in the message. */
typedef struct sd_record {
    uint32_t type_index;
    const uint8_t
        *data; /* OBJECT: instance data; ARRAY, COLLECTION: first element; STRING: chars */
    const uint8_t *refs; /* OBJECT: its i32 references (ARRAY of STRUCTS: interleaved) */
    uint64_t elements;   /* ARRAY: element count; STRING: chars; OBJECT: 1 */
    uint32_t lengths[SD_MAX_RANK];
    int32_t lower_bounds[SD_MAX_RANK];
} sd_record;

typedef struct sd_cursor {
    const uint8_t *p, *end;
    const char *error; /* why parsing stopped: a static string */
} sd_cursor;

/* Each returns 0 on success, -1 with cur->error set. */
int sd_parse_header(sd_cursor *cur, sd_header *h);
int sd_parse_type(sd_cursor *cur, sd_type *t);
/* Parses the record at the cursor against the type table (types[0..type_count)). */
int sd_parse_record(sd_cursor *cur, const sd_type *types, uint32_t type_count, sd_record *r);

/* Little-endian reads from unaligned bytes. */
static inline uint32_t sd_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline int32_t sd_i32(const uint8_t *p) { return (int32_t)sd_u32(p); }

/* Where one record's pieces lie, as validation found them (the reader's passes read these
 * instead of parsing the message again). An array's lengths and lower bounds are the 8·rank
 * bytes before data. */
typedef struct sd_place {
    const uint8_t *data, *refs; /* as in sd_record */
    uint64_t elements;
    uint32_t type_index;
} sd_place;

/* Checks a whole message: structure, sizes, every reference and the root (FORMAT.md, "What a
 * reader checks"). 0 if valid (*h then holds the header); -1 with *why set otherwise. With
 * places non-NULL, a valid message's records are also indexed into *places, record_count
 * entries (NULL when there are none): into the memory *places lends on entry when it has room
 * for them (room entries), else into memory malloc'd here, which the caller frees. On failure
 * *places is left as it came. */
int sd_validate(const uint8_t *buf, size_t len, sd_header *h, sd_place **places, size_t room,
                const char **why);

#endif
