/* GStreamer onnxinfer plugin
 *
 * gstonnxinferelements.h: the registration functions of the elements, the
 * one header of elements/ that the plugin entry point
 * (plugin/gstonnxinferplugin.c) includes.  HAVE_NNDECODE comes with the
 * elements' library (elements/meson.build): tensordecoder and roioverlay are
 * built only with cairo and pango.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef __GST_ONNX_INFER_ELEMENTS_H__
#define __GST_ONNX_INFER_ELEMENTS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

GST_ELEMENT_REGISTER_DECLARE (onnxinfer);
#ifdef HAVE_NNDECODE
GST_ELEMENT_REGISTER_DECLARE (tensordecoder);
GST_ELEMENT_REGISTER_DECLARE (roioverlay);
#endif

G_END_DECLS

#endif /* __GST_ONNX_INFER_ELEMENTS_H__ */
