/* replay_main.c - run fuzz inputs (files or directories of files) through
 * LLVMFuzzerTestOneInput without libFuzzer: the regression inputs the fuzzer
 * once crashed on run in every normal test build. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nn_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Through the runtime's guarded reader: a FIFO among the inputs is refused,
 * not waited on. */
static int run_file(const char *path) {
  void *buf = NULL;
  size_t n = 0;
  nn_error err = {0};
  if (nn_file_read(path, (size_t)64 << 20, &buf, &n, &err) != NN_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  LLVMFuzzerTestOneInput(buf, n);
  nn_file_free(buf);
  printf("ok %s\n", path);
  return 0;
}

int main(int argc, char **argv) {
  int files = 0, bad = 0;
  for (int i = 1; i < argc; i++) {
    struct stat sb;
    if (stat(argv[i], &sb) != 0)
      continue;
    if (S_ISDIR(sb.st_mode)) {
      DIR *d = opendir(argv[i]);
      struct dirent *e;
      while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
          continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
        bad += run_file(p);
        files++;
      }
      if (d)
        closedir(d);
    } else {
      bad += run_file(argv[i]);
      files++;
    }
  }
  printf("%d inputs replayed, %d unreadable\n", files, bad);
  return bad ? 1 : 0;
}
