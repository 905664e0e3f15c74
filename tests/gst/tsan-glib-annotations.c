/* tsan-glib-annotations.c - linked into the gst test programs of a
 * ThreadSanitizer build only (meson: b_sanitize=thread).
 *
 * GLib and GStreamer are not built with TSan.  Their locks that TSan cannot
 * see would make every access our code makes under GST_OBJECT_LOCK, and
 * every buffer handed to another thread, look like a race:
 *
 *   - GMutex and GCond are futex-based on Linux (no pthread call for TSan to
 *     intercept).  The wrappers below tell TSan about the lock order: calls
 *     from GStreamer (GST_OBJECT_LOCK, queues, the bus) and from our code go
 *     through the PLT and land here first; they call the real functions.
 *     Calls inside GLib itself are not seen (GLib-internal noise remains:
 *     see tsan.supp).
 *   - GstMiniObject reference counts are uninstrumented atomics, so TSan
 *     does not see that the last unref (and the free) of a buffer, event or
 *     caps comes after the other threads' use of it.  The wrapper of
 *     gst_mini_object_unref releases on every unref and acquires before the
 *     last one.
 *
 * This only adds happens-before edges that exist; it hides no access of
 * ours.  The test programs must be run with G_SLICE=always-malloc (GSlice
 * recycles memory between threads behind TSan's back).
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include <gst/gst.h>

void __tsan_acquire (void *addr);
void __tsan_release (void *addr);

#define REAL(name, ret, args) \
  static ret (*real_ ## name) args; \
  if (G_UNLIKELY (real_ ## name == NULL)) \
    real_ ## name = (ret (*) args) dlsym (RTLD_NEXT, #name)

void
g_mutex_lock (GMutex * mutex)
{
  REAL (g_mutex_lock, void, (GMutex *));
  real_g_mutex_lock (mutex);
  __tsan_acquire (mutex);
}

gboolean
g_mutex_trylock (GMutex * mutex)
{
  gboolean ok;
  REAL (g_mutex_trylock, gboolean, (GMutex *));
  ok = real_g_mutex_trylock (mutex);
  if (ok)
    __tsan_acquire (mutex);
  return ok;
}

void
g_mutex_unlock (GMutex * mutex)
{
  REAL (g_mutex_unlock, void, (GMutex *));
  __tsan_release (mutex);
  real_g_mutex_unlock (mutex);
}

void
g_cond_wait (GCond * cond, GMutex * mutex)
{
  REAL (g_cond_wait, void, (GCond *, GMutex *));
  __tsan_release (mutex);
  real_g_cond_wait (cond, mutex);
  __tsan_acquire (mutex);
}

gboolean
g_cond_wait_until (GCond * cond, GMutex * mutex, gint64 end_time)
{
  gboolean ok;
  REAL (g_cond_wait_until, gboolean, (GCond *, GMutex *, gint64));
  __tsan_release (mutex);
  ok = real_g_cond_wait_until (cond, mutex, end_time);
  __tsan_acquire (mutex);
  return ok;
}

void
gst_mini_object_unref (GstMiniObject * obj)
{
  REAL (gst_mini_object_unref, void, (GstMiniObject *));
  __tsan_release (obj);
  if (g_atomic_int_get (&obj->refcount) == 1)
    __tsan_acquire (obj);
  real_gst_mini_object_unref (obj);
}
