/* replay_main.c - run fuzz inputs (files or directories of files) through
 * LLVMFuzzerTestOneInput without libFuzzer: the regression inputs the fuzzer
 * once crashed on run in every normal test build. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return 1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n + 1);
  size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!buf || got != (size_t)n) {
    free(buf);
    return 1;
  }
  LLVMFuzzerTestOneInput(buf, (size_t)n);
  free(buf);
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
