/* labels.c - a labels file: one class name per line, line N is class N-1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "decode_internal.h"

struct nd_labels {
  char **names;
  int n;
  char *text;                  /* the file, split in place */
};

#define ND_LABELS_MAX_BYTES (16 << 20)

nd_status nd_labels_load(const char *path, nd_labels **out, nd_error *err) {
  if (!path || !out)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "labels: NULL argument");
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return nd_set_error(err, ND_ERR_IO, "cannot open labels file '%s': %s", path,
                        strerror(errno));
  nd_labels *l = calloc(1, sizeof *l);
  size_t cap = 4096, len = 0;
  char *text = malloc(cap);
  if (!l || !text) {
    fclose(f);
    free(l);
    free(text);
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  }
  for (;;) {
    if (len + 1 >= cap) {
      if (cap >= ND_LABELS_MAX_BYTES) {
        fclose(f);
        free(text);
        free(l);
        return nd_set_error(err, ND_ERR_PARSE, "labels file '%s' is larger than %d bytes", path,
                            ND_LABELS_MAX_BYTES);
      }
      char *nt = realloc(text, cap * 2);
      if (!nt) {
        fclose(f);
        free(text);
        free(l);
        return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
      }
      text = nt;
      cap *= 2;
    }
    size_t got = fread(text + len, 1, cap - 1 - len, f);
    if (got == 0)
      break;
    len += got;
  }
  int ioerr = ferror(f);
  fclose(f);
  if (ioerr) {
    free(text);
    free(l);
    return nd_set_error(err, ND_ERR_IO, "error reading labels file '%s'", path);
  }
  text[len] = '\0';
  if (memchr(text, '\0', len)) {
    free(text);
    free(l);
    return nd_set_error(err, ND_ERR_PARSE, "labels file '%s' is not text", path);
  }
  int lines = 0;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n')
      lines++;
  if (len > 0 && text[len - 1] != '\n')
    lines++;
  l->names = calloc(lines > 0 ? (size_t)lines : 1, sizeof *l->names);
  if (!l->names) {
    free(text);
    free(l);
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  }
  char *p = text;
  for (int i = 0; i < lines; i++) {
    char *nl = strchr(p, '\n');
    if (nl)
      *nl = '\0';
    /* trim trailing CR and blanks (files written on Windows) */
    size_t n = strlen(p);
    while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
      p[--n] = '\0';
    l->names[i] = p;
    p = nl ? nl + 1 : p + n;
  }
  l->n = lines;
  l->text = text;
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
  free(l->names);
  free(l->text);
  free(l);
}
