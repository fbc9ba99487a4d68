/* glex_emu_env.c - the one parser of GLEX_* environment variables: every
 * layer (NIC parameters, schedule compiler, netmod) reads its variables
 * here, so a bad value is refused the same way everywhere: the message names
 * the variable, the value and what is allowed. */
#include "glex_emu_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *glex_env(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? s : NULL;
}

static int to_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || s[0] == '+' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int glex_env_uint(const char *name, uint64_t lo, uint64_t hi, uint64_t *out)
{
    const char *s = glex_env(name);
    if (!s || !to_uint(s, lo, hi, out))
        return GLEX_OK;
    return glex_error(GLEX_EINVAL, "%s=%s is invalid: allowed range %llu..%llu", name, s,
                      (unsigned long long)lo, (unsigned long long)hi);
}

int glex_env_uint_auto(const char *name, uint64_t lo, uint64_t hi, int64_t *out)
{
    const char *s = glex_env(name);
    uint64_t v;
    if (!s)
        return GLEX_OK;
    if (!strcmp(s, "auto")) {
        *out = -1;
        return GLEX_OK;
    }
    if (!to_uint(s, lo, hi, &v)) {
        *out = (int64_t)v;
        return GLEX_OK;
    }
    return glex_error(GLEX_EINVAL, "%s=%s is invalid: allowed auto or %llu..%llu", name, s,
                      (unsigned long long)lo, (unsigned long long)hi);
}

int glex_env_word(const char *name, const char *const *words, int *out)
{
    const char *s = glex_env(name);
    if (!s)
        return GLEX_OK;
    for (int i = 0; words[i]; i++)
        if (!strcmp(s, words[i])) {
            *out = i;
            return GLEX_OK;
        }
    char allowed[256] = "";
    size_t len = 0;
    for (int i = 0; words[i] && len < sizeof allowed; i++)
        len += (size_t)snprintf(allowed + len, sizeof allowed - len, "%s%s",
                                i == 0 ? "" : words[i + 1] ? ", " : " or ", words[i]);
    return glex_error(GLEX_EINVAL, "%s=%s is invalid: allowed %s", name, s, allowed);
}
