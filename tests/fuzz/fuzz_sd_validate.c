/* fuzz_sd_validate — libFuzzer target over the SDTO validator: any input must be accepted or
 * rejected with a reason, never crash or read outside the buffer (ASan, UBSan); an accepted
 * one's record index lies inside the message, as the reader trusts it to. */
#include "sd_format.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sd_header h;
    const char *why = NULL;
    /* inputs of odd length lend the validator room for 4 records, as the reader lends its kept
     * index: used when the records fit, left as lent on failure */
    sd_place room[4];
    sd_place *lent = size % 2 ? room : NULL, *places = lent;
    if (sd_validate(data, size, &h, &places, lent ? 4 : 0, &why) != 0) {
        if (!why || places != lent)
            abort();
        return 0;
    }
    if (lent && h.record_count && (places == lent) != (h.record_count <= 4))
        abort();
    for (uint32_t i = 0; i < h.record_count; i++)
        if (places[i].data < data || places[i].data > data + size || places[i].elements > size ||
            (places[i].refs && (places[i].refs < data || places[i].refs > data + size)))
            abort();
    if (places != lent)
        free(places);
    return 0;
}
