/* GStreamer onnxinfer plugin
 *
 * gstroioverlay.h: draws regions of interest on the frames.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef __GST_ROI_OVERLAY_H__
#define __GST_ROI_OVERLAY_H__

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/video/gstvideofilter.h>

G_BEGIN_DECLS

#define GST_TYPE_ROI_OVERLAY (gst_roi_overlay_get_type ())
G_DECLARE_FINAL_TYPE (GstRoiOverlay, gst_roi_overlay, GST, ROI_OVERLAY,
    GstVideoFilter)

GST_ELEMENT_REGISTER_DECLARE (roioverlay);

G_END_DECLS

#endif /* __GST_ROI_OVERLAY_H__ */
