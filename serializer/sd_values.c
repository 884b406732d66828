/* sd_values.c — see sd_values.h. The rules are the runtime's own (Mono 6.8's corlib): what its
 * constructors and arithmetic accept, so that every value received behaves as one made there.
 *   bool: 0 or 1 (C# makes no other; a byte 2 is true to `if` and false to `== true`).
 *   decimal: only the sign bit and the scale byte set in the flags word, scale <= 28 (what
 *     `new decimal(int[])` accepts; other flags make `d + 1m` wrong and GetBits round trips fail).
 *   DateTime: the 62 low bits, ticks, at most MaxValue.Ticks; the top two bits are the kind, and
 *     all four values are ones the runtime makes (the fourth: a local time in a DST overlap).
 *   DateTimeOffset: its UTC DateTime as `ValidateDate` makes it (kind 0, ticks in range), an
 *     offset within 14 hours either way, and the local time (UTC + offset) in DateTime's range.
 * Any bytes are a valid TimeSpan, char, enum, integer or floating-point number. */
#include "sd_values.h"

#include <stdio.h>
#include <string.h>

#define MAX_TICKS 3155378975999999999ull /* DateTime.MaxValue.Ticks */
#define TICKS_MASK 0x3FFFFFFFFFFFFFFFull
#define TICKS_PER_MINUTE 600000000ll
#define MAX_OFFSET_MINUTES 840 /* 14 hours */
#define DECIMAL_SIGN 0x80000000u
#define DECIMAL_SCALE 0x00FF0000u
#define DECIMAL_MAX_SCALE 28u

static uint32_t u32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t u64_at(const uint8_t *p) { return u32_at(p) | (uint64_t)u32_at(p + 4) << 32; }

static int16_t i16_at(const uint8_t *p) { return (int16_t)(uint16_t)(p[0] | p[1] << 8); }

/* A DateTimeOffset's local time in ticks: within DateTime's range? */
static int local_in_range(uint64_t utc_ticks, int16_t minutes)
{
    int64_t local = (int64_t)utc_ticks + (int64_t)minutes * TICKS_PER_MINUTE;
    return local >= 0 && (uint64_t)local <= MAX_TICKS;
}

static int valid(const rt_value_check *v, const uint8_t *data)
{
    const uint8_t *at = data + v->offset;
    switch (v->kind) {
    case RT_VALUE_BOOL: return *at <= 1;
    case RT_VALUE_DECIMAL: {
        uint32_t flags = u32_at(at);
        return !(flags & ~(DECIMAL_SIGN | DECIMAL_SCALE)) &&
               (flags & DECIMAL_SCALE) >> 16 <= DECIMAL_MAX_SCALE;
    }
    case RT_VALUE_DATETIME: return (u64_at(at) & TICKS_MASK) <= MAX_TICKS;
    case RT_VALUE_DATETIME_OFFSET: {
        uint64_t utc = u64_at(at); /* kind 0: the word is the ticks */
        int16_t minutes = i16_at(data + v->offset2);
        return utc <= MAX_TICKS && minutes >= -MAX_OFFSET_MINUTES &&
               minutes <= MAX_OFFSET_MINUTES && local_in_range(utc, minutes);
    }
    }
    return 0;
}

/* The first of n bytes that is not a bool (0 or 1), or n: eight at a time (a bool[] of 16 Mi
 * elements took 30 ms checked element by element, ~1 ms so). */
static uint64_t first_non_bool(const uint8_t *b, uint64_t n)
{
    uint64_t i = 0;
    for (uint64_t w; i + 8 <= n; i += 8) {
        memcpy(&w, b + i, 8);
        if (w & 0xFEFEFEFEFEFEFEFEull)
            break;
    }
    for (; i < n; i++)
        if (b[i] > 1)
            return i;
    return n;
}

uint64_t sd_values_scan(const rt_class_plan *p, const uint8_t *data, uint64_t n, size_t stride,
                        uint32_t *check)
{
    *check = 0;
    if (p->nvalues == 1 && p->values[0].kind == RT_VALUE_BOOL && stride == 1 &&
        !p->values[0].offset)
        return first_non_bool(data, n); /* bool[], List<bool> */
    for (uint64_t e = 0; e < n; e++)
        for (uint32_t i = 0; i < p->nvalues; i++)
            if (!valid(&p->values[i], data + e * stride)) {
                *check = i;
                return e;
            }
    return n;
}

void sd_value_text(const rt_value_check *v, const uint8_t *data, char *out, size_t cap)
{
    const uint8_t *at = data + v->offset;
    switch (v->kind) {
    case RT_VALUE_BOOL: snprintf(out, cap, "a bool byte %u (a bool is 0 or 1)", *at); return;
    case RT_VALUE_DECIMAL: {
        uint32_t flags = u32_at(at);
        if (flags & ~(DECIMAL_SIGN | DECIMAL_SCALE))
            snprintf(out, cap,
                     "a decimal whose flags 0x%08X set reserved bits (only the sign bit and the "
                     "scale byte may be set)",
                     flags);
        else
            snprintf(out, cap, "a decimal with scale %u (at most %u)",
                     (flags & DECIMAL_SCALE) >> 16, DECIMAL_MAX_SCALE);
        return;
    }
    case RT_VALUE_DATETIME:
        snprintf(out, cap, "a DateTime of %llu ticks (at most %llu, DateTime.MaxValue)",
                 (unsigned long long)(u64_at(at) & TICKS_MASK), MAX_TICKS);
        return;
    case RT_VALUE_DATETIME_OFFSET: {
        uint64_t utc = u64_at(at);
        int16_t minutes = i16_at(data + v->offset2);
        if (utc >> 62)
            snprintf(out, cap, "a DateTimeOffset whose UTC DateTime has kind bits %u (always 0)",
                     (unsigned)(utc >> 62));
        else if (utc > MAX_TICKS)
            snprintf(out, cap,
                     "a DateTimeOffset whose UTC time is a DateTime of %llu ticks (at most %llu, "
                     "DateTime.MaxValue)",
                     (unsigned long long)utc, MAX_TICKS);
        else if (minutes < -MAX_OFFSET_MINUTES || minutes > MAX_OFFSET_MINUTES)
            snprintf(out, cap,
                     "a DateTimeOffset with an offset of %d minutes (at most %d, 14 hours, either "
                     "way)",
                     minutes, MAX_OFFSET_MINUTES);
        else
            snprintf(out, cap,
                     "a DateTimeOffset whose local time, %llu UTC ticks and an offset of %d "
                     "minutes, lies outside DateTime's range",
                     (unsigned long long)utc, minutes);
        return;
    }
    }
    snprintf(out, cap, "a value of unknown kind %d", (int)v->kind);
}
