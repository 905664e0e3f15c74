/* nn-run - the runtime's command-line runner, checker and benchmark.
 *
 *   nn-run MODEL.onnx [--backend cpu|vulkan|auto] [--threads N] [--input NAME=FILE.pb ...]
 *          [--shape NAME=DxDx... ...] [--save-outputs DIR] [--bench RUNS] [--stats]
 *          [--limit-NAME N ...] [--ab VAR=VALUE]
 *   nn-run --check CASE_DIR [--backend ...] [--threads N] [--rtol R] [--atol A]
 *   nn-run --list-ops
 *
 * --check runs a case in the ONNX node-test layout (model.onnx +
 * test_data_set_N/input_K.pb, output_K.pb), prints one line per output with
 * its max abs error, then PASS or FAIL.  Exit status: 0 pass, 1 mismatch or
 * run failure, 2 model not supported or invalid (the reason is printed).
 * A case is self-contained: its model, data sets and data files must resolve
 * inside CASE_DIR (a symlink leading out is refused, not followed).  Every
 * file is read through the runtime's guarded reader (nn_file.h): a FIFO,
 * a device or a directory is refused by name.
 * Running a model: 0 when it ran, 2 when it cannot be loaded or run (one
 * line "nn-run: NN_ERR_...: reason" on stderr).  Inputs not given by
 * --input get pseudo-random data of their declared shape; --shape
 * NAME=1x3x320x320 (repeatable) fixes the dims of one (the model's dynamic
 * dims, which are 1 otherwise).  Each dim is a positive integer, the rank
 * and element count within the session's limits; a name the model does
 * not have, a rank or a fixed dim the model contradicts, an input also
 * given by --input: one line on stderr, exit status 2.
 *
 * --ab VAR=VALUE (with --bench RUNS) compares two sessions of the model in
 * one process: A as the environment is, B with VAR=VALUE set while it is
 * created and while it runs (a knob such as NN_NO_WINOGRAD=1, or one an
 * experiment reads).  Their runs alternate, A B then B A, on the same
 * inputs, and the median of the per-pair ratios B/A is printed: on a VM
 * whose speed drifts from one second (or process) to the next by more than
 * the change being measured, separate processes cannot tell the two apart.
 *
 * --limit-rank, --limit-elems, --limit-weights, --limit-arena, --limit-nodes,
 * --limit-depth, --limit-model set the nn_limits of the session (bytes for
 * weights, arena and model).  --list-ops prints "domain<TAB>op<TAB>versions"
 * for every kernel (the input of tools/gen-op-schema.py).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "nn.h"
#include "nn_file.h"
#include "nn_tool.h"

#define EXIT_MISMATCH 1
#define EXIT_UNSUPPORTED 2

#define MAX_SPECS 64
#define AB_VAR_MAX 256   /* --ab: longest variable name + 1 */

typedef struct shape_spec {
  const char *arg;               /* the command-line text, for messages */
  char name[512];
  int rank;
  int64_t dims[NN_MAX_RANK];
} shape_spec;

typedef struct opts {
  const char *model;
  const char *check_dir;
  nn_backend backend;
  int threads;
  int bench;
  const char *ab;                /* --ab VAR=VALUE: B's environment */
  int stats;
  const char *save_dir;
  const char *save_inputs_dir;
  double rtol, atol;
  int n_inputs;
  const char *input_spec[MAX_SPECS];
  int n_shapes;                  /* --shape NAME=DxD...: dims of generated inputs */
  shape_spec shapes[MAX_SPECS];
  nn_limits limits;              /* 0 = the runtime's default */
} opts;

static void usage(void) {
  fprintf(stderr,
          "usage: nn-run MODEL.onnx [--backend cpu|vulkan|auto] [--threads N] [--input NAME=FILE.pb ...]\n"
          "              [--shape NAME=DxDx... ...] [--save-inputs DIR] [--save-outputs DIR]\n"
          "              [--bench RUNS [--ab VAR=VALUE]] [--stats]\n"
          "              [--limit-rank N] [--limit-elems N] [--limit-weights BYTES] [--limit-arena BYTES]\n"
          "              [--limit-nodes N] [--limit-depth N] [--limit-model BYTES]\n"
          "       nn-run --check CASE_DIR [--backend ...] [--threads N] [--rtol R] [--atol A]\n"
          "       nn-run --list-ops\n"
          "Inputs not given by --input get deterministic pseudo-random data of their declared\n"
          "shape, dynamic dims 1; --shape NAME=1x3x320x320 (repeatable) sets an input's dims\n"
          "(positive integers, within the --limit-rank / --limit-elems limits).\n");
}

/* --shape NAME=DxDx...: syntax, positive dims, no overflow; the limits and
 * the model's inputs are checked once they are known.  0 or a message in
 * why. */
static int parse_shape(const char *arg, shape_spec *sp, char *why, size_t why_len) {
  memset(sp, 0, sizeof *sp);
  sp->arg = arg;
  const char *eq = strrchr(arg, '=');
  if (!eq || eq == arg) {
    snprintf(why, why_len, "expected NAME=DIMS (e.g. input=1x3x320x320)");
    return -1;
  }
  size_t nl = (size_t)(eq - arg);
  if (nl >= sizeof sp->name) {
    snprintf(why, why_len, "the input name is longer than %zu bytes", sizeof sp->name - 1);
    return -1;
  }
  memcpy(sp->name, arg, nl);
  sp->name[nl] = '\0';
  const char *p = eq + 1;
  if (!*p) {
    snprintf(why, why_len, "no dims after '=' (e.g. %s=1x3x320x320)", sp->name);
    return -1;
  }
  int64_t elems = 1;
  for (;;) {
    if (sp->rank == NN_MAX_RANK) {
      snprintf(why, why_len, "more than %d dims", NN_MAX_RANK);
      return -1;
    }
    if (*p == '-') {
      snprintf(why, why_len, "dim %d is negative", sp->rank);
      return -1;
    }
    if (*p < '0' || *p > '9') {
      snprintf(why, why_len, "dim %d is not a positive integer (dims are separated by 'x')",
               sp->rank);
      return -1;
    }
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno == ERANGE) {
      snprintf(why, why_len, "dim %d is too large", sp->rank);
      return -1;
    }
    if (v == 0) {
      snprintf(why, why_len, "dim %d is 0 (dims must be at least 1)", sp->rank);
      return -1;
    }
    if (__builtin_mul_overflow(elems, (int64_t)v, &elems)) {
      snprintf(why, why_len, "the element count overflows 64 bits");
      return -1;
    }
    sp->dims[sp->rank++] = v;
    if (*end == '\0')
      break;
    if (*end != 'x' || end[1] == '\0') {
      snprintf(why, why_len, "unexpected '%c' after dim %d (dims are separated by 'x')", *end,
               sp->rank - 1);
      return -1;
    }
    p = end + 1;
  }
  return 0;
}

/* The limits a session of these options gets (defaults where 0). */
static nn_limits effective_limits(const opts *o) {
  nn_options opt;
  nn_options_init(&opt);
  nn_limits l = opt.limits;
  const nn_limits *u = &o->limits;
  if (u->max_rank) l.max_rank = u->max_rank;
  if (u->max_tensor_elems) l.max_tensor_elems = u->max_tensor_elems;
  if (u->max_arena_bytes) l.max_arena_bytes = u->max_arena_bytes;
  return l;
}

/* Every --shape against the limits, and two specs for one name. */
static int check_shapes(const opts *o) {
  nn_limits l = effective_limits(o);
  for (int k = 0; k < o->n_shapes; k++) {
    const shape_spec *sp = &o->shapes[k];
    int64_t elems = 1;
    for (int d = 0; d < sp->rank; d++)
      elems *= sp->dims[d];   /* parse_shape checked the overflow */
    if (sp->rank > l.max_rank) {
      fprintf(stderr, "nn-run: --shape %s: rank %d is over the limit of %d (--limit-rank)\n",
              sp->arg, sp->rank, l.max_rank);
      return -1;
    }
    if (elems > l.max_tensor_elems) {
      fprintf(stderr,
              "nn-run: --shape %s: %lld elements is over the limit of %lld per tensor "
              "(--limit-elems)\n",
              sp->arg, (long long)elems, (long long)l.max_tensor_elems);
      return -1;
    }
    for (int j = 0; j < k; j++)
      if (strcmp(o->shapes[j].name, sp->name) == 0) {
        fprintf(stderr, "nn-run: --shape %s: input '%s' already has a --shape (%s)\n", sp->arg,
                sp->name, o->shapes[j].arg);
        return -1;
      }
  }
  return 0;
}

/* A .pb tensor may be as large as the runtime's default model limit. */
#define PB_MAX_BYTES ((size_t)2 << 30)

/* Load a .pb TensorProto through the runtime's guarded reader: a FIFO,
 * /dev/zero or a directory is refused by name instead of blocking or
 * spinning.  inside_dir non-NULL (the data of a --check case): the file must
 * resolve inside it, so a symlinked data file cannot make the checker read
 * elsewhere.  Release with nn_tool_tensor_free / nn_tool_free. */
static nn_status load_pb(const char *path, const char *inside_dir, nn_tensor *t, char **name,
                         nn_error *err) {
  void *buf = NULL;
  size_t size = 0;
  nn_status st = inside_dir ? nn_file_read_inside(inside_dir, path, PB_MAX_BYTES, &buf, &size, err)
                            : nn_file_read(path, PB_MAX_BYTES, &buf, &size, err);
  if (st != NN_OK)
    return st;
  nn_error derr = {0};
  st = nn_tool_tensor_decode(buf, size, t, name, &derr);
  if (st != NN_OK && err) {
    err->status = st;
    snprintf(err->msg, sizeof err->msg, "'%.200s': %.300s", path, derr.msg);
  }
  nn_file_free(buf);
  return st;
}

/* Load a .pb SequenceProto / OptionalProto (a sequence or optional value of
 * a --check case), with load_pb's guards.  Release with free_items. */
static nn_status load_items(const char *path, const char *inside_dir, int optional, nn_tensor **items,
                            int *n, int *none, char **name, nn_error *err) {
  void *buf = NULL;
  size_t size = 0;
  nn_status st = nn_file_read_inside(inside_dir, path, PB_MAX_BYTES, &buf, &size, err);
  if (st != NN_OK)
    return st;
  nn_error derr = {0};
  int is_seq = 0;
  st = nn_tool_items_decode(buf, size, optional, items, n, none, &is_seq, name, &derr);
  if (st != NN_OK && err) {
    err->status = st;
    snprintf(err->msg, sizeof err->msg, "'%.200s': %.300s", path, derr.msg);
  }
  nn_file_free(buf);
  return st;
}

static void free_items(nn_tensor *items, int n) {
  for (int i = 0; items && i < n; i++)
    nn_tool_tensor_free(&items[i]);
  nn_tool_free(items);
}

/* Where does `path` resolve, against `dir` (both through realpath)?  For
 * the directories and the model of a --check case, which are opened by other
 * means than nn_file_read_inside. */
typedef enum { RESOLVES_INSIDE, RESOLVES_OUTSIDE, RESOLVES_NOT } resolves;
static resolves resolve_in(const char *dir, const char *path, int *err_no) {
  char *rd = realpath(dir, NULL);
  *err_no = errno;
  char *rp = rd ? realpath(path, NULL) : NULL;
  if (rd && !rp)
    *err_no = errno;
  resolves r = RESOLVES_NOT;
  if (rd && rp) {
    size_t n = strlen(rd);
    bool in = strncmp(rp, rd, n) == 0 && (rp[n] == '\0' || rp[n] == '/' || (n > 0 && rd[n - 1] == '/'));
    r = in ? RESOLVES_INSIDE : RESOLVES_OUTSIDE;
  }
  free(rd);
  free(rp);
  return r;
}

/* mkdir -p */
static void make_dirs(const char *dir) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", dir);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(tmp, 0755);
      *p = '/';
    }
  mkdir(tmp, 0755);
}

static int save_pb(const char *path, const char *name, const nn_tensor *t) {
  void *buf = NULL;
  size_t len = 0;
  nn_error err = {0};
  if (nn_tool_tensor_encode(t, name, &buf, &len, &err) != NN_OK)
    return -1;
  FILE *f = fopen(path, "wb");
  int rc = -1;
  if (f) {
    rc = fwrite(buf, 1, len, f) == len ? 0 : -1;
    fclose(f);
  }
  nn_tool_free(buf);
  return rc;
}

/* Deterministic pseudo-random fill (xorshift), floats uniform in [0,1). */
static void fill_random(nn_tensor *t, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  int64_t n = nn_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double u = (double)(x >> 11) / 9007199254740992.0;
    switch (t->dtype) {
    case NN_DTYPE_FLOAT:
    case NN_DTYPE_DOUBLE:
    case NN_DTYPE_FLOAT16:
    case NN_DTYPE_BFLOAT16: nn_tool_tensor_set(t, i, u); break;
    case NN_DTYPE_BOOL: ((uint8_t *)t->data)[i] = u < 0.5; break;
    case NN_DTYPE_INT64: ((int64_t *)t->data)[i] = (int64_t)(u * 4); break;
    case NN_DTYPE_INT32: ((int32_t *)t->data)[i] = (int32_t)(u * 4); break;
    case NN_DTYPE_STRING: break; /* views stay empty strings */
    default: ((uint8_t *)t->data)[i * nn_dtype_size(t->dtype)] = (uint8_t)(u * 4); break;
    }
  }
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static long peak_rss_bytes(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss * 1024L;
}

static void print_stats(nn_session *s, FILE *out) {
  nn_stats st;
  if (nn_session_stats(s, &st) != NN_OK)
    return;
  fprintf(out,
          "weights_bytes=%zu arena_bytes=%zu arena_naive_bytes=%zu io_bytes=%zu device_bytes=%zu "
          "peak_rss_bytes=%ld nodes_cpu=%d nodes_vulkan=%d nodes_folded=%d "
          "nodes_cpu_one_thread=%d\n",
          st.weights_bytes, st.arena_bytes, st.arena_naive_bytes, st.io_bytes, st.device_bytes,
          peak_rss_bytes(), st.nodes_cpu, st.nodes_vulkan, st.nodes_folded,
          st.nodes_cpu_one_thread);
}

static void print_nodes(nn_session *s, const opts *o) {
  nn_stats st;
  if (o->backend == NN_BACKEND_CPU || nn_session_stats(s, &st) != NN_OK)
    return;
  printf("nodes_vulkan=%d nodes_cpu=%d\n", st.nodes_vulkan, st.nodes_cpu);
}

static nn_status make_session(const char *model, const opts *o, nn_session **s, nn_error *err) {
  nn_options opt;
  nn_options_init(&opt);
  opt.backend = o->backend;
  opt.threads = o->threads;
  const nn_limits *l = &o->limits;
  if (l->max_rank) opt.limits.max_rank = l->max_rank;
  if (l->max_tensor_elems) opt.limits.max_tensor_elems = l->max_tensor_elems;
  if (l->max_weights_bytes) opt.limits.max_weights_bytes = l->max_weights_bytes;
  if (l->max_arena_bytes) opt.limits.max_arena_bytes = l->max_arena_bytes;
  if (l->max_nodes) opt.limits.max_nodes = l->max_nodes;
  if (l->max_graph_depth) opt.limits.max_graph_depth = l->max_graph_depth;
  if (l->max_model_bytes) opt.limits.max_model_bytes = l->max_model_bytes;
  return nn_session_create_from_file(model, &opt, s, err);
}

/* String tensors fed to a session: their elements are views on the decoded
 * block (nn.h, nn_string), which must outlive the run, so feed() keeps the
 * block here (and empties the caller's tensor); freed after the run. */
static nn_tensor kept_strings[64];
static int n_kept_strings;

static void release_kept_strings(void) {
  for (int i = 0; i < n_kept_strings; i++)
    nn_tool_tensor_free(&kept_strings[i]);
  n_kept_strings = 0;
}

/* Copy t into the session input `index` (through its pre-allocated tensor);
 * a string tensor's block moves to kept_strings (t is left empty). */
static nn_status feed(nn_session *s, int index, nn_tensor *t) {
  nn_io_info info;
  nn_status st = nn_session_input_info(s, index, &info);
  if (st != NN_OK)
    return st;
  if (info.dtype != t->dtype) {
    fprintf(stderr, "nn-run: input '%s' expects %s, the file holds %s\n", info.name,
            nn_dtype_name(info.dtype), nn_dtype_name(t->dtype));
    return NN_ERR_DTYPE;
  }
  st = nn_session_set_input_shape(s, index, t->rank, t->dims);
  if (st != NN_OK) {
    fprintf(stderr, "nn-run: %s\n", nn_session_last_error(s));
    return st;
  }
  nn_tensor *dst;
  st = nn_session_input_tensor(s, index, &dst);
  if (st != NN_OK) {
    fprintf(stderr, "nn-run: %s\n", nn_session_last_error(s));
    return st;
  }
  if (t->nbytes)
    memcpy(dst->data, t->data, t->nbytes);
  if (t->dtype == NN_DTYPE_STRING) {
    if (n_kept_strings == (int)(sizeof kept_strings / sizeof kept_strings[0])) {
      fprintf(stderr, "nn-run: too many string inputs\n");
      return NN_ERR_LIMIT;
    }
    kept_strings[n_kept_strings++] = *t;
    t->data = NULL;
    t->nbytes = 0;
  }
  return NN_OK;
}

/* ---- comparison ---------------------------------------------------------------- */
static double elem_double(const nn_tensor *t, int64_t i) {
  return nn_tool_tensor_get(t, i);
}

/* Returns true when got matches want; *max_err receives the max abs error. */
static bool compare(const nn_tensor *got, const nn_tensor *want, double rtol, double atol,
                    double *max_err, char *why, size_t why_len) {
  *max_err = 0;
  why[0] = '\0';
  if (got->dtype != want->dtype) {
    snprintf(why, why_len, "dtype %s, expected %s", nn_dtype_name(got->dtype), nn_dtype_name(want->dtype));
    return false;
  }
  bool shape_ok = got->rank == want->rank;
  for (int i = 0; shape_ok && i < got->rank; i++)
    shape_ok = got->dims[i] == want->dims[i];
  if (!shape_ok) {
    char a[128] = "", b[128] = "";
    size_t oa = 0, ob = 0;
    for (int i = 0; i < got->rank && oa < sizeof a; i++)
      oa += (size_t)snprintf(a + oa, sizeof a - oa, "%s%lld", i ? "x" : "", (long long)got->dims[i]);
    for (int i = 0; i < want->rank && ob < sizeof b; i++)
      ob += (size_t)snprintf(b + ob, sizeof b - ob, "%s%lld", i ? "x" : "", (long long)want->dims[i]);
    snprintf(why, why_len, "shape [%s], expected [%s]", a, b);
    return false;
  }
  int64_t n = nn_tensor_numel(want);
  bool ok = true;
  bool is_float = nn_tool_dtype_is_float(want->dtype);
  for (int64_t i = 0; i < n; i++) {
    if (want->dtype == NN_DTYPE_STRING) {
      const nn_string *g = (const nn_string *)got->data + i, *w = (const nn_string *)want->data + i;
      if (g->len != w->len || (w->len && memcmp(g->data, w->data, w->len) != 0)) {
        if (ok)
          snprintf(why, why_len, "element %lld: got \"%.*s\" (%zu bytes), expected \"%.*s\"",
                   (long long)i, (int)(g->len < 40 ? g->len : 40), g->len ? g->data : "", g->len,
                   (int)(w->len < 40 ? w->len : 40), w->len ? w->data : "");
        ok = false;
      }
      continue;
    }
    if (!is_float) {
      size_t es = nn_dtype_size(want->dtype);
      if (memcmp((const char *)got->data + i * es, (const char *)want->data + i * es, es) != 0) {
        double e = fabs(elem_double(got, i) - elem_double(want, i));
        if (e > *max_err || e == 0)
          *max_err = e > *max_err ? e : *max_err;
        if (ok)
          snprintf(why, why_len, "element %lld differs", (long long)i);
        ok = false;
      }
      continue;
    }
    double g = elem_double(got, i), w = elem_double(want, i);
    if (isnan(w) || isnan(g)) {
      if (!(isnan(w) && isnan(g))) {
        if (ok)
          snprintf(why, why_len, "element %lld: got %g, expected %g", (long long)i, g, w);
        ok = false;
      }
      continue;
    }
    if (isinf(w) || isinf(g)) {
      if (g != w) {
        if (ok)
          snprintf(why, why_len, "element %lld: got %g, expected %g", (long long)i, g, w);
        ok = false;
      }
      continue;
    }
    double e = fabs(g - w);
    if (e > *max_err)
      *max_err = e;
    if (e > atol + rtol * fabs(w)) {
      if (ok)
        snprintf(why, why_len, "element %lld: got %.9g, expected %.9g", (long long)i, g, w);
      ok = false;
    }
  }
  return ok;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted list of entries of dir starting with prefix; caller frees. */
static int list_dir(const char *dir, const char *prefix, char ***out) {
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  int n = 0, cap = 16;
  char **v = malloc((size_t)cap * sizeof *v);
  struct dirent *e;
  while (v && (e = readdir(d))) {
    if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
      continue;
    if (n == cap) {
      cap *= 2;
      char **nv = realloc(v, (size_t)cap * sizeof *v);
      if (!nv)
        break;
      v = nv;
    }
    v[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(v, (size_t)n, sizeof *v, name_cmp);
  *out = v;
  return n;
}

static void free_list(char **v, int n) {
  for (int i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/* Index K of "input_K.pb". */
static int pb_index(const char *name, const char *prefix) {
  return atoi(name + strlen(prefix));
}

static int by_pb_index(const void *a, const void *b) {
  const char *x = *(char *const *)a, *y = *(char *const *)b;
  int ix = atoi(strchr(x, '_') + 1), iy = atoi(strchr(y, '_') + 1);
  return ix - iy;
}

static int run_check(const opts *o) {
  char path[4096];
  snprintf(path, sizeof path, "%s/model.onnx", o->check_dir);
  nn_session *s = NULL;
  nn_error err = {0};
  /* a case is self-contained: nothing it names may lead out of it (a model
   * that does not resolve is reported by the loader, with its reason) */
  int eno = 0;
  if (resolve_in(o->check_dir, path, &eno) == RESOLVES_OUTSIDE) {
    printf("UNSUPPORTED %s resolves outside the case directory\n", path);
    return EXIT_UNSUPPORTED;
  }
  nn_status st = make_session(path, o, &s, &err);
  if (st != NN_OK) {
    printf("UNSUPPORTED %s: %s\n", nn_status_str(st), err.msg);
    return EXIT_UNSUPPORTED;
  }
  char **sets = NULL;
  int n_sets = list_dir(o->check_dir, "test_data_set_", &sets);
  int rc = 0;
  if (n_sets <= 0) {
    fprintf(stderr, "nn-run: no test_data_set_* in %s\n", o->check_dir);
    nn_session_free(s);
    return EXIT_UNSUPPORTED;
  }
  int n_in = 0, n_out = 0;
  nn_session_io_count(s, &n_in, &n_out);
  for (int ds = 0; ds < n_sets && rc == 0; ds++) {
    char setdir[4096];
    snprintf(setdir, sizeof setdir, "%s/%s", o->check_dir, sets[ds]);
    char **ins = NULL, **outs = NULL;
    resolves where = resolve_in(o->check_dir, setdir, &eno);
    if (where != RESOLVES_INSIDE) {
      printf("UNSUPPORTED %s %s\n", setdir,
             where == RESOLVES_OUTSIDE ? "resolves outside the case directory" : strerror(eno));
      rc = EXIT_UNSUPPORTED;
      break;
    }
    int ni = list_dir(setdir, "input_", &ins);
    int no = list_dir(setdir, "output_", &outs);
    if (ni < 0 || no < 0) {
      printf("UNSUPPORTED cannot list %s: %s\n", setdir, strerror(errno));
      if (ni >= 0)
        free_list(ins, ni);
      if (no >= 0)
        free_list(outs, no);
      rc = EXIT_UNSUPPORTED;
      break;
    }
    qsort(ins, (size_t)ni, sizeof *ins, by_pb_index);
    qsort(outs, (size_t)no, sizeof *outs, by_pb_index);
    /* inputs: by name when the file names a session input, else by position */
    for (int i = 0; i < n_in; i++)
      nn_session_reset_input(s, i);
    int positional = 0;
    for (int k = 0; k < ni && rc == 0; k++) {
      char p[4200];
      snprintf(p, sizeof p, "%s/%s", setdir, ins[k]);
      nn_io_info ii;
      if (positional < n_in && nn_session_input_info(s, positional, &ii) == NN_OK &&
          ii.kind != NN_IO_TENSOR) {
        /* a sequence or optional input: its .pb is a SequenceProto / OptionalProto */
        nn_tensor *items = NULL;
        int cnt = 0, none = 0;
        char *iname = NULL;
        nn_error perr = {0};
        st = load_items(p, o->check_dir, ii.kind == NN_IO_OPTIONAL, &items, &cnt, &none, &iname, &perr);
        if (st != NN_OK) {
          printf("UNSUPPORTED %s\n", perr.msg);
          rc = EXIT_UNSUPPORTED;
          break;
        }
        int idx = -1;
        if (!iname[0] || nn_session_find_input(s, iname, &idx) != NN_OK)
          idx = positional;
        positional = idx + 1;
        st = nn_session_set_input_items(s, idx, none ? -1 : cnt, items);
        if (st != NN_OK) {
          printf("ERROR %s\n", nn_session_last_error(s));
          rc = st == NN_ERR_UNSUPPORTED ? EXIT_UNSUPPORTED : EXIT_MISMATCH;
        }
        free_items(items, cnt);
        nn_tool_free(iname);
        continue;
      }
      nn_tensor t;
      char *name = NULL;
      nn_error perr = {0};
      st = load_pb(p, o->check_dir, &t, &name, &perr);
      if (st != NN_OK) {
        printf("UNSUPPORTED %s\n", perr.msg);
        rc = EXIT_UNSUPPORTED;
        break;
      }
      int idx = -1;
      if (!name[0] || nn_session_find_input(s, name, &idx) != NN_OK)
        idx = positional;
      positional = idx + 1;
      if (idx >= n_in) {
        printf("UNSUPPORTED input file %s has no matching model input\n", ins[k]);
        rc = EXIT_UNSUPPORTED;
      } else {
        st = feed(s, idx, &t);
        if (st != NN_OK)
          rc = st == NN_ERR_UNSUPPORTED ? EXIT_UNSUPPORTED : EXIT_MISMATCH;
      }
      nn_tool_tensor_free(&t);
      nn_tool_free(name);
    }
    (void)pb_index;
    if (rc == 0) {
      st = nn_session_run(s);
      if (st != NN_OK) {
        const char *msg = nn_session_last_error(s);
        bool unsupported = st == NN_ERR_UNSUPPORTED || st == NN_ERR_INVALID_MODEL;
        printf("%s %s: %s\n", unsupported ? "UNSUPPORTED" : "ERROR", nn_status_str(st), msg);
        rc = unsupported ? EXIT_UNSUPPORTED : EXIT_MISMATCH;
      }
    }
    if (rc == 0 && no != n_out) {
      printf("FAIL the case has %d outputs, the model %d\n", no, n_out);
      rc = EXIT_MISMATCH;
    }
    for (int k = 0; k < no && rc == 0; k++) {
      char p[4200];
      snprintf(p, sizeof p, "%s/%s", setdir, outs[k]);
      nn_io_info oi;
      if (k < n_out && nn_session_output_info(s, k, &oi) == NN_OK && oi.kind != NN_IO_TENSOR) {
        /* a sequence or optional output: item by item */
        nn_tensor *want_items = NULL;
        int cnt = 0, none = 0, got_n = 0, got_none = 0;
        const nn_tensor *got_items = NULL;
        nn_error perr = {0};
        st = load_items(p, o->check_dir, oi.kind == NN_IO_OPTIONAL, &want_items, &cnt, &none, NULL, &perr);
        if (st != NN_OK) {
          printf("UNSUPPORTED %s\n", perr.msg);
          rc = EXIT_UNSUPPORTED;
          break;
        }
        double max_err = 0;
        char why[256] = "";
        bool ok = nn_session_output_items(s, k, &got_n, &got_items, &got_none) == NN_OK;
        if (ok && (got_none != none || got_n != cnt)) {
          snprintf(why, sizeof why, "%d items%s, expected %d%s", got_n, got_none ? " (none)" : "", cnt,
                   none ? " (none)" : "");
          ok = false;
        }
        for (int i = 0; ok && i < cnt; i++) {
          double e = 0;
          ok = compare(&got_items[i], &want_items[i], o->rtol, o->atol, &e, why, sizeof why);
          if (e > max_err)
            max_err = e;
        }
        printf("output %s: %d items, max_abs_err=%.3g%s%s\n", oi.name, got_n, max_err, ok ? "" : " ",
               ok ? "" : why);
        if (!ok)
          rc = EXIT_MISMATCH;
        free_items(want_items, cnt);
        continue;
      }
      nn_tensor want;
      char *name = NULL;
      nn_error perr = {0};
      st = load_pb(p, o->check_dir, &want, &name, &perr);
      if (st != NN_OK) {
        printf("UNSUPPORTED %s\n", perr.msg);
        rc = EXIT_UNSUPPORTED;
        break;
      }
      int idx = k;
      if (name[0])
        nn_session_find_output(s, name, &idx);
      const nn_tensor *got = NULL;
      nn_io_info info;
      nn_session_output_info(s, idx, &info);
      nn_session_output_tensor(s, idx, &got);
      double max_err = 0;
      char why[256];
      bool ok = got && compare(got, &want, o->rtol, o->atol, &max_err, why, sizeof why);
      printf("output %s: max_abs_err=%.3g%s%s\n", info.name, max_err, ok ? "" : " ", ok ? "" : why);
      if (!ok)
        rc = EXIT_MISMATCH;
      nn_tool_tensor_free(&want);
      nn_tool_free(name);
    }
    free_list(ins, ni);
    free_list(outs, no);
    release_kept_strings(); /* the run is over: its string inputs may go */
  }
  free_list(sets, n_sets);
  print_nodes(s, o);
  /* free first: objects still alive when the device goes are reported then */
  nn_session_free(s);
  uint64_t vmsgs = nn_vulkan_validation_messages();
  if (vmsgs) {
    printf("validation layer: %llu messages (see stderr)\n", (unsigned long long)vmsgs);
    if (rc == 0)
      rc = EXIT_MISMATCH;
  }
  if (rc == 0)
    printf("PASS\n");
  else if (rc == EXIT_MISMATCH)
    printf("FAIL\n");
  return rc;
}

/* The median of n sorted values (the mean of the middle two when n is even). */
static double median_sorted(const double *v, int n) {
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* B is a second session of the model, created and run with VAR=VALUE in the
 * environment (VAR removed around A's runs: a variable the environment
 * already had is B's alone), fed A's input tensors (bound, not copied).
 * Returns the exit status. */
static int run_ab(const opts *o, nn_session *a) {
  char var[AB_VAR_MAX];
  const char *val = strchr(o->ab, '=') + 1;   /* checked when parsed */
  memcpy(var, o->ab, (size_t)(val - 1 - o->ab));
  var[val - 1 - o->ab] = '\0';
  nn_session *b = NULL;
  nn_error err = {0};
  int rc = 0, n_in = 0, n_out = 0;
  double *ra = NULL, *rb = NULL, *ratio = NULL;
  setenv(var, val, 1);
  nn_status st = make_session(o->model, o, &b, &err);
  unsetenv(var);
  if (st != NN_OK) {
    fprintf(stderr, "nn-run: --ab %s: %s: %s\n", o->ab, nn_status_str(st), err.msg);
    return EXIT_UNSUPPORTED;
  }
  nn_session_io_count(a, &n_in, &n_out);
  for (int i = 0; i < n_in; i++) {
    nn_tensor *t;
    if (nn_session_input_tensor(a, i, &t) != NN_OK)
      continue;   /* an optional input left at its default */
    if (nn_session_bind_input(b, i, t) != NN_OK) {
      fprintf(stderr, "nn-run: --ab: input %d: %s\n", i, nn_session_last_error(b));
      rc = EXIT_UNSUPPORTED;
      goto out;
    }
  }
  ra = malloc((size_t)o->bench * sizeof *ra);
  rb = malloc((size_t)o->bench * sizeof *rb);
  ratio = malloc((size_t)o->bench * sizeof *ratio);
  if (!ra || !rb || !ratio) {
    fprintf(stderr, "nn-run: out of memory\n");
    rc = EXIT_UNSUPPORTED;
    goto out;
  }
  /* B's warm-up (A's is done): planning and the thread calibration */
  for (int w = 0; w < NN_CPU_CALIBRATION_RUNS + 2; w++) {
    setenv(var, val, 1);
    st = nn_session_run(b);
    unsetenv(var);
    if (st != NN_OK) {
      fprintf(stderr, "nn-run: --ab %s: %s: %s\n", o->ab, nn_status_str(st),
              nn_session_last_error(b));
      rc = EXIT_UNSUPPORTED;
      goto out;
    }
  }
  for (int r = 0; r < o->bench; r++) {
    for (int k = 0; k < 2; k++) {
      bool use_b = (k == 0) == (r % 2 == 1);   /* A B, then B A */
      if (use_b)
        setenv(var, val, 1);
      double t0 = now_ms();
      nn_session_run(use_b ? b : a);
      double dt = now_ms() - t0;
      if (use_b)
        unsetenv(var);
      (use_b ? rb : ra)[r] = dt;
    }
    ratio[r] = rb[r] / ra[r];
  }
  qsort(ra, (size_t)o->bench, sizeof *ra, cmp_double);
  qsort(rb, (size_t)o->bench, sizeof *rb, cmp_double);
  qsort(ratio, (size_t)o->bench, sizeof *ratio, cmp_double);
  printf("ab: A median_ms=%.4f min_ms=%.4f  B (%s) median_ms=%.4f min_ms=%.4f\n",
         median_sorted(ra, o->bench), ra[0], o->ab, median_sorted(rb, o->bench), rb[0]);
  printf("ab: B/A median of pair ratios %.4f (quartiles %.4f .. %.4f)\n",
         median_sorted(ratio, o->bench), ratio[o->bench / 4], ratio[(3 * o->bench) / 4]);
out:
  free(ra);
  free(rb);
  free(ratio);
  nn_session_free(b);
  return rc;
}

static int run_model(const opts *o) {
  nn_session *s = NULL;
  nn_error err = {0};
  nn_status st = make_session(o->model, o, &s, &err);
  if (st != NN_OK) {
    fprintf(stderr, "nn-run: %s: %s\n", nn_status_str(st), err.msg);
    return EXIT_UNSUPPORTED;
  }
  int rc = 0;
  int n_in = 0, n_out = 0;
  nn_session_io_count(s, &n_in, &n_out);
  char *fed = calloc((size_t)n_in + 1, 1);
  const shape_spec **shape_of = calloc((size_t)n_in + 1, sizeof *shape_of);
  if (!fed || !shape_of) {
    fprintf(stderr, "nn-run: out of memory\n");
    rc = EXIT_UNSUPPORTED;
    goto out;
  }
  for (int k = 0; k < o->n_shapes; k++) {
    const shape_spec *sp = &o->shapes[k];
    int idx = -1;
    if (nn_session_find_input(s, sp->name, &idx) != NN_OK) {
      char names[1024] = "";
      size_t off = 0;
      for (int i = 0; i < n_in && off < sizeof names; i++) {
        nn_io_info info;
        nn_session_input_info(s, i, &info);
        off += (size_t)snprintf(names + off, sizeof names - off, "%s'%s'", i ? ", " : "",
                                info.name);
      }
      fprintf(stderr, "nn-run: --shape %s: the model has no input '%s' (its inputs: %s)\n",
              sp->arg, sp->name, n_in ? names : "none");
      rc = EXIT_UNSUPPORTED;
      goto out;
    }
    nn_io_info info;
    nn_session_input_info(s, idx, &info);
    if (info.kind != NN_IO_TENSOR) {
      fprintf(stderr, "nn-run: --shape %s: input '%s' is not a tensor\n", sp->arg, info.name);
      rc = EXIT_UNSUPPORTED;
      goto out;
    }
    if (info.rank >= 0 && info.rank != sp->rank) {
      fprintf(stderr, "nn-run: --shape %s: input '%s' has rank %d, the shape gives %d dims\n",
              sp->arg, info.name, info.rank, sp->rank);
      rc = EXIT_UNSUPPORTED;
      goto out;
    }
    for (int d = 0; d < sp->rank && info.rank >= 0; d++)
      if (info.dims[d] >= 0 && info.dims[d] != sp->dims[d]) {
        fprintf(stderr, "nn-run: --shape %s: dim %d of input '%s' is fixed at %lld by the model\n",
                sp->arg, d, info.name, (long long)info.dims[d]);
        rc = EXIT_UNSUPPORTED;
        goto out;
      }
    shape_of[idx] = sp;
  }
  for (int k = 0; k < o->n_inputs; k++) {
    /* NAME=FILE.pb, or FILE.pb alone: the tensor's own name, else position */
    const char *eq = strchr(o->input_spec[k], '=');
    const char *file = eq ? eq + 1 : o->input_spec[k];
    nn_tensor t;
    char *tname = NULL;
    nn_error perr = {0};
    if (load_pb(file, NULL, &t, &tname, &perr) != NN_OK) {
      fprintf(stderr, "nn-run: %s\n", perr.msg);
      rc = EXIT_UNSUPPORTED;
      goto out;
    }
    char name[512];
    if (eq)
      snprintf(name, sizeof name, "%.*s", (int)(eq - o->input_spec[k]), o->input_spec[k]);
    else
      snprintf(name, sizeof name, "%s", tname);
    nn_tool_free(tname);
    int idx = -1;
    if (nn_session_find_input(s, name, &idx) != NN_OK) {
      if (eq || name[0]) {
        fprintf(stderr, "nn-run: the model has no input '%s'\n", name);
        nn_tool_tensor_free(&t);
        rc = EXIT_UNSUPPORTED;
        goto out;
      }
      idx = k;
    }
    if (idx >= 0 && idx < n_in && shape_of[idx]) {
      fprintf(stderr, "nn-run: --shape %s: input '%s' is given by --input as well\n",
              shape_of[idx]->arg, shape_of[idx]->name);
      nn_tool_tensor_free(&t);
      rc = EXIT_UNSUPPORTED;
      goto out;
    }
    st = feed(s, idx, &t);
    nn_tool_tensor_free(&t);
    if (st != NN_OK) {
      rc = EXIT_UNSUPPORTED;
      goto out;
    }
    fed[idx] = 1;
  }
  for (int i = 0; i < n_in; i++) {
    nn_io_info info;
    nn_session_input_info(s, i, &info);
    const shape_spec *sp = shape_of[i];
    /* an optional input (initializer default) is generated only when a
     * --shape names it */
    if (fed[i] || (info.has_default && !sp))
      continue;
    int64_t dims[NN_MAX_RANK];
    int rank = info.rank < 0 ? 0 : info.rank;
    for (int d = 0; d < info.rank; d++)
      dims[d] = info.dims[d] < 0 ? 1 : info.dims[d];
    if (sp) {
      rank = sp->rank;
      memcpy(dims, sp->dims, sizeof(int64_t) * (size_t)rank);
    }
    nn_tensor *t;
    if (nn_session_set_input_shape(s, i, rank, dims) != NN_OK ||
        nn_session_input_tensor(s, i, &t) != NN_OK) {
      if (sp)
        fprintf(stderr, "nn-run: --shape %s: %s\n", sp->arg, nn_session_last_error(s));
      else
        fprintf(stderr, "nn-run: input '%s': %s\n", info.name, nn_session_last_error(s));
      rc = EXIT_UNSUPPORTED;
      goto out;
    }
    fill_random(t, (uint64_t)i + 1);
    if (sp)
      fed[i] = 1;   /* an optional input: generated, saved with the others */
  }
  if (o->save_inputs_dir) {
    make_dirs(o->save_inputs_dir);
    for (int i = 0, k = 0; i < n_in; i++) {
      nn_io_info info;
      nn_tensor *t;
      nn_session_input_info(s, i, &info);
      if (info.has_default && !fed[i])
        continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/input_%d.pb", o->save_inputs_dir, k++);
      if (nn_session_input_tensor(s, i, &t) != NN_OK || save_pb(p, info.name, t) != 0) {
        fprintf(stderr, "nn-run: cannot write %s\n", p);
        rc = EXIT_MISMATCH;
        goto out;
      }
    }
  }
  double t0 = now_ms();
  st = nn_session_run(s);
  double first_ms = now_ms() - t0;
  if (st != NN_OK) {
    /* no expected output to mismatch here: a run that fails means the model
     * cannot be run (a limit, a bad shape found at plan time, ...) */
    fprintf(stderr, "nn-run: %s: %s\n", nn_status_str(st), nn_session_last_error(s));
    rc = EXIT_UNSUPPORTED;
    goto out;
  }
  for (int i = 0; i < n_out; i++) {
    const nn_tensor *t;
    nn_io_info info;
    nn_session_output_info(s, i, &info);
    nn_session_output_tensor(s, i, &t);
    char dims[128] = "";
    size_t off = 0;
    for (int d = 0; d < t->rank && off < sizeof dims; d++)
      off += (size_t)snprintf(dims + off, sizeof dims - off, "%s%lld", d ? "x" : "", (long long)t->dims[d]);
    double sum = 0;
    int64_t n = nn_tensor_numel(t);
    for (int64_t k = 0; k < n; k++)
      sum += elem_double(t, k);
    printf("output %s: %s [%s] sum=%.6g\n", info.name, nn_dtype_name(t->dtype), dims, sum);
    if (o->save_dir) {
      char p[4096];
      snprintf(p, sizeof p, "%s/output_%d.pb", o->save_dir, i);
      make_dirs(o->save_dir);
      if (save_pb(p, info.name, t) != 0) {
        fprintf(stderr, "nn-run: cannot write %s\n", p);
        rc = EXIT_MISMATCH;
      }
    }
  }
  printf("first_run_ms=%.3f\n", first_ms);
  if (o->stats && o->bench <= 0) {
    print_stats(s, stdout);
    print_nodes(s, o);
  }
  if (o->bench > 0) {
    /* warm-up: past the CPU backend's calibration of threads per step
     * (nn.h), so the timed runs are the steady state a stream sees */
    for (int w = 1; w < NN_CPU_CALIBRATION_RUNS + 2; w++)
      nn_session_run(s);
    double *ms = malloc((size_t)o->bench * sizeof *ms);
    for (int r = 0; r < o->bench && ms; r++) {
      double a = now_ms();
      nn_session_run(s);
      ms[r] = now_ms() - a;
    }
    if (ms) {
      qsort(ms, (size_t)o->bench, sizeof *ms, cmp_double);
      printf("median_ms=%.4f min_ms=%.4f\n", median_sorted(ms, o->bench), ms[0]);
      free(ms);
    }
    if (o->ab) {
      int abrc = run_ab(o, s);
      if (abrc)
        rc = abrc;
    }
    if (o->stats) {   /* after the runs: their peak RSS and the steady state */
      print_stats(s, stdout);
      print_nodes(s, o);
    }
  }
out:
  free(fed);
  free(shape_of);
  nn_session_free(s);
  release_kept_strings();
  return rc;
}

static void list_op(void *user, const char *domain, const char *op_type, const int *versions,
                    int n_versions) {
  (void)user;
  printf("%s\t%s\t", domain, op_type);
  for (int i = 0; i < n_versions; i++)
    printf("%s%d", i ? " " : "", versions[i]);
  printf("\n");
}

static void list_ops(void) {
  nn_op_list(list_op, NULL);
}

int main(int argc, char **argv) {
  opts o = {0};
  o.backend = NN_BACKEND_CPU;
  o.threads = 1;
  o.rtol = 1e-3;
  o.atol = 1e-5;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--check") == 0 && next) {
      o.check_dir = next;
      i++;
    } else if (strcmp(a, "--backend") == 0 && next) {
      if (strcmp(next, "cpu") == 0)
        o.backend = NN_BACKEND_CPU;
      else if (strcmp(next, "vulkan") == 0)
        o.backend = NN_BACKEND_VULKAN;
      else if (strcmp(next, "auto") == 0)
        o.backend = NN_BACKEND_AUTO;
      else {
        fprintf(stderr, "nn-run: unknown backend '%s'\n", next);
        return EXIT_UNSUPPORTED;
      }
      i++;
    } else if (strcmp(a, "--threads") == 0 && next) {
      o.threads = atoi(next);
      i++;
    } else if (strcmp(a, "--input") == 0 && next) {
      if (o.n_inputs < MAX_SPECS)
        o.input_spec[o.n_inputs++] = next;
      i++;
    } else if (strcmp(a, "--shape") == 0 && next) {
      if (o.n_shapes == MAX_SPECS) {
        fprintf(stderr, "nn-run: more than %d --shape options\n", MAX_SPECS);
        return EXIT_UNSUPPORTED;
      }
      char why[256];
      if (parse_shape(next, &o.shapes[o.n_shapes], why, sizeof why) != 0) {
        fprintf(stderr, "nn-run: --shape '%s': %s\n", next, why);
        return EXIT_UNSUPPORTED;
      }
      o.n_shapes++;
      i++;
    } else if (strcmp(a, "--save-inputs") == 0 && next) {
      o.save_inputs_dir = next;
      i++;
    } else if (strcmp(a, "--save-outputs") == 0 && next) {
      o.save_dir = next;
      i++;
    } else if (strcmp(a, "--bench") == 0 && next) {
      o.bench = atoi(next);
      i++;
    } else if (strcmp(a, "--ab") == 0 && next) {
      const char *eq = strchr(next, '=');
      if (!eq || eq == next || eq - next >= AB_VAR_MAX) {
        fprintf(stderr, "nn-run: --ab needs VAR=VALUE (a name under %d bytes), got '%s'\n",
                AB_VAR_MAX, next);
        return EXIT_UNSUPPORTED;
      }
      o.ab = next;
      i++;
    } else if (strcmp(a, "--stats") == 0) {
      o.stats = 1;
    } else if (strcmp(a, "--rtol") == 0 && next) {
      o.rtol = atof(next);
      i++;
    } else if (strcmp(a, "--atol") == 0 && next) {
      o.atol = atof(next);
      i++;
    } else if (strncmp(a, "--limit-", 8) == 0 && next) {
      char *end;
      errno = 0;
      long long v = strtoll(next, &end, 10);
      if (errno || *end || v <= 0) {
        fprintf(stderr, "nn-run: %s needs a positive integer, got '%s'\n", a, next);
        return EXIT_UNSUPPORTED;
      }
      int iv = v > 0x7fffffff ? 0x7fffffff : (int)v;
      if (strcmp(a + 8, "rank") == 0) o.limits.max_rank = iv;
      else if (strcmp(a + 8, "elems") == 0) o.limits.max_tensor_elems = v;
      else if (strcmp(a + 8, "weights") == 0) o.limits.max_weights_bytes = v;
      else if (strcmp(a + 8, "arena") == 0) o.limits.max_arena_bytes = v;
      else if (strcmp(a + 8, "nodes") == 0) o.limits.max_nodes = iv;
      else if (strcmp(a + 8, "depth") == 0) o.limits.max_graph_depth = iv;
      else if (strcmp(a + 8, "model") == 0) o.limits.max_model_bytes = v;
      else {
        fprintf(stderr, "nn-run: unknown option '%s'\n", a);
        return EXIT_UNSUPPORTED;
      }
      i++;
    } else if (strcmp(a, "--list-ops") == 0) {
      list_ops();
      return 0;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage();
      return 0;
    } else if (a[0] != '-' && !o.model) {
      o.model = a;
    } else {
      usage();
      return EXIT_UNSUPPORTED;
    }
  }
  if (o.ab && (o.bench <= 0 || o.check_dir)) {
    fprintf(stderr, "nn-run: --ab compares timed runs: it needs --bench RUNS and a MODEL\n");
    return EXIT_UNSUPPORTED;
  }
  if (o.n_shapes && o.check_dir) {
    fprintf(stderr, "nn-run: --shape applies to a MODEL run (a --check case brings its inputs)\n");
    return EXIT_UNSUPPORTED;
  }
  if (check_shapes(&o) != 0)
    return EXIT_UNSUPPORTED;
  if (o.check_dir)
    return run_check(&o);
  if (!o.model) {
    usage();
    return EXIT_UNSUPPORTED;
  }
  return run_model(&o);
}
