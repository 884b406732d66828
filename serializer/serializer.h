/* serializer.h — the structured data transport's serializer (FORMAT.md): writes an object
 * graph into native bytes and reads it back under the allow-list rules of API.md. Raw
 * internal-call context (GC-unsafe). The writer allocates no managed memory, so no collection
 * can move the graph while it is walked. */
#ifndef SERIALIZER_H
#define SERIALIZER_H

#include "mpc_errors.h" /* the shared codes: MPC_OK, MPC_ERR_NO_MEMORY */
#include "rt_errors.h"
#include "sd_errors.h"

#include <mono/metadata/object.h>
#include <stddef.h>
#include <stdint.h>

/* Whether old objects can move (major collections evacuate): when they cannot, a write whose
 * objects are all old lets collections run without starting over. Default: they can. */
void sd_set_old_generation_moves(int moves);

/* A growable native byte buffer. */
typedef struct sd_buffer {
    uint8_t *data;
    size_t len, cap;
} sd_buffer;

void sd_buffer_free(sd_buffer *b);

/* On failure each function below returns the code and leaves the thread's error record
 * (error_record.h) saying why, naming the object that cannot travel or what is wrong with the
 * bytes. */

/* Writes the graph under root (NULL: the null graph) into out (reset first). Returns MPC_OK,
 * SD_ERR_GRAPH for a graph that cannot travel, MPC_ERR_NO_MEMORY, or RT_ERR_RUNTIME when
 * collections kept interrupting the write. */
int sd_write(MonoObject *root, sd_buffer *out);

/* The bytes sd_write would write for the graph under root, without writing them. */
int sd_measure(MonoObject *root, size_t *bytes);

/* Appends one piece of a split representation (FORMAT.md): a whole message whose root is the
 * zero-based array of root's elements [first, first+count) (root a one-dimensional array). */
int sd_write_piece(MonoObject *root, size_t first, size_t count, sd_buffer *out);

/* The objects of the graph under root in the order a write numbers them (the root first, then
 * as found through travelling references), stored into order[0..) as far as it is long; *count
 * is how many the graph holds. A graph that cannot travel stores nothing (*count 0). */
int sd_record_order(MonoObject *root, MonoArray *order, size_t *count);

/* Reads a message whose root must be assignable to expected. On success *result is the root
 * (NULL for the null graph). SD_ERR_SERIALIZATION for anything invalid, hostile or not
 * allowed for expected; no object of a type outside the allow-list is ever created. */
int sd_read(const uint8_t *buf, size_t len, MonoClass *expected, MonoObject **result);

/* sd_read, reusing the objects of the graph under reuse (non-NULL) where the message's record of
 * the same number (sd_record_order) has the same class — arrays the same bounds — instead of
 * creating them: their data is overwritten, their travelling references set (unmarked reference
 * fields keep their values). Strings, boxed values and collections are never reused, and a
 * message holding a collection reuses nothing. Every check runs, and every new object is made,
 * before the first reused object is written, and nothing after that can fail: a failed read
 * leaves reuse as it was, whatever failed (memory included). */
int sd_read_into(const uint8_t *buf, size_t len, MonoClass *expected, MonoObject *reuse,
                 MonoObject **result);

/* The receive budget of the calling thread's reads (reference.md, "Receive budget"): a read
 * whose graph would allocate more than `bytes` (0: no such cap) or more than `multiple` times the
 * message's length (0: none) is refused with SD_ERR_SERIALIZATION before it allocates any object
 * (sd_reader.c's budget section says what is counted). 0 and 0, the default: no budget. System.MP
 * sets it around the reads of a communicator or process that has one. */
void sd_set_budget(int64_t bytes, double multiple);

/* System.MP's SdtoFactories.Make, called through a function pointer (a reverse P/Invoke:
 * ~1 µs cheaper than mono_runtime_invoke): makes every record's object of a large message in
 * JIT-compiled code, copies the data where its factory is compiled to, and links those it can
 * (sd_reader.c says what the arrays hold). holder is the pinned GC handle of the object[] to fill;
 * places the reader's record index (count records: SD_PLACE_LAYOUT); factories, linkers and
 * fillers give each type's numbers (factories 0: the objects exist, a graph reused, which the
 * fillers overwrite where they can). 0 on success, -1 when it failed (it catches every
 * exception: none may cross into C). */
typedef int32_t (*sd_maker)(intptr_t holder, intptr_t places, int32_t count, intptr_t factories,
                            intptr_t linkers, intptr_t fillers);

/* Where the reader's record index (sd_format.h's sd_place) keeps a record's pieces, as
 * SdtoFactories.Place reads them, and the largest string or array a factory copies itself:
 * asserted against the struct and the reader's constant in sd_reader.c; the contract reports the
 * rows and ContractTest compares them with C#. */
#define SD_PLACE_LAYOUT(X)                 \
    X(SdtoFactories.Place, SIZE, 32)       \
    X(SdtoFactories.Place, DATA, 0)        \
    X(SdtoFactories.Place, REFS, 8)        \
    X(SdtoFactories.Place, ELEMENTS, 16)   \
    X(SdtoFactories.Place, TYPE_INDEX, 24) \
    X(SdtoFactories.Place, COPY_BYTES, 64)

/* Sets the maker (NULL: large reads make their objects through the embedding API). */
void sd_set_maker(sd_maker maker);

/* Binds the serializer to System.MP (once, from C#): attribute is its TransportableAttribute
 * class, which also finds the assembly of the managed methods below. */
void sd_install(MonoClass *attribute);

/* The managed methods of System.MP the serializer calls: class, method, parameter count. The one
 * list: opi_contract reports it and ContractTest checks each against System.MP. */
#define SD_MANAGED_METHODS(X)                                   \
    X(COLLECTION_ELEMENT_TYPE, SdtoCollections, ElementType, 1) \
    X(COLLECTIONS_REBUILD, SdtoCollections, Rebuild, 2)         \
    X(FACTORY_REGISTER, SdtoFactories, Register, 3)             \
    X(FILLER_REGISTER, SdtoFactories, RegisterFiller, 3)        \
    X(LINKER_REGISTER, SdtoFactories, RegisterLinker, 2)        \
    X(TYPE_INSTANTIATE, SdtoTypes, Instantiate, 2)

typedef enum sd_managed_method {
#define SD_MANAGED_ID(id, klass, method, nargs) SD_##id,
    SD_MANAGED_METHODS(SD_MANAGED_ID)
#undef SD_MANAGED_ID
        SD_MANAGED_COUNT
} sd_managed_method;

/* That method, found once (a race finds the same one); NULL when System.MP lacks it. */
MonoMethod *sd_managed(sd_managed_method which);

/* Releases what the calling thread keeps between reads and writes (a pinned holder array, the
 * writer's work arrays): called as the runtime detaches the thread (gch_install), so no pin or
 * buffer outlives it. */
void sd_thread_stopped(void);

#endif
