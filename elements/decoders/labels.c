/* labels.c - a labels file: one class name per line, line N is class N-1.
 * Read through the runtime's guarded reader (nn_file.h): a FIFO, /dev/zero
 * or a directory is refused by name, NUL bytes, over-long lines and too many
 * lines are refused with the line number. */
#include <stdlib.h>

#include "decode_internal.h"
#include "nn_file.h"

struct nd_labels {
  char **names;                /* nn_file_read_lines block: index and text */
  int n;
};

/* ImageNet-21k has 21,841 classes; a million one-line labels is a generous
 * bound that still keeps a hostile file from taking the process's memory. */
static const nn_text_limits labels_limits = {
  .max_bytes = (size_t)16 << 20,
  .max_line_bytes = 4096,
  .max_lines = 1000000,
};

nd_status nd_labels_load(const char *path, nd_labels **out, nd_error *err) {
  if (!path || !out)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "labels: NULL argument");
  *out = NULL;
  nd_labels *l = calloc(1, sizeof *l);
  if (!l)
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  char **lines = NULL;
  size_t n = 0;
  nn_error ferr = {0};
  nn_status st = nn_file_read_lines(path, &labels_limits, &lines, &n, &ferr);
  if (st != NN_OK) {
    free(l);
    return nd_set_error(err, nd_status_from_nn(st), "labels file: %s", ferr.msg);
  }
  for (size_t i = 0; i < n; i++) {
    /* trim trailing blanks (the reader already dropped the CR of CRLF) */
    char *p = lines[i];
    size_t len = strlen(p);
    while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r'))
      p[--len] = '\0';
  }
  l->names = lines;
  l->n = (int)n; /* <= max_lines */
  *out = l;
  return ND_OK;
}

int nd_labels_count(const nd_labels *l) {
  return l ? l->n : 0;
}

const char *nd_labels_get(const nd_labels *l, int id) {
  if (!l || id < 0 || id >= l->n)
    return NULL;
  return l->names[id];
}

void nd_labels_free(nd_labels *l) {
  if (!l)
    return;
  nn_file_free(l->names);
  free(l);
}
