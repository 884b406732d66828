/* config.c — reading the environment variables of mpc_config.h's table. */
#include "mpc_config.h"

#include <stdio.h>
#include <stdlib.h>

static const struct {
    const char *name, *fallback;
} variables[MPC_CONFIG_COUNT] = {
#define MPC_CONFIG_ROW(id, name, fallback, meaning) [MPC_CONFIG_##id] = {name, fallback},
    MPC_CONFIG_VARIABLES(MPC_CONFIG_ROW)
#undef MPC_CONFIG_ROW
};

const char *mpc_config_name(mpc_config_id id) { return variables[id].name; }

const char *mpc_config_string(mpc_config_id id)
{
    const char *value = getenv(variables[id].name);
    return value && *value ? value : variables[id].fallback;
}

double mpc_config_seconds(mpc_config_id id)
{
    const char *value = getenv(variables[id].name);
    double fallback = strtod(variables[id].fallback, NULL); /* the table's, a plain number */
    if (!value || !*value)
        return fallback;
    char *end = NULL;
    double parsed = strtod(value, &end);
    if (end && *end == '\0' && parsed >= 0)
        return parsed;
    fprintf(stderr, "motor: %s='%s' is not a number of seconds >= 0; using %.1f\n",
            variables[id].name, value, fallback);
    return fallback;
}
