/* nn_limits.h - the default of every limit the runtime enforces, and why.
 *
 * Like SQLite's sqliteLimit.h: one place for the numbers, each with the
 * reason it has that value.  They are the defaults of nn_limits (nn.h), which
 * an application may lower or raise per session; code that meets a limits
 * struct left at 0 (a caller that filled it by hand) falls back to these,
 * never to a number of its own.  A hostile model must hit one of them before
 * it can make the process allocate, loop or recurse without bound.
 */
#ifndef NN_LIMITS_INTERNAL_H
#define NN_LIMITS_INTERNAL_H

#include <stdint.h>

/* Elements of any one tensor (input, output, intermediate, constant, or an
 * attribute tensor).  2^31: the largest count every kernel's int64 index
 * arithmetic and every shader's 32-bit invocation index stays exact for, and
 * 8 GiB of float32 -- beyond any video model this project targets. */
#define NN_LIMIT_TENSOR_ELEMS ((int64_t)1 << 31)

/* Bytes of initializers plus constants folded or packed at plan time.  4 GiB:
 * twice the largest model the 2 GiB protobuf limit lets in, so constant
 * folding of a legal model fits, and a bomb (a Tile or ConstantOfShape that
 * folds into terabytes) does not. */
#define NN_LIMIT_WEIGHTS_BYTES ((int64_t)4 << 30)

/* Bytes of the planned arena, any one workspace, and the session's own input
 * and output buffers together.  8 GiB: room for 4K-resolution CNNs at batch
 * 16, still below what a 24 GiB machine can give without swapping. */
#define NN_LIMIT_ARENA_BYTES ((int64_t)8 << 30)

/* Nodes of the graph.  A million: ten times the largest exported
 * transformers; the loader's per-node arrays stay bounded (tens of MiB). */
#define NN_LIMIT_NODES 1000000

/* Longest dependency chain.  100,000: the topological sort is iterative, but
 * a chain this long is no real model, and passes that walk producers may
 * recurse over it. */
#define NN_LIMIT_GRAPH_DEPTH 100000

/* Bytes of a model file or buffer.  2 GiB: protobuf's own message limit;
 * larger weights come as external data, bounded by NN_LIMIT_WEIGHTS_BYTES. */
#define NN_LIMIT_MODEL_BYTES ((int64_t)2 << 30)

/* Lines of a text file read through nn_file (labels, priors).  A million: a
 * label file is ImageNet's 1,000 or 21,841 lines; this bounds the index array
 * a hostile file can make the reader build (file.c). */
#define NN_LIMIT_TEXT_LINES ((size_t)1000000)

/* Bytes of the strings a session's kernels make in one run (StringConcat,
 * StringSplit, ..., and the NUL-terminated copies RegexFullMatch matches;
 * nn_strings.h) plus those folded at plan time.  1 GiB:
 * text models handle sentences and labels, kilobytes per run; the bound
 * stops a hostile graph (a StringConcat of a string with itself, repeated)
 * before it doubles its way through memory. */
#define NN_LIMIT_STRING_BYTES ((int64_t)1 << 30)

/* Bytes of a RegexFullMatch pattern, and the largest {n,m} count in it.
 * 4096 bytes is pages of pattern; 1000 is RE2's own repeat limit (the
 * reference engine of the op).  libc's regcomp expands counted repeats, so
 * without these a short hostile pattern costs gigabytes to compile. */
#define NN_LIMIT_REGEX_BYTES 4096
#define NN_LIMIT_REGEX_REPEAT 1000

/* Nesting of subgraphs (If / Loop / Scan bodies inside bodies).  16: real
 * exports nest two or three levels (a tf2onnx while loop holding a cond);
 * loading, planning and running recurse once per level, so the bound keeps
 * the stack small whatever the model says.  The protobuf pre-scan's 100
 * message levels (loader.c) would allow about 33. */
#define NN_LIMIT_SUBGRAPH_DEPTH 16

/* Iterations of one Loop run.  A million: tf2onnx writes INT64_MAX as the
 * trip count of every while loop and relies on the condition; a real loop
 * (a decoder's steps, a detector's boxes) runs thousands of times, and a
 * trivial body runs a million times in about a second, so a hostile model
 * whose condition never turns false fails in seconds, not never. */
#define NN_LIMIT_LOOP_ITERATIONS ((int64_t)1000000)

/* Items of one sequence (SequenceInsert in a loop, SplitToSequence).  A
 * million: each item is a tensor header (about 100 bytes) besides its data,
 * so the headers of a hostile sequence stay near 100 MiB; the items' bytes
 * are bounded by the arena and weights limits. */
#define NN_LIMIT_SEQUENCE_ITEMS 1000000

#endif
