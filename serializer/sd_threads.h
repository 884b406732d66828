/* sd_threads.h — what each side of the serializer keeps per thread between calls, released when
 * the runtime detaches the thread (sd_thread_stopped in serializer.h). Internal to serializer/. */
#ifndef SD_THREADS_H
#define SD_THREADS_H

/* Frees the writer's kept work arrays (sd_writer.c). */
void sd_writer_thread_stopped(void);

#endif
