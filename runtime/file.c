/* file.c - the guarded file reader (nn_file.h): regular files only, size and
 * line caps, errors that say what the path really is.
 *
 * nn_file_open() is the one place that opens a file for reading; the loader
 * uses it for external data, session.c (through nn_file_read) for the model,
 * nn-run and the decoders for everything else. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "include/nn_file.h"
#include "nn_internal.h"
#include "nn_limits.h"

#define TEXT_DEFAULT_BYTES ((size_t)16 << 20)
#define TEXT_DEFAULT_LINE ((size_t)64 << 10)
#define TEXT_DEFAULT_LINES NN_LIMIT_TEXT_LINES

/* Paths in messages: a hostile 5000-byte path would crowd out the reason in
 * the 512-byte message; its head and tail name the place and the file. */
#define SHORT_PATH 160
static const char *short_path(const char *path, char buf[SHORT_PATH]) {
  size_t n = strlen(path);
  if (n < SHORT_PATH)
    return path;
  snprintf(buf, SHORT_PATH, "%.80s...%s", path, path + n - 64);
  return buf;
}

static const char *kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "a special file";
}

/* Why open() or realpath() failed on `path`, told apart: a loop or an
 * over-long path is not "does not exist". */
static nn_status open_error(const char *path, int e, nn_error *err) {
  char sb[SHORT_PATH];
  const char *p = short_path(path, sb);
  struct stat ls;
  switch (e) {
  case ENOENT:
    if (lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode))
      return nn_error_set(err, NN_ERR_IO, "'%s' is a dangling symbolic link (its target does not "
                          "exist)", p);
    return nn_error_set(err, NN_ERR_IO, "'%s' does not exist", p);
  case ELOOP:
    return nn_error_set(err, NN_ERR_IO, "'%s': too many levels of symbolic links (a symbolic link "
                        "loop)", p);
  case ENAMETOOLONG:
    if (strlen(path) >= PATH_MAX)
      return nn_error_set(err, NN_ERR_IO, "path '%s' is too long (%zu bytes, the system takes %d)",
                          p, strlen(path), PATH_MAX - 1);
    /* else one component is over NAME_MAX (or a symlink's target made the
     * resolved path too long) */
    return nn_error_set(err, NN_ERR_IO, "path '%s' is too long (a name in it has more than %d "
                        "bytes, or it resolves to more than %d)", p, NAME_MAX, PATH_MAX - 1);
  case EACCES:
    return nn_error_set(err, NN_ERR_IO, "'%s': permission denied", p);
  case ENOTDIR:
    return nn_error_set(err, NN_ERR_IO, "'%s': a component of the path is not a directory", p);
  case ENXIO:
    /* open() of a socket, or of a device without its driver */
    if (stat(path, &ls) == 0)
      return nn_error_set(err, NN_ERR_IO, "'%s' is %s, not a regular file", p, kind_of(ls.st_mode));
    break;
  default:
    break;
  }
  return nn_error_set(err, NN_ERR_IO, "cannot open '%s': %s", p, strerror(e));
}

/* Is `real` (a resolved path) `real_dir` itself or inside it? */
static bool path_inside(const char *real, const char *real_dir) {
  size_t bl = strlen(real_dir);
  return strncmp(real, real_dir, bl) == 0 &&
         (real[bl] == '\0' || real[bl] == '/' || (bl > 0 && real_dir[bl - 1] == '/'));
}

/* Is the path of an open descriptor inside real_dir?  Asked of the kernel
 * (/proc/self/fd) after open(), so a symlink swapped in between the
 * realpath() check and the open() cannot redirect the read.  True when /proc
 * is not mounted: the realpath() check then stands alone. */
static bool fd_inside(int fd, const char *real_dir) {
  char link[64], target[PATH_MAX + 1];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0)
    return true;
  target[n] = '\0';
  return path_inside(target, real_dir);
}

nn_status nn_file_open(const char *path, const char *inside_dir, int *out_fd, int64_t *out_size,
                       bool *outside, nn_error *err) {
  nn_status st = NN_OK;
  char *real_dir = NULL, *real_file = NULL, sb[SHORT_PATH], sd[SHORT_PATH];
  const char *open_path = path;
  int fd = -1;
  *out_fd = -1;
  *out_size = 0;
  if (outside)
    *outside = false;
  if (!path)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "path is NULL");
  if (!path[0])
    return nn_error_set(err, NN_ERR_IO, "the path is empty");
  if (inside_dir) {
    real_dir = realpath(inside_dir, NULL);
    if (!real_dir) {
      st = open_error(inside_dir, errno, err);
      goto out;
    }
    real_file = realpath(path, NULL);
    if (!real_file) {
      st = open_error(path, errno, err);
      goto out;
    }
    if (!path_inside(real_file, real_dir)) {
      st = nn_error_set(err, NN_ERR_IO, "'%s' resolves outside the directory '%s'",
                        short_path(path, sb), short_path(inside_dir, sd));
      if (outside)
        *outside = true;
      goto out;
    }
    /* what was checked is what is opened: no symlink left to follow */
    open_path = real_file;
  }
  /* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer (and is
   * refused below); O_NOCTTY: a terminal named as a file does not become the
   * controlling one */
  fd = open(open_path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (inside_dir ? O_NOFOLLOW : 0));
  if (fd < 0) {
    st = open_error(path, errno, err);
    goto out;
  }
  if (inside_dir && !fd_inside(fd, real_dir)) {
    st = nn_error_set(err, NN_ERR_IO, "'%s' resolves outside the directory '%s'",
                      short_path(path, sb), short_path(inside_dir, sd));
    if (outside)
      *outside = true;
    goto out;
  }
  struct stat st_buf;
  if (fstat(fd, &st_buf) != 0) {
    st = nn_error_set(err, NN_ERR_IO, "cannot stat '%s': %s", short_path(path, sb), strerror(errno));
    goto out;
  }
  if (!S_ISREG(st_buf.st_mode)) {
    st = nn_error_set(err, NN_ERR_IO, "'%s' is %s, not a regular file", short_path(path, sb),
                      kind_of(st_buf.st_mode));
    goto out;
  }
  *out_fd = fd;
  *out_size = (int64_t)st_buf.st_size;
  fd = -1;
out:
  if (fd >= 0)
    close(fd);
  free(real_dir); /* realpath() memory comes from libc */
  free(real_file);
  return st;
}

nn_status nn_file_check_size(const char *path, int64_t fsize, size_t max_bytes, nn_error *err) {
  char sb[SHORT_PATH];
  if (fsize < 0 || (uint64_t)fsize > max_bytes)
    return nn_error_set(err, NN_ERR_LIMIT, "'%s' is %lld bytes, more than the limit %zu",
                        short_path(path, sb), (long long)fsize, max_bytes);
  return NN_OK;
}

nn_status nn_file_read_fd(int fd, int64_t fsize, const char *path, size_t max_bytes, void **data,
                          size_t *size, nn_error *err) {
  nn_status st = NN_OK;
  char sb[SHORT_PATH];
  unsigned char *buf = NULL;
  if ((st = nn_file_check_size(path, fsize, max_bytes, err)) != NN_OK)
    goto out;
  size_t want = (size_t)fsize, got = 0;
  buf = nn_malloc(want + 1);
  if (!buf) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory reading '%s' (%zu bytes)",
                      short_path(path, sb), want);
    goto out;
  }
  while (got < want) {
    ssize_t r = read(fd, buf + got, want - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      st = nn_error_set(err, NN_ERR_IO, "error reading '%s': %s", short_path(path, sb),
                        strerror(errno));
      goto out;
    }
    if (r == 0)
      break; /* shrank since fstat: what is there is the file */
    got += (size_t)r;
  }
  buf[got] = '\0';
  *data = buf;
  *size = got;
  buf = NULL;
out:
  nn_free(buf);
  close(fd);
  return st;
}

static nn_status read_common(const char *dir, const char *path, size_t max_bytes, void **data,
                             size_t *size, nn_error *err) {
  if (!data || !size)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "data or size is NULL");
  *data = NULL;
  *size = 0;
  if (max_bytes == 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "no size limit given");
  int fd;
  int64_t fsize;
  nn_status st = nn_file_open(path, dir, &fd, &fsize, NULL, err);
  if (st != NN_OK)
    return st;
  return nn_file_read_fd(fd, fsize, path, max_bytes, data, size, err);
}

nn_status nn_file_read(const char *path, size_t max_bytes, void **data, size_t *size,
                       nn_error *err) {
  return read_common(NULL, path, max_bytes, data, size, err);
}

nn_status nn_file_read_inside(const char *dir, const char *path, size_t max_bytes, void **data,
                              size_t *size, nn_error *err) {
  if (!dir)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "dir is NULL");
  return read_common(dir, path, max_bytes, data, size, err);
}

nn_status nn_file_read_lines(const char *path, const nn_text_limits *lim, char ***lines,
                             size_t *n_lines, nn_error *err) {
  if (!lines || !n_lines)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "lines or n_lines is NULL");
  *lines = NULL;
  *n_lines = 0;
  size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : TEXT_DEFAULT_BYTES;
  size_t max_line = lim && lim->max_line_bytes ? lim->max_line_bytes : TEXT_DEFAULT_LINE;
  size_t max_lines = lim && lim->max_lines ? lim->max_lines : TEXT_DEFAULT_LINES;
  char sb[SHORT_PATH];
  void *raw = NULL;
  size_t size = 0;
  nn_status st = nn_file_read(path, max_bytes, &raw, &size, err);
  if (st != NN_OK)
    return st;
  const char *text = raw;

  /* one pass to validate and count, before allocating the index */
  size_t n = 0, line_start = 0;
  for (size_t i = 0; i <= size; i++) {
    if (i < size && text[i] == '\0') {
      st = nn_error_set(err, NN_ERR_PARSE, "'%s' is not a text file: NUL byte at line %zu "
                        "(byte %zu)", short_path(path, sb), n + 1, i);
      goto out;
    }
    bool end = i == size ? i > line_start : text[i] == '\n';
    if (!end)
      continue;
    if (i - line_start > max_line) {
      st = nn_error_set(err, NN_ERR_LIMIT, "'%s': line %zu is longer than %zu bytes",
                        short_path(path, sb), n + 1, max_line);
      goto out;
    }
    if (++n > max_lines) {
      st = nn_error_set(err, NN_ERR_LIMIT, "'%s' has more than %zu lines", short_path(path, sb),
                        max_lines);
      goto out;
    }
    line_start = i + 1;
  }

  /* the index, then the text: one block, one nn_file_free */
  size_t idx_bytes;
  if (nn_mul_overflow_size(n ? n : 1, sizeof(char *), &idx_bytes) || idx_bytes > SIZE_MAX - size - 1) {
    st = nn_error_set(err, NN_ERR_LIMIT, "'%s' is too large to index", short_path(path, sb));
    goto out;
  }
  char **index = nn_malloc(idx_bytes + size + 1);
  if (!index) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory reading '%s'", short_path(path, sb));
    goto out;
  }
  char *copy = (char *)index + idx_bytes;
  memcpy(copy, text, size + 1);
  char *p = copy;
  for (size_t k = 0; k < n; k++) {
    char *nl = strchr(p, '\n');
    if (nl)
      *nl = '\0';
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (len > 0 && p[len - 1] == '\r')
      p[len - 1] = '\0';
    index[k] = p;
    p = nl ? nl + 1 : p + len;
  }
  *lines = index;
  *n_lines = n;
out:
  nn_free(raw);
  return st;
}

void nn_file_free(void *p) {
  nn_free(p);
}
