/* element_helpers.h - what the GStreamer decoder tests (test_elements.c,
 * test_ocr_elements.c) share: tensor storage and frames carrying tensor meta
 * with a geometry, ROI lookups, a harness around a decoder launch line and
 * its bus.  static inline: each test uses a subset.  Include after
 * <gst/check/gstcheck.h>, <gst/check/gstharness.h>, <gst/video/video.h> and
 * gstonnxtensormeta.h. */
#ifndef ND_TEST_ELEMENT_HELPERS_H
#define ND_TEST_ELEMENT_HELPERS_H

typedef struct
{
  const gchar *name;
  gint n_dims;
  gint64 dims[4];
  const gfloat *data;
} TensorSpec;

static inline GstBuffer *
make_storage (const TensorSpec * specs, guint n)
{
  gsize sizes[8], offsets[8];
  GstOnnxTensorStorageLayout layout;
  GstBuffer *storage;
  GstMapInfo map;
  GstOnnxTensor *t;
  guint i;

  for (i = 0; i < n; i++) {
    gsize e = 1;
    gint d;
    for (d = 0; d < specs[i].n_dims; d++)
      e *= (gsize) specs[i].dims[d];
    sizes[i] = e * sizeof (gfloat);
  }
  gst_onnx_tensor_storage_layout_init (&layout, n, sizes, offsets);
  storage = gst_buffer_new_allocate (NULL, layout.total_size, NULL);
  fail_unless (gst_buffer_map (storage, &map, GST_MAP_WRITE));
  t = gst_onnx_tensor_storage_init (map.data, map.size, n);
  for (i = 0; i < n; i++) {
    gint d;
    memset (&t[i], 0, sizeof t[i]);
    t[i].name = g_quark_from_string (specs[i].name);
    t[i].data_type = GST_ONNX_TENSOR_DATA_TYPE_FLOAT32;
    t[i].n_dims = specs[i].n_dims;
    for (d = 0; d < specs[i].n_dims; d++)
      t[i].dims[d] = specs[i].dims[d];
    t[i].size = sizes[i];
    t[i].offset = offsets[i];
    t[i].data = map.data + offsets[i];
    memcpy (map.data + offsets[i], specs[i].data, sizes[i]);
  }
  gst_buffer_unmap (storage, &map);
  return storage;
}

static inline GstBuffer *
frame_with_tensors (gsize frame_size, const TensorSpec * specs, guint n)
{
  GstBuffer *frame = gst_buffer_new_allocate (NULL, frame_size, NULL);
  GstBuffer *storage = make_storage (specs, n);

  gst_buffer_memset (frame, 0, 0x80, frame_size);
  fail_unless (gst_buffer_add_onnx_tensor_meta (frame,
          g_quark_from_string ("detector"), storage, 1, FALSE) != NULL);
  gst_buffer_unref (storage);
  GST_BUFFER_PTS (frame) = 0;
  GST_BUFFER_DURATION (frame) = GST_SECOND / 30;
  return frame;
}

static inline GstBuffer *
new_frame (gsize frame_size)
{
  GstBuffer *frame = gst_buffer_new_allocate (NULL, frame_size, NULL);

  gst_buffer_memset (frame, 0, 0x80, frame_size);
  GST_BUFFER_PTS (frame) = 0;
  GST_BUFFER_DURATION (frame) = GST_SECOND / 30;
  return frame;
}

/* What onnxinfer records: input = (frame - src) * scale + offset. */
static inline GstOnnxTensorGeometry
geometry (gint fw, gint fh, gint iw, gint ih, gdouble sx, gdouble sy,
    gdouble sw, gdouble sh, gdouble kx, gdouble ky, gdouble ox, gdouble oy)
{
  GstOnnxTensorGeometry g;

  memset (&g, 0, sizeof g);     /* fields added later (angle) are 0 */
  g.frame_width = fw;
  g.frame_height = fh;
  g.input_width = iw;
  g.input_height = ih;
  g.src_x = sx;
  g.src_y = sy;
  g.src_width = sw;
  g.src_height = sh;
  g.scale_x = kx;
  g.scale_y = ky;
  g.offset_x = ox;
  g.offset_y = oy;
  return g;
}

static inline void
add_tensors (GstBuffer * frame, const gchar * model, gint roi_id,
    const TensorSpec * specs, guint n, const GstOnnxTensorGeometry * g)
{
  GstBuffer *storage = make_storage (specs, n);

  fail_unless (gst_buffer_add_onnx_tensor_meta_full (frame,
          g_quark_from_string (model), roi_id, storage, 1, FALSE, g) != NULL);
  gst_buffer_unref (storage);
}

static inline GstVideoRegionOfInterestMeta *
roi_by_id (GstBuffer * buf, gint id)
{
  return gst_buffer_get_video_region_of_interest_meta_id (buf, id);
}

static inline guint
n_rois (GstBuffer * buf)
{
  gpointer state = NULL;
  guint n = 0;

  while (gst_buffer_iterate_meta_filtered (buf, &state,
          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    n++;
  return n;
}

static inline gint
int_at (const GstStructure * s, const gchar * field, guint i)
{
  const GValue *v = gst_structure_get_value (s, field);

  fail_unless (v != NULL && i < gst_value_array_get_size (v), "%s[%u]", field,
      i);
  return g_value_get_int (gst_value_array_get_value (v, i));
}


#endif
