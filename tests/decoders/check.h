/* check.h - the assertion counters and macros of the plain-C decoder tests
 * (test_decoders.c, test_models.c, test_ocr.c): each is its own executable,
 * so the counters are file-static.  Include after <stdio.h> and <math.h>. */
#ifndef ND_TEST_CHECK_H
#define ND_TEST_CHECK_H

#include <math.h>
#include <stdio.h>

static int n_pass, n_fail;
static const char *cur_test = "";

/* Counts a pass, or reports the failed condition with its test and a message. */
#define CHECK(cond, ...)                                                                 \
  do {                                                                                   \
    if (cond) {                                                                          \
      n_pass++;                                                                          \
    } else {                                                                             \
      n_fail++;                                                                          \
      fprintf(stderr, "FAIL %s:%d [%s] %s: ", __FILE__, __LINE__, cur_test, #cond);      \
      fprintf(stderr, __VA_ARGS__);                                                      \
      fprintf(stderr, "\n");                                                             \
    }                                                                                    \
  } while (0)

#define NEAR(a, b, tol) (fabs((double)(a) - (double)(b)) <= (tol))

#endif
