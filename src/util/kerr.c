#include "util/kerr.h"

#include <stddef.h>

/* Codes run from -1 without gaps, so the name is an index away. */
static const char *const kerr_names[] = {
#define KERR_NAME_(name, code) [(code) + 1] = #name,
    KERR_LIST(KERR_NAME_)
#undef KERR_NAME_
};

const char *kerr_name(int16_t code)
{
    size_t i = (size_t)((int)code + 1);
    if (code < -1 || i >= sizeof(kerr_names) / sizeof(kerr_names[0]) || !kerr_names[i])
        return "UNKNOWN_ERROR_CODE";
    return kerr_names[i];
}
