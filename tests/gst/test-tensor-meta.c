/* test-tensor-meta.c - GstOnnxTensorMeta: storage layout, lifetime, copies,
 * cascades, pooled storage.
 */
#include "onnxinfer-check.h"

static GQuark
q (const gchar * s)
{
  return g_quark_from_string (s);
}

/* A storage buffer with two float tensors "a" (2x3) and "b" (4), values
 * base + index. */
static GstBuffer *
make_storage (GstBufferPool * pool, gfloat base)
{
  gsize sizes[2] = { 6 * sizeof (gfloat), 4 * sizeof (gfloat) };
  gsize offsets[2];
  GstOnnxTensorStorageLayout layout;
  GstBuffer *storage;
  GstMapInfo map;
  GstOnnxTensor *t;
  gint i;

  gst_onnx_tensor_storage_layout_init (&layout, 2, sizes, offsets);
  if (pool) {
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &storage,
            NULL), GST_FLOW_OK);
  } else {
    storage = gst_buffer_new_allocate (NULL, layout.total_size, NULL);
  }
  fail_unless (gst_buffer_map (storage, &map, GST_MAP_WRITE));
  t = gst_onnx_tensor_storage_init (map.data, map.size, 2);
  for (i = 0; i < 2; i++) {
    gfloat *d = (gfloat *) (map.data + offsets[i]);
    gint j;
    memset (&t[i], 0, sizeof t[i]);
    t[i].name = q (i == 0 ? "a" : "b");
    t[i].data_type = GST_ONNX_TENSOR_DATA_TYPE_FLOAT32;
    t[i].n_dims = i == 0 ? 2 : 1;
    t[i].dims[0] = i == 0 ? 2 : 4;
    t[i].dims[1] = i == 0 ? 3 : 0;
    t[i].size = sizes[i];
    t[i].offset = offsets[i];
    t[i].data = d;
    for (j = 0; j < (gint) (sizes[i] / sizeof (gfloat)); j++)
      d[j] = base + j;
  }
  gst_buffer_unmap (storage, &map);
  return storage;
}

GST_START_TEST (test_layout)
{
  gsize sizes[3] = { 1, 100, 64 }, offsets[3];
  GstOnnxTensorStorageLayout layout;
  gint i;

  gst_onnx_tensor_storage_layout_init (&layout, 3, sizes, offsets);
  fail_unless_equals_int (layout.n_tensors, 3);
  fail_unless (layout.header_size >= 16 + 3 * sizeof (GstOnnxTensor));
  for (i = 0; i < 3; i++) {
    fail_unless_equals_int (offsets[i] % 64, 0);
    fail_unless (offsets[i] >= layout.header_size);
    if (i > 0)
      fail_unless (offsets[i] >= offsets[i - 1] + sizes[i - 1]);
  }
  fail_unless (layout.total_size >= offsets[2] + sizes[2]);
  fail_unless_equals_int (layout.total_size % 64, 0);
}

GST_END_TEST;

GST_START_TEST (test_add_get_lifetime)
{
  GstBuffer *frame = gst_buffer_new ();
  GstBuffer *storage = make_storage (NULL, 1.0f);
  GstOnnxTensorMeta *meta;
  const GstOnnxTensor *a, *b;

  fail_unless (GST_ONNX_TENSOR_META_API_TYPE != 0);
  meta = gst_buffer_add_onnx_tensor_meta (frame, q ("det"), storage, 7, FALSE);
  fail_unless (meta != NULL);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (storage), 2);
  /* The meta keeps the tensors alive on its own. */
  gst_buffer_unref (storage);

  meta = gst_buffer_get_onnx_tensor_meta (frame, "det");
  fail_unless (meta != NULL);
  fail_unless (gst_buffer_get_onnx_tensor_meta (frame, NULL) == meta);
  fail_unless (gst_buffer_get_onnx_tensor_meta (frame, "other") == NULL);
  fail_unless_equals_int (meta->n_tensors, 2);
  fail_unless_equals_uint64 (meta->inference_id, 7);
  fail_unless (!meta->reused);

  a = gst_onnx_tensor_meta_get_by_name (meta, "a");
  b = gst_onnx_tensor_meta_get_by_name (meta, "b");
  fail_unless (a && b && a == gst_onnx_tensor_meta_get (meta, 0));
  fail_unless (gst_onnx_tensor_meta_get_by_name (meta, "zz") == NULL);
  fail_unless (gst_onnx_tensor_meta_get (meta, 2) == NULL);
  fail_unless_equals_int (gst_onnx_tensor_get_n_elements (a), 6);
  fail_unless_equals_int (gst_onnx_tensor_get_n_elements (b), 4);
  fail_unless_equals_string (gst_onnx_tensor_data_type_get_name
      (a->data_type), "float32");
  fail_unless_equals_float (((const gfloat *) a->data)[5], 6.0f);
  fail_unless_equals_float (((const gfloat *) b->data)[3], 4.0f);

  gst_buffer_unref (frame);
}

GST_END_TEST;

GST_START_TEST (test_copy_shares_storage)
{
  GstBuffer *frame = gst_buffer_new_allocate (NULL, 16, NULL);
  GstBuffer *storage = make_storage (NULL, 0.0f);
  GstBuffer *copy, *deep, *w;
  GstOnnxTensorMeta *m1, *m2;

  gst_buffer_add_onnx_tensor_meta (frame, q ("det"), storage, 1, FALSE);
  copy = gst_buffer_copy (frame);
  deep = gst_buffer_copy_deep (frame);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (storage), 4);

  m1 = gst_buffer_get_onnx_tensor_meta (frame, "det");
  m2 = gst_buffer_get_onnx_tensor_meta (copy, "det");
  fail_unless (m1 && m2 && m1 != m2);
  /* Same read-only data, by reference. */
  fail_unless (m1->tensors[0].data == m2->tensors[0].data);
  fail_unless (gst_buffer_get_onnx_tensor_meta (deep, "det")->tensors[1].data
      == m1->tensors[1].data);
  fail_unless_equals_int (gst_buffer_get_n_onnx_tensor_metas (copy), 1);

  /* make_writable on a shared buffer copies it, meta included. */
  gst_buffer_ref (frame);
  w = gst_buffer_make_writable (frame);
  fail_unless (w != frame);
  fail_unless (gst_buffer_get_onnx_tensor_meta (w, "det") != NULL);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (storage), 5);

  gst_buffer_unref (w);
  gst_buffer_unref (copy);
  gst_buffer_unref (deep);
  gst_buffer_unref (frame);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (storage), 1);
  gst_buffer_unref (storage);
}

GST_END_TEST;

GST_START_TEST (test_cascade_no_accumulation)
{
  GstBuffer *frame = gst_buffer_new ();
  GstBuffer *s1 = make_storage (NULL, 0.0f);
  GstBuffer *s2 = make_storage (NULL, 10.0f);
  GstBuffer *s3 = make_storage (NULL, 20.0f);
  GstOnnxTensorMeta *m;

  gst_buffer_add_onnx_tensor_meta (frame, q ("detector"), s1, 1, FALSE);
  gst_buffer_add_onnx_tensor_meta (frame, q ("classifier"), s2, 1, FALSE);
  fail_unless_equals_int (gst_buffer_get_n_onnx_tensor_metas (frame), 2);

  /* The same producer again (a buffer passing twice, or a re-attach):
   * updated in place, nothing accumulates, the old storage is released. */
  gst_buffer_add_onnx_tensor_meta (frame, q ("detector"), s3, 2, TRUE);
  fail_unless_equals_int (gst_buffer_get_n_onnx_tensor_metas (frame), 2);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (s1), 1);
  m = gst_buffer_get_onnx_tensor_meta (frame, "detector");
  fail_unless_equals_uint64 (m->inference_id, 2);
  fail_unless (m->reused);
  fail_unless_equals_float (((const gfloat *) m->tensors[0].data)[0], 20.0f);
  m = gst_buffer_get_onnx_tensor_meta (frame, "classifier");
  fail_unless_equals_float (((const gfloat *) m->tensors[0].data)[0], 10.0f);

  gst_buffer_unref (frame);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (s2), 1);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (s3), 1);
  gst_buffer_unref (s1);
  gst_buffer_unref (s2);
  gst_buffer_unref (s3);
}

GST_END_TEST;

GST_START_TEST (test_invalid_storage)
{
  GstBuffer *frame = gst_buffer_new ();
  GstBuffer *junk = gst_buffer_new_allocate (NULL, 8, NULL);

  gst_buffer_memset (junk, 0, 0, 8);
  ASSERT_CRITICAL (fail_unless (gst_buffer_add_onnx_tensor_meta (frame,
              q ("x"), junk, 1, FALSE) == NULL));
  fail_unless_equals_int (gst_buffer_get_n_onnx_tensor_metas (frame), 0);
  gst_buffer_unref (frame);
  gst_buffer_unref (junk);
}

GST_END_TEST;

/* Storage from a bounded pool returns to the pool exactly when the last
 * frame holding it goes away. */
GST_START_TEST (test_pooled_storage)
{
  GstBufferPool *pool = gst_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstBufferPoolAcquireParams dontwait = { 0, 0, 0,
    GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT
  };
  GstBuffer *frames[3], *storage, *extra = NULL;
  gint i;

  gst_buffer_pool_config_set_params (config, NULL, 1024, 2, 2);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));

  /* Frame 0 gets storage A, frames 1 and 2 share storage B. */
  for (i = 0; i < 3; i++)
    frames[i] = gst_buffer_new ();
  storage = make_storage (pool, 0.0f);
  gst_buffer_add_onnx_tensor_meta (frames[0], q ("p"), storage, 1, FALSE);
  gst_buffer_unref (storage);
  storage = make_storage (pool, 1.0f);
  gst_buffer_add_onnx_tensor_meta (frames[1], q ("p"), storage, 2, FALSE);
  gst_buffer_add_onnx_tensor_meta (frames[2], q ("p"), storage, 2, TRUE);
  gst_buffer_unref (storage);

  /* Both pool buffers are held by frames. */
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &extra,
          &dontwait), GST_FLOW_EOS);

  gst_buffer_unref (frames[1]);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &extra,
          &dontwait), GST_FLOW_EOS);
  gst_buffer_unref (frames[2]);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &extra,
          &dontwait), GST_FLOW_OK);
  gst_buffer_unref (extra);
  gst_buffer_unref (frames[0]);

  fail_unless (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
}

GST_END_TEST;

static Suite *
tensor_meta_suite (void)
{
  Suite *s = suite_create ("onnxtensormeta");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_layout);
  tcase_add_test (tc, test_add_get_lifetime);
  tcase_add_test (tc, test_copy_shares_storage);
  tcase_add_test (tc, test_cascade_no_accumulation);
  tcase_add_test (tc, test_invalid_storage);
  tcase_add_test (tc, test_pooled_storage);
  return s;
}

int
main (int argc, char **argv)
{
  onnxinfer_check_setup_env ();
  gst_check_init (&argc, &argv);
  /* The meta is registered by the plugin; load it. */
  {
    GstPlugin *p = gst_plugin_load_by_name ("onnxinfer");
    if (p == NULL) {
      g_printerr ("onnxinfer plugin not found in %s\n", PLUGIN_BUILD_DIR);
      return 1;
    }
    gst_object_unref (p);
  }
  return gst_check_run_suite (tensor_meta_suite (), "onnxtensormeta",
      __FILE__);
}
