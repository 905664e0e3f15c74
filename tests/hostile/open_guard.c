/* open_guard.c - LD_PRELOAD shim for the hostile-model test: logs every file
 * the process opens, so the test can check that nothing outside the model's
 * directory was read (external data with absolute paths, "..", symlinks).
 *
 * NN_OPEN_LOG names the log; each open() / openat() / fopen() (and their
 * 64-bit and _FORTIFY_SOURCE variants) appends one line: the resolved
 * absolute path of what was opened, or of what was asked for when the open
 * failed.  The check itself is run_hostile.py's: this file only observes.
 * Not part of the runtime; built only for the tests.
 */
/* both the plain and the 64-bit names are defined below: stop the headers
 * from renaming one into the other */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef FILE *(*fopen_fn)(const char *, const char *);

static int log_fd = -1;
static int log_ready;

static void guard_init(void) {
  if (log_ready)
    return;
  log_ready = 1;
  const char *p = getenv("NN_OPEN_LOG");
  if (!p || !*p)
    return;
  open_fn real_open = (open_fn)dlsym(RTLD_NEXT, "open");
  if (real_open)
    log_fd = real_open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

/* Absolute form of `path` as seen from dirfd: the kernel's name for an open
 * descriptor when there is one (symlinks resolved), else a lexical join. */
static void log_open(int dirfd, const char *path, int fd) {
  guard_init();
  if (log_fd < 0 || !path)
    return;
  char line[PATH_MAX * 2 + 8], base[PATH_MAX + 1] = "";
  ssize_t n = -1;
  if (fd >= 0) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, line, PATH_MAX);
  }
  if (n < 0) {
    if (path[0] != '/') {
      if (dirfd == AT_FDCWD) {
        if (!getcwd(base, sizeof base))
          base[0] = '\0';
      } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t b = readlink(link, base, PATH_MAX);
        base[b > 0 ? b : 0] = '\0';
      }
    }
    n = snprintf(line, sizeof line, "%s%s%s", base, base[0] ? "/" : "", path);
    if (n < 0 || (size_t)n >= sizeof line)
      n = (ssize_t)strlen(line);
  }
  line[n++] = '\n';
  ssize_t w = write(log_fd, line, (size_t)n);
  (void)w;
}

#define OPEN_WRAPPER(name)                                              \
  int name(const char *path, int flags, ...) {                          \
    static open_fn real;                                                \
    if (!real)                                                          \
      real = (open_fn)dlsym(RTLD_NEXT, #name);                          \
    mode_t mode = 0;                                                    \
    if (flags & (O_CREAT | O_TMPFILE)) {                                \
      va_list ap;                                                       \
      va_start(ap, flags);                                              \
      mode = (mode_t)va_arg(ap, int);                                   \
      va_end(ap);                                                       \
    }                                                                   \
    int fd = real(path, flags, mode);                                   \
    log_open(AT_FDCWD, path, fd);                                       \
    return fd;                                                          \
  }

#define OPENAT_WRAPPER(name)                                            \
  int name(int dirfd, const char *path, int flags, ...) {               \
    static openat_fn real;                                              \
    if (!real)                                                          \
      real = (openat_fn)dlsym(RTLD_NEXT, #name);                        \
    mode_t mode = 0;                                                    \
    if (flags & (O_CREAT | O_TMPFILE)) {                                \
      va_list ap;                                                       \
      va_start(ap, flags);                                              \
      mode = (mode_t)va_arg(ap, int);                                   \
      va_end(ap);                                                       \
    }                                                                   \
    int fd = real(dirfd, path, flags, mode);                            \
    log_open(dirfd, path, fd);                                          \
    return fd;                                                          \
  }

#define FOPEN_WRAPPER(name)                                             \
  FILE *name(const char *path, const char *m) {                         \
    static fopen_fn real;                                               \
    if (!real)                                                          \
      real = (fopen_fn)dlsym(RTLD_NEXT, #name);                         \
    FILE *f = real(path, m);                                            \
    log_open(AT_FDCWD, path, f ? fileno(f) : -1);                       \
    return f;                                                           \
  }

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)
FOPEN_WRAPPER(fopen)
FOPEN_WRAPPER(fopen64)

/* _FORTIFY_SOURCE builds call these for open() without a mode */
int __open_2(const char *path, int flags) { return open(path, flags); }
int __open64_2(const char *path, int flags) { return open64(path, flags); }
int __openat_2(int dirfd, const char *path, int flags) { return openat(dirfd, path, flags); }
int __openat64_2(int dirfd, const char *path, int flags) { return openat64(dirfd, path, flags); }
