/* thread_blocks.h — blocks that belong to one thread at a time and outlive it: a thread claims a
 * block that an ended thread gave back, or adds a new one to the pool's list. Blocks are never
 * freed, so a reader walking the list (counters summed, a hang watch looking at every thread)
 * never meets a freed one; a thread's values stay in its block for the next owner.
 *
 * Dependency-free and MPI-free (in mpc/, the lowest layer, with error_record.h), for gc_hooks'
 * counter blocks and the hang watch's slots. Internal to the core (not installed). */
#ifndef THREAD_BLOCKS_H
#define THREAD_BLOCKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/* The first member of every block of a pool. */
typedef struct thread_block {
    _Atomic int owned; /* a thread holds it */
    struct thread_block *next;
} thread_block;

typedef struct thread_blocks {
    thread_block *_Atomic all; /* every block made, newest first */
    pthread_key_t release_key; /* gives a thread's block back as the thread exits */
    _Atomic int key_made;
} thread_blocks;

/* A block of size bytes (a struct whose first member is a thread_block) for the calling thread,
 * given back when it exits: one an ended thread gave back, as that thread left it, else a new
 * one, zeroed. Aborts when out of memory (a few dozen bytes per thread: nothing sensible remains
 * then). */
thread_block *thread_block_claim(thread_blocks *pool, size_t size);

#endif
