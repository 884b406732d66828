/* fuzz_sd_validate — libFuzzer target over the SDTO validator: any input must be accepted or
 * rejected with a reason, never crash or read outside the buffer (ASan, UBSan). */
#include "sd_format.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sd_header h;
    const char *why = NULL;
    if (sd_validate(data, size, &h, &why) != 0 && !why)
        abort();
    return 0;
}
