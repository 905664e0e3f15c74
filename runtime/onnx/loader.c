/* loader.c - ONNX protobuf -> nn_graph.
 *
 * The protobuf is decoded with protobuf-c through the runtime's allocation
 * hooks, then everything the graph needs is copied out of it (names,
 * attributes, initializer bytes) and the message is freed before returning:
 * the graph never borrows from the caller's buffer or from the message
 * (memory rule 6).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph.h"
#include "include/nn_file.h"
#include "nn_limits.h"
#include "onnx/loader.h"
#include "onnx-subset.pb-c.h"

typedef OnnxSubset__ModelProto ModelProto;
typedef OnnxSubset__GraphProto GraphProto;
typedef OnnxSubset__NodeProto NodeProto;
typedef OnnxSubset__TensorProto TensorProto;
typedef OnnxSubset__AttributeProto AttributeProto;
typedef OnnxSubset__ValueInfoProto ValueInfoProto;

#define NN_IR_MIN 3
#define NN_IR_MAX 13
#define NN_OPSET_MAX 28

/* ---- protobuf-c allocator over the runtime hooks ------------------------ */
/* Decoding can amplify: an empty repeated submessage is 2 bytes on the wire
 * and a ~100-byte struct in memory, a 1-byte varint of int64_data is 8.  A
 * per-decode budget keeps a small hostile file from taking gigabytes before
 * any limit of the graph is looked at.  Counted monotonically: protobuf-c
 * frees only when it gives up. */
typedef struct pb_budget {
  size_t used, limit;
  bool exceeded;
} pb_budget;

static void *pb_alloc(void *ud, size_t size) {
  pb_budget *b = ud;
  if (size > b->limit - b->used) {
    b->exceeded = true;
    return NULL;
  }
  void *p = nn_malloc(size);
  if (p)
    b->used += size;
  return p;
}
static void pb_free(void *ud, void *p) {
  (void)ud;
  nn_free(p);
}

/* Budget for decoding `size` bytes: 8x the input (packed varints widen to
 * int64) plus the weights the limits allow plus slack for small models. */
static size_t pb_budget_for(size_t size, int64_t max_weights) {
  size_t lim = (size_t)64 << 20;
  size_t w = max_weights > 0 ? (size_t)max_weights : (size_t)NN_LIMIT_WEIGHTS_BYTES;
  if (size > (SIZE_MAX - lim - w) / 8)
    return SIZE_MAX;
  return lim + w + 8 * size;
}

/* ---- nesting pre-scan ------------------------------------------------------
 * protobuf-c decodes submessages recursively with no depth limit, and ONNX
 * nests (AttributeProto.g -> GraphProto.node -> NodeProto.attribute -> ...;
 * TypeProto.sequence_type.elem_type -> TypeProto ...): a 1 MB file 100,000
 * levels deep overflows the stack.  This walk of the wire format follows only
 * the fields the schema declares as messages, with a bounded recursion, before
 * protobuf-c sees the bytes.  It accepts exactly the wire grammar protobuf-c
 * 1.4 accepts (no groups, tags of at most 5 bytes). */
#define PB_MAX_DEPTH 100

typedef enum { PB_SCAN_OK, PB_SCAN_BAD, PB_SCAN_DEEP } pb_scan_result;

static bool pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  uint64_t r = 0;
  for (int i = 0; i < 10 && *p < end; i++) {
    uint8_t b = *(*p)++;
    r |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}

static pb_scan_result pb_scan(const uint8_t *p, const uint8_t *end,
                              const ProtobufCMessageDescriptor *desc, int depth) {
  if (depth > PB_MAX_DEPTH)
    return PB_SCAN_DEEP;
  while (p < end) {
    const uint8_t *tag_start = p;
    uint64_t key;
    if (!pb_varint(&p, end, &key) || p - tag_start > 5 || (key >> 3) == 0)
      return PB_SCAN_BAD;
    uint64_t skip;
    switch (key & 7) {
    case 0: /* varint */
      if (!pb_varint(&p, end, &skip))
        return PB_SCAN_BAD;
      break;
    case 1: /* 64-bit */
      if (end - p < 8)
        return PB_SCAN_BAD;
      p += 8;
      break;
    case 5: /* 32-bit */
      if (end - p < 4)
        return PB_SCAN_BAD;
      p += 4;
      break;
    case 2: { /* length-delimited: bytes, string, packed or a submessage */
      uint64_t len;
      if (!pb_varint(&p, end, &len) || len > (uint64_t)(end - p))
        return PB_SCAN_BAD;
      const ProtobufCFieldDescriptor *f =
          key >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(desc, (unsigned)(key >> 3))
                                 : NULL;
      if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
        pb_scan_result r = pb_scan(p, p + len, f->descriptor, depth + 1);
        if (r != PB_SCAN_OK)
          return r;
      }
      p += len;
      break;
    }
    default: /* groups (3, 4) and 6, 7: protobuf-c refuses them too */
      return PB_SCAN_BAD;
    }
  }
  return PB_SCAN_OK;
}

/* `what` names the thing in errors ("the model"); bad_msg is the message of a
 * file that does not decode. */
static nn_status pb_check(const void *data, size_t size, const ProtobufCMessageDescriptor *desc,
                          const char *what, const char *bad_msg, nn_error *err) {
  const uint8_t *p = data;
  switch (pb_scan(p, p + size, desc, 0)) {
  case PB_SCAN_OK:
    return NN_OK;
  case PB_SCAN_DEEP:
    return nn_error_set(err, NN_ERR_LIMIT, "%s nests protobuf messages more than %d levels deep", what,
                        PB_MAX_DEPTH);
  default:
    return nn_error_set(err, NN_ERR_PARSE, "%s", bad_msg);
  }
}

/* ---- name -> value index hash (open addressing, loader-local) ---------- */
typedef struct name_map {
  int *slots; /* value index + 1, 0 = empty */
  size_t cap;
} name_map;

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool name_map_init(name_map *m, size_t expected) {
  size_t cap = 64;
  while (cap < expected * 2 + 1)
    cap *= 2;
  m->slots = nn_calloc(cap, sizeof(int));
  m->cap = cap;
  return m->slots != NULL;
}

static int name_map_get(const name_map *m, const nn_graph *g, const char *name) {
  size_t i = name_hash(name) & (m->cap - 1);
  for (;;) {
    int v = m->slots[i];
    if (v == 0)
      return -1;
    if (strcmp(g->values[v - 1].name, name) == 0)
      return v - 1;
    i = (i + 1) & (m->cap - 1);
  }
}

static void name_map_put(name_map *m, const nn_graph *g, int idx) {
  size_t i = name_hash(g->values[idx].name) & (m->cap - 1);
  while (m->slots[i] != 0)
    i = (i + 1) & (m->cap - 1);
  m->slots[i] = idx + 1;
}

/* Value index for a name, creating it when absent; -1 on OOM.  The map
 * doubles when half full (a subgraph may add names its graph did not
 * count). */
static int value_get_or_add(nn_graph *g, name_map *m, const char *name) {
  int idx = name_map_get(m, g, name);
  if (idx >= 0)
    return idx;
  if ((size_t)g->n_values + 1 > m->cap / 2) {
    name_map bigger;
    if (!name_map_init(&bigger, (size_t)g->n_values + 1))
      return -1;
    for (int v = 0; v < g->n_values; v++)
      name_map_put(&bigger, g, v);
    nn_free(m->slots);
    *m = bigger;
  }
  idx = nn_graph_add_value(g, name);
  if (idx >= 0)
    name_map_put(m, g, idx);
  return idx;
}

/* ---- tensors ------------------------------------------------------------- */

/* Is `rel` a plain relative path that stays inside its base directory?
 * Rejects absolute paths, any ".." component, and empty names (the ONNX
 * external-data path traversals, CVE-2024-27318/27319). */
static bool external_path_is_safe(const char *rel) {
  if (!rel || !rel[0] || rel[0] == '/' || rel[0] == '\\')
    return false;
  if (strchr(rel, ':') || strchr(rel, '\\'))
    return false;
  const char *p = rel;
  while (*p) {
    const char *slash = strchr(p, '/');
    size_t len = slash ? (size_t)(slash - p) : strlen(p);
    if (len == 2 && p[0] == '.' && p[1] == '.')
      return false;
    if (!slash)
      break;
    p = slash + 1;
  }
  return true;
}

/* Open base_dir/location for reading [offset, offset+length).  The guarded
 * open (nn_file_open) keeps the resolved real path inside the real path of
 * base_dir (symlinks included, checked again on the open descriptor) and
 * takes regular files only (a FIFO would block open() forever, /dev/zero
 * never ends); the range must lie inside the file.  On success *out is an
 * open FILE positioned at offset. */
static nn_status open_external(const char *base_dir, const char *location, int64_t offset,
                               int64_t length, const char *tname, FILE **out, nn_error *err) {
  nn_status st = NN_OK;
  char *path = NULL;
  int fd = -1;
  *out = NULL;
  if (!base_dir)
    return nn_error_set(err, NN_ERR_INVALID_MODEL,
                        "tensor '%s' uses external data but the model was not loaded from a "
                        "directory (set nn_options.base_dir)", tname);
  if (!external_path_is_safe(location))
    return nn_error_set(err, NN_ERR_INVALID_MODEL,
                        "tensor '%s': external data location '%s' leaves the model directory",
                        tname, location ? location : "");
  size_t plen = strlen(base_dir) + strlen(location) + 2;
  path = nn_malloc(plen);
  if (!path)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  snprintf(path, plen, "%s/%s", base_dir, location);
  nn_error ferr = {0};
  int64_t fsize = 0;
  bool outside = false;
  st = nn_file_open(path, base_dir, &fd, &fsize, &outside, &ferr);
  if (st != NN_OK) {
    /* leading out of its directory is the model's fault, not the disk's */
    st = nn_error_set(err, outside ? NN_ERR_INVALID_MODEL : st,
                      "tensor '%s': cannot read external data: %s", tname, ferr.msg);
    goto out_free;
  }
  if (offset < 0 || length < 0 || offset > fsize || length > fsize - offset) {
    st = nn_error_set(err, NN_ERR_INVALID_MODEL,
                      "tensor '%s': external data range [%lld, +%lld) is outside '%s' (%lld bytes)", tname,
                      (long long)offset, (long long)length, location, (long long)fsize);
    goto out_free;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out_free;
  }
  fd = -1;
  if (fseeko(f, (off_t)offset, SEEK_SET) != 0) {
    fclose(f);
    st = nn_error_set(err, NN_ERR_IO, "tensor '%s': cannot seek in external data '%s'", tname, location);
    goto out_free;
  }
  *out = f;
out_free:
  if (fd >= 0)
    close(fd);
  nn_free(path);
  return st;
}

/* A non-negative decimal integer, all of the string; false otherwise ("12x",
 * "-1", "", overflow): a garbled offset must not quietly become 0. */
static bool parse_i64(const char *v, int64_t *out) {
  if (!v || !*v)
    return false;
  int64_t r = 0;
  for (; *v; v++) {
    if (*v < '0' || *v > '9' || r > (INT64_MAX - (*v - '0')) / 10)
      return false;
    r = r * 10 + (*v - '0');
  }
  *out = r;
  return true;
}

/* A string tensor (string_data; never raw or external): one block of numel
 * nn_string views followed by their bytes, which the views point into, so
 * the block is freed like any tensor's data (nn_aligned_free) and a copy of
 * the views stays valid while the block lives (nn_strings.h).  nbytes counts
 * the views; views and bytes together are held to weights_left. */
static nn_status string_tensor_from_proto(const TensorProto *tp, int64_t numel, int64_t weights_left,
                                          nn_tensor *out, nn_error *err) {
  const char *tname = tp->name ? tp->name : "";
  if (tp->data_location == ONNX_SUBSET__TENSOR_PROTO__DATA_LOCATION__EXTERNAL || tp->has_raw_data)
    return nn_error_set(err, NN_ERR_INVALID_MODEL, "string tensor '%s' must use string_data", tname);
  if (tp->n_string_data != (size_t)numel)
    return nn_error_set(err, NN_ERR_INVALID_MODEL, "tensor '%s' holds %zu strings, its shape needs %lld",
                        tname, tp->n_string_data, (long long)numel);
  size_t views = (size_t)numel * sizeof(nn_string), total = views;
  for (size_t i = 0; i < tp->n_string_data; i++)
    total += tp->string_data[i].len; /* each within the decoded message: no overflow */
  if (weights_left >= 0 && total > (uint64_t)weights_left)
    return nn_error_set(err, NN_ERR_LIMIT, "string tensor '%s' (%zu bytes): model weights exceed the "
                        "limit", tname, total);
  unsigned char *data = nn_aligned_alloc(total ? total : 1);
  if (!data)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory for tensor '%s' (%zu bytes)", tname, total);
  nn_string *v = (nn_string *)data;
  unsigned char *bytes = data + views;
  for (size_t i = 0; i < tp->n_string_data; i++) {
    size_t len = tp->string_data[i].len;
    if (len)
      memcpy(bytes, tp->string_data[i].data, len);
    v[i].data = len ? (const char *)bytes : NULL;
    v[i].len = len;
    bytes += len;
  }
  out->data = data;
  out->nbytes = views;
  return NN_OK;
}

/* weights_left: bytes this tensor may still take (-1: no budget).  Every size
 * and range is validated before the data is allocated, so a tensor that
 * claims 4 GiB and holds 10 bytes costs nothing.  adopt: when it points to a
 * buffer (nn_aligned_alloc, adopt_len bytes), that is the tensor's raw_data,
 * read out of the wire before decoding (load_detach): on success the tensor
 * takes it and *adopt becomes NULL. */
static nn_status tensor_from_proto(const TensorProto *tp, const char *base_dir, const nn_limits *lim,
                                   int64_t weights_left, unsigned char **adopt, size_t adopt_len,
                                   nn_tensor *out, nn_error *err) {
  const bool adopted = adopt && *adopt;
  const char *tname = tp->name ? tp->name : "";
  memset(out, 0, sizeof *out);
  nn_dtype dt = (nn_dtype)tp->data_type;
  size_t esize = nn_dtype_size(dt);
  if (esize == 0)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "tensor '%s' has data type %d (%s), not supported",
                        tname, tp->data_type, nn_dtype_name(dt));
  int max_rank = lim && lim->max_rank ? lim->max_rank : NN_MAX_RANK;
  if (tp->n_dims > (size_t)max_rank || tp->n_dims > NN_MAX_RANK)
    return nn_error_set(err, NN_ERR_LIMIT, "tensor '%s' has rank %zu, more than %d", tname,
                        tp->n_dims, max_rank);
  if (tp->segment)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "tensor '%s' is segmented", tname);
  int64_t numel = 1;
  for (size_t i = 0; i < tp->n_dims; i++) {
    if (tp->dims[i] < 0)
      return nn_error_set(err, NN_ERR_INVALID_MODEL, "tensor '%s' has negative dim %lld", tname,
                          (long long)tp->dims[i]);
    if (nn_mul_overflow_i64(numel, tp->dims[i], &numel))
      return nn_error_set(err, NN_ERR_LIMIT, "tensor '%s': element count overflows", tname);
    out->dims[i] = tp->dims[i];
  }
  int64_t max_elems = lim && lim->max_tensor_elems ? lim->max_tensor_elems : NN_LIMIT_TENSOR_ELEMS;
  if (numel > max_elems)
    return nn_error_set(err, NN_ERR_LIMIT, "tensor '%s' has %lld elements, more than the limit %lld",
                        tname, (long long)numel, (long long)max_elems);
  size_t nbytes;
  if (nn_mul_overflow_size((size_t)numel, esize, &nbytes))
    return nn_error_set(err, NN_ERR_LIMIT, "tensor '%s': byte size overflows", tname);
  if (weights_left >= 0 && nbytes > (uint64_t)weights_left)
    return nn_error_set(err, NN_ERR_LIMIT, "tensor '%s' (%zu bytes): model weights exceed the limit of "
                        "%lld bytes", tname, nbytes, lim ? (long long)lim->max_weights_bytes : 0LL);
  out->rank = (int)tp->n_dims;
  out->dtype = dt;
  out->nbytes = nbytes;
  if (dt == NN_DTYPE_STRING)
    return string_tensor_from_proto(tp, numel, weights_left, out, err);

  /* where the bytes come from, checked against nbytes before allocating */
  FILE *ext = NULL;
  nn_status st = NN_OK;
  if (tp->data_location == ONNX_SUBSET__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    const char *location = NULL;
    int64_t offset = 0, length = (int64_t)nbytes;
    for (size_t i = 0; i < tp->n_external_data; i++) {
      const char *k = tp->external_data[i]->key, *v = tp->external_data[i]->value;
      if (!k || !v)
        continue;
      if (strcmp(k, "location") == 0) {
        location = v;
      } else if ((strcmp(k, "offset") == 0 && !parse_i64(v, &offset)) ||
                 (strcmp(k, "length") == 0 && !parse_i64(v, &length))) {
        return nn_error_set(err, NN_ERR_INVALID_MODEL, "tensor '%s': external data %s '%s' is not a "
                            "non-negative integer", tname, k, v);
      }
    }
    if ((uint64_t)length != nbytes)
      return nn_error_set(err, NN_ERR_INVALID_MODEL,
                          "tensor '%s': external data length %lld does not match its %zu bytes", tname,
                          (long long)length, nbytes);
    st = open_external(base_dir, location, offset, length, tname, &ext, err);
    if (st != NN_OK)
      return st;
  } else if (adopted || tp->has_raw_data) {
    size_t have = adopted ? adopt_len : tp->raw_data.len;
    if (have != nbytes)
      return nn_error_set(err, NN_ERR_INVALID_MODEL, "tensor '%s': raw_data has %zu bytes, its shape needs %zu",
                          tname, have, nbytes);
    if (adopted) {
      out->data = *adopt;
      *adopt = NULL;
      return NN_OK;
    }
  } else {
    /* typed fields: ONNX stores small types widened in int32_data, and
     * float16/bfloat16 as their bit patterns in int32_data */
    size_t have;
    switch (dt) {
    case NN_DTYPE_FLOAT: have = tp->n_float_data; break;
    case NN_DTYPE_DOUBLE: have = tp->n_double_data; break;
    case NN_DTYPE_INT64: have = tp->n_int64_data; break;
    case NN_DTYPE_UINT32: case NN_DTYPE_UINT64: have = tp->n_uint64_data; break;
    default: have = tp->n_int32_data; break;
    }
    if (have != (size_t)numel)
      return nn_error_set(err, NN_ERR_INVALID_MODEL, "tensor '%s' holds %zu values, its shape needs %lld",
                          tname, have, (long long)numel);
  }

  unsigned char *data = nn_aligned_alloc(nbytes ? nbytes : 1);
  if (!data) {
    if (ext)
      fclose(ext);
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory for tensor '%s' (%zu bytes)", tname, nbytes);
  }
  if (ext) {
    if (nbytes && fread(data, 1, nbytes, ext) != nbytes)
      st = nn_error_set(err, NN_ERR_IO, "tensor '%s': short read from external data", tname);
    fclose(ext);
    if (st != NN_OK) {
      nn_aligned_free(data);
      return st;
    }
  } else if (tp->has_raw_data) {
    if (nbytes)
      memcpy(data, tp->raw_data.data, nbytes); /* little-endian host assumed (x86, arm) */
  } else {
    for (int64_t i = 0; i < numel; i++) {
      switch (dt) {
      case NN_DTYPE_FLOAT: ((float *)data)[i] = tp->float_data[i]; break;
      case NN_DTYPE_DOUBLE: ((double *)data)[i] = tp->double_data[i]; break;
      case NN_DTYPE_INT64: ((int64_t *)data)[i] = tp->int64_data[i]; break;
      case NN_DTYPE_UINT64: ((uint64_t *)data)[i] = tp->uint64_data[i]; break;
      case NN_DTYPE_UINT32: ((uint32_t *)data)[i] = (uint32_t)tp->uint64_data[i]; break;
      case NN_DTYPE_INT32: ((int32_t *)data)[i] = tp->int32_data[i]; break;
      case NN_DTYPE_INT16: ((int16_t *)data)[i] = (int16_t)tp->int32_data[i]; break;
      case NN_DTYPE_UINT16: case NN_DTYPE_FLOAT16: case NN_DTYPE_BFLOAT16:
        ((uint16_t *)data)[i] = (uint16_t)tp->int32_data[i];
        break;
      case NN_DTYPE_INT8: ((int8_t *)data)[i] = (int8_t)tp->int32_data[i]; break;
      case NN_DTYPE_UINT8: ((uint8_t *)data)[i] = (uint8_t)tp->int32_data[i]; break;
      case NN_DTYPE_BOOL: ((uint8_t *)data)[i] = tp->int32_data[i] != 0; break;
      default: break;
      }
    }
  }
  out->data = data;
  return NN_OK;
}

nn_status nn_tensor_from_proto(const void *proto, const char *base_dir, const nn_limits *lim,
                               nn_tensor *out, nn_error *err) {
  return tensor_from_proto(proto, base_dir, lim,
                           lim && lim->max_weights_bytes ? lim->max_weights_bytes : -1, NULL, 0, out, err);
}

nn_status nn_tensor_decode(const void *buf, size_t size, nn_tensor *out, char **name,
                           nn_error *err) {
  if (name)
    *name = NULL;
  static const char bad[] = "not a TensorProto (protobuf does not decode)";
  /* zero bytes decode as a TensorProto of data type 0: say what it is */
  if (size == 0)
    return nn_error_set(err, NN_ERR_PARSE, "the tensor file is empty (0 bytes)");
  nn_status st = pb_check(buf, size, &onnx_subset__tensor_proto__descriptor, "the tensor", bad, err);
  if (st != NN_OK)
    return st;
  pb_budget budget = {0, pb_budget_for(size, 0), false};
  ProtobufCAllocator pb_allocator = {pb_alloc, pb_free, &budget};
  TensorProto *tp = onnx_subset__tensor_proto__unpack(&pb_allocator, size, buf);
  if (!tp)
    return budget.exceeded ? nn_error_set(err, NN_ERR_LIMIT, "the tensor needs more than %zu bytes to "
                                          "decode", budget.limit)
                           : nn_error_set(err, NN_ERR_PARSE, "%s", bad);
  st = nn_tensor_from_proto(tp, NULL, NULL, out, err);
  if (st == NN_OK && name) {
    *name = nn_strdup(tp->name ? tp->name : "");
    if (!*name) {
      nn_aligned_free(out->data);
      out->data = NULL;
      st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    }
  }
  onnx_subset__tensor_proto__free_unpacked(tp, &pb_allocator);
  return st;
}

/* ---- sequences and optionals (test data) --------------------------------- */
static nn_status seq_tensors(const OnnxSubset__SequenceProto *sp, nn_tensor **items, int *n,
                             nn_error *err) {
  if (sp->n_sequence_values || sp->n_optional_values)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "sequences of sequences or optionals are not supported");
  if (sp->n_tensor_values > NN_LIMIT_SEQUENCE_ITEMS)
    return nn_error_set(err, NN_ERR_LIMIT, "a sequence of %zu items, more than the limit %d",
                        sp->n_tensor_values, NN_LIMIT_SEQUENCE_ITEMS);
  nn_tensor *t = nn_calloc(sp->n_tensor_values + 1, sizeof *t);
  if (!t)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < sp->n_tensor_values; i++) {
    nn_status st = nn_tensor_from_proto(sp->tensor_values[i], NULL, NULL, &t[i], err);
    if (st != NN_OK) {
      for (size_t j = 0; j < i; j++)
        nn_aligned_free(t[j].data);
      nn_free(t);
      return st;
    }
  }
  *items = t;
  *n = (int)sp->n_tensor_values;
  return NN_OK;
}

nn_status nn_sequence_decode(const void *buf, size_t size, bool optional, nn_tensor **items, int *n,
                             bool *none, bool *is_seq, char **name, nn_error *err) {
  *items = NULL;
  *n = 0;
  *none = false;
  *is_seq = !optional;
  if (name)
    *name = NULL;
  static const char bad[] = "not a SequenceProto / OptionalProto (protobuf does not decode)";
  const ProtobufCMessageDescriptor *desc = optional ? &onnx_subset__optional_proto__descriptor
                                                    : &onnx_subset__sequence_proto__descriptor;
  nn_status st = pb_check(buf, size, desc, "the value", bad, err);
  if (st != NN_OK)
    return st;
  pb_budget budget = {0, pb_budget_for(size, 0), false};
  ProtobufCAllocator pb_allocator = {pb_alloc, pb_free, &budget};
  ProtobufCMessage *m = protobuf_c_message_unpack(desc, &pb_allocator, size, buf);
  if (!m)
    return nn_error_set(err, budget.exceeded ? NN_ERR_LIMIT : NN_ERR_PARSE, "%s", bad);
  const char *nm = "";
  if (optional) {
    const OnnxSubset__OptionalProto *op = (const OnnxSubset__OptionalProto *)m;
    nm = op->name ? op->name : "";
    if (op->optional_value) {
      st = nn_error_set(err, NN_ERR_UNSUPPORTED, "optionals of optionals are not supported");
    } else if (op->sequence_value) {
      *is_seq = true;
      st = seq_tensors(op->sequence_value, items, n, err);
    } else if (op->tensor_value) {
      nn_tensor *t = nn_calloc(1, sizeof *t);
      st = t ? nn_tensor_from_proto(op->tensor_value, NULL, NULL, t, err)
             : nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      if (st == NN_OK) {
        *items = t;
        *n = 1;
      } else {
        nn_free(t);
      }
    } else {
      *none = true;
    }
  } else {
    const OnnxSubset__SequenceProto *sp = (const OnnxSubset__SequenceProto *)m;
    nm = sp->name ? sp->name : "";
    st = seq_tensors(sp, items, n, err);
  }
  if (st == NN_OK && name && !(*name = nn_strdup(nm)))
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  if (st != NN_OK) {
    for (int i = 0; *items && i < *n; i++)
      nn_aligned_free((*items)[i].data);
    nn_free(*items);
    *items = NULL;
    *n = 0;
  }
  protobuf_c_message_free_unpacked(m, &pb_allocator);
  return st;
}

/* ---- scopes ---------------------------------------------------------------
 * A subgraph reads values of its enclosing graphs by name.  While a graph is
 * loaded its scope holds its name map and, for the node being loaded, the
 * enclosing-graph values its subgraphs read (its implicit inputs). */
typedef struct load_scope {
  nn_graph *g;
  name_map *map;
  struct load_scope *parent;
  int n_explicit;            /* ONNX inputs of the node being loaded */
  int *implicit;             /* value indices in g, n_implicit of them */
  int n_implicit, cap_implicit;
  size_t *nodes_total;       /* nodes of the whole model, every graph */
} load_scope;

/* The main graph's initializers' raw_data read out of the wire before
 * decoding (load_detach): raw[i] (nn_aligned_alloc, len[i] bytes) for
 * initializer i, NULL where it stayed in the wire.  The tensor adopts it. */
typedef struct load_detached {
  size_t n;
  unsigned char **raw;
  uint64_t *len;
} load_detached;

static nn_status load_graph(nn_graph *g, const GraphProto *gp, load_scope *parent, const nn_limits *lim,
                            load_detached *det, size_t *nodes_total, nn_error *err);

/* The slot of the current node's input carrying parent value pidx. */
static int scope_implicit_slot(load_scope *sc, int pidx) {
  for (int i = 0; i < sc->n_implicit; i++)
    if (sc->implicit[i] == pidx)
      return sc->n_explicit + i;
  if (sc->n_implicit == sc->cap_implicit) {
    int cap = sc->cap_implicit ? sc->cap_implicit * 2 : 8;
    int *p = nn_realloc(sc->implicit, (size_t)cap * sizeof(int));
    if (!p)
      return -1;
    sc->implicit = p;
    sc->cap_implicit = cap;
  }
  sc->implicit[sc->n_implicit++] = pidx;
  return sc->n_explicit + sc->n_implicit - 1;
}

/* A graph attribute: the subgraph, loaded in a scope under sc; the names it
 * reads but does not define become implicit inputs of the node. */
static nn_status subgraph_load(nn_attr *a, const GraphProto *gp, const char *node_name, load_scope *sc,
                               const nn_limits *lim, nn_error *err) {
  if (!sc)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "node '%s': graph attribute '%s' outside a graph",
                        node_name, a->name);
  if (!gp)
    return nn_error_set(err, NN_ERR_INVALID_MODEL, "node '%s': graph attribute '%s' is empty", node_name,
                        a->name);
  if (sc->g->depth + 1 > NN_LIMIT_SUBGRAPH_DEPTH)
    return nn_error_set(err, NN_ERR_LIMIT, "node '%s': subgraphs nest more than %d levels deep",
                        node_name, NN_LIMIT_SUBGRAPH_DEPTH);
  nn_graph *sub = nn_calloc(1, sizeof *sub);
  if (!sub)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  a->g = sub;
  sub->parent = sc->g;
  sub->depth = sc->g->depth + 1;
  sub->ir_version = sc->g->ir_version;
  if (sc->g->base_dir && !(sub->base_dir = nn_strdup(sc->g->base_dir)))
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  nn_status st = load_graph(sub, gp, sc, lim, NULL, sc->nodes_total, err);
  if (st != NN_OK)
    return st;
  /* what the subgraph reads and nobody in it defines comes from outside */
  for (int v = 0; v < sub->n_values; v++) {
    nn_value *val = &sub->values[v];
    if (val->kind != NN_VAL_INTER || val->producer >= 0)
      continue;
    int pidx = value_get_or_add(sc->g, sc->map, val->name);
    int slot = pidx >= 0 ? scope_implicit_slot(sc, pidx) : -1;
    if (slot < 0)
      return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    val->kind = NN_VAL_INPUT;
    val->outer_slot = slot;
  }
  return NN_OK;
}

/* ---- attributes ---------------------------------------------------------- */
/* base_dir anchors a tensor attribute's external data (a Constant's value,
 * as onnx.external_data_helper writes with convert_attribute=True), with the
 * confinement rules of initializers; NULL forbids it. */
static nn_status attr_copy(nn_attr *a, const AttributeProto *ap, const char *node_name,
                           const char *base_dir, const nn_limits *lim, load_scope *sc, nn_error *err) {
  a->name = nn_strdup(ap->name ? ap->name : "");
  if (!a->name)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  if (ap->ref_attr_name && ap->ref_attr_name[0])
    return nn_error_set(err, NN_ERR_UNSUPPORTED,
                        "node '%s': attribute '%s' refers to a function attribute", node_name, a->name);
  int type = ap->has_type ? (int)ap->type : 0;
  if (type == 0) {
    /* IR < 0.0.2 style: infer from what is set */
    if (ap->n_floats) type = NN_ATTR_FLOATS;
    else if (ap->n_ints) type = NN_ATTR_INTS;
    else if (ap->n_strings) type = NN_ATTR_STRINGS;
    else if (ap->t) type = NN_ATTR_TENSOR;
    else if (ap->g) type = NN_ATTR_GRAPH;
    else if (ap->has_s) type = NN_ATTR_STRING;
    else if (ap->has_i) type = NN_ATTR_INT;
    else if (ap->has_f) type = NN_ATTR_FLOAT;
  }
  a->type = (nn_attr_type)type;
  a->f = ap->f;
  a->i = ap->i;
  switch (type) {
  case NN_ATTR_STRING:
    a->s = nn_strndup(ap->s.data ? (const char *)ap->s.data : "", ap->s.len);
    a->s_len = ap->s.len;
    if (!a->s)
      return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    break;
  case NN_ATTR_FLOATS:
    if (ap->n_floats > INT_MAX)
      return nn_error_set(err, NN_ERR_LIMIT, "node '%s': attribute too long", node_name);
    a->n = (int)ap->n_floats;
    a->floats = nn_malloc(ap->n_floats * sizeof(float));
    if (!a->floats)
      return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    if (ap->n_floats)
      memcpy(a->floats, ap->floats, ap->n_floats * sizeof(float));
    break;
  case NN_ATTR_INTS:
    if (ap->n_ints > INT_MAX)
      return nn_error_set(err, NN_ERR_LIMIT, "node '%s': attribute too long", node_name);
    a->n = (int)ap->n_ints;
    a->ints = nn_malloc(ap->n_ints * sizeof(int64_t));
    if (!a->ints)
      return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    if (ap->n_ints)
      memcpy(a->ints, ap->ints, ap->n_ints * sizeof(int64_t));
    break;
  case NN_ATTR_STRINGS:
    if (ap->n_strings > INT_MAX)
      return nn_error_set(err, NN_ERR_LIMIT, "node '%s': attribute too long", node_name);
    a->strings = nn_calloc(ap->n_strings ? ap->n_strings : 1, sizeof(char *));
    if (!a->strings)
      return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    a->n = (int)ap->n_strings;
    for (size_t i = 0; i < ap->n_strings; i++) {
      a->strings[i] = nn_strndup((const char *)ap->strings[i].data, ap->strings[i].len);
      if (!a->strings[i])
        return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    }
    break;
  case NN_ATTR_TENSOR:
    if (!ap->t)
      return nn_error_set(err, NN_ERR_INVALID_MODEL, "node '%s': tensor attribute '%s' is empty",
                          node_name, a->name);
    return nn_tensor_from_proto(ap->t, base_dir, lim, &a->t, err);
  case NN_ATTR_GRAPH:
    return subgraph_load(a, ap->g, node_name, sc, lim, err);
  default:
    /* graphs, sparse tensors, type protos: kept as typed but empty; ops
     * needing them are not implemented and fail at lookup */
    break;
  }
  return NN_OK;
}

static int name_ptr_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The same attribute twice is invalid (the ONNX checker: "appeared multiple
 * times"), and the getters would silently read the first.  Sorted rather
 * than compared pairwise: a node may carry 65536 attributes. */
static nn_status attrs_check_unique(const nn_node *n, nn_error *err) {
  if (n->n_attrs < 2)
    return NN_OK;
  const char **names = nn_malloc((size_t)n->n_attrs * sizeof *names);
  if (!names)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  for (int k = 0; k < n->n_attrs; k++)
    names[k] = n->attrs[k].name;
  qsort(names, (size_t)n->n_attrs, sizeof *names, name_ptr_cmp);
  nn_status st = NN_OK;
  for (int k = 1; k < n->n_attrs && st == NN_OK; k++)
    if (strcmp(names[k - 1], names[k]) == 0)
      st = nn_error_set(err, NN_ERR_INVALID_MODEL, "node '%s' (%s): attribute '%s' is given more "
                        "than once", n->name, n->op_type, names[k]);
  nn_free(names);
  return st;
}

/* ---- graph --------------------------------------------------------------- */
static void decl_from_value_info(nn_value *v, const ValueInfoProto *vi) {
  v->decl_rank = -1;
  v->decl_dtype = NN_DTYPE_UNDEFINED;
  v->decl_vtype = NN_VT_TENSOR;
  if (vi->type && vi->type->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
    v->decl_vtype = NN_VT_SEQUENCE;
    const OnnxSubset__TypeProto *et = vi->type->sequence_type->elem_type;
    if (et && et->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_TENSOR_TYPE)
      v->decl_dtype = (nn_dtype)et->tensor_type->elem_type;
    return;
  }
  if (vi->type && vi->type->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_OPTIONAL_TYPE) {
    v->decl_vtype = NN_VT_OPTIONAL;
    const OnnxSubset__TypeProto *et = vi->type->optional_type->elem_type;
    if (et && et->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
      v->decl_opt_seq = true;
      et = et->sequence_type->elem_type;
    }
    if (et && et->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_TENSOR_TYPE)
      v->decl_dtype = (nn_dtype)et->tensor_type->elem_type;
    return;
  }
  if (!vi->type || vi->type->value_case != ONNX_SUBSET__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return;
  const OnnxSubset__TypeProto__Tensor *tt = vi->type->tensor_type;
  v->decl_dtype = (nn_dtype)tt->elem_type;
  if (!tt->shape || tt->shape->n_dim > NN_MAX_RANK)
    return;
  v->decl_rank = (int)tt->shape->n_dim;
  for (size_t i = 0; i < tt->shape->n_dim; i++) {
    const OnnxSubset__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    v->decl_dims[i] =
        (d->value_case == ONNX_SUBSET__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
            ? d->dim_value
            : -1;
  }
}

static bool value_info_is_tensor(const ValueInfoProto *vi) {
  return !vi->type || vi->type->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_TENSOR_TYPE ||
         vi->type->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE__NOT_SET;
}

/* A sequence of tensors, or an optional of a tensor or of such a sequence. */
static bool value_info_is_boxed(const ValueInfoProto *vi) {
  const OnnxSubset__TypeProto *t = vi->type;
  if (!t)
    return false;
  if (t->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
    t = t->optional_type->elem_type;
  else if (t->value_case != ONNX_SUBSET__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
    return false;
  if (t && t->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
    t = t->sequence_type->elem_type;
  return t && t->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_TENSOR_TYPE;
}

static nn_status load_graph(nn_graph *g, const GraphProto *gp, load_scope *parent, const nn_limits *lim,
                            load_detached *det, size_t *nodes_total, nn_error *err) {
  nn_status st = NN_OK;
  name_map map = {0};
  int *order = NULL;
  bool is_sub = parent != NULL;
  load_scope sc = {g, &map, parent, 0, NULL, 0, 0, nodes_total};
  int max_nodes = lim && lim->max_nodes ? lim->max_nodes : NN_LIMIT_NODES;
  if (gp->n_node > (size_t)max_nodes - *nodes_total)
    return nn_error_set(err, NN_ERR_LIMIT, "model has %zu nodes, more than the limit %d%s",
                        gp->n_node + *nodes_total, max_nodes, is_sub ? " (counting its subgraphs)" : "");
  *nodes_total += gp->n_node;
  size_t expected = gp->n_initializer + gp->n_input + gp->n_output;
  for (size_t i = 0; i < gp->n_node; i++)
    expected += gp->node[i]->n_output + gp->node[i]->n_input;
  if (!name_map_init(&map, expected))
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");

  /* initializers: constants owned by the graph */
  int64_t max_weights = lim && lim->max_weights_bytes ? lim->max_weights_bytes : NN_LIMIT_WEIGHTS_BYTES;
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const TensorProto *tp = gp->initializer[i];
    if (!tp->name || !tp->name[0]) {
      st = nn_error_set(err, NN_ERR_INVALID_MODEL, "initializer %zu has no name", i);
      goto out;
    }
    if (name_map_get(&map, g, tp->name) >= 0) {
      st = nn_error_set(err, NN_ERR_INVALID_MODEL, "initializer '%s' is defined twice", tp->name);
      goto out;
    }
    int idx = value_get_or_add(g, &map, tp->name);
    if (idx < 0) {
      st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      goto out;
    }
    nn_tensor t;
    unsigned char **adopt = det && i < det->n ? &det->raw[i] : NULL;
    st = tensor_from_proto(tp, g->base_dir, lim, max_weights - (int64_t)g->weights_bytes, adopt,
                           adopt ? det->len[i] : 0, &t, err);
    if (st != NN_OK)
      goto out;
    nn_value *v = &g->values[idx];
    v->kind = NN_VAL_CONST;
    v->dtype = t.dtype;
    v->rank = t.rank;
    memcpy(v->dims, t.dims, sizeof v->dims);
    v->numel = nn_dims_numel(t.rank, t.dims);
    v->nbytes = t.nbytes;
    v->const_data = t.data;
    v->data = t.data;
    g->weights_bytes += t.nbytes;
    if ((int64_t)g->weights_bytes > max_weights) {
      st = nn_error_set(err, NN_ERR_LIMIT, "model weights exceed the limit of %lld bytes",
                        (long long)max_weights);
      goto out;
    }
  }

  /* graph inputs: required ones first, then those backed by an initializer */
  g->inputs = nn_calloc(gp->n_input ? gp->n_input : 1, sizeof(int));
  g->outputs = nn_calloc(gp->n_output ? gp->n_output : 1, sizeof(int));
  if (!g->inputs || !g->outputs) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < gp->n_input; i++) {
      const ValueInfoProto *vi = gp->input[i];
      if (!vi->name || !vi->name[0]) {
        st = nn_error_set(err, NN_ERR_INVALID_MODEL, "graph input %zu has no name", i);
        goto out;
      }
      int idx = name_map_get(&map, g, vi->name);
      bool has_default = idx >= 0 && g->values[idx].kind == NN_VAL_CONST;
      if (has_default != (pass == 1))
        continue;
      if (!is_sub && !value_info_is_tensor(vi) && !value_info_is_boxed(vi)) {
        st = nn_error_set(err, NN_ERR_UNSUPPORTED,
                          "graph input '%s' is not a tensor, a sequence of tensors or an optional (maps "
                          "are not supported)", vi->name);
        goto out;
      }
      if (idx >= 0 && !has_default) {
        st = nn_error_set(err, NN_ERR_INVALID_MODEL, "graph input '%s' is listed twice", vi->name);
        goto out;
      }
      if (idx < 0)
        idx = value_get_or_add(g, &map, vi->name);
      if (idx < 0) {
        st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
        goto out;
      }
      nn_value *v = &g->values[idx];
      decl_from_value_info(v, vi);
      if (vi->type && vi->type->value_case == ONNX_SUBSET__TYPE_PROTO__VALUE_TENSOR_TYPE &&
          vi->type->tensor_type->shape) {
        /* an input the caller could never feed: say so now rather than
         * treating its shape as unknown */
        size_t r = vi->type->tensor_type->shape->n_dim;
        int max_rank = lim && lim->max_rank ? lim->max_rank : NN_MAX_RANK;
        if (r > (size_t)max_rank || r > NN_MAX_RANK) {
          st = nn_error_set(err, NN_ERR_LIMIT, "graph input '%s' has rank %zu, more than the limit %d",
                            vi->name, r, max_rank);
          goto out;
        }
      }
      if (has_default) {
        v->has_default = true;
        if (v->decl_dtype == NN_DTYPE_UNDEFINED)
          v->decl_dtype = v->dtype;
      } else if (!is_sub && v->decl_vtype == NN_VT_TENSOR && nn_dtype_size(v->decl_dtype) == 0) {
        st = nn_error_set(err, NN_ERR_UNSUPPORTED, "graph input '%s' has data type %d (%s), not supported",
                          vi->name, (int)v->decl_dtype, nn_dtype_name(v->decl_dtype));
        goto out;
      }
      v->kind = NN_VAL_INPUT;
      for (int k = 0; k < g->n_inputs; k++)
        if (g->inputs[k] == idx) {
          st = nn_error_set(err, NN_ERR_INVALID_MODEL, "graph input '%s' is listed twice", vi->name);
          goto out;
        }
      g->inputs[g->n_inputs++] = idx;
    }
  }

  /* nodes */
  g->nodes = nn_calloc(gp->n_node ? gp->n_node : 1, sizeof(nn_node));
  if (!g->nodes) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  g->cap_nodes = (int)gp->n_node;
  for (size_t i = 0; i < gp->n_node; i++) {
    const NodeProto *np = gp->node[i];
    nn_node *n = &g->nodes[g->n_nodes++];
    const char *op = np->op_type ? np->op_type : "";
    char gen[64];
    if (!np->name || !np->name[0])
      snprintf(gen, sizeof gen, "%s_%zu", op[0] ? op : "node", i);
    n->name = nn_strdup(np->name && np->name[0] ? np->name : gen);
    n->op_type = nn_strdup(op);
    n->domain = nn_strdup(np->domain ? np->domain : "");
    if (!n->name || !n->op_type || !n->domain) {
      st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      goto out;
    }
    if (!op[0]) {
      st = nn_error_set(err, NN_ERR_INVALID_MODEL, "node '%s' has no op_type", n->name);
      goto out;
    }
    if (np->n_input > 65536 || np->n_output > 65536 || np->n_attribute > 65536) {
      st = nn_error_set(err, NN_ERR_LIMIT, "node '%s' has too many inputs/outputs/attributes", n->name);
      goto out;
    }
    n->n_in = (int)np->n_input;
    n->n_in_model = n->n_in;
    n->n_out = (int)np->n_output;
    n->in = nn_malloc((np->n_input + 1) * sizeof(int));
    n->out = nn_malloc((np->n_output + 1) * sizeof(int));
    /* four spare input slots: plan-time fusions may add a bias, a
     * residual, a fused producer's input and its channel scales to a Conv
     * (plan.c) */
    n->x = nn_calloc(np->n_input + 4, sizeof(nn_value *));
    n->y = nn_calloc(np->n_output + 1, sizeof(nn_value *));
    n->attrs = nn_calloc(np->n_attribute + 1, sizeof(nn_attr));
    if (!n->in || !n->out || !n->x || !n->y || !n->attrs) {
      st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      goto out;
    }
    for (size_t k = 0; k < np->n_input; k++) {
      const char *nm = np->input[k];
      n->in[k] = (nm && nm[0]) ? value_get_or_add(g, &map, nm) : -1;
      if (nm && nm[0] && n->in[k] < 0) {
        st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
        goto out;
      }
    }
    for (size_t k = 0; k < np->n_output; k++) {
      const char *nm = np->output[k];
      n->out[k] = (nm && nm[0]) ? value_get_or_add(g, &map, nm) : -1;
      if (nm && nm[0] && n->out[k] < 0) {
        st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
        goto out;
      }
      if (n->out[k] >= 0) {
        nn_value *v = &g->values[n->out[k]];
        if (v->producer >= 0 || v->kind == NN_VAL_CONST || v->kind == NN_VAL_INPUT) {
          st = nn_error_set(err, NN_ERR_INVALID_MODEL, "value '%s' is produced twice (again by node '%s')",
                            v->name, n->name);
          goto out;
        }
        v->producer = g->n_nodes - 1;
      }
    }
    sc.n_explicit = n->n_in;
    sc.n_implicit = 0;
    for (size_t k = 0; k < np->n_attribute; k++) {
      st = attr_copy(&n->attrs[k], np->attribute[k], n->name, g->base_dir, lim, &sc, err);
      n->n_attrs = (int)k + 1;
      if (st != NN_OK)
        goto out;
    }
    if (sc.n_implicit > 0) {
      /* the outer-scope values its subgraphs read: inputs after the ONNX ones */
      size_t tot = (size_t)n->n_in + (size_t)sc.n_implicit;
      int *in = nn_realloc(n->in, (tot + 1) * sizeof(int));
      if (in)
        n->in = in;
      nn_value **x = in ? nn_realloc(n->x, (tot + 1) * sizeof(nn_value *)) : NULL;
      if (x)
        n->x = x;
      if (!in || !x) {
        st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
        goto out;
      }
      for (int k = 0; k < sc.n_implicit; k++) {
        n->in[n->n_in + k] = sc.implicit[k];
        n->x[n->n_in + k] = NULL;
      }
      n->n_in = (int)tot;
      n->n_in_model = n->n_in;
      n->n_implicit = sc.n_implicit;
    }
    st = attrs_check_unique(n, err);
    if (st != NN_OK)
      goto out;
  }

  /* graph outputs */
  for (size_t i = 0; i < gp->n_output; i++) {
    const ValueInfoProto *vi = gp->output[i];
    if (!vi->name || !vi->name[0]) {
      st = nn_error_set(err, NN_ERR_INVALID_MODEL, "graph output %zu has no name", i);
      goto out;
    }
    if (!is_sub && !value_info_is_tensor(vi) && !value_info_is_boxed(vi)) {
      st = nn_error_set(err, NN_ERR_UNSUPPORTED,
                        "graph output '%s' is not a tensor, a sequence of tensors or an optional (maps "
                        "are not supported)", vi->name);
      goto out;
    }
    int idx = name_map_get(&map, g, vi->name);
    if (idx < 0 && is_sub) /* a subgraph may return an enclosing scope's value */
      idx = value_get_or_add(g, &map, vi->name);
    if (idx < 0 && is_sub) {
      st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      goto out;
    }
    if (idx < 0) {
      st = nn_error_set(err, NN_ERR_INVALID_MODEL, "graph output '%s' is never produced", vi->name);
      goto out;
    }
    nn_value *v = &g->values[idx];
    if (v->is_graph_output && !is_sub) {
      st = nn_error_set(err, NN_ERR_INVALID_MODEL, "graph output '%s' is listed twice", vi->name);
      goto out;
    }
    v->is_graph_output = true;
    nn_dtype keep = v->dtype;
    decl_from_value_info(v, vi);
    if (v->kind == NN_VAL_CONST && v->decl_dtype == NN_DTYPE_UNDEFINED)
      v->decl_dtype = keep;
    g->outputs[g->n_outputs++] = idx;
  }

out:
  nn_free(map.slots);
  nn_free(order);
  nn_free(sc.implicit);
  return st;
}

static nn_status graph_load(const void *data, size_t size, const char *base_dir, const nn_limits *lim,
                            load_detached *det, nn_graph **out, nn_error *err) {
  nn_status st;
  *out = NULL;
  int64_t max_model = lim && lim->max_model_bytes ? lim->max_model_bytes : NN_LIMIT_MODEL_BYTES;
  if (size == 0)
    return nn_error_set(err, NN_ERR_PARSE, "not an ONNX model: the file is empty");
  if ((int64_t)size > max_model)
    return nn_error_set(err, NN_ERR_LIMIT, "model is %zu bytes, more than the limit %lld", size,
                        (long long)max_model);
  static const char bad[] = "not an ONNX model: the protobuf does not decode (truncated or corrupt file?)";
  st = pb_check(data, size, &onnx_subset__model_proto__descriptor, "the model", bad, err);
  if (st != NN_OK)
    return st;
  pb_budget budget = {0, pb_budget_for(size, lim ? lim->max_weights_bytes : 0), false};
  ProtobufCAllocator pb_allocator = {pb_alloc, pb_free, &budget};
  ModelProto *mp = onnx_subset__model_proto__unpack(&pb_allocator, size, data);
  if (!mp)
    return budget.exceeded ? nn_error_set(err, NN_ERR_LIMIT, "the model needs more than %zu bytes of "
                                          "memory to decode", budget.limit)
                           : nn_error_set(err, NN_ERR_PARSE, "%s", bad);
  nn_graph *g = nn_calloc(1, sizeof *g);
  if (!g) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out_free_proto;
  }
  if (!mp->has_ir_version || !mp->graph) {
    st = nn_error_set(err, NN_ERR_PARSE, "not an ONNX model: %s",
                      !mp->has_ir_version ? "no ir_version" : "no graph");
    goto out_free_graph;
  }
  g->ir_version = mp->ir_version;
  if (mp->ir_version < NN_IR_MIN || mp->ir_version > NN_IR_MAX) {
    st = nn_error_set(err, NN_ERR_UNSUPPORTED, "ONNX IR version %lld is not supported (supported: %d to %d)",
                      (long long)mp->ir_version, NN_IR_MIN, NN_IR_MAX);
    goto out_free_graph;
  }
  if (mp->n_functions > 0) {
    /* local functions are only a problem when a node calls one: that node's
     * op is then unknown and reported by name at finalize */
  }
  g->opsets = nn_calloc(mp->n_opset_import + 1, sizeof(nn_opset));
  if (!g->opsets) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out_free_graph;
  }
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    const char *d = mp->opset_import[i]->domain ? mp->opset_import[i]->domain : "";
    if (strcmp(d, "ai.onnx") == 0)
      d = "";
    int64_t ver = mp->opset_import[i]->version;
    if (d[0] == '\0' && (ver < 1 || ver > NN_OPSET_MAX)) {
      st = nn_error_set(err, NN_ERR_UNSUPPORTED,
                        "default-domain opset %lld is not supported (supported: 1 to %d)",
                        (long long)ver, NN_OPSET_MAX);
      goto out_free_graph;
    }
    g->opsets[g->n_opsets].domain = nn_strdup(d);
    g->opsets[g->n_opsets].version = (int)(ver > INT_MAX ? INT_MAX : ver < 0 ? 0 : ver);
    if (!g->opsets[g->n_opsets].domain) {
      st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      goto out_free_graph;
    }
    g->n_opsets++;
  }
  if (base_dir) {
    g->base_dir = nn_strdup(base_dir);
    if (!g->base_dir) {
      st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      goto out_free_graph;
    }
  }
  size_t nodes_total = 0;
  st = load_graph(g, mp->graph, NULL, lim, det, &nodes_total, err);
  if (st != NN_OK)
    goto out_free_graph;
  onnx_subset__model_proto__free_unpacked(mp, &pb_allocator);
  *out = g;
  return NN_OK;

out_free_graph:
  nn_graph_free(g);
out_free_proto:
  onnx_subset__model_proto__free_unpacked(mp, &pb_allocator);
  return st;
}

nn_status nn_graph_load(const void *data, size_t size, const char *base_dir, const nn_limits *lim,
                        nn_graph **out, nn_error *err) {
  return graph_load(data, size, base_dir, lim, NULL, out, err);
}

/* ---- weights straight from the file -----------------------------------------
 * protobuf-c copies every bytes field it decodes, so a model read whole held
 * its weights three times at once: the file's bytes, the decoded raw_data and
 * the aligned tensors (a ResNet-18 of 47 MB peaked at 140 MB while loading,
 * 55 MB over weights + arena + 16 MiB).  From a file the wire is read twice
 * instead, through a 64 KiB window.  The first pass reads tags and lengths
 * only: which initializers of the main graph (ModelProto.graph 7 ->
 * GraphProto.initializer 5) carry a raw_data (TensorProto 9) of
 * LOAD_DETACH_MIN bytes or more, and what every enclosing length becomes
 * without them.  The second copies every other byte into the buffer
 * protobuf-c decodes and reads those payloads straight into their aligned
 * tensors.  The peak is the weights once plus the rest of the file.  Wire
 * this does not need to understand (a second graph field, a tensor with two
 * raw_data, a group) is read whole as before, where the decoder judges it. */
#define LOAD_DETACH_MIN 4096
#define LOAD_WINDOW ((size_t)64 << 10)

typedef struct wire_rd {
  int fd;
  uint64_t size;       /* file size */
  uint64_t pos;        /* next byte to consume */
  uint64_t win_pos;    /* file offset of win[0] */
  size_t win_len;
  bool io_error;
  unsigned char *win;
} wire_rd;

static bool rd_pread(wire_rd *r, void *dst, size_t n, uint64_t off) {
  unsigned char *d = dst;
  while (n > 0) {
    ssize_t got = pread(r->fd, d, n, (off_t)off);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {   /* an error, or the file shrank since it was measured */
      r->io_error = true;
      return false;
    }
    d += got, off += (uint64_t)got, n -= (size_t)got;
  }
  return true;
}

static bool rd_byte(wire_rd *r, uint8_t *b) {
  if (r->pos >= r->size)
    return false;
  if (r->pos < r->win_pos || r->pos >= r->win_pos + r->win_len) {
    size_t n = r->size - r->pos < LOAD_WINDOW ? (size_t)(r->size - r->pos) : LOAD_WINDOW;
    if (!rd_pread(r, r->win, n, r->pos))
      return false;
    r->win_pos = r->pos;
    r->win_len = n;
  }
  *b = r->win[r->pos++ - r->win_pos];
  return true;
}

static bool rd_varint(wire_rd *r, uint64_t *v) {
  uint64_t x = 0;
  for (int i = 0; i < 10; i++) {
    uint8_t b;
    if (!rd_byte(r, &b))
      return false;
    x |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *v = x;
      return true;
    }
  }
  return false;
}

/* n bytes at the read position into dst (NULL: skipped). */
static bool rd_take(wire_rd *r, unsigned char *dst, uint64_t n) {
  if (n > r->size - r->pos)
    return false;
  if (dst) {
    uint64_t p = r->pos, done = 0;
    if (p >= r->win_pos && p < r->win_pos + r->win_len) {   /* what the window holds */
      done = r->win_pos + r->win_len - p < n ? r->win_pos + r->win_len - p : n;
      memcpy(dst, r->win + (p - r->win_pos), (size_t)done);
    }
    if (done < n && !rd_pread(r, dst + done, (size_t)(n - done), p + done))
      return false;
  }
  r->pos += n;
  return true;
}

static int varint_size(uint64_t v) {
  int n = 1;
  while (v >= 0x80)
    v >>= 7, n++;
  return n;
}

static unsigned char *put_varint(unsigned char *o, uint64_t v) {
  while (v >= 0x80) {
    *o++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *o++ = (unsigned char)v;
  return o;
}

typedef struct detach_plan {
  wire_rd rd;
  size_t n_init, cap;        /* initializers of the main graph seen */
  uint64_t *new_len;         /* each one's length without its raw_data */
  uint64_t *raw_len;         /* its detached raw_data's length, 0 none */
  uint64_t graph_len, detached, max_detach;
  unsigned char *out, *o;    /* pass 2: the bytes protobuf-c decodes */
  uint64_t out_cap;          /* out's size: the measured length and room for a prefix */
  unsigned char **raw;       /* pass 2: the payloads, per initializer */
} detach_plan;

enum { DETACH_OK, DETACH_FALLBACK, DETACH_NOMEM };

/* One field's key at the read position: field number, wire type, and for
 * length-delimited ones the length; the field's bytes so far in *hdr. */
static bool rd_field(wire_rd *r, uint64_t *field, int *wt, uint64_t *len, uint64_t *hdr) {
  uint64_t start = r->pos, key;
  if (!rd_varint(r, &key) || r->pos - start > 5 || (key >> 3) == 0)
    return false;
  *field = key >> 3;
  *wt = (int)(key & 7);
  *len = 0;
  switch (*wt) {
  case 0: { uint64_t v; if (!rd_varint(r, &v)) return false; break; }
  case 1: *len = 8; break;
  case 5: *len = 4; break;
  case 2: if (!rd_varint(r, len) || *len > r->size - r->pos) return false; break;
  default: return false;
  }
  *hdr = r->pos - start;
  return true;
}

/* The fields of a message from the read position up to `end`: level 0 the
 * model, 1 the main graph, 2 one of its initializers (index k).  Pass 1
 * (p->out == NULL) measures, pass 2 writes.  Returns the message's new
 * length through *new_len. */
static int detach_walk(detach_plan *p, int level, uint64_t end, size_t k, uint64_t *new_len) {
  wire_rd *r = &p->rd;
  const uint64_t start = r->pos;
  uint64_t removed = 0;
  bool seen_graph = false, seen_raw = false;
  while (r->pos < end) {
    uint64_t fstart = r->pos, field, len, hdr;
    int wt;
    if (!rd_field(r, &field, &wt, &len, &hdr) || len > end - r->pos)
      return DETACH_FALLBACK;
    bool sub = wt == 2 && ((level == 0 && field == 7) || (level == 1 && field == 5));
    if (sub) {
      if (level == 0 && seen_graph)
        return DETACH_FALLBACK;   /* decoders merge repeated messages: read whole */
      seen_graph = true;
      size_t idx = level == 1 ? p->n_init : 0;
      if (level == 1 && !p->out) {   /* pass 1: room for this initializer */
        if (p->n_init == p->cap) {
          size_t cap = p->cap ? 2 * p->cap : 64;
          uint64_t *a = nn_realloc(p->new_len, cap * sizeof *a);
          if (a)
            p->new_len = a;
          uint64_t *b = a ? nn_realloc(p->raw_len, cap * sizeof *b) : NULL;
          if (!b)
            return DETACH_NOMEM;
          p->raw_len = b;
          p->cap = cap;
        }
        p->raw_len[idx] = 0;
      }
      if (level == 1)
        p->n_init++;
      uint64_t inner = 0, pos_after = r->pos + len;
      if (p->out) {   /* the new length was measured in pass 1 */
        if (level == 1 && idx >= p->cap)
          return DETACH_FALLBACK;   /* more initializers than pass 1 saw */
        uint64_t nl = level == 0 ? p->graph_len : p->new_len[idx];
        if ((uint64_t)(p->o - p->out) + 20 > p->out_cap)
          return DETACH_FALLBACK;   /* no room for a key and a length */
        p->o = put_varint(put_varint(p->o, (field << 3) | 2), nl);
      }
      int st = detach_walk(p, level + 1, pos_after, idx, &inner);
      if (st != DETACH_OK)
        return st;
      if (!p->out) {
        if (level == 0)
          p->graph_len = inner;
        else
          p->new_len[idx] = inner;
      }
      removed += hdr + len - (uint64_t)varint_size((field << 3) | 2) - (uint64_t)varint_size(inner) - inner;
      continue;
    }
    if (level == 2 && field == 9 && wt == 2) {
      if (seen_raw)
        return DETACH_FALLBACK;   /* the last one would win: read whole */
      seen_raw = true;
      bool detach = p->out ? p->raw_len[k] > 0
                           : len >= LOAD_DETACH_MIN && len <= p->max_detach - p->detached;
      if (detach) {
        if (!p->out) {
          p->raw_len[k] = len;
          p->detached += len;
          if (!rd_take(r, NULL, len))
            return DETACH_FALLBACK;
        } else {
          if (len != p->raw_len[k])
            return DETACH_FALLBACK;   /* the file changed since pass 1 */
          p->raw[k] = nn_aligned_alloc((size_t)len);
          if (!p->raw[k])
            return DETACH_NOMEM;
          if (!rd_take(r, p->raw[k], len))
            return DETACH_FALLBACK;
        }
        removed += hdr + len;
        continue;
      }
    }
    /* any other field: skipped in pass 1, copied as it is in pass 2 (within
     * the length pass 1 measured, should the file have changed since) */
    if (p->out) {
      if (hdr + len > p->out_cap - (uint64_t)(p->o - p->out))
        return DETACH_FALLBACK;
      r->pos = fstart;
      if (!rd_take(r, p->o, hdr + len))
        return DETACH_FALLBACK;
      p->o += hdr + len;
    } else if (!rd_take(r, NULL, len)) {
      return DETACH_FALLBACK;
    }
  }
  if (r->pos != end)
    return DETACH_FALLBACK;
  *new_len = (end - start) - removed;
  return DETACH_OK;
}

static void detach_free(detach_plan *p) {
  if (p->raw)
    for (size_t i = 0; i < p->n_init; i++)
      nn_aligned_free(p->raw[i]);
  nn_free(p->raw);
  nn_free(p->new_len);
  nn_free(p->raw_len);
  nn_free(p->out);
  nn_free(p->rd.win);
}

nn_status nn_graph_load_fd(int fd, int64_t fsize, const char *path, const char *base_dir,
                           const nn_limits *lim, nn_graph **out, nn_error *err) {
  *out = NULL;
  int64_t max_model = lim && lim->max_model_bytes ? lim->max_model_bytes : NN_LIMIT_MODEL_BYTES;
  nn_status st = nn_file_check_size(path, fsize, (size_t)max_model, err);
  if (st != NN_OK) {
    close(fd);
    return st;
  }
  int64_t max_w = lim && lim->max_weights_bytes ? lim->max_weights_bytes : NN_LIMIT_WEIGHTS_BYTES;
  detach_plan p = {.rd = {.fd = fd, .size = (uint64_t)fsize}, .max_detach = (uint64_t)max_w};
  p.rd.win = nn_malloc(LOAD_WINDOW);
  int ds = p.rd.win ? DETACH_OK : DETACH_NOMEM;
  uint64_t model_len = 0;
  if (ds == DETACH_OK)
    ds = detach_walk(&p, 0, p.rd.size, 0, &model_len);
  if (ds == DETACH_OK && p.detached > 0) {
    p.out_cap = model_len + 32;
    p.out = nn_malloc((size_t)p.out_cap);
    p.raw = nn_calloc(p.n_init + 1, sizeof *p.raw);
    size_t n_init = p.n_init;
    if (!p.out || !p.raw) {
      ds = DETACH_NOMEM;
    } else {
      p.o = p.out;
      p.rd.pos = 0;
      p.n_init = 0;
      uint64_t again = 0;
      ds = detach_walk(&p, 0, p.rd.size, 0, &again);
      if (ds == DETACH_OK && (p.n_init != n_init || (uint64_t)(p.o - p.out) != model_len))
        ds = DETACH_FALLBACK;   /* the file changed between the passes */
    }
  }
  if (ds == DETACH_NOMEM || p.rd.io_error) {
    st = ds == DETACH_NOMEM ? nn_error_set(err, NN_ERR_NOMEM, "out of memory reading the model")
                            : nn_error_set(err, NN_ERR_IO, "error reading '%s' (did it change "
                                           "while it was read?)", path);
    close(fd);
  } else if (ds == DETACH_OK && p.detached > 0) {
    close(fd);
    load_detached det = {p.n_init, p.raw, p.raw_len};
    st = graph_load(p.out, (size_t)model_len, base_dir, lim, &det, out, err);
  } else {   /* nothing to detach, or wire the walk leaves to the decoder */
    void *buf = NULL;
    size_t size = 0;
    st = lseek(fd, 0, SEEK_SET) == 0
             ? nn_file_read_fd(fd, fsize, path, (size_t)max_model, &buf, &size, err)
             : (close(fd), nn_error_set(err, NN_ERR_IO, "cannot read '%s': %s", path, strerror(errno)));
    if (st == NN_OK) {
      nn_free(p.rd.win);   /* before the graph's tensors come */
      p.rd.win = NULL;
      st = graph_load(buf, size, base_dir, lim, NULL, out, err);
      nn_file_free(buf);
    }
  }
  detach_free(&p);
  return st;
}
