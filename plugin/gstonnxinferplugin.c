/* GStreamer onnxinfer plugin
 *
 * gstonnxinferplugin.c: plugin entry point.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gstonnxtensormeta.h"
/* the one header from elements/: their registration functions */
#include "../elements/gstonnxinferelements.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  /* Register the tensor meta API with the plugin so that applications can
   * find it by name as soon as the plugin is loaded. */
  gst_onnx_tensor_meta_api_register ();
  gst_onnx_tensor_meta_get_info ();

  ret |= GST_ELEMENT_REGISTER (onnxinfer, plugin);
#ifdef HAVE_NNDECODE
  ret |= GST_ELEMENT_REGISTER (tensordecoder, plugin);
  ret |= GST_ELEMENT_REGISTER (roioverlay, plugin);
#endif

  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR,
    GST_VERSION_MINOR,
    onnxinfer,
    "ONNX model inference on video frames with a built-in runtime (CPU, Vulkan)",
    plugin_init, VERSION, ONNXINFER_LICENSE, PACKAGE_NAME,
    GST_PACKAGE_ORIGIN)
