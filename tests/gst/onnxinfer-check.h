/* onnxinfer-check.h - shared helpers of the gst-check tests.
 *
 * Locations (compiled defaults, each overridable from the environment):
 *   ONNXINFER_TEST_MODELS  synthetic models made at build time
 *   ONNXINFER_REAL_CASES   real models (default $NN_SHARED_DIR/real-cases or
 *                          the shared dir meson found)
 *   ONNXINFER_MEDIA_DIR    media from tools/fetch-media.sh (default ./data)
 *   ONNXINFER_NN_RUN       the nn-run binary
 */
#ifndef ONNXINFER_CHECK_H
#define ONNXINFER_CHECK_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "gstonnxtensormeta.h"
#include "nn.h"

#ifndef TEST_MODELS_DIR
#error TEST_MODELS_DIR must be defined
#endif

/* Call before gst_check_init(): run the plugin from the build tree. */
static inline void
onnxinfer_check_setup_env (void)
{
  const gchar *old = g_getenv ("GST_PLUGIN_PATH_1_0");
  if (old == NULL || strstr (old, PLUGIN_BUILD_DIR) == NULL) {
    gchar *p = old ? g_strconcat (PLUGIN_BUILD_DIR, ":", old, NULL) :
        g_strdup (PLUGIN_BUILD_DIR);
    g_setenv ("GST_PLUGIN_PATH_1_0", p, TRUE);
    g_free (p);
  }
}

static inline gchar *
test_model (const gchar * name)
{
  const gchar *dir = g_getenv ("ONNXINFER_TEST_MODELS");
  return g_build_filename (dir ? dir : TEST_MODELS_DIR, name, NULL);
}

/* Path of a real model (CASE/model.onnx) or NULL when it is missing. */
static inline gchar *
real_case_model (const gchar * case_name)
{
  const gchar *dir = g_getenv ("ONNXINFER_REAL_CASES");
  const gchar *shared = g_getenv ("NN_SHARED_DIR");
  gchar *path;

  if (dir)
    path = g_build_filename (dir, case_name, "model.onnx", NULL);
  else if (shared)
    path = g_build_filename (shared, "real-cases", case_name, "model.onnx",
        NULL);
  else
    path = g_build_filename (REAL_CASES_DIR, case_name, "model.onnx", NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR)) {
    g_free (path);
    return NULL;
  }
  return path;
}

static inline gchar *
media_file (const gchar * name)
{
  const gchar *dir = g_getenv ("ONNXINFER_MEDIA_DIR");
  gchar *path = g_build_filename (dir ? dir : MEDIA_DIR, name, NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR)) {
    g_free (path);
    return NULL;
  }
  return path;
}

#define SKIP_IF_NULL(ptr, what) G_STMT_START {                          \
    if ((ptr) == NULL) {                                                \
      g_print ("SKIP %s: %s not found (%s)\n", __func__, what,          \
          "set ONNXINFER_REAL_CASES / run tools/fetch-media.sh");       \
      return;                                                           \
    }                                                                   \
  } G_STMT_END

/* Run @pipeline to EOS or error; returns the error message (or NULL), with
 * its GError in @err when asked. */
static inline GstMessage *
run_pipeline (GstElement * pipeline, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;
  GstStateChangeReturn sret;

  sret = gst_element_set_state (pipeline, GST_STATE_PLAYING);
  if (sret == GST_STATE_CHANGE_FAILURE) {
    msg = gst_bus_timed_pop_filtered (bus, 0, GST_MESSAGE_ERROR);
  } else {
    msg = gst_bus_timed_pop_filtered (bus, timeout,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  }
  gst_object_unref (bus);
  return msg;
}

/* First ERROR message already on the bus (or NULL). */
static inline GstMessage *
pop_error (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 0, GST_MESSAGE_ERROR);
  gst_object_unref (bus);
  return msg;
}

static inline void
assert_error (GstMessage * msg, GQuark domain, gint code,
    const gchar * const *needles)
{
  GError *err = NULL;
  gchar *dbg = NULL;
  gint i;

  fail_unless (msg != NULL, "expected an error message");
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_ERROR);
  gst_message_parse_error (msg, &err, &dbg);
  g_print ("  error from %s: %s\n", GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)),
      err->message);
  if (domain)
    fail_unless (err->domain == domain && err->code == code,
        "error %s:%d, expected %s:%d (%s)", g_quark_to_string (err->domain),
        err->code, g_quark_to_string (domain), code, err->message);
  for (i = 0; needles && needles[i]; i++)
    fail_unless (strstr (err->message, needles[i]) != NULL,
        "'%s' not in error message '%s'", needles[i], err->message);
  g_error_free (err);
  g_free (dbg);
}

static inline guint64
get_u64 (GstElement * e, const gchar * prop)
{
  guint64 v = 0;
  g_object_get (e, prop, &v, NULL);
  return v;
}

/* Resident set size in bytes. */
static inline gsize
rss_bytes (void)
{
  long pages = 0, resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");
  if (f) {
    if (fscanf (f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    fclose (f);
  }
  return (gsize) resident * (gsize) sysconf (_SC_PAGESIZE);
}

#endif /* ONNXINFER_CHECK_H */
