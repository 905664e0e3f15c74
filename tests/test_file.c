/* test_file.c - the guarded file reader (runtime/include/nn_file.h).
 *
 * Regular files read exactly; everything else refused at once with a
 * message that names the path and says what it is: a FIFO (which would block
 * open() forever), /dev/zero (never ends), a directory, a socket, a symlink
 * loop, a dangling symlink, an over-long name or path.  Caps on bytes, line
 * length and line count; NUL bytes are not text.  nn_file_read_inside keeps
 * the real path inside its directory.  Every test checks that the runtime's
 * live heap (nn_memory_usage) is back where it started.  alarm() turns a
 * hang into a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "nn.h"
#include "nn_file.h"

static int g_failed, g_checks;

#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    g_checks++;                                                                   \
    if (!(cond)) {                                                                \
      g_failed++;                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);    \
      fprintf(stderr, __VA_ARGS__);                                               \
      fprintf(stderr, "\n");                                                      \
    }                                                                             \
  } while (0)

static char g_dir[200];

static size_t live_bytes(void) {
  size_t cur;
  nn_memory_usage(&cur, NULL);
  return cur;
}

static const char *path_in(const char *name, char *buf, size_t size) {
  snprintf(buf, size, "%s/%s", g_dir, name);
  return buf;
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
  fclose(f);
}

/* The line reader must fail with st and a message containing want, and so
 * must nn_file_read unless text_only (NUL bytes are fine in a binary file);
 * the outputs are reset; nothing stays allocated. */
static void expect_error(const char *path, size_t cap, nn_status st, const char *want, bool text_only) {
  size_t base = live_bytes();
  nn_error err = {0};
  nn_status got;
  if (!text_only) {
    void *data = (void *)&data;
    size_t size = 123;
    got = nn_file_read(path, cap, &data, &size, &err);
    CHECK(got == st && data == NULL && size == 0 && strstr(err.msg, want) != NULL,
          "%s: %s '%s', expected %s '%s'", path, nn_status_str(got), err.msg, nn_status_str(st), want);
  }
  char **lines = (char **)&lines;
  size_t n = 7;
  nn_text_limits lim = {.max_bytes = cap};
  got = nn_file_read_lines(path, &lim, &lines, &n, &err);
  CHECK(got == st && lines == NULL && n == 0 && strstr(err.msg, want) != NULL,
        "lines %s: %s '%s', expected '%s'", path, nn_status_str(got), err.msg, want);
  CHECK(live_bytes() == base, "%s: %zu bytes left", path, live_bytes() - base);
}

static void expect_read_error(const char *path, size_t cap, nn_status st, const char *want) {
  expect_error(path, cap, st, want, false);
}

static void test_regular(void) {
  size_t base = live_bytes();
  char p[512];
  path_in("bin", p, sizeof p);
  const unsigned char bytes[] = {0, 1, 2, 0xff, 0, 'a'};
  write_file(p, bytes, sizeof bytes);
  void *data = NULL;
  size_t size = 0;
  nn_error err = {0};
  CHECK(nn_file_read(p, 6, &data, &size, &err) == NN_OK, "%s", err.msg);
  CHECK(size == 6 && data && memcmp(data, bytes, 6) == 0 && ((unsigned char *)data)[6] == 0,
        "read %zu bytes", size);
  nn_file_free(data);
  /* one byte over the cap: refused from the size, before reading */
  expect_read_error(p, 5, NN_ERR_LIMIT, "bin' is 6 bytes, more than the limit 5");
  /* empty: read fine, 0 bytes (the caller says what empty means) */
  path_in("empty", p, sizeof p);
  write_file(p, "", 0);
  CHECK(nn_file_read(p, 10, &data, &size, &err) == NN_OK && size == 0 && data &&
            ((char *)data)[0] == '\0',
        "empty: %s", err.msg);
  nn_file_free(data);
  /* a zero cap and NULL outputs are caller errors */
  CHECK(nn_file_read(p, 0, &data, &size, &err) == NN_ERR_INVALID_ARG, "cap 0");
  CHECK(nn_file_read(p, 10, NULL, &size, &err) == NN_ERR_INVALID_ARG, "NULL data");
  CHECK(nn_file_read(NULL, 10, &data, &size, &err) == NN_ERR_INVALID_ARG, "NULL path");
  nn_file_free(NULL);
  CHECK(live_bytes() == base, "%zu bytes left", live_bytes() - base);
}

static void test_special(void) {
  char p[512], q[1024];
  path_in("fifo", p, sizeof p);
  CHECK(mkfifo(p, 0600) == 0, "mkfifo: %s", strerror(errno));
  expect_read_error(p, 1 << 20, NN_ERR_IO, "fifo' is a FIFO, not a regular file");
  expect_read_error("/dev/zero", 1 << 20, NN_ERR_IO, "'/dev/zero' is a character device, not a regular file");
  expect_read_error("/dev/null", 1 << 20, NN_ERR_IO, "'/dev/null' is a character device");
  path_in("dir", p, sizeof p);
  CHECK(mkdir(p, 0700) == 0, "mkdir: %s", strerror(errno));
  expect_read_error(p, 1 << 20, NN_ERR_IO, "dir' is a directory, not a regular file");
  expect_read_error(g_dir, 1 << 20, NN_ERR_IO, "is a directory");
  /* a socket: open() fails with ENXIO, and it is named as what it is */
  path_in("sock", p, sizeof p);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t plen = strlen(p);
  if (plen < sizeof sa.sun_path)
    memcpy(sa.sun_path, p, plen + 1);
  if (s >= 0 && plen < sizeof sa.sun_path && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0)
    expect_read_error(p, 1 << 20, NN_ERR_IO, "sock' is a socket, not a regular file");
  else
    fprintf(stderr, "note: no unix socket at %s, socket case skipped\n", p);
  if (s >= 0)
    close(s);
  /* symlinks: a loop, a dangling one, and one to a FIFO (refused as the FIFO) */
  path_in("loop", p, sizeof p);
  CHECK(symlink("loop", p) == 0, "symlink: %s", strerror(errno));
  expect_read_error(p, 1 << 20, NN_ERR_IO, "loop': too many levels of symbolic links");
  path_in("dangling", p, sizeof p);
  CHECK(symlink("nowhere", p) == 0, "symlink: %s", strerror(errno));
  expect_read_error(p, 1 << 20, NN_ERR_IO, "dangling' is a dangling symbolic link");
  path_in("to-fifo", p, sizeof p);
  CHECK(symlink("fifo", p) == 0, "symlink: %s", strerror(errno));
  expect_read_error(p, 1 << 20, NN_ERR_IO, "to-fifo' is a FIFO");
  /* missing, and under something that is not a directory */
  expect_read_error(path_in("missing", p, sizeof p), 1 << 20, NN_ERR_IO, "missing' does not exist");
  path_in("bin/x", p, sizeof p);
  expect_read_error(p, 1 << 20, NN_ERR_IO, "a component of the path is not a directory");
  /* over-long: one 300-byte name, and a 5000-byte path; the message stays
   * short enough to keep its reason */
  char longname[400];
  memset(longname, 'n', 300);
  longname[300] = '\0';
  path_in(longname, q, sizeof q);
  expect_read_error(q, 1 << 20, NN_ERR_IO, "is too long (a name in it has more than 255 bytes");
  char *longpath = malloc(5001);
  for (int i = 0; i < 5000; i += 2)
    memcpy(longpath + i, "d/", 2);
  longpath[5000] = '\0';
  expect_read_error(longpath, 1 << 20, NN_ERR_IO, "is too long (5000 bytes, the system takes 4095)");
  free(longpath);
  expect_read_error("", 1 << 20, NN_ERR_IO, "the path is empty");
}

static void test_lines(void) {
  size_t base = live_bytes();
  char p[512];
  nn_error err = {0};
  char **lines = NULL;
  size_t n = 0;
  path_in("text", p, sizeof p);
  const char text[] = "person\r\ncar \n\nbike";
  write_file(p, text, sizeof text - 1);
  CHECK(nn_file_read_lines(p, NULL, &lines, &n, &err) == NN_OK, "%s", err.msg);
  CHECK(n == 4 && strcmp(lines[0], "person") == 0 && strcmp(lines[1], "car ") == 0 &&
            strcmp(lines[2], "") == 0 && strcmp(lines[3], "bike") == 0,
        "%zu lines", n);
  nn_file_free(lines);
  /* "a\n" is one line; an empty file none */
  write_file(p, "a\n", 2);
  CHECK(nn_file_read_lines(p, NULL, &lines, &n, &err) == NN_OK && n == 1 && strcmp(lines[0], "a") == 0,
        "one line: %zu", n);
  nn_file_free(lines);
  write_file(p, "", 0);
  CHECK(nn_file_read_lines(p, NULL, &lines, &n, &err) == NN_OK && n == 0 && lines != NULL, "empty");
  nn_file_free(lines);
  /* NUL bytes are not blank lines */
  write_file(p, "ok\nab\0c\n", 8);
  expect_error(p, 1 << 20, NN_ERR_PARSE, "text' is not a text file: NUL byte at line 2 (byte 5)", true);
  char zeros[4096] = {0};
  write_file(p, zeros, sizeof zeros);
  expect_error(p, 1 << 20, NN_ERR_PARSE, "NUL byte at line 1 (byte 0)", true);
  /* caps: line length and line count, each with its number */
  nn_text_limits lim = {.max_line_bytes = 4, .max_lines = 3};
  write_file(p, "abcd\nabcde\n", 11);
  CHECK(nn_file_read_lines(p, &lim, &lines, &n, &err) == NN_ERR_LIMIT && lines == NULL &&
            strstr(err.msg, "line 2 is longer than 4 bytes"),
        "%s", err.msg);
  write_file(p, "a\nb\nc\n", 6);
  CHECK(nn_file_read_lines(p, &lim, &lines, &n, &err) == NN_OK && n == 3, "3 lines: %s", err.msg);
  nn_file_free(lines);
  write_file(p, "a\nb\nc\nd", 7);
  CHECK(nn_file_read_lines(p, &lim, &lines, &n, &err) == NN_ERR_LIMIT &&
            strstr(err.msg, "has more than 3 lines"),
        "%s", err.msg);
  CHECK(live_bytes() == base, "%zu bytes left", live_bytes() - base);
}

static void test_inside(void) {
  size_t base = live_bytes();
  char sub[256], p[512], outside[256];
  nn_error err = {0};
  void *data = NULL;
  size_t size = 0;
  path_in("case", sub, sizeof sub);
  CHECK(mkdir(sub, 0700) == 0, "mkdir: %s", strerror(errno));
  path_in("secret", outside, sizeof outside);
  write_file(outside, "secret", 6);
  snprintf(p, sizeof p, "%s/data", sub);
  write_file(p, "inside", 6);
  CHECK(nn_file_read_inside(sub, p, 100, &data, &size, &err) == NN_OK && size == 6 &&
            memcmp(data, "inside", 6) == 0,
        "inside: %s", err.msg);
  nn_file_free(data);
  /* a symlink inside that stays inside is fine */
  snprintf(p, sizeof p, "%s/link-in", sub);
  CHECK(symlink("data", p) == 0, "symlink");
  CHECK(nn_file_read_inside(sub, p, 100, &data, &size, &err) == NN_OK && size == 6, "%s", err.msg);
  nn_file_free(data);
  /* out by symlink, by "..", and to a device: refused before opening */
  snprintf(p, sizeof p, "%s/link-out", sub);
  CHECK(symlink("../secret", p) == 0, "symlink");
  data = &data;
  CHECK(nn_file_read_inside(sub, p, 100, &data, &size, &err) == NN_ERR_IO && data == NULL &&
            strstr(err.msg, "link-out' resolves outside the directory"),
        "%s", err.msg);
  snprintf(p, sizeof p, "%s/../secret", sub);
  CHECK(nn_file_read_inside(sub, p, 100, &data, &size, &err) == NN_ERR_IO &&
            strstr(err.msg, "resolves outside the directory"),
        "%s", err.msg);
  snprintf(p, sizeof p, "%s/zero", sub);
  CHECK(symlink("/dev/zero", p) == 0, "symlink");
  CHECK(nn_file_read_inside(sub, p, 100, &data, &size, &err) == NN_ERR_IO &&
            strstr(err.msg, "zero' resolves outside the directory"),
        "%s", err.msg);
  /* a FIFO inside is still a FIFO */
  snprintf(p, sizeof p, "%s/fifo", sub);
  CHECK(mkfifo(p, 0600) == 0, "mkfifo");
  CHECK(nn_file_read_inside(sub, p, 100, &data, &size, &err) == NN_ERR_IO &&
            strstr(err.msg, "fifo' is a FIFO"),
        "%s", err.msg);
  /* the directory itself must resolve */
  CHECK(nn_file_read_inside("/nonexistent-dir", p, 100, &data, &size, &err) == NN_ERR_IO &&
            strstr(err.msg, "'/nonexistent-dir' does not exist"),
        "%s", err.msg);
  CHECK(live_bytes() == base, "%zu bytes left", live_bytes() - base);
}

/* The reader allocates through the hooks of nn_set_allocator. */
static long g_hook_allocs;
static void *hook_malloc(size_t n, void *ud) { (void)ud; g_hook_allocs++; return malloc(n); }
static void *hook_realloc(void *p, size_t n, void *ud) { (void)ud; g_hook_allocs++; return realloc(p, n); }
static void hook_free(void *p, void *ud) { (void)ud; free(p); }

static void test_allocator(void) {
  nn_allocator a = {hook_malloc, hook_realloc, hook_free, NULL};
  CHECK(nn_set_allocator(&a) == NN_OK, "set allocator");
  char p[512];
  path_in("bin", p, sizeof p);
  void *data = NULL;
  size_t size = 0;
  nn_error err = {0};
  long before = g_hook_allocs;
  CHECK(nn_file_read(p, 100, &data, &size, &err) == NN_OK, "%s", err.msg);
  CHECK(g_hook_allocs == before + 1, "%ld allocations through the hook", g_hook_allocs - before);
  nn_file_free(data);
  nn_set_allocator(NULL);
}

static void cleanup(void) {
  static const char *const names[] = {"bin", "empty", "fifo", "sock", "loop", "dangling", "to-fifo",
                                      "text", "secret", "case/data", "case/link-in", "case/link-out",
                                      "case/zero", "case/fifo"};
  char p[512];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    unlink(path_in(names[i], p, sizeof p));
  rmdir(path_in("dir", p, sizeof p));
  rmdir(path_in("case", p, sizeof p));
  rmdir(g_dir);
}

int main(void) {
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  if (strlen(tmp) > 100)
    tmp = "/tmp";
  snprintf(g_dir, sizeof g_dir, "%s/nn-file-XXXXXX", tmp);
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return 1;
  }
  alarm(60); /* a FIFO that blocks open() would hang here forever */
  test_regular();
  test_special();
  test_lines();
  test_inside();
  test_allocator();
  cleanup();
  printf("file: %d checks, %d failed\n", g_checks, g_failed);
  return g_failed ? 1 : 0;
}
