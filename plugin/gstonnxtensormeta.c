/* GStreamer onnxinfer plugin
 *
 * gstonnxtensormeta.c: the output tensors of one inference, as buffer meta.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/video/video.h>

#include "gstonnxtensormeta.h"

/* Storage buffer layout (see GstOnnxTensorStorageLayout):
 *
 *   offset 0                StorageHeader (magic, n_tensors)
 *   offset HEADER_PREFIX    GstOnnxTensor[n_tensors]
 *   offset header_size      data of tensor 0 (64-byte aligned)
 *   ...                     data of tensor i at offsets[i] (64-byte aligned)
 *
 * The descriptors travel inside the storage so a meta needs no allocation of
 * its own beyond the GstMeta itself, and descriptors and data share one
 * lifetime. */
#define STORAGE_MAGIC 0x544e584fu       /* "ONXT" */
#define STORAGE_ALIGN 64
#define HEADER_PREFIX 16

typedef struct
{
  guint32 magic;
  guint32 n_tensors;
} StorageHeader;

G_STATIC_ASSERT (sizeof (StorageHeader) <= HEADER_PREFIX);
G_STATIC_ASSERT (HEADER_PREFIX % G_ALIGNOF (GstOnnxTensor) == 0);

static inline gsize
align_up (gsize x, gsize a)
{
  return (x + a - 1) / a * a;
}

/**
 * gst_onnx_tensor_storage_layout_init:
 * @layout: (out caller-allocates): the layout to fill
 * @n_tensors: number of tensors
 * @sizes: (array length=n_tensors): size in bytes of each tensor
 * @offsets: (out caller-allocates) (array length=n_tensors): where each
 *   tensor's data goes in the storage
 *
 * Computes where descriptors and data go in a storage buffer; allocate (or
 * configure a pool for) buffers of @layout->total_size bytes.
 */
void
gst_onnx_tensor_storage_layout_init (GstOnnxTensorStorageLayout * layout,
    guint n_tensors, const gsize * sizes, gsize * offsets)
{
  gsize off;
  guint i;

  layout->n_tensors = n_tensors;
  layout->header_size = align_up (HEADER_PREFIX +
      (gsize) n_tensors * sizeof (GstOnnxTensor), STORAGE_ALIGN);
  off = layout->header_size;
  for (i = 0; i < n_tensors; i++) {
    offsets[i] = off;
    off = align_up (off + sizes[i], STORAGE_ALIGN);
  }
  layout->total_size = MAX (off, STORAGE_ALIGN);
}

/**
 * gst_onnx_tensor_storage_init:
 * @data: the storage buffer's memory, mapped for writing
 * @size: its size, at least the layout's total_size
 * @n_tensors: number of tensors
 *
 * Writes the storage header.  The caller fills the returned descriptors
 * (all fields, @data pointing into @data at the tensor's offset) and the
 * tensors' data, then unmaps and attaches the storage with
 * gst_buffer_add_onnx_tensor_meta().
 *
 * Returns: (transfer none): the @n_tensors descriptors inside @data
 */
GstOnnxTensor *
gst_onnx_tensor_storage_init (guint8 * data, gsize size, guint n_tensors)
{
  StorageHeader hdr = { STORAGE_MAGIC, n_tensors };

  g_return_val_if_fail (data != NULL, NULL);
  g_return_val_if_fail (size >= HEADER_PREFIX +
      (gsize) n_tensors * sizeof (GstOnnxTensor), NULL);

  memcpy (data, &hdr, sizeof hdr);
  return (GstOnnxTensor *) (data + HEADER_PREFIX);
}

/* ---- the meta ------------------------------------------------------------ */

static void
onnx_tensor_meta_clear (GstOnnxTensorMeta * meta)
{
  if (meta->storage) {
    gst_buffer_unmap (meta->storage, &meta->map);
    gst_buffer_unref (meta->storage);
    meta->storage = NULL;
  }
  meta->n_tensors = 0;
  meta->tensors = NULL;
}

/* Takes a new reference on @storage and maps it; FALSE when it is not a valid
 * storage buffer. */
static gboolean
onnx_tensor_meta_set_storage (GstOnnxTensorMeta * meta, GstBuffer * storage)
{
  StorageHeader hdr;
  GstMapInfo map;

  if (!gst_buffer_map (storage, &map, GST_MAP_READ))
    return FALSE;
  if (map.size < HEADER_PREFIX)
    goto invalid;
  memcpy (&hdr, map.data, sizeof hdr);
  if (hdr.magic != STORAGE_MAGIC ||
      map.size < HEADER_PREFIX + (gsize) hdr.n_tensors * sizeof (GstOnnxTensor))
    goto invalid;

  onnx_tensor_meta_clear (meta);
  meta->storage = gst_buffer_ref (storage);
  meta->map = map;
  meta->n_tensors = hdr.n_tensors;
  meta->tensors = (const GstOnnxTensor *) (map.data + HEADER_PREFIX);
  return TRUE;

invalid:
  gst_buffer_unmap (storage, &map);
  return FALSE;
}

static gboolean
gst_onnx_tensor_meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  GstOnnxTensorMeta *tmeta = (GstOnnxTensorMeta *) meta;

  tmeta->model_id = 0;
  tmeta->inference_id = 0;
  tmeta->reused = FALSE;
  tmeta->n_tensors = 0;
  tmeta->tensors = NULL;
  tmeta->storage = NULL;
  tmeta->roi_id = -1;
  memset (&tmeta->geometry, 0, sizeof tmeta->geometry);
  memset (&tmeta->map, 0, sizeof tmeta->map);
  return TRUE;
}

static void
gst_onnx_tensor_meta_free (GstMeta * meta, GstBuffer * buffer)
{
  onnx_tensor_meta_clear ((GstOnnxTensorMeta *) meta);
}

static GstOnnxTensorMeta *
find_meta_by_id (GstBuffer * buffer, GQuark model_id, gint roi_id)
{
  gpointer state = NULL;
  GstMeta *m;

  while ((m = gst_buffer_iterate_meta_filtered (buffer, &state,
              gst_onnx_tensor_meta_api_register ()))) {
    GstOnnxTensorMeta *tm = (GstOnnxTensorMeta *) m;
    if (tm->model_id == model_id && tm->roi_id == roi_id)
      return tm;
  }
  return NULL;
}

/* Tensors are read-only and describe the frame's content independent of its
 * memory: a copy of the frame (whole or part: the tensors are per frame, not
 * per pixel) and a scaled frame share the storage by reference.  Any other
 * transformation (e.g. a crop or rotation that would change what detector
 * coordinates refer to) drops the meta. */
static gboolean
gst_onnx_tensor_meta_transform (GstBuffer * dest, GstMeta * meta,
    GstBuffer * buffer, GQuark type, gpointer data)
{
  GstOnnxTensorMeta *smeta = (GstOnnxTensorMeta *) meta;

  if (!GST_META_TRANSFORM_IS_COPY (type) &&
      !GST_VIDEO_META_TRANSFORM_IS_SCALE (type))
    return FALSE;
  if (smeta->storage == NULL)
    return TRUE;

  return gst_buffer_add_onnx_tensor_meta_full (dest, smeta->model_id,
      smeta->roi_id, smeta->storage, smeta->inference_id, smeta->reused,
      &smeta->geometry) != NULL;
}

/**
 * gst_onnx_tensor_meta_api_register:
 *
 * Registers the meta API type (once) and returns it; the plugin calls this
 * at load time.  Consumers use GST_ONNX_TENSOR_META_API_TYPE.
 *
 * Returns: the #GType of the #GstOnnxTensorMeta API
 */
GType
gst_onnx_tensor_meta_api_register (void)
{
  static GType type = 0;
  /* No tags: the tensors do not depend on the memory, format or size of the
   * frame, so elements keep the meta by default. */
  static const gchar *tags[] = { NULL };

  if (g_once_init_enter (&type)) {
    GType t = gst_meta_api_type_register (GST_ONNX_TENSOR_META_API_NAME, tags);
    g_once_init_leave (&type, t);
  }
  return type;
}

/**
 * gst_onnx_tensor_meta_get_info:
 *
 * Returns: the #GstMetaInfo of #GstOnnxTensorMeta
 */
const GstMetaInfo *
gst_onnx_tensor_meta_get_info (void)
{
  static const GstMetaInfo *info = NULL;

  if (g_once_init_enter ((GstMetaInfo **) & info)) {
    const GstMetaInfo *mi =
        gst_meta_register (gst_onnx_tensor_meta_api_register (),
        "GstOnnxTensorMeta", sizeof (GstOnnxTensorMeta),
        gst_onnx_tensor_meta_init, gst_onnx_tensor_meta_free,
        gst_onnx_tensor_meta_transform);
    g_once_init_leave ((GstMetaInfo **) & info, (GstMetaInfo *) mi);
  }
  return info;
}

/**
 * gst_buffer_add_onnx_tensor_meta:
 * @buffer: a writable #GstBuffer
 * @model_id: quark identifying the producer
 * @storage: a storage buffer written with gst_onnx_tensor_storage_init()
 * @inference_id: sequence number of the inference
 * @reused: whether the result comes from an earlier frame
 *
 * gst_buffer_add_onnx_tensor_meta_full() for a whole-frame result
 * (roi_id -1) without geometry.
 *
 * Returns: (transfer none) (nullable): the meta
 */
GstOnnxTensorMeta *
gst_buffer_add_onnx_tensor_meta (GstBuffer * buffer, GQuark model_id,
    GstBuffer * storage, guint64 inference_id, gboolean reused)
{
  return gst_buffer_add_onnx_tensor_meta_full (buffer, model_id, -1, storage,
      inference_id, reused, NULL);
}

/**
 * gst_buffer_add_onnx_tensor_meta_full:
 * @buffer: a writable #GstBuffer
 * @model_id: quark identifying the producer
 * @roi_id: -1 for a whole-frame result, else the id of the region of
 *   interest the model ran on
 * @storage: a storage buffer written with gst_onnx_tensor_storage_init();
 *   the meta takes its own reference and keeps it mapped for reading
 * @inference_id: sequence number of the inference
 * @reused: whether the result comes from an earlier frame
 * @geometry: (nullable): how the model input was cut from the frame; %NULL:
 *   unknown (all zero)
 *
 * Attaches the tensors in @storage to @buffer.  When @buffer already carries
 * a meta with the same @model_id and @roi_id, that meta is updated in place
 * instead, so metas never accumulate.
 *
 * Returns: (transfer none) (nullable): the meta, or %NULL when @storage is
 *   not a valid storage buffer
 */
GstOnnxTensorMeta *
gst_buffer_add_onnx_tensor_meta_full (GstBuffer * buffer, GQuark model_id,
    gint roi_id, GstBuffer * storage, guint64 inference_id, gboolean reused,
    const GstOnnxTensorGeometry * geometry)
{
  GstOnnxTensorMeta *meta;
  gboolean added = FALSE;

  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (gst_buffer_is_writable (buffer), NULL);
  g_return_val_if_fail (GST_IS_BUFFER (storage), NULL);

  meta = find_meta_by_id (buffer, model_id, roi_id);
  if (meta == NULL) {
    meta = (GstOnnxTensorMeta *) gst_buffer_add_meta (buffer,
        gst_onnx_tensor_meta_get_info (), NULL);
    if (meta == NULL)
      return NULL;
    added = TRUE;
  }

  if (meta->storage != storage) {
    if (!onnx_tensor_meta_set_storage (meta, storage)) {
      if (added)
        gst_buffer_remove_meta (buffer, (GstMeta *) meta);
      g_critical ("gst_buffer_add_onnx_tensor_meta: invalid storage buffer");
      return NULL;
    }
  }
  meta->model_id = model_id;
  meta->roi_id = roi_id;
  meta->inference_id = inference_id;
  meta->reused = reused;
  if (geometry)
    meta->geometry = *geometry;
  else
    memset (&meta->geometry, 0, sizeof meta->geometry);
  return meta;
}
