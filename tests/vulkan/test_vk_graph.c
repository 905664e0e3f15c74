/* test_vk_graph.c - whole models and ONNX node cases through vk_graph.c,
 * compared with the expected outputs of the case, under validation.
 *
 * It does what nn_session_run does around nn_vk_graph_run (load, plan, bind
 * inputs and outputs), so the Vulkan graph executor is tested before and
 * independently of its wiring into session.c.
 *
 *   test-vk-graph [--rtol R] [--atol A] [--all-vulkan] [--all-vulkan-list FILE]
 *                 [--except FILE] [--list FILE] [--base DIR] [--runs N]
 *                 [CASE_DIR | DIR_OF_CASES]...
 *
 * --all-vulkan  a case passes only with nodes_cpu=0
 * --all-vulkan-list FILE  the cases named in FILE pass only with nodes_cpu=0
 * --except FILE the cases named in FILE are left out
 * --list FILE   case names (one per line, # comments) relative to --base
 * --runs N      run each case N times: replays must agree and, after the
 *               first, make no heap allocation
 * --cycles N    repeat each case N times from scratch (load, plan, build,
 *               run, destroy): the runtime heap must come back to where it
 *               was and RSS must stay flat
 * --no-hold     do not keep a context reference between cases, so every case
 *               creates and destroys the Vulkan device too
 * --timing      print build and run times
 * Prints one line per case and a summary; exits 1 when a case fails.
 */
#include <time.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include "backend.h"
#include "include/nn_file.h"
#include "onnx/loader.h"
#include "vk_test_util.h"

typedef struct opts {
  double rtol, atol;
  bool all_vulkan;
  int runs;
  bool quiet;
  bool timing;
} opts;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Through the runtime's guarded reader (a FIFO or a device in a case
 * directory is refused, not waited on); free with nn_file_free. */
static unsigned char *read_all(const char *path, size_t *size) {
  void *buf = NULL;
  nn_error err = {0};
  if (nn_file_read(path, (size_t)4 << 30, &buf, size, &err) != NN_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return NULL;
  }
  return buf;
}

static bool load_tensor(const char *path, nn_tensor *t, char **name) {
  size_t size = 0;
  unsigned char *buf = read_all(path, &size);
  if (!buf)
    return false;
  nn_error err = {0};
  nn_status st = nn_tensor_decode(buf, size, t, name, &err);
  nn_file_free(buf);
  if (st != NN_OK)
    fprintf(stderr, "%s: %s\n", path, err.msg);
  return st == NN_OK;
}

static bool is_dir(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool file_exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static bool path_exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

static bool compare(const nn_tensor *got, const nn_tensor *want, const opts *o, char *why,
                    size_t why_len) {
  if (got->dtype != want->dtype || got->rank != want->rank) {
    snprintf(why, why_len, "dtype/rank %d/%d, want %d/%d", got->dtype, got->rank, want->dtype,
             want->rank);
    return false;
  }
  for (int i = 0; i < got->rank; i++)
    if (got->dims[i] != want->dims[i]) {
      snprintf(why, why_len, "dim %d is %lld, want %lld", i, (long long)got->dims[i],
               (long long)want->dims[i]);
      return false;
    }
  int64_t n = nn_tensor_numel(want);
  if (want->dtype == NN_DTYPE_FLOAT16 || want->dtype == NN_DTYPE_BFLOAT16) {
    bool half = want->dtype == NN_DTYPE_FLOAT16;
    for (int64_t i = 0; i < n; i++) {
      uint16_t gb = ((const uint16_t *)got->data)[i], wb = ((const uint16_t *)want->data)[i];
      float g = half ? nn_f16_to_f32(gb) : nn_bf16_to_f32(gb);
      float w = half ? nn_f16_to_f32(wb) : nn_bf16_to_f32(wb);
      if ((isnan(w) && isnan(g)) || (isinf(w) && g == w))
        continue;
      /* half precision: one unit in the last place at least */
      if (!(fabs(g - w) <= o->atol + fmax(o->rtol, half ? 1e-3 : 8e-3) * fabs(w))) {
        snprintf(why, why_len, "[%lld]: %g vs %g", (long long)i, g, w);
        return false;
      }
    }
    return true;
  }
  if (want->dtype == NN_DTYPE_FLOAT || want->dtype == NN_DTYPE_DOUBLE) {
    double worst = 0;
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
      double g = want->dtype == NN_DTYPE_FLOAT ? ((const float *)got->data)[i]
                                               : ((const double *)got->data)[i];
      double w = want->dtype == NN_DTYPE_FLOAT ? ((const float *)want->data)[i]
                                               : ((const double *)want->data)[i];
      if (isnan(w) && isnan(g))
        continue;
      if (isinf(w) && g == w)
        continue;
      double d = fabs(g - w);
      if (!(d <= o->atol + o->rtol * fabs(w))) {
        if (first < 0)
          first = i;
        bad++;
      }
      if (d > worst)
        worst = d;
    }
    if (bad) {
      double g = want->dtype == NN_DTYPE_FLOAT ? ((const float *)got->data)[first]
                                               : ((const double *)got->data)[first];
      double w = want->dtype == NN_DTYPE_FLOAT ? ((const float *)want->data)[first]
                                               : ((const double *)want->data)[first];
      snprintf(why, why_len, "%lld of %lld differ (first [%lld]: %g vs %g), max abs err %g",
               (long long)bad, (long long)n, (long long)first, g, w, worst);
      return false;
    }
    return true;
  }
  if (want->nbytes != got->nbytes || (n && memcmp(got->data, want->data, want->nbytes) != 0)) {
    snprintf(why, why_len, "values differ");
    return false;
  }
  return true;
}

typedef struct counts {
  int cases, passed, all_vulkan;
} counts;

/* One case directory: model.onnx + test_data_set_0. */
/* Case-name sets read from list files (one name per line, '#' comments):
 * --all-vulkan-list names the cases that must run with every node on
 * Vulkan, --except the ones to leave out. */
typedef struct name_set {
  char **names;
  int n;
} name_set;

static name_set g_all_vulkan_set, g_except_set;

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of a list file, in file order; sorted for name_set_has when
 * `sort`. */
static bool name_set_read(name_set *s, const char *path, bool sort) {
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  char line[1024];
  int cap = s->n;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n# ")] = '\0';
    if (!line[0])
      continue;
    if (s->n == cap) {
      cap = cap ? cap * 2 : 256;
      s->names = realloc(s->names, (size_t)cap * sizeof *s->names);
    }
    s->names[s->n++] = strdup(line);
  }
  fclose(f);
  if (sort)
    qsort(s->names, (size_t)s->n, sizeof *s->names, name_cmp);
  return true;
}

static bool name_set_has(const name_set *s, const char *name) {
  return s->n && bsearch(&name, s->names, (size_t)s->n, sizeof *s->names, name_cmp);
}

static void name_set_free(name_set *s) {
  for (int i = 0; i < s->n; i++)
    free(s->names[i]);
  free(s->names);
  s->names = NULL;
  s->n = 0;
}

static void run_case(const char *dir, const opts *o, counts *cnt) {
  char path[4096], why[1024] = "", fallback[256] = "";
  nn_error err = {0};
  nn_graph *g = NULL;
  nn_plan plan;
  memset(&plan, 0, sizeof plan);
  nn_vk_graph *vg = NULL;
  nn_tensor ins[16], wants[16];
  char *in_names[16] = {0}, *out_names[16] = {0};
  void *outs[16] = {0};
  int n_in = 0, n_want = 0;
  bool *need = NULL, *on_dev = NULL;
  bool ok = false;
  nn_vk_graph_stats st = {0};
  const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
  memset(ins, 0, sizeof ins);
  memset(wants, 0, sizeof wants);

  snprintf(path, sizeof path, "%s/model.onnx", dir);
  size_t size = 0;
  unsigned char *model = read_all(path, &size);
  if (!model) {
    snprintf(why, sizeof why, "cannot read %.500s", path);
    goto out;
  }
  nn_limits lim;
  nn_options opt;
  nn_options_init(&opt);
  lim = opt.limits;
  if (nn_graph_load(model, size, dir, &lim, &g, &err) != NN_OK ||
      nn_graph_finalize(g, &lim, nn_kernel_find, &err) != NN_OK || nn_graph_simplify(g, nn_kernel_find, &err) != NN_OK) {
    snprintf(why, sizeof why, "load: %.500s", err.msg);
    goto out_model;
  }
  for (int k = 0; k < 16; k++) {
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, k);
    if (!file_exists(path))
      break;
    if (!load_tensor(path, &ins[k], &in_names[k])) {
      snprintf(why, sizeof why, "cannot decode %.500s", path);
      goto out_model;
    }
    n_in = k + 1;
  }
  for (int k = 0; k < 16; k++) {
    snprintf(path, sizeof path, "%s/test_data_set_0/output_%d.pb", dir, k);
    if (!file_exists(path))
      break;
    if (!load_tensor(path, &wants[k], &out_names[k])) {
      snprintf(why, sizeof why, "cannot decode %.500s", path);
      goto out_model;
    }
    n_want = k + 1;
  }

  /* feed: by name, else by position among the required inputs */
  need = calloc((size_t)g->n_values + 1, sizeof *need);
  nn_plan_value_needs(g, need);
  nn_plan_clear(g, &plan);
  int pos = 0;
  for (int i = 0; i < g->n_inputs; i++) {
    nn_value *v = &g->values[g->inputs[i]];
    const nn_tensor *t = NULL;
    for (int k = 0; k < n_in; k++)
      if (in_names[k] && in_names[k][0] && strcmp(in_names[k], v->name) == 0)
        t = &ins[k];
    if (!t && !v->has_default && pos < n_in && (!in_names[pos] || !in_names[pos][0]))
      t = &ins[pos];
    if (!v->has_default)
      pos++;
    if (t) {
      v->dtype = t->dtype;
      v->rank = t->rank;
      memcpy(v->dims, t->dims, sizeof v->dims);
      v->numel = nn_tensor_numel(t);
      v->nbytes = t->nbytes;
      v->data = t->data;
      v->known = need[g->inputs[i]];
    } else if (v->has_default) {
      v->data = v->const_data;
      v->known = true;
    } else {
      snprintf(why, sizeof why, "input '%s' missing", v->name);
      goto out_model;
    }
  }
  nn_ctx ctx = {0};
  ctx.err = &err;
  ctx.limits = &lim;
  ctx.threads = 1;
  if (nn_plan_build(g, &plan, &lim, &ctx, &err) != NN_OK) {
    snprintf(why, sizeof why, "plan: %.500s", err.msg);
    goto out_model;
  }
  double t_build = now_ms();
  if (nn_vk_graph_create(&vg, &err) != NN_OK) {
    snprintf(why, sizeof why, "vulkan create: %.500s", err.msg);
    goto out_model;
  }
  /* the session's partition, step by step (backend.h) */
  on_dev = calloc((size_t)plan.n_steps + 1, sizeof *on_dev);
  if (!on_dev) {
    snprintf(why, sizeof why, "out of memory");
    goto out_model;
  }
  nn_partition_steps(nn_backend_vulkan(), vg, g, &plan, on_dev);
  if (nn_vk_graph_build(vg, g, &plan, on_dev, &ctx, &err) != NN_OK) {
    snprintf(why, sizeof why, "vulkan build: %.500s", err.msg);
    goto out_model;
  }
  t_build = now_ms() - t_build;
  for (int i = 0; i < g->n_outputs && i < 16; i++) {
    nn_value *v = &g->values[g->outputs[i]];
    if (!v->known && v->kind == NN_VAL_INTER) {
      outs[i] = nn_aligned_alloc(v->nbytes ? v->nbytes : 1);
      v->data = outs[i];
    }
  }
  ok = true;
  long allocs_after_first = 0;
  double t_run0 = now_ms(), t_first = 0;
  for (int run = 0; run < o->runs && ok; run++) {
    if (run == 1) {
      allocs_after_first = vt_alloc_count();
      t_first = now_ms() - t_run0;
      t_run0 = now_ms();
    }
    if (nn_vk_graph_run(vg, &err) != NN_OK) {
      snprintf(why, sizeof why, "run: %.500s", err.msg);
      ok = false;
      break;
    }
    if (n_want != g->n_outputs) {
      snprintf(why, sizeof why, "%d outputs, the case has %d", g->n_outputs, n_want);
      ok = false;
    }
    for (int i = 0; i < g->n_outputs && i < n_want && ok; i++) {
      const nn_value *v = &g->values[g->outputs[i]];
      nn_tensor got = {v->dtype, v->rank, {0}, v->data, v->nbytes};
      memcpy(got.dims, v->dims, sizeof got.dims);
      char w2[400];
      if (!compare(&got, &wants[i], o, w2, sizeof w2)) {
        snprintf(why, sizeof why, "output %d ('%s') run %d: %s", i, v->name, run, w2);
        ok = false;
      }
    }
  }
  if (o->runs == 1)
    t_first = now_ms() - t_run0;
  if (ok && o->runs > 1 && vt_alloc_count() != allocs_after_first) {
    snprintf(why, sizeof why, "%ld heap allocations in %d replays",
             vt_alloc_count() - allocs_after_first, o->runs - 1);
    ok = false;
  }
  if (o->timing)
    printf("  %s: build %.1f ms, first run %.1f ms, then %.2f ms per run\n", name, t_build,
           t_first, o->runs > 1 ? (now_ms() - t_run0) / (o->runs - 1) : 0.0);
  nn_vk_graph_get_stats(vg, &st);
  snprintf(fallback, sizeof fallback, "%s", nn_vk_graph_fallback(vg));

out_model:
  nn_vk_graph_destroy(vg);
  if (g)
    nn_plan_clear(g, &plan);
  nn_graph_free(g);
  nn_file_free(model);
out:
  free(need);
  free(on_dev);
  for (int k = 0; k < 16; k++) {
    nn_aligned_free(ins[k].data);
    nn_aligned_free(wants[k].data);
    nn_free(in_names[k]);
    nn_free(out_names[k]);
    nn_aligned_free(outs[k]);
  }
  cnt->cases++;
  bool must_all_vulkan = o->all_vulkan || name_set_has(&g_all_vulkan_set, name);
  bool pass = ok && (!must_all_vulkan || st.nodes_cpu == 0);
  if (pass)
    cnt->passed++;
  if (ok && st.nodes_cpu == 0)
    cnt->all_vulkan++;
  if (!o->quiet || !pass) {
    printf("%s %s nodes_vulkan=%d nodes_cpu=%d", pass ? "PASS" : "FAIL", name, st.nodes_vulkan,
           st.nodes_cpu);
    if (st.nodes_cpu)
      printf(" (cpu: %s)", fallback);
    if (!ok)
      printf(" -- %s", why);
    printf("\n");
    fflush(stdout);
  }
}

static int g_cycles = 1;

/* A case repeated from scratch: the heap comes back, RSS stays flat. */
static void run_cycles(const char *p, const opts *o, counts *cnt) {
  opts q = *o;
  q.quiet = true;
  counts c = {0};
  size_t heap0 = vt_heap_current();
  long rss_warm = 0;
  int warm = g_cycles / 10 > 0 ? g_cycles / 10 : 1;
  double t0 = now_ms();
  for (int i = 0; i < g_cycles; i++) {
    run_case(p, &q, &c);
    if (i == warm - 1)
      rss_warm = vt_rss_kib();
  }
  long rss_end = vt_rss_kib();
  size_t heap1 = vt_heap_current();
  /* The Khronos layer (1.3.239) keeps a few KiB of bookkeeping per
   * created command pool/pipeline that it never returns, so RSS is judged
   * only without it (graph-cycles-rss); with it, every object must still be
   * destroyed (it reports leaks at device destruction) and the runtime heap
   * must come back exactly. */
  bool layer = vt_validation_requested();
  bool rss_ok = layer || rss_end - rss_warm < 2048;
  bool pass = c.passed == c.cases && heap1 == heap0 && rss_ok;
  cnt->cases++;
  cnt->passed += pass;
  printf("%s %s: %d cycles in %.1f s, %d passed; runtime heap %zu -> %zu bytes; RSS after %d: "
         "%ld KiB, after %d: %ld KiB (%+ld KiB)\n",
         pass ? "PASS" : "FAIL", p, g_cycles, (now_ms() - t0) / 1e3, c.passed, heap0, heap1, warm,
         rss_warm, g_cycles, rss_end, rss_end - rss_warm);
}

static void run_path(const char *p, const opts *o, counts *cnt) {
  char model[4096];
  snprintf(model, sizeof model, "%s/model.onnx", p);
  const char *base_name = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
  if (name_set_has(&g_except_set, base_name))
    return;
  if (file_exists(model)) {
    if (g_cycles > 1)
      run_cycles(p, o, cnt);
    else
      run_case(p, o, cnt);
    return;
  }
  DIR *d = opendir(p);
  if (!d) {
    fprintf(stderr, "%s: %s\n", p, strerror(errno));
    cnt->cases++;
    return;
  }
  char **names = NULL;
  int n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.')
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      names = realloc(names, (size_t)cap * sizeof *names);
    }
    names[n++] = strdup(de->d_name);
  }
  closedir(d);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  for (int i = 0; i < n; i++) {
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", p, names[i]);
    if (is_dir(sub))
      run_path(sub, o, cnt);
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  opts o = {1e-3, 1e-4, false, 1, false, false};
  counts cnt = {0};
  const char *base = ".";
  vt_install_allocator();
  bool hold = true;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--no-hold") == 0)
      hold = false;
  /* the cases live in ../shared (the ONNX suite, the real cases), which a
   * user's clone does not have: say so and skip rather than fail */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
    bool takes = next && (!strcmp(a, "--rtol") || !strcmp(a, "--atol") || !strcmp(a, "--runs") ||
                          !strcmp(a, "--cycles") || !strcmp(a, "--list") ||
                          !strcmp(a, "--all-vulkan-list") || !strcmp(a, "--except"));
    const char *p = !strcmp(a, "--base") && next ? next : a[0] == '-' ? NULL : a;
    if (p && !path_exists(p)) {
      printf("skip: %s is absent (the ONNX test suite and real cases: ../shared, or meson "
             "-Dshared_dir=DIR)\n", p);
      return 77;
    }
    name_set *set = !next ? NULL
                    : !strcmp(a, "--all-vulkan-list") ? &g_all_vulkan_set
                    : !strcmp(a, "--except")          ? &g_except_set
                                                      : NULL;
    if (set && !name_set_read(set, next, true)) {
      fprintf(stderr, "cannot open %s\n", next);
      return 1;
    }
    if (takes || !strcmp(a, "--base"))
      i++;
  }
  /* hold the context for the whole run: cases share its pipeline cache */
  nn_vk_ctx *ctx = NULL;
  VT_OK(nn_vk_ctx_acquire(&ctx, err));
  vt_check_validation(ctx);
  if (!hold) {
    nn_vk_ctx_release(ctx);
    ctx = NULL;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--rtol") == 0 && next) {
      o.rtol = atof(next);
      i++;
    } else if (strcmp(a, "--atol") == 0 && next) {
      o.atol = atof(next);
      i++;
    } else if (strcmp(a, "--runs") == 0 && next) {
      o.runs = atoi(next);
      i++;
    } else if (strcmp(a, "--cycles") == 0 && next) {
      g_cycles = atoi(next);
      i++;
    } else if (strcmp(a, "--no-hold") == 0) {
    } else if (strcmp(a, "--timing") == 0) {
      o.timing = true;
    } else if (strcmp(a, "--all-vulkan") == 0) {
      o.all_vulkan = true;
    } else if (strcmp(a, "--quiet") == 0) {
      o.quiet = true;
    } else if (strcmp(a, "--base") == 0 && next) {
      base = next;
      i++;
    } else if ((strcmp(a, "--all-vulkan-list") == 0 || strcmp(a, "--except") == 0) && next) {
      i++; /* read before the cases run (above) */
    } else if (strcmp(a, "--list") == 0 && next) {
      name_set list = {0};
      if (!name_set_read(&list, next, false)) {
        fprintf(stderr, "cannot open %s\n", next);
        return 1;
      }
      for (int k = 0; k < list.n; k++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", base, list.names[k]);
        run_path(p, &o, &cnt);
      }
      name_set_free(&list);
      i++;
    } else {
      run_path(a, &o, &cnt);
    }
  }
  nn_vk_ctx_release(ctx);
  name_set_free(&g_all_vulkan_set);
  name_set_free(&g_except_set);
  printf("%d of %d cases passed, %d with every node on vulkan\n", cnt.passed, cnt.cases,
         cnt.all_vulkan);
  int rc = vt_finish("test_vk_graph");
  return cnt.passed == cnt.cases ? rc : 1;
}
