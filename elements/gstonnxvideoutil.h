/* gstonnxvideoutil.h - checks on mapped video frames shared by the elements.
 * Private to the elements (not installed). */
#ifndef __GST_ONNX_VIDEO_UTIL_H__
#define __GST_ONNX_VIDEO_UTIL_H__

#include <gst/video/video.h>

G_BEGIN_DECLS

/* TRUE when every row of every plane of a mapped frame lies inside the
 * memory that was mapped for it.  GStreamer 1.22 maps a frame with the
 * strides and offsets of an upstream GstVideoMeta without checking them
 * against the buffer size, so a lying meta would otherwise make elements
 * read or write past the buffer. */
static inline gboolean
gst_onnx_video_frame_in_bounds (const GstVideoFrame * frame)
{
  const GstVideoFormatInfo *finfo = frame->info.finfo;
  guint comp;

  for (comp = 0; comp < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); comp++) {
    guint plane = GST_VIDEO_FORMAT_INFO_PLANE (finfo, comp);
    /* Without a GstVideoMeta, gst_video_frame_map() maps the buffer once
     * into map[0] and every plane points into it; map[1..] stay unset. */
    const GstMapInfo *map = frame->meta ? &frame->map[plane] : &frame->map[0];
    const guint8 *base = map->data;
    const guint8 *data = GST_VIDEO_FRAME_PLANE_DATA (frame, plane);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, plane);
    gint w = GST_VIDEO_FRAME_COMP_WIDTH (frame, comp);
    gint h = GST_VIDEO_FRAME_COMP_HEIGHT (frame, comp);
    gint pstride = GST_VIDEO_FRAME_COMP_PSTRIDE (frame, comp);
    gsize row, avail, last;

    if (w <= 0 || h <= 0)
      continue;
    if (base == NULL || data < base || data > base + map->size || stride <= 0
        || pstride < 0)
      return FALSE;
    row = (gsize) w * (gsize) (pstride > 0 ? pstride : 1);
    if ((gsize) stride < row)
      return FALSE;
    avail = (gsize) (base + map->size - data);
    last = (gsize) (h - 1) * (gsize) stride;
    if (last > avail || avail - last < row)
      return FALSE;
  }
  return TRUE;
}

G_END_DECLS

#endif
