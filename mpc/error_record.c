/* error_record.c — the per-thread error record. See error_record.h. */
#include "error_record.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A record set aside by error_keep. */
typedef struct kept {
    int code;
    const char *argument;
    int has_detail;
    struct kept *next;
    char detail[]; /* has_detail: the text */
} kept;

typedef struct record {
    int code; /* 0: empty */
    const char *argument;
    int has_detail;
    char detail[ERROR_DETAIL_BYTES];
    char scratch[ERROR_SCRATCH_BYTES];
    kept *oldest, *newest; /* error_keep's, in the order kept */
} record;

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_made;

static void drop_kept(record *r)
{
    while (r->oldest) {
        kept *k = r->oldest;
        r->oldest = k->next;
        free(k);
    }
    r->newest = NULL;
}

static void free_record(void *p)
{
    drop_kept(p);
    free(p);
}

static void make_key(void) { key_made = pthread_key_create(&key, free_record) == 0; }

/* The thread's record; made when create is set and it has none yet. */
static record *thread_record(int create)
{
    pthread_once(&key_once, make_key);
    if (!key_made)
        return NULL;
    record *r = pthread_getspecific(key);
    if (!r && create && (r = calloc(1, sizeof *r)) && pthread_setspecific(key, r) != 0) {
        free(r);
        r = NULL;
    }
    return r;
}

int error_record(int code, const char *argument, const char *format, ...)
{
    record *r = thread_record(1);
    if (!r)
        return code;
    r->code = code;
    r->argument = argument;
    r->has_detail = format != NULL;
    if (format) {
        va_list ap;
        va_start(ap, format);
        int n = vsnprintf(r->detail, sizeof r->detail, format, ap);
        va_end(ap);
        if (n >= (int)sizeof r->detail) /* cut: say so */
            memcpy(r->detail + sizeof r->detail - 4, "...", 4);
    }
    return code;
}

int error_blame(int code, const char *argument)
{
    record *r = thread_record(0);
    if (r && r->code == code)
        r->argument = argument;
    return code;
}

int error_last(int code, const char **argument, const char **detail)
{
    record *r = thread_record(0);
    if (!r || r->code == 0 || r->code != code)
        return 0;
    *argument = r->argument;
    *detail = r->has_detail ? r->detail : NULL;
    return 1;
}

void error_clear(void)
{
    record *r = thread_record(0);
    if (r)
        r->code = 0;
}

char *error_scratch(void)
{
    record *r = thread_record(1);
    return r ? r->scratch : NULL;
}

int error_keep(int code)
{
    record *r = thread_record(1);
    if (!r)
        return 0;
    int recorded = r->code == code;
    size_t text = recorded && r->has_detail ? strlen(r->detail) + 1 : 0;
    kept *k = malloc(sizeof *k + text);
    if (!k)
        return 0;
    k->code = code;
    k->argument = recorded ? r->argument : NULL;
    k->has_detail = text != 0;
    k->next = NULL;
    if (text)
        memcpy(k->detail, r->detail, text);
    if (r->newest)
        r->newest->next = k;
    else
        r->oldest = k;
    r->newest = k;
    return 1;
}

int error_unkeep(void)
{
    record *r = thread_record(0);
    if (!r || !r->oldest)
        return 0;
    kept *k = r->oldest;
    r->oldest = k->next;
    if (!r->oldest)
        r->newest = NULL;
    r->code = k->code;
    r->argument = k->argument;
    r->has_detail = k->has_detail;
    if (k->has_detail)
        memcpy(r->detail, k->detail, strlen(k->detail) + 1);
    int code = k->code;
    free(k);
    return code;
}

void error_keep_clear(void)
{
    record *r = thread_record(0);
    if (r)
        drop_kept(r);
}

void text_append(char *out, size_t cap, const char *format, ...)
{
    size_t used = strlen(out);
    if (used + 1 >= cap)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(out + used, cap - used, format, args);
    va_end(args);
}
