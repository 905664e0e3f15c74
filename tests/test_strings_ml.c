/* test_strings_ml.c - string tensors (the session's string store, the
 * string operators, RegexFullMatch's pattern translation) and the hostile
 * edges of the ai.onnx.ml operators, TensorScatter and ArrayFeatureExtractor:
 * huge and invalid-UTF-8 strings, indices out of range, tree ensembles with
 * bad ids or cycles.  Each must end in a clear status, never a crash (run
 * under ASan by tools/sanitize.sh), and the steady state of a string graph
 * must not allocate. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model_builder.h"
#include "nn.h"
#include "nn_limits.h"
#include "ops/regex.h"

static int g_failed, g_passed;

#define CHECK(cond) \
  do { \
    if (cond) { \
      g_passed++; \
    } else { \
      g_failed++; \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    } \
  } while (0)

/* ---- model helpers ------------------------------------------------------------ */
static OnnxSubset__OperatorSetIdProto g_ml_opset, *g_opsets[2];

/* Add the ai.onnx.ml domain at `version` to m's opset imports. */
static void mb_ml(mb *m, int version) {
  onnx_subset__operator_set_id_proto__init(&g_ml_opset);
  g_ml_opset.domain = mb_str(m, "ai.onnx.ml");
  g_ml_opset.has_version = 1;
  g_ml_opset.version = version;
  g_opsets[0] = &m->opset;
  g_opsets[1] = &g_ml_opset;
  m->model.opset_import = g_opsets;
  m->model.n_opset_import = 2;
}

static OnnxSubset__AttributeProto *attr_new(mb *m, OnnxSubset__NodeProto *n, const char *name,
                                            OnnxSubset__AttributeProto__AttributeType type) {
  OnnxSubset__AttributeProto *a = &m->attrs[m->n_attrs];
  m->attr_ptrs[m->n_attrs++] = a;
  onnx_subset__attribute_proto__init(a);
  a->name = mb_str(m, name);
  a->has_type = 1;
  a->type = type;
  if (!n->attribute)
    n->attribute = &m->attr_ptrs[m->n_attrs - 1];
  n->n_attribute++;
  return a;
}

static void *blob(mb *m, size_t bytes) {
  void *p = calloc(1, bytes ? bytes : 1);
  m->blobs[m->n_blobs++] = p;
  return p;
}

static void attr_str(mb *m, OnnxSubset__NodeProto *n, const char *name, const char *v) {
  OnnxSubset__AttributeProto *a = attr_new(m, n, name,
                                           ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.data = (uint8_t *)mb_str(m, v);
  a->s.len = strlen(v);
}

static void attr_strs(mb *m, OnnxSubset__NodeProto *n, const char *name, int cnt,
                      const char *const *v) {
  OnnxSubset__AttributeProto *a = attr_new(m, n, name,
                                           ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  ProtobufCBinaryData *d = blob(m, sizeof *d * (size_t)cnt);
  for (int i = 0; i < cnt; i++) {
    d[i].data = (uint8_t *)mb_str(m, v[i]);
    d[i].len = strlen(v[i]);
  }
  a->strings = d;
  a->n_strings = (size_t)cnt;
}

static void attr_ints(mb *m, OnnxSubset__NodeProto *n, const char *name, int cnt,
                      const int64_t *v) {
  OnnxSubset__AttributeProto *a = attr_new(m, n, name,
                                           ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  int64_t *d = blob(m, sizeof(int64_t) * (size_t)cnt);
  memcpy(d, v, sizeof(int64_t) * (size_t)cnt);
  a->ints = d;
  a->n_ints = (size_t)cnt;
}

static void attr_floats(mb *m, OnnxSubset__NodeProto *n, const char *name, int cnt,
                        const float *v) {
  OnnxSubset__AttributeProto *a = attr_new(m, n, name,
                                           ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  float *d = blob(m, sizeof(float) * (size_t)cnt);
  memcpy(d, v, sizeof(float) * (size_t)cnt);
  a->floats = d;
  a->n_floats = (size_t)cnt;
}

/* A 1-D tensor attribute: float32 or uint8 (raw data). */
static void attr_tensor(mb *m, OnnxSubset__NodeProto *n, const char *name, nn_dtype dt, int cnt,
                        const void *v) {
  OnnxSubset__AttributeProto *a = attr_new(m, n, name,
                                           ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  OnnxSubset__TensorProto *t = blob(m, sizeof *t);
  onnx_subset__tensor_proto__init(t);
  int64_t *dims = blob(m, sizeof(int64_t));
  dims[0] = cnt;
  t->dims = dims;
  t->n_dims = 1;
  t->has_data_type = 1;
  t->data_type = dt;
  size_t bytes = (size_t)cnt * nn_dtype_size(dt);
  void *raw = blob(m, bytes);
  memcpy(raw, v, bytes);
  t->has_raw_data = 1;
  t->raw_data.data = raw;
  t->raw_data.len = bytes;
  a->t = t;
}

/* A string initializer. */
static void init_strs(mb *m, const char *name, int cnt, const char *const *v) {
  OnnxSubset__TensorProto *t = &m->inits[m->graph.n_initializer];
  m->init_ptrs[m->graph.n_initializer++] = t;
  onnx_subset__tensor_proto__init(t);
  t->name = mb_str(m, name);
  t->has_data_type = 1;
  t->data_type = NN_DTYPE_STRING;
  int64_t *dims = blob(m, sizeof(int64_t));
  dims[0] = cnt;
  t->dims = dims;
  t->n_dims = 1;
  ProtobufCBinaryData *d = blob(m, sizeof *d * (size_t)cnt);
  for (int i = 0; i < cnt; i++) {
    d[i].data = (uint8_t *)mb_str(m, v[i]);
    d[i].len = strlen(v[i]);
  }
  t->string_data = d;
  t->n_string_data = (size_t)cnt;
}

static nn_status create(mb *m, nn_session **s, nn_error *err) {
  size_t len;
  uint8_t *buf = mb_pack(m, &len);
  mb_free(m);
  nn_options o;
  nn_options_init(&o);
  nn_status st = nn_session_create_from_memory(buf, len, &o, s, err);
  free(buf);
  return st;
}

/* Fill string input `index` (shape [n]) with views on strs[i] (lens[i], or
 * strlen when lens is NULL); the bytes stay the caller's. */
static nn_status feed_strs(nn_session *s, int index, int n, const char *const *strs,
                           const size_t *lens) {
  nn_status st = nn_session_set_input_shape(s, index, 1, (int64_t[]){n});
  nn_tensor *t;
  if (st == NN_OK)
    st = nn_session_input_tensor(s, index, &t);
  if (st != NN_OK)
    return st;
  nn_string *v = t->data;
  for (int i = 0; i < n; i++) {
    v[i].data = strs[i];
    v[i].len = lens ? lens[i] : strlen(strs[i]);
  }
  return NN_OK;
}

static bool out_str_is(nn_session *s, int index, int64_t i, const char *want, size_t want_len) {
  const nn_tensor *t;
  if (nn_session_output_tensor(s, index, &t) != NN_OK || t->dtype != NN_DTYPE_STRING ||
      i >= nn_tensor_numel(t))
    return false;
  const nn_string *v = (const nn_string *)t->data + i;
  return v->len == want_len && (want_len == 0 || memcmp(v->data, want, want_len) == 0);
}

/* ---- allocation counting -------------------------------------------------------- */
static long g_allocs;
static void *count_malloc(size_t n, void *ud) {
  (void)ud;
  g_allocs++;
  return malloc(n);
}
static void *count_realloc(void *p, size_t n, void *ud) {
  (void)ud;
  g_allocs++;
  return realloc(p, n);
}
static void count_free(void *p, void *ud) {
  (void)ud;
  free(p);
}

/* ---- tests ------------------------------------------------------------------------ */
static mb *concat_model(void) {
  static mb m;
  mb_init(&m, 20);
  mb_input(&m, "x", NN_DTYPE_STRING, 1, (int64_t[]){-1});
  mb_input(&m, "y", NN_DTYPE_STRING, 1, (int64_t[]){-1});
  mb_node(&m, "StringConcat", "cat", "x,y", "z");
  mb_output(&m, "z");
  return &m;
}

/* StringConcat: broadcasting, empty and invalid-UTF-8 strings, the steady
 * state without allocation, growth on longer strings. */
static void test_concat(void) {
  nn_allocator a = {count_malloc, count_realloc, count_free, NULL};
  CHECK(nn_set_allocator(&a) == NN_OK);
  nn_session *s = NULL;
  nn_error err = {0};
  CHECK(create(concat_model(), &s, &err) == NN_OK);
  if (!s)
    return;
  const char *x[3] = {"cat", "", "\xff\xfe"}, *y[1] = {"s\xc3"};
  CHECK(feed_strs(s, 0, 3, x, NULL) == NN_OK);
  CHECK(feed_strs(s, 1, 1, y, NULL) == NN_OK);
  CHECK(nn_session_run(s) == NN_OK);
  CHECK(out_str_is(s, 0, 0, "cats\xc3", 5));
  CHECK(out_str_is(s, 0, 1, "s\xc3", 2));
  CHECK(out_str_is(s, 0, 2, "\xff\xfes\xc3", 4));
  /* the same shapes, other bytes: no allocation */
  long before = g_allocs;
  for (int r = 0; r < 50; r++) {
    const char *x2[3] = {r % 2 ? "dog" : "ox", "a", "bb"};
    feed_strs(s, 0, 3, x2, NULL);
    CHECK(nn_session_run(s) == NN_OK);
  }
  CHECK(out_str_is(s, 0, 0, "dogs\xc3", 5));
  printf("  concat: %ld allocations over 50 runs after the first\n", g_allocs - before);
  CHECK(g_allocs == before);
  /* longer strings than ever: the store grows once, then holds */
  static char big[200000];
  memset(big, 'q', sizeof big);
  size_t lens[3] = {sizeof big, 1, 2};
  const char *x3[3] = {big, "a", "bb"};
  feed_strs(s, 0, 3, x3, lens);
  CHECK(nn_session_run(s) == NN_OK);
  const nn_tensor *t;
  CHECK(nn_session_output_tensor(s, 0, &t) == NN_OK &&
        ((const nn_string *)t->data)[0].len == sizeof big + 2);
  before = g_allocs;
  for (int r = 0; r < 5; r++)
    CHECK(nn_session_run(s) == NN_OK);
  CHECK(g_allocs == before);
  nn_stats st;
  CHECK(nn_session_stats(s, &st) == NN_OK && st.io_bytes >= sizeof big);
  nn_session_free(s);
  CHECK(nn_set_allocator(NULL) == NN_OK);
}

/* Strings whose sizes exceed the store's limit or overflow size_t: a clear
 * NN_ERR_LIMIT, nothing read, nothing allocated for them. */
static void test_huge_strings(void) {
  nn_session *s = NULL;
  nn_error err = {0};
  CHECK(create(concat_model(), &s, &err) == NN_OK);
  if (!s)
    return;
  /* 2 x 600 MiB of zero pages: reserved, never touched */
  size_t big = (size_t)600 << 20;
  char *zero = mmap(NULL, big, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  CHECK(zero != MAP_FAILED);
  if (zero != MAP_FAILED) {
    const char *x[1] = {zero}, *y[1] = {zero};
    size_t l[1] = {big};
    feed_strs(s, 0, 1, x, l);
    feed_strs(s, 1, 1, y, l);
    nn_status r = nn_session_run(s);
    printf("  huge: %s: %s\n", nn_status_str(r), nn_session_last_error(s));
    CHECK(r == NN_ERR_LIMIT);
    CHECK(strstr(nn_session_last_error(s), "limit") != NULL);
    munmap(zero, big);
  }
  /* lengths whose sum overflows: refused before any byte is read */
  const char *x[1] = {"a"}, *y[1] = {"b"};
  size_t l[1] = {SIZE_MAX / 2 + 2};
  feed_strs(s, 0, 1, x, l);
  feed_strs(s, 1, 1, y, l);
  CHECK(nn_session_run(s) == NN_ERR_LIMIT);
  /* and the session still works afterwards */
  feed_strs(s, 0, 1, x, NULL);
  feed_strs(s, 1, 1, y, NULL);
  CHECK(nn_session_run(s) == NN_OK);
  CHECK(out_str_is(s, 0, 0, "ab", 2));
  nn_session_free(s);
}

/* StringSplit: the output shape follows the strings' content (a re-plan when
 * the bytes behind the same views change), invalid UTF-8 split as bytes. */
static void test_split(void) {
  mb m;
  mb_init(&m, 20);
  mb_input(&m, "x", NN_DTYPE_STRING, 1, (int64_t[]){2});
  OnnxSubset__NodeProto *n = mb_node(&m, "StringSplit", "split", "x", "parts,count");
  attr_str(&m, n, "delimiter", ",");
  mb_output(&m, "parts");
  mb_output(&m, "count");
  nn_session *s = NULL;
  nn_error err = {0};
  CHECK(create(&m, &s, &err) == NN_OK);
  if (!s)
    return;
  char buf[2][16] = {"a,b", "\xff,,\xfe"};
  const char *x[2] = {buf[0], buf[1]};
  CHECK(feed_strs(s, 0, 2, x, NULL) == NN_OK);
  CHECK(nn_session_run(s) == NN_OK);
  const nn_tensor *t;
  CHECK(nn_session_output_tensor(s, 0, &t) == NN_OK && t->rank == 2 && t->dims[1] == 3);
  CHECK(out_str_is(s, 0, 0, "a", 1) && out_str_is(s, 0, 1, "b", 1) && out_str_is(s, 0, 2, "", 0));
  CHECK(out_str_is(s, 0, 3, "\xff", 1) && out_str_is(s, 0, 4, "", 0) &&
        out_str_is(s, 0, 5, "\xfe", 1));
  /* the same views, other bytes: more pieces, a re-plan, not an overflow */
  strcpy(buf[0], "1,2,3,4,5");
  CHECK(feed_strs(s, 0, 2, x, NULL) == NN_OK);
  CHECK(nn_session_run(s) == NN_OK);
  CHECK(nn_session_output_tensor(s, 0, &t) == NN_OK && t->dims[1] == 5);
  CHECK(out_str_is(s, 0, 4, "5", 1));
  const int64_t *cnt = NULL;
  CHECK(nn_session_output_tensor(s, 1, &t) == NN_OK && (cnt = t->data) && cnt[0] == 5 &&
        cnt[1] == 3);
  nn_session_free(s);
}

/* Equal and a string initializer (its views point into the graph). */
static void test_equal_initializer(void) {
  mb m;
  mb_init(&m, 19);
  mb_input(&m, "x", NN_DTYPE_STRING, 1, (int64_t[]){3});
  init_strs(&m, "k", 1, (const char *const[]){"b\xff"});
  mb_node(&m, "Equal", "eq", "x,k", "y");
  mb_output(&m, "y");
  nn_session *s = NULL;
  nn_error err = {0};
  CHECK(create(&m, &s, &err) == NN_OK);
  if (!s)
    return;
  size_t lens[3] = {2, 3, 0};
  CHECK(feed_strs(s, 0, 3, (const char *const[]){"b\xff", "b\xff\0", ""}, lens) == NN_OK);
  CHECK(nn_session_run(s) == NN_OK);
  const nn_tensor *t;
  CHECK(nn_session_output_tensor(s, 0, &t) == NN_OK && t->dtype == NN_DTYPE_BOOL);
  const uint8_t *y = t->data;
  CHECK(y[0] == 1 && y[1] == 0 && y[2] == 0);
  nn_session_free(s);
}

/* RegexFullMatch: the translation, matching, refusals with a message. */
static bool re_match(const char *pat, const char *s, size_t len) {
  char msg[200];
  nn_regex *re = nn_regex_compile(pat, strlen(pat), msg, sizeof msg);
  if (!re) {
    printf("  pattern %s refused: %s\n", pat, msg);
    return false;
  }
  bool r = nn_regex_full_match(re, s, len);
  nn_regex_free(re);
  return r;
}

static bool re_refused(const char *pat, size_t len) {
  char msg[200] = "";
  nn_regex *re = nn_regex_compile(pat, len, msg, sizeof msg);
  nn_regex_free(re);
  return re == NULL && msg[0] != '\0';
}

#define M(p, s) re_match(p, s, strlen(s))

static void test_regex(void) {
  const char *email = "(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)";
  CHECK(M(email, "account@gmail.com"));
  CHECK(!M(email, "account@hotmail.com"));
  CHECK(M("www\\.[\\w.-]+\\.\\bcom\\b", "www.bbc.com") &&
        !M("www\\.[\\w.-]+\\.\\bcom\\b", "www.bbc.co.uk"));
  CHECK(M("\\d+", "123") && !M("\\d+", "12a") && !M("\\d+", ""));
  CHECK(M("a.c", "abc") && !M("a.c", "a\nc")); /* . is not newline */
  CHECK(M("a[^x]c", "a\nc"));                  /* a negated class is */
  CHECK(M("a+?b", "aaab") && M("(?:ab)+", "ababab") && M("(?P<w>x)y", "xy"));
  CHECK(M("\\x41\\x{e9}", "A\xc3\xa9"));
  CHECK(M("[]a]+", "]a]") && M("[a-]+", "-a-") && M("[\\^x]+", "^x") && M("[\\]]", "]"));
  CHECK(M("\\{a\\}", "{a}") && M("a{2}", "aa") && M("x{", "x{") && M("}", "}"));
  CHECK(M("[[:digit:][:alpha:]]+", "a1b2") && M("[\\d\\s]+", "1 2\t"));
  CHECK(M("caf.", "caf\xc3\xa9")); /* one character, two bytes */
  CHECK(M("(a|)b", "b") && M("", ""));
  CHECK(!M("abc", "abcd") && !M("bc", "abc")); /* a full match only */
  /* a NUL inside the subject is a byte like any other */
  CHECK(re_match("a.b", "a\0b", 3) && re_match("a[^x]b", "a\0b", 3));
  /* invalid UTF-8 in the subject: each byte one character, as RE2 */
  CHECK(!M("abc", "\xff\xfe") && M("\\W+", "\xff") && M("a.*z", "a\xff\xc3z") &&
        M("..", "\xc3\xc3"));
  CHECK(!M("..", "\xc3\xa9") && M(".", "\xc3\xa9") && !M(".", "\xed\xa0\x80"));
  /* refused, with a message */
  CHECK(re_refused("(?i)abc", 7));
  CHECK(re_refused("(?=a)", 5));
  CHECK(re_refused("(a)\\1", 5));
  CHECK(re_refused("\\p{L}", 5));
  CHECK(re_refused("[\\W]", 4));
  CHECK(re_refused("a{1001}", 7));
  CHECK(re_refused("((a{100}){100}){100}", 20));
  CHECK(re_refused("(ab", 3) && re_refused("ab)", 3) && re_refused("[ab", 3) &&
        re_refused("ab\\", 3));
  CHECK(re_refused("a\0b", 3));
  CHECK(re_refused("[z-a]", 5));
  CHECK(re_refused("a**", 3) || M("a**", "aa")); /* regcomp's call: either is clear */
  static char longp[NN_LIMIT_REGEX_BYTES + 1];
  memset(longp, 'a', sizeof longp);
  CHECK(re_refused(longp, sizeof longp));
  char out[64];
  char msg[100];
  CHECK(nn_regex_translate("a.b", 3, out, sizeof out, msg, sizeof msg) > 0 &&
        strcmp(out, "^(a[^\n]b)$") == 0);
}

/* A RegexFullMatch whose pattern libc cannot take: the session is refused
 * at creation, naming the pattern; a good one is compiled once. */
static void test_regex_session(void) {
  mb m;
  mb_init(&m, 20);
  mb_input(&m, "x", NN_DTYPE_STRING, 1, (int64_t[]){2});
  OnnxSubset__NodeProto *n = mb_node(&m, "RegexFullMatch", "re", "x", "y");
  attr_str(&m, n, "pattern", "(?i)monday");
  mb_output(&m, "y");
  nn_session *s = NULL;
  nn_error err = {0};
  CHECK(create(&m, &s, &err) == NN_ERR_UNSUPPORTED);
  printf("  refused: %s\n", err.msg);
  CHECK(strstr(err.msg, "(?i)monday") != NULL);
  nn_session_free(s);

  mb_init(&m, 20);
  mb_input(&m, "x", NN_DTYPE_STRING, 1, (int64_t[]){2});
  n = mb_node(&m, "RegexFullMatch", "re", "x", "y");
  attr_str(&m, n, "pattern", "mon(day)?");
  mb_output(&m, "y");
  s = NULL;
  CHECK(create(&m, &s, &err) == NN_OK);
  if (!s)
    return;
  for (int r = 0; r < 3; r++) {
    CHECK(feed_strs(s, 0, 2, (const char *const[]){"monday", "mondays"}, NULL) == NN_OK);
    CHECK(nn_session_run(s) == NN_OK);
    const nn_tensor *t;
    CHECK(nn_session_output_tensor(s, 0, &t) == NN_OK);
    CHECK(((const uint8_t *)t->data)[0] == 1 && ((const uint8_t *)t->data)[1] == 0);
  }
  nn_session_dispose(s);
  CHECK(nn_session_run(s) == NN_ERR_DISPOSED);
  nn_session_free(s);
}

/* ArrayFeatureExtractor and TensorScatter: indices from the data, checked. */
static void test_indices(void) {
  mb m;
  mb_init(&m, 1);
  mb_ml(&m, 1);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
  mb_input(&m, "i", NN_DTYPE_INT64, 1, (int64_t[]){2});
  OnnxSubset__NodeProto *n = mb_node(&m, "ArrayFeatureExtractor", "afe", "x,i", "z");
  n->domain = mb_str(&m, "ai.onnx.ml");
  mb_output(&m, "z");
  nn_session *s = NULL;
  nn_error err = {0};
  CHECK(create(&m, &s, &err) == NN_OK);
  if (s) {
    nn_tensor *x, *i;
    CHECK(nn_session_input_tensor(s, 0, &x) == NN_OK && nn_session_input_tensor(s, 1, &i) == NN_OK);
    for (int k = 0; k < 6; k++)
      ((float *)x->data)[k] = (float)k;
    const int64_t cases[3][2] = {{2, 0}, {-1, 0}, {0, 3}};
    for (int c = 0; c < 3; c++) {
      memcpy(i->data, cases[c], sizeof cases[c]);
      nn_status st = nn_session_run(s);
      CHECK(c == 0 ? st == NN_OK : st == NN_ERR_RUNTIME);
      if (c == 1)
        printf("  afe: %s\n", nn_session_last_error(s));
    }
    nn_session_free(s);
  }

  mb_init(&m, 24);
  mb_input(&m, "past", NN_DTYPE_FLOAT, 3, (int64_t[]){2, 4, 1});
  mb_input(&m, "upd", NN_DTYPE_FLOAT, 3, (int64_t[]){2, 2, 1});
  mb_input(&m, "w", NN_DTYPE_INT64, 1, (int64_t[]){2});
  n = mb_node(&m, "TensorScatter", "ts", "past,upd,w", "y");
  attr_str(&m, n, "mode", "circular");
  mb_output(&m, "y");
  s = NULL;
  CHECK(create(&m, &s, &err) == NN_OK);
  if (s) {
    nn_tensor *p, *u, *w;
    nn_session_input_tensor(s, 0, &p);
    nn_session_input_tensor(s, 1, &u);
    nn_session_input_tensor(s, 2, &w);
    for (int k = 0; k < 8; k++)
      ((float *)p->data)[k] = 0;
    for (int k = 0; k < 4; k++)
      ((float *)u->data)[k] = (float)(k + 1);
    ((int64_t *)w->data)[0] = 3, ((int64_t *)w->data)[1] = 1;
    CHECK(nn_session_run(s) == NN_OK);
    const nn_tensor *y;
    nn_session_output_tensor(s, 0, &y);
    const float *yv = y->data; /* batch 0 wraps: 3 -> 1, 0 -> 2; batch 1 at 1, 2 */
    CHECK(yv[3] == 1 && yv[0] == 2 && yv[5] == 3 && yv[6] == 4 && yv[4] == 0);
    const int64_t bad[3][2] = {{4, 0}, {-1, 0}, {0, INT64_MIN}};
    for (int c = 0; c < 3; c++) {
      memcpy(w->data, bad[c], sizeof bad[c]);
      CHECK(nn_session_run(s) == NN_ERR_RUNTIME);
    }
    nn_session_free(s);
  }
  /* linear: the window must fit */
  mb_init(&m, 24);
  mb_input(&m, "past", NN_DTYPE_FLOAT, 3, (int64_t[]){1, 4, 1});
  mb_input(&m, "upd", NN_DTYPE_FLOAT, 3, (int64_t[]){1, 2, 1});
  mb_input(&m, "w", NN_DTYPE_INT64, 1, (int64_t[]){1});
  mb_node(&m, "TensorScatter", "ts", "past,upd,w", "y");
  mb_output(&m, "y");
  s = NULL;
  CHECK(create(&m, &s, &err) == NN_OK);
  if (s) {
    nn_tensor *w;
    nn_session_input_tensor(s, 0, &w);
    nn_session_input_tensor(s, 1, &w);
    nn_session_input_tensor(s, 2, &w);
    ((int64_t *)w->data)[0] = 2;
    CHECK(nn_session_run(s) == NN_OK);
    ((int64_t *)w->data)[0] = 3;
    CHECK(nn_session_run(s) == NN_ERR_RUNTIME);
    printf("  tensorscatter: %s\n", nn_session_last_error(s));
    nn_session_free(s);
  }
}

/* TreeEnsemble: a valid single tree, then every kind of bad id. */
typedef struct tree_spec {
  int64_t falseids[3], trueids[3], falseleafs[3], trueleafs[3], features[3], roots[1], targets[2];
  int n_targets;
} tree_spec;

static nn_status tree_session(const tree_spec *t, nn_session **s, nn_error *err) {
  mb m;
  mb_init(&m, 21);
  mb_ml(&m, 5);
  mb_input(&m, "X", NN_DTYPE_FLOAT, 2, (int64_t[]){2, 2});
  OnnxSubset__NodeProto *n = mb_node(&m, "TreeEnsemble", "te", "X", "Y");
  n->domain = mb_str(&m, "ai.onnx.ml");
  attr_ints(&m, n, "nodes_falsenodeids", 3, t->falseids);
  attr_ints(&m, n, "nodes_truenodeids", 3, t->trueids);
  attr_ints(&m, n, "nodes_falseleafs", 3, t->falseleafs);
  attr_ints(&m, n, "nodes_trueleafs", 3, t->trueleafs);
  attr_ints(&m, n, "nodes_featureids", 3, t->features);
  attr_ints(&m, n, "tree_roots", 1, t->roots);
  attr_ints(&m, n, "leaf_targetids", 2, t->targets);
  attr_tensor(&m, n, "nodes_modes", NN_DTYPE_UINT8, 3, (const uint8_t[]){0, 0, 0});
  attr_tensor(&m, n, "nodes_splits", NN_DTYPE_FLOAT, 3, (const float[]){1, 2, 3});
  attr_tensor(&m, n, "leaf_weights", NN_DTYPE_FLOAT, 2, (const float[]){10, 20});
  mb_attr_int(&m, n, "n_targets", t->n_targets);
  mb_output(&m, "Y");
  *s = NULL;
  return create(&m, s, err);
}

static void test_tree_ensemble(void) {
  /* node 0: x0 <= 1 ? node 1 : leaf 0; node 1: x1 <= 2 ? leaf 1 : node 2;
   * node 2: x0 <= 3 ? leaf 0 : leaf 1 */
  const tree_spec good = {{0, 2, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {0, 1, 0}, {0}, {0, 1}, 2};
  nn_session *s;
  nn_error err = {0};
  CHECK(tree_session(&good, &s, &err) == NN_OK);
  if (s) {
    nn_tensor *x;
    nn_session_input_tensor(s, 0, &x);
    float *xv = x->data;
    xv[0] = 0.5f, xv[1] = 1.0f; /* -> node 1 -> leaf 1 (target 1, 20) */
    xv[2] = 5.0f, xv[3] = 0.0f; /* -> leaf 0 (target 0, 10) */
    CHECK(nn_session_run(s) == NN_OK);
    const nn_tensor *y;
    nn_session_output_tensor(s, 0, &y);
    const float *yv = y->data;
    CHECK(yv[0] == 0 && yv[1] == 20 && yv[2] == 10 && yv[3] == 0);
    nn_session_free(s);
  }
  struct {
    const char *what, *msg;
    tree_spec t;
  } bad[] = {
    {"node id out of range",
     "out of range",
     {{0, 7, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {0, 1, 0}, {0}, {0, 1}, 2}},
    {"negative leaf id",
     "out of range",
     {{-1, 2, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {0, 1, 0}, {0}, {0, 1}, 2}},
    {"leaf id past the leaves",
     "out of range",
     {{5, 2, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {0, 1, 0}, {0}, {0, 1}, 2}},
    {"cycle", "cycle", {{0, 2, 1}, {1, 1, 1}, {1, 0, 1}, {0, 1, 0}, {0, 1, 0}, {0}, {0, 1}, 2}},
    {"self loop", "cycle", {{0, 1, 1}, {1, 1, 0}, {1, 0, 1}, {0, 0, 1}, {0, 1, 0}, {0}, {0, 1}, 2}},
    {"feature past X",
     "feature",
     {{0, 2, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {0, 9, 0}, {0}, {0, 1}, 2}},
    {"root out of range",
     "root",
     {{0, 2, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {0, 1, 0}, {3}, {0, 1}, 2}},
    {"target past n_targets",
     "target",
     {{0, 2, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {0, 1, 0}, {0}, {0, 2}, 2}},
    {"no target",
     "n_targets",
     {{0, 2, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {0, 1, 0}, {0}, {0, 1}, 0}},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    nn_status st = tree_session(&bad[i].t, &s, &err);
    bool ok = st == NN_ERR_INVALID_MODEL && strstr(err.msg, bad[i].msg) != NULL;
    if (!ok)
      printf("  %s: %s %s\n", bad[i].what, nn_status_str(st), err.msg);
    CHECK(ok);
    nn_session_free(s);
  }
}

/* LabelEncoder: string -> string with a default, int64 -> float. */
static void test_label_encoder(void) {
  mb m;
  mb_init(&m, 21);
  mb_ml(&m, 2);
  mb_input(&m, "x", NN_DTYPE_STRING, 1, (int64_t[]){4});
  OnnxSubset__NodeProto *n = mb_node(&m, "LabelEncoder", "le", "x", "y");
  n->domain = mb_str(&m, "ai.onnx.ml");
  attr_strs(&m, n, "keys_strings", 3, (const char *const[]){"b", "a", "b"});
  attr_strs(&m, n, "values_strings", 3, (const char *const[]){"B1", "A", "B2"});
  attr_str(&m, n, "default_string", "?");
  mb_output(&m, "y");
  nn_session *s = NULL;
  nn_error err = {0};
  CHECK(create(&m, &s, &err) == NN_OK);
  if (s) {
    CHECK(feed_strs(s, 0, 4, (const char *const[]){"a", "b", "c", "\xff"}, NULL) == NN_OK);
    CHECK(nn_session_run(s) == NN_OK);
    CHECK(out_str_is(s, 0, 0, "A", 1) && out_str_is(s, 0, 1, "B2", 2) &&
          out_str_is(s, 0, 2, "?", 1) && out_str_is(s, 0, 3, "?", 1));
    nn_session_free(s);
  }
  mb_init(&m, 21);
  mb_ml(&m, 2);
  mb_input(&m, "x", NN_DTYPE_INT64, 1, (int64_t[]){3});
  n = mb_node(&m, "LabelEncoder", "le", "x", "y");
  n->domain = mb_str(&m, "ai.onnx.ml");
  attr_ints(&m, n, "keys_int64s", 2, (const int64_t[]){INT64_MAX, -5});
  attr_floats(&m, n, "values_floats", 2, (const float[]){1.5f, -2.0f});
  mb_output(&m, "y");
  s = NULL;
  CHECK(create(&m, &s, &err) == NN_OK);
  if (s) {
    nn_tensor *x;
    nn_session_input_tensor(s, 0, &x);
    int64_t *xv = x->data;
    xv[0] = INT64_MAX, xv[1] = INT64_MAX - 1, xv[2] = -5;
    CHECK(nn_session_run(s) == NN_OK);
    const nn_tensor *y;
    nn_session_output_tensor(s, 0, &y);
    const float *yv = y->data;
    CHECK(y->dtype == NN_DTYPE_FLOAT && yv[0] == 1.5f && yv[1] == 0.0f && signbit(yv[1]) &&
          yv[2] == -2.0f);
    nn_session_free(s);
  }
}

/* A string graph output that passes an input through (a view of the
 * caller's bytes) and the tool codec round trip. */
static void test_identity(void) {
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_STRING, 1, (int64_t[]){2});
  mb_node(&m, "Identity", "id", "x", "y");
  mb_output(&m, "y");
  nn_session *s = NULL;
  nn_error err = {0};
  CHECK(create(&m, &s, &err) == NN_OK);
  if (!s)
    return;
  CHECK(feed_strs(s, 0, 2, (const char *const[]){"left", ""}, NULL) == NN_OK);
  CHECK(nn_session_run(s) == NN_OK);
  CHECK(out_str_is(s, 0, 0, "left", 4) && out_str_is(s, 0, 1, "", 0));
  nn_session_free(s);
}

/* Constant value_strings / value_string: views on the graph's attribute
 * strings, concatenated with an input. */
static void test_constant_strings(void) {
  mb m;
  mb_init(&m, 20);
  mb_input(&m, "x", NN_DTYPE_STRING, 1, (int64_t[]){2});
  OnnxSubset__NodeProto *n = mb_node(&m, "Constant", "k", "", "k");
  attr_strs(&m, n, "value_strings", 2, (const char *const[]){"-1", "-\xe4\xb8\xad"});
  n = mb_node(&m, "Constant", "k1", "", "k1");
  attr_str(&m, n, "value_string", "!");
  mb_node(&m, "StringConcat", "cat", "x,k", "y");
  mb_node(&m, "StringConcat", "cat1", "y,k1", "z");
  mb_output(&m, "z");
  nn_session *s = NULL;
  nn_error err = {0};
  CHECK(create(&m, &s, &err) == NN_OK);
  if (!s) {
    printf("  constant: %s\n", err.msg);
    return;
  }
  CHECK(feed_strs(s, 0, 2, (const char *const[]){"a", ""}, NULL) == NN_OK);
  CHECK(nn_session_run(s) == NN_OK);
  CHECK(out_str_is(s, 0, 0, "a-1!", 4) && out_str_is(s, 0, 1, "-\xe4\xb8\xad!", 5));
  nn_session_free(s);
}

int main(void) {
  test_concat();
  test_huge_strings();
  test_split();
  test_equal_initializer();
  test_regex();
  test_regex_session();
  test_indices();
  test_tree_ensemble();
  test_label_encoder();
  test_identity();
  test_constant_strings();
  printf("%d passed, %d failed, 0 skipped\n", g_passed, g_failed);
  return g_failed ? 1 : 0;
}
