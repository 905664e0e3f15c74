/* nn_file.h - the one guarded reader for every file the project reads: the
 * model, its tensors (.pb), labels and priors files of the decoders.
 *
 * A path taken from a user or a model may name anything: a FIFO (open()
 * would wait for a writer forever), /dev/zero (reads never end), a directory,
 * a symlink loop.  Every read here:
 *   - opens with O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC: a FIFO cannot block
 *     open(), a terminal does not become the controlling one;
 *   - accepts regular files only (fstat of the open descriptor, so what is
 *     checked is what is read) and says what the path is otherwise ("is a
 *     FIFO", "is a character device", "is a directory", ...);
 *   - refuses a file larger than the caller's cap before allocating;
 *   - for text: refuses NUL bytes (a file of zeros is not N blank lines),
 *     lines longer than a cap and more lines than a cap.
 * Open errors are told apart: "does not exist", "is a dangling symbolic
 * link", "symbolic link loop", "path is too long", "permission denied".
 *
 * Errors: NN_ERR_INVALID_ARG (NULL or zero cap), NN_ERR_IO (cannot open,
 * not a regular file, outside the directory it must stay in, read error),
 * NN_ERR_LIMIT (over a cap: bytes, line length, line count), NN_ERR_PARSE
 * (a NUL byte in a text file), NN_ERR_NOMEM.  err->msg names the path (long paths shortened).
 *
 * Memory comes from the runtime's allocator hooks (nn_set_allocator); every
 * block returned here is caller-owned and freed with nn_file_free().
 * Thread-safe: no global state.
 */
#ifndef NN_FILE_H
#define NN_FILE_H

#include <stddef.h>

#include "nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read the whole regular file at `path`, at most max_bytes (> 0) bytes.
 * On success *data holds *size bytes followed by one NUL byte (not counted),
 * so text can be parsed in place; caller-owned, nn_file_free().  On failure
 * *data is NULL and *size 0. */
nn_status nn_file_read(const char *path, size_t max_bytes, void **data, size_t *size,
                       nn_error *err);

/* As nn_file_read, and the file's real path (every symlink resolved) must lie
 * inside the real path of `dir`: checked before opening, and again on the
 * open descriptor (so a symlink swapped in between cannot redirect the read).
 * A path that resolves outside is refused without being opened. */
nn_status nn_file_read_inside(const char *dir, const char *path, size_t max_bytes, void **data,
                              size_t *size, nn_error *err);

/* Caps of the line reader; a field left 0 takes its default. */
typedef struct nn_text_limits {
  size_t max_bytes;       /* the whole file; default 16 MiB */
  size_t max_line_bytes;  /* one line, without its end; default 64 KiB */
  size_t max_lines;       /* default 1,000,000 */
} nn_text_limits;

/* Read a text file as lines (lim NULL: the defaults).  Lines end at '\n'; a
 * '\r' before it (CRLF files) is dropped; a last line without '\n' counts;
 * an empty file has 0 lines.  On success *lines is an array of *n_lines
 * NUL-terminated strings, array and text in one caller-owned block freed with
 * one nn_file_free(*lines).  On failure *lines is NULL and *n_lines 0; the
 * message of a NUL byte, an over-long line or too many lines gives the line
 * number. */
nn_status nn_file_read_lines(const char *path, const nn_text_limits *lim, char ***lines,
                             size_t *n_lines, nn_error *err);

/* Free a block returned above.  NULL is a no-op. */
void nn_file_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
