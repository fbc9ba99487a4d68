/* glex_emu_error.c - error codes and the per-thread text of the last error. */
#include "glex_emu_internal.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

int glex_set_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

const char *glex_last_error(void)
{
    return last_error;
}

const char *glex_strerror(int code)
{
    switch (code) {
    case GLEX_OK: return "success";
    case GLEX_EINVAL: return "invalid argument or field out of range";
    case GLEX_ENOTSUP: return "operation/type not offloadable";
    case GLEX_EAGAIN: return "resource temporarily full, retry";
    case GLEX_ETIMEDOUT: return "timed out waiting for a packet or credit";
    case GLEX_ENOMEM: return "out of memory";
    case GLEX_ESYS: return "system call failed";
    case GLEX_EMISMATCH: return "shared segment does not match (magic, ABI, size or parameters)";
    case GLEX_EBUSY: return "resource busy";
    case GLEX_ENOENT: return "no such object";
    case GLEX_EDEAD: return "a peer process died or left the job";
    case GLEX_ESIZE: return "sender and receiver disagree on the message size";
    case GLEX_ETRUNC: return "more data arrived than the receiver expects";
    case GLEX_ENOSPC: return "a table is full";
    default: return "unknown error";
    }
}
