/* sd_validate.c — the bounds-checked parser of the SDTO format and the validator built on it.
 * Every length is checked against the bytes that remain before it is used; every product is
 * checked for overflow. No allocation, no Mono: this is the fuzz target's whole world. */
#include "sd_format.h"

#include <stdlib.h>
#include <string.h>

static int fail(sd_cursor *cur, const char *why)
{
    cur->error = why;
    return -1;
}

static size_t left(const sd_cursor *cur) { return (size_t)(cur->end - cur->p); }

static int take(sd_cursor *cur, size_t n, const uint8_t **at, const char *why)
{
    if (left(cur) < n)
        return fail(cur, why);
    *at = cur->p;
    cur->p += n;
    return 0;
}

int sd_parse_header(sd_cursor *cur, sd_header *h)
{
    const uint8_t *p;
    if (take(cur, SD_HEADER_BYTES, &p, "shorter than a header"))
        return -1;
    if (sd_u32(p) != SD_MAGIC)
        return fail(cur, "not an SDTO message (bad magic)");
    if ((p[4] | p[5] << 8) != SD_VERSION)
        return fail(cur, "unsupported format version");
    if (p[6] | p[7] || sd_u32(p + 20))
        return fail(cur, "reserved header fields are not zero");
    h->type_count = sd_u32(p + 8);
    h->record_count = sd_u32(p + 12);
    h->root = sd_i32(p + 16);
    h->total_bytes = (uint64_t)sd_u32(p + 24) | (uint64_t)sd_u32(p + 28) << 32;
    return 0;
}

int sd_parse_type(sd_cursor *cur, sd_type *t)
{
    const uint8_t *p;
    if (take(cur, 16, &p, "type table truncated"))
        return -1;
    t->kind = p[0];
    t->rank = p[1];
    t->element = p[2];
    t->data_size = sd_u32(p + 4);
    t->ref_count = sd_u32(p + 8);
    t->name_len = sd_u32(p + 12);
    if (p[3])
        return fail(cur, "reserved type field is not zero");
    if (t->name_len == 0 || t->name_len > SD_MAX_NAME)
        return fail(cur, "type name empty or too long");
    if (take(cur, t->name_len, &p, "type name truncated"))
        return -1;
    t->name = (const char *)p;
    if (memchr(t->name, 0, t->name_len))
        return fail(cur, "type name holds a NUL byte");
    switch (t->kind) {
    case SD_OBJECT:
        if (t->rank || t->element)
            return fail(cur, "object type with array fields");
        if ((uint64_t)t->ref_count * 8 > t->data_size)
            return fail(cur, "more reference slots than instance data holds");
        return 0;
    case SD_ARRAY:
    case SD_COLLECTION:
        if (t->rank < 1 || t->rank > SD_MAX_RANK || t->element > SD_ELEM_STRUCTS ||
            t->data_size == 0)
            return fail(cur, "illegal array type");
        if (t->kind == SD_COLLECTION && t->rank != 1)
            return fail(cur, "a collection type must have rank 1");
        if ((t->element == SD_ELEM_RAW) != (t->ref_count == 0) ||
            (t->element == SD_ELEM_REFS && (t->ref_count != 1 || t->data_size != 8)) ||
            (uint64_t)t->ref_count * 8 > t->data_size)
            return fail(cur, "array element kind and reference slots disagree");
        return 0;
    case SD_STRING:
        if (t->rank || t->element || t->data_size != 2 || t->ref_count)
            return fail(cur, "illegal string type");
        return 0;
    default: return fail(cur, "unknown type kind");
    }
}

static int references(sd_cursor *cur, uint64_t count, const uint8_t **at)
{
    if (count > left(cur) / 4)
        return fail(cur, "references truncated");
    return take(cur, (size_t)count * 4, at, "references truncated");
}

int sd_parse_record(sd_cursor *cur, const sd_type *types, uint32_t type_count, sd_record *r)
{
    const uint8_t *p;
    if (take(cur, 4, &p, "record truncated"))
        return -1;
    r->type_index = sd_u32(p);
    if (r->type_index >= type_count)
        return fail(cur, "record names a type index out of range");
    const sd_type *t = &types[r->type_index];
    r->refs = NULL;
    switch (t->kind) {
    case SD_OBJECT:
        r->elements = 1;
        if (take(cur, t->data_size, &r->data, "object data truncated"))
            return -1;
        return references(cur, t->ref_count, &r->refs);
    case SD_STRING:
        if (take(cur, 4, &p, "string length truncated"))
            return -1;
        r->elements = sd_u32(p);
        if (r->elements > left(cur) / 2)
            return fail(cur, "string characters truncated");
        return take(cur, (size_t)r->elements * 2, &r->data, "string characters truncated");
    default: { /* SD_ARRAY, SD_COLLECTION */
        if (take(cur, (size_t)t->rank * 8, &p, "array bounds truncated"))
            return -1;
        uint64_t n = 1;
        for (uint32_t d = 0; d < t->rank; d++) {
            r->lengths[d] = sd_u32(p + 4 * d);
            r->lower_bounds[d] = sd_i32(p + 4 * t->rank + 4 * d);
            if (r->lengths[d] > 0x7fffffffu)
                return fail(cur, "array length beyond the runtime's limit");
            if (r->lengths[d] && n > UINT64_MAX / r->lengths[d])
                return fail(cur, "array element count overflows");
            n *= r->lengths[d];
            /* lower bound + length must stay within int32 */
            if ((int64_t)r->lower_bounds[d] + r->lengths[d] > INT32_MAX + 1LL)
                return fail(cur, "array bounds overflow");
            if (t->kind == SD_COLLECTION && r->lower_bounds[d])
                return fail(cur, "a collection's lower bound must be 0");
        }
        r->elements = n;
        /* every element has at least one byte on the wire: allocation stays bounded */
        uint64_t per = t->element == SD_ELEM_REFS ? 4
                       : t->element == SD_ELEM_STRUCTS
                           ? (uint64_t)t->data_size + 4ull * t->ref_count
                           : t->data_size;
        if (n > left(cur) / per)
            return fail(cur, "array elements truncated");
        r->data = cur->p;
        /* interleaved: data, refs, data, refs ... (none: no refs) */
        if (t->element == SD_ELEM_STRUCTS)
            r->refs = n ? cur->p + t->data_size : NULL;
        else if (t->element == SD_ELEM_REFS)
            r->refs = cur->p;
        cur->p += n * per;
        return 0;
    }
    }
}

/* References of one parsed record must name records or be null. */
static int check_references(sd_cursor *cur, const sd_type *t, const sd_record *r, uint32_t records)
{
    if (!r->refs)
        return 0;
    int array_like = t->kind == SD_ARRAY || t->kind == SD_COLLECTION;
    uint64_t groups = array_like ? r->elements : 1;
    uint32_t per = array_like && t->element == SD_ELEM_REFS ? 1 : t->ref_count;
    size_t stride = t->element == SD_ELEM_STRUCTS ? t->data_size + 4u * t->ref_count : 4u * per;
    for (uint64_t g = 0; g < groups; g++) {
        const uint8_t *refs = r->refs + g * stride;
        for (uint32_t k = 0; k < per; k++) {
            int32_t ref = sd_i32(refs + 4 * k);
            if (ref < -1 || (ref >= 0 && (uint32_t)ref >= records))
                return fail(cur, "reference to a record that does not exist");
        }
    }
    return 0;
}

int sd_validate(const uint8_t *buf, size_t len, sd_header *h, sd_place **places, size_t room,
                const char **why)
{
    sd_cursor cur = {buf, buf + len, NULL};
    sd_type *types = NULL;
    sd_place *index = NULL, *lent = places ? *places : NULL;
    if (sd_parse_header(&cur, h))
        goto bad;
    if (h->total_bytes != len) {
        cur.error = "length in the header differs from the bytes received";
        goto bad;
    }
    if (h->type_count > SD_MAX_TYPES || h->type_count > left(&cur) / 17) {
        cur.error = "more types than the message can hold";
        goto bad;
    }
    if (h->record_count > left(&cur) / 4) {
        cur.error = "more records than the message can hold";
        goto bad;
    }
    if (h->root < -1 || (h->root >= 0 && (uint32_t)h->root >= h->record_count) ||
        (h->root == -1 && h->record_count)) {
        cur.error = "root record out of range";
        goto bad;
    }
    types = malloc((h->type_count ? h->type_count : 1) * sizeof *types);
    if (!types) {
        cur.error = "out of memory";
        goto bad;
    }
    for (uint32_t i = 0; i < h->type_count; i++)
        if (sd_parse_type(&cur, &types[i]))
            goto bad;
    /* (record_count is at most a quarter of the bytes: the index is at most 8 times the message) */
    if (places && h->record_count &&
        !(index = lent && h->record_count <= room
                      ? lent
                      : malloc((size_t)h->record_count * sizeof *index))) {
        cur.error = "out of memory";
        goto bad;
    }
    for (uint32_t i = 0; i < h->record_count; i++) {
        /* an object, whole in the message, with references in range (most records): placed
         * here, without the general parse */
        uint32_t ti = left(&cur) >= 4 ? sd_u32(cur.p) : h->type_count;
        if (ti < h->type_count && types[ti].kind == SD_OBJECT &&
            left(&cur) - 4 >= types[ti].data_size + 4ull * types[ti].ref_count) {
            const uint8_t *data = cur.p + 4, *refs = data + types[ti].data_size;
            uint32_t k = 0;
            for (; k < types[ti].ref_count; k++) {
                int32_t ref = sd_i32(refs + 4 * k);
                if (ref < -1 || (ref >= 0 && (uint32_t)ref >= h->record_count))
                    break;
            }
            if (k == types[ti].ref_count) {
                if (index)
                    index[i] = (sd_place){data, refs, 1, ti};
                cur.p = refs + 4u * types[ti].ref_count;
                continue;
            }
        }
        sd_record r;
        if (sd_parse_record(&cur, types, h->type_count, &r) ||
            check_references(&cur, &types[r.type_index], &r, h->record_count))
            goto bad;
        if (index)
            index[i] = (sd_place){r.data, r.refs, r.elements, r.type_index};
    }
    if (cur.p != cur.end) {
        cur.error = "bytes after the last record";
        goto bad;
    }
    free(types);
    if (places)
        *places = index;
    return 0;
bad:
    if (index != lent)
        free(index);
    free(types);
    if (why)
        *why = cur.error;
    return -1;
}
