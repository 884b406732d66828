/* fuzz_sd_validate — libFuzzer target over the SDTO validator: any input must be accepted or
 * rejected with a reason, never crash or read outside the buffer (ASan, UBSan); an accepted
 * one's record index lies inside the message, as the reader trusts it to. */
#include "sd_format.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sd_header h;
    const char *why = NULL;
    sd_place *places = NULL;
    if (sd_validate(data, size, &h, &places, &why) != 0) {
        if (!why || places)
            abort();
        return 0;
    }
    for (uint32_t i = 0; i < h.record_count; i++)
        if (places[i].data < data || places[i].data > data + size || places[i].elements > size ||
            (places[i].refs && (places[i].refs < data || places[i].refs > data + size)))
            abort();
    free(places);
    return 0;
}
