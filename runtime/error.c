/* error.c - status names and error formatting. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "nn_internal.h"

/* The log hook: set rarely (at start-up), read on every message; the mutex
 * keeps function and user data consistent with each other. */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static nn_log_fn g_log_fn;
static void *g_log_ud;

void nn_set_log(nn_log_fn fn, void *ud) {
  pthread_mutex_lock(&g_log_mu);
  g_log_fn = fn;
  g_log_ud = ud;
  pthread_mutex_unlock(&g_log_mu);
}

void nn_log(nn_log_level level, const char *fmt, ...) {
  static const char *const names[] = {"error", "warning", "info", "debug"};
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&g_log_mu);
  nn_log_fn fn = g_log_fn;
  void *ud = g_log_ud;
  pthread_mutex_unlock(&g_log_mu);
  if (fn)
    fn(level, msg, ud);
  else
    fprintf(stderr, "onnxinfer runtime %s: %s\n",
            names[(unsigned)level < 4 ? (unsigned)level : 0], msg);
}

const char *nn_status_str(nn_status st) {
  switch (st) {
  case NN_OK: return "NN_OK";
  case NN_ERR_INVALID_ARG: return "NN_ERR_INVALID_ARG";
  case NN_ERR_NOMEM: return "NN_ERR_NOMEM";
  case NN_ERR_IO: return "NN_ERR_IO";
  case NN_ERR_PARSE: return "NN_ERR_PARSE";
  case NN_ERR_INVALID_MODEL: return "NN_ERR_INVALID_MODEL";
  case NN_ERR_UNSUPPORTED: return "NN_ERR_UNSUPPORTED";
  case NN_ERR_SHAPE: return "NN_ERR_SHAPE";
  case NN_ERR_DTYPE: return "NN_ERR_DTYPE";
  case NN_ERR_LIMIT: return "NN_ERR_LIMIT";
  case NN_ERR_DISPOSED: return "NN_ERR_DISPOSED";
  case NN_ERR_BACKEND: return "NN_ERR_BACKEND";
  case NN_ERR_NO_DEVICE: return "NN_ERR_NO_DEVICE";
  case NN_ERR_RUNTIME: return "NN_ERR_RUNTIME";
  case NN_ERR_MISSING_INPUT: return "NN_ERR_MISSING_INPUT";
  }
  return "NN_ERR_?";
}

/* Messages quote names taken from the model (nodes, tensors, external
 * paths): a hostile name with a newline or a terminal escape must not turn a
 * one-line error into several lines or into commands for the terminal. */
static void sanitize(char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      *s = '?';
}

nn_status nn_error_set(nn_error *err, nn_status st, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    sanitize(err->msg);
    err->status = st;
  }
  return st;
}

nn_status nn_fail(nn_ctx *c, nn_status st, const char *fmt, ...) {
  if (c && c->err) {
    char detail[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (c->node)
      nn_error_set(c->err, st, "node '%s' (%s): %s", c->node->name, c->node->op_type, detail);
    else
      nn_error_set(c->err, st, "%s", detail);
  }
  return st;
}
