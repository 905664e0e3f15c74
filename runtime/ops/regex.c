/* regex.c - RE2 patterns on POSIX regcomp/regexec (regex.h says what is
 * supported).
 *
 * The translation is one pass over the pattern: outside brackets RE2's
 * escapes become POSIX bracket expressions or literals, (?: ) becomes ( ),
 * lazy markers go; a bracket expression is parsed into its items and
 * written back in the order POSIX needs (']' first, '^' not first, '-'
 * last).  The whole is anchored, ^( ... )$, so a match is a full match.
 * Counted repeats are bounded one by one (NN_LIMIT_REGEX_REPEAT) and by
 * the size the pattern expands to (REGEX_MAX_EXPANDED atoms), since regcomp
 * unrolls them.  Compiling and matching run under locale objects of their
 * own (uselocale): C.UTF-8 for UTF-8 subjects, C for the others, so the
 * process locale does not change what matches.
 *
 * Memory: regcomp and regexec allocate through libc's malloc, not the
 * runtime's hooks (nn_set_allocator): the compiled pattern lives as long as
 * the session (kept in its string store, compiled once at prepare); glibc's
 * regexec also allocates and frees its match state on every call, which
 * no POSIX interface lets a caller provide. */
#define _GNU_SOURCE
#include "ops/regex.h"

#include <locale.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_internal.h"
#include "nn_limits.h"

#define REGEX_MAX_EXPANDED 20000 /* atoms after unrolling counted repeats */
#define REGEX_MAX_GROUPS 256     /* group nesting */

/* The pattern compiled twice: for UTF-8 text (C.UTF-8: a character is a
 * code point) and for strings that are not UTF-8 (C: a character is a byte,
 * as RE2 takes each invalid byte for one character). */
struct nn_regex {
  regex_t re[2];
  locale_t loc[2];
  bool have[2];
};

typedef struct rx_out {
  char *p;
  size_t n, cap;
  bool over;
} rx_out;

static void rx_put(rx_out *o, const char *s, size_t len) {
  if (o->n + len + 1 > o->cap) {
    o->over = true;
    return;
  }
  memcpy(o->p + o->n, s, len);
  o->n += len;
  o->p[o->n] = '\0';
}
static void rx_puts(rx_out *o, const char *s) {
  rx_put(o, s, strlen(s));
}

static long rx_refuse(char *msg, size_t msg_len, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static long rx_refuse(char *msg, size_t msg_len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (msg && msg_len)
    vsnprintf(msg, msg_len, fmt, ap);
  va_end(ap);
  return -1;
}

/* An ERE special outside brackets. */
static bool rx_special(unsigned char c) {
  return c && strchr(".[]()*+?{}|^$\\", c) != NULL;
}

/* A literal byte outside brackets. */
static void rx_lit(rx_out *o, unsigned char c) {
  if (c == '{' || c == '}') {
    char b[4] = {'[', (char)c, ']', 0};
    rx_puts(o, b);
  } else if (rx_special(c)) {
    char b[3] = {'\\', (char)c, 0};
    rx_puts(o, b);
  } else {
    rx_put(o, (const char *)&c, 1);
  }
}

static int rx_hex(int c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* \xHH or \x{H...} at p (after the 'x'): the code point, or -1. */
static long rx_xescape(const char *p, const char *end, const char **next) {
  long v = 0;
  if (p < end && *p == '{') {
    const char *q = p + 1;
    int digits = 0;
    while (q < end && *q != '}' && rx_hex((unsigned char)*q) >= 0 && digits < 7)
      v = v * 16 + rx_hex((unsigned char)*q++), digits++;
    if (q >= end || *q != '}' || digits == 0 || v > 0x10ffff)
      return -1;
    *next = q + 1;
    return v;
  }
  if (end - p < 2 || rx_hex((unsigned char)p[0]) < 0 || rx_hex((unsigned char)p[1]) < 0)
    return -1;
  *next = p + 2;
  return rx_hex((unsigned char)p[0]) * 16 + rx_hex((unsigned char)p[1]);
}

/* UTF-8 of code point v into b (4 bytes at most); the length. */
static int rx_utf8(long v, unsigned char *b) {
  if (v < 0x80) {
    b[0] = (unsigned char)v;
    return 1;
  }
  if (v < 0x800) {
    b[0] = (unsigned char)(0xc0 | (v >> 6)), b[1] = (unsigned char)(0x80 | (v & 0x3f));
    return 2;
  }
  if (v < 0x10000) {
    b[0] = (unsigned char)(0xe0 | (v >> 12)), b[1] = (unsigned char)(0x80 | ((v >> 6) & 0x3f));
    b[2] = (unsigned char)(0x80 | (v & 0x3f));
    return 3;
  }
  b[0] = (unsigned char)(0xf0 | (v >> 18)), b[1] = (unsigned char)(0x80 | ((v >> 12) & 0x3f));
  b[2] = (unsigned char)(0x80 | ((v >> 6) & 0x3f)), b[3] = (unsigned char)(0x80 | (v & 0x3f));
  return 4;
}

/* The single-character escapes both contexts share: the byte, or -1. */
static int rx_char_escape(unsigned char c) {
  switch (c) {
  case 'n': return '\n';
  case 't': return '\t';
  case 'r': return '\r';
  case 'f': return '\f';
  case 'v': return '\v';
  case 'a': return '\a';
  default:
    return c < 0x80 && !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') &&
               !(c >= 'A' && c <= 'Z') && c > ' '
             ? c
             : -1; /* escaped punctuation */
  }
}

static const char RX_DIGIT[] = "0-9", RX_WORD[] = "0-9A-Za-z_", RX_SPACE[] = "\t\n\f\r ";

/* One character of a bracket at p (an escape or a whole UTF-8 sequence)
 * into ch/len; 0: a character, 1: a class item into cls, -1: refused. */
static int rx_bracket_char(const char **pp, const char *end, unsigned char *ch, int *len,
                           const char **cls, char *msg, size_t msg_len) {
  const char *p = *pp;
  unsigned char c = (unsigned char)*p;
  if (c == '\\') {
    if (p + 1 >= end)
      return (int)rx_refuse(msg, msg_len, "the pattern ends with a backslash");
    unsigned char e = (unsigned char)p[1];
    *pp = p + 2;
    if (e == 'd' || e == 'w' || e == 's') {
      *cls = e == 'd' ? RX_DIGIT : e == 'w' ? RX_WORD : RX_SPACE;
      return 1;
    }
    if (e == 'D' || e == 'W' || e == 'S')
      return (int)rx_refuse(msg, msg_len, "\\%c inside [...] is not supported", e);
    if (e == 'x') {
      long v = rx_xescape(p + 2, end, pp);
      if (v <= 0)
        return (int)rx_refuse(msg, msg_len, "bad or NUL \\x escape");
      *len = rx_utf8(v, ch);
      return 0;
    }
    int b = rx_char_escape(e);
    if (b < 0)
      return (int)rx_refuse(msg, msg_len, "escape \\%c is not supported", e);
    ch[0] = (unsigned char)b;
    *len = 1;
    return 0;
  }
  int n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
  if (end - p < n)
    n = (int)(end - p);
  memcpy(ch, p, (size_t)n);
  *len = n;
  *pp = p + n;
  return 0;
}

/* A bracket expression starting after '['; writes it and moves *pp past ']'. */
static long rx_bracket(const char **pp, const char *end, rx_out *o, char *msg, size_t msg_len) {
  const char *p = *pp;
  bool neg = false, lit_close = false, lit_dash = false, lit_caret = false, lit_open = false;
  char body[1024];
  rx_out b = {body, 0, sizeof body, false};
  body[0] = '\0';
  if (p < end && *p == '^')
    neg = true, p++;
  bool first = true;
  while (p < end && (*p != ']' || first)) {
    first = false;
    if (*p == '[' && p + 1 < end && p[1] == ':') {
      const char *q = p + 2, *e = q;
      while (e < end && *e != ':')
        e++;
      if (e + 1 >= end || e[1] != ']')
        return rx_refuse(msg, msg_len, "unterminated [: class");
      size_t nl = (size_t)(e - q);
      static const char *const names[] = {"alnum", "alpha",  "blank", "cntrl", "digit",
                                          "graph", "lower",  "print", "punct", "space",
                                          "upper", "xdigit", NULL};
      if (nl == 4 && memcmp(q, "word", 4) == 0) {
        rx_puts(&b, RX_WORD);
      } else {
        int k = 0;
        while (names[k] && !(strlen(names[k]) == nl && memcmp(q, names[k], nl) == 0))
          k++;
        if (!names[k])
          return rx_refuse(msg, msg_len, "class [:%.*s:] is not supported", (int)nl, q);
        rx_puts(&b, "[:");
        rx_put(&b, q, nl);
        rx_puts(&b, ":]");
      }
      p = e + 2;
      continue;
    }
    unsigned char ch[4], ch2[4];
    int len = 0, len2 = 0;
    const char *cls = NULL;
    int k = rx_bracket_char(&p, end, ch, &len, &cls, msg, msg_len);
    if (k < 0)
      return -1;
    if (k == 1) {
      rx_puts(&b, cls);
      continue;
    }
    if (p + 1 < end && *p == '-' && p[1] != ']') {
      const char *q = p + 1;
      const char *cls2 = NULL;
      int k2 = rx_bracket_char(&q, end, ch2, &len2, &cls2, msg, msg_len);
      if (k2 < 0)
        return -1;
      if (k2 == 1 || (len == 1 && strchr("[]^-", ch[0])) || (len2 == 1 && strchr("[]^-", ch2[0])))
        return rx_refuse(msg, msg_len, "this range inside [...] is not supported");
      if (len == 1 && len2 == 1 && ch[0] > ch2[0])
        return rx_refuse(msg, msg_len, "bad range %c-%c", ch[0], ch2[0]);
      rx_put(&b, (const char *)ch, (size_t)len);
      rx_puts(&b, "-");
      rx_put(&b, (const char *)ch2, (size_t)len2);
      p = q;
      continue;
    }
    if (len == 1 && ch[0] == ']')
      lit_close = true;
    else if (len == 1 && ch[0] == '-')
      lit_dash = true;
    else if (len == 1 && ch[0] == '^')
      lit_caret = true;
    else if (len == 1 && ch[0] == '[')
      lit_open = true;
    else if (len == 1 && ch[0] == '\0')
      return rx_refuse(msg, msg_len, "NUL inside [...]");
    else
      rx_put(&b, (const char *)ch, (size_t)len);
  }
  if (p >= end)
    return rx_refuse(msg, msg_len, "missing ]");
  if (b.over)
    return rx_refuse(msg, msg_len, "a [...] expression is too long");
  *pp = p + 1;
  if (!neg && !lit_close && !lit_dash && !lit_open && b.n == 0 && lit_caret) {
    rx_puts(o, "\\^");
    return 0;
  }
  rx_puts(o, neg ? "[^" : "[");
  if (lit_close)
    rx_puts(o, "]");
  rx_put(o, body, b.n);
  if (lit_caret)
    rx_puts(o, "^");
  if (lit_open)
    rx_puts(o, "[");
  if (lit_dash)
    rx_puts(o, "-");
  rx_puts(o, "]");
  return 0;
}

long nn_regex_translate(const char *pattern, size_t len, char *out, size_t out_len, char *msg,
                        size_t msg_len) {
  if (len > NN_LIMIT_REGEX_BYTES)
    return rx_refuse(msg, msg_len, "the pattern has %zu bytes, more than the limit %d", len,
                     NN_LIMIT_REGEX_BYTES);
  if (memchr(pattern, '\0', len))
    return rx_refuse(msg, msg_len, "the pattern holds a NUL byte");
  rx_out o = {out, 0, out_len, false};
  if (out_len)
    out[0] = '\0';
  const char *p = pattern, *end = pattern + len;
  /* expanded size: per open group, its size so far; last = the atom a
   * repeat applies to */
  int64_t size[REGEX_MAX_GROUPS + 1] = {0}, last = 0;
  int depth = 0;
  rx_puts(&o, "^(");
  while (p < end) {
    unsigned char c = (unsigned char)*p;
    if (c == '\\') {
      if (p + 1 >= end)
        return rx_refuse(msg, msg_len, "the pattern ends with a backslash");
      unsigned char e = (unsigned char)p[1];
      p += 2;
      const char *cls = NULL;
      switch (e) {
      case 'd': cls = "[0-9]"; break;
      case 'D': cls = "[^0-9]"; break;
      case 'w': cls = "[0-9A-Za-z_]"; break;
      case 'W': cls = "[^0-9A-Za-z_]"; break;
      case 's': cls = "[\t\n\f\r ]"; break;
      case 'S': cls = "[^\t\n\f\r ]"; break;
      case 'b': cls = "\\b"; break;
      case 'B': cls = "\\B"; break;
      case 'A': cls = "^"; break;
      case 'z': cls = "$"; break;
      default: break;
      }
      if (cls) {
        rx_puts(&o, cls);
        last = 1;
        size[depth] += 1;
        continue;
      }
      if (e == 'x') {
        long v = rx_xescape(p, end, &p);
        if (v <= 0)
          return rx_refuse(msg, msg_len, "bad or NUL \\x escape");
        unsigned char u[4];
        int n = rx_utf8(v, u);
        for (int i = 0; i < n; i++)
          rx_lit(&o, u[i]);
      } else {
        int b = rx_char_escape(e);
        if (b < 0)
          return rx_refuse(msg, msg_len, "escape \\%c is not supported", e);
        rx_lit(&o, (unsigned char)b);
      }
      last = 1;
      size[depth] += 1;
      continue;
    }
    switch (c) {
    case '.':
      rx_puts(&o, "[^\n]");
      p++;
      last = 1;
      size[depth] += 1;
      break;
    case '[':
      p++;
      if (rx_bracket(&p, end, &o, msg, msg_len) < 0)
        return -1;
      last = 1;
      size[depth] += 1;
      break;
    case '(':
      p++;
      if (p < end && *p == '?') {
        if (p + 1 < end && p[1] == ':') {
          p += 2;
        } else if (p + 2 < end && (p[1] == '<' || (p[1] == 'P' && p[2] == '<'))) {
          const char *q = memchr(p, '>', (size_t)(end - p));
          if (!q)
            return rx_refuse(msg, msg_len, "unterminated group name");
          p = q + 1;
        } else {
          return rx_refuse(msg, msg_len, "(?%c...) (flags or look-around) is not supported",
                           p + 1 < end ? p[1] : ' ');
        }
      }
      if (depth == REGEX_MAX_GROUPS)
        return rx_refuse(msg, msg_len, "groups nest deeper than %d", REGEX_MAX_GROUPS);
      size[++depth] = 0;
      rx_puts(&o, "(");
      break;
    case ')':
      if (depth == 0)
        return rx_refuse(msg, msg_len, "unmatched )");
      last = size[depth--];
      size[depth] += last;
      rx_puts(&o, ")");
      p++;
      break;
    case '*':
    case '+':
    case '?':
      rx_put(&o, (const char *)&c, 1);
      p++;
      if (p < end && *p == '?') /* lazy: the same language */
        p++;
      break;
    case '{': {
      const char *q = p + 1;
      long lo = -1, hi = -1;
      bool comma = false;
      if (q < end && *q >= '0' && *q <= '9') {
        lo = 0;
        while (q < end && *q >= '0' && *q <= '9' && lo <= NN_LIMIT_REGEX_REPEAT)
          lo = lo * 10 + (*q++ - '0');
        if (q < end && *q == ',') {
          comma = true;
          q++;
          if (q < end && *q >= '0' && *q <= '9') {
            hi = 0;
            while (q < end && *q >= '0' && *q <= '9' && hi <= NN_LIMIT_REGEX_REPEAT)
              hi = hi * 10 + (*q++ - '0');
          }
        }
      }
      if (lo < 0 || q >= end || *q != '}') { /* not a repeat: RE2 takes '{' literally */
        rx_lit(&o, '{');
        p++;
        last = 1;
        size[depth] += 1;
        break;
      }
      if (lo > NN_LIMIT_REGEX_REPEAT || hi > NN_LIMIT_REGEX_REPEAT)
        return rx_refuse(msg, msg_len, "a repeat count is over %d", NN_LIMIT_REGEX_REPEAT);
      if (comma && hi >= 0 && hi < lo)
        return rx_refuse(msg, msg_len, "bad repeat {%ld,%ld}", lo, hi);
      long times = comma ? (hi >= 0 ? hi : lo + 1) : lo;
      if (times < 1)
        times = 1;
      size[depth] += last * (times - 1);
      last *= times;
      if (size[depth] > REGEX_MAX_EXPANDED || last > REGEX_MAX_EXPANDED)
        return rx_refuse(msg, msg_len, "counted repeats expand the pattern past %d atoms",
                         REGEX_MAX_EXPANDED);
      rx_put(&o, p, (size_t)(q + 1 - p));
      p = q + 1;
      if (p < end && *p == '?')
        p++;
      break;
    }
    case '}':
      rx_lit(&o, '}');
      p++;
      last = 1;
      size[depth] += 1;
      break;
    case '|':
    case '^':
    case '$':
      rx_put(&o, (const char *)&c, 1);
      p++;
      break;
    default:
      rx_put(&o, (const char *)&c, 1);
      p++;
      last = 1;
      size[depth] += 1;
      break;
    }
    if (size[depth] > REGEX_MAX_EXPANDED)
      return rx_refuse(msg, msg_len, "the pattern expands past %d atoms", REGEX_MAX_EXPANDED);
  }
  if (depth != 0)
    return rx_refuse(msg, msg_len, "missing )");
  rx_puts(&o, ")$");
  if (o.over)
    return rx_refuse(msg, msg_len, "the translated pattern is too long");
  return (long)o.n;
}

/* Is s well-formed UTF-8 (no overlong forms, surrogates or code points
 * past U+10FFFF)? */
static bool rx_utf8_valid(const unsigned char *s, size_t len) {
  size_t i = 0;
  while (i < len) {
    unsigned char c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    int n = c >= 0xc2 && c <= 0xdf   ? 1
            : c >= 0xe0 && c <= 0xef ? 2
            : c >= 0xf0 && c <= 0xf4 ? 3
                                     : -1;
    if (n < 0 || len - i <= (size_t)n)
      return false;
    unsigned char c1 = s[i + 1];
    if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) || (c == 0xf0 && c1 < 0x90) ||
        (c == 0xf4 && c1 > 0x8f))
      return false;
    for (int k = 1; k <= n; k++)
      if ((s[i + k] & 0xc0) != 0x80)
        return false;
    i += (size_t)n + 1;
  }
  return true;
}

nn_regex *nn_regex_compile(const char *pattern, size_t len, char *msg, size_t msg_len) {
  size_t cap = 16 * len + 64;
  char *ere = nn_malloc(cap);
  nn_regex *r = nn_calloc(1, sizeof *r);
  if (!ere || !r) {
    rx_refuse(msg, msg_len, "out of memory");
    nn_free(ere);
    nn_free(r);
    return NULL;
  }
  if (nn_regex_translate(pattern, len, ere, cap, msg, msg_len) < 0) {
    nn_free(ere);
    nn_free(r);
    return NULL;
  }
  static const char *const locales[2][2] = {{"C.UTF-8", "C"}, {"C", "C"}};
  for (int k = 0; k < 2; k++) {
    r->loc[k] = newlocale(LC_ALL_MASK, locales[k][0], (locale_t)0);
    if (!r->loc[k])
      r->loc[k] = newlocale(LC_ALL_MASK, locales[k][1], (locale_t)0);
    if (!r->loc[k]) {
      rx_refuse(msg, msg_len, "out of memory");
      break;
    }
    locale_t old = uselocale(r->loc[k]);
    int e = regcomp(&r->re[k], ere, REG_EXTENDED | REG_NOSUB);
    uselocale(old);
    if (e != 0) {
      char why[128];
      regerror(e, &r->re[k], why, sizeof why);
      rx_refuse(msg, msg_len, "the C library's regcomp rejects it: %s", why);
      break;
    }
    r->have[k] = true;
  }
  nn_free(ere);
  if (!r->have[0] || !r->have[1]) {
    nn_regex_free(r);
    return NULL;
  }
  return r;
}

bool nn_regex_full_match(const nn_regex *re, const char *s, size_t len) {
  if (len > (size_t)INT32_MAX) /* regoff_t is an int: the caller checks */
    return false;
  static const char empty[1] = "";
  if (!len)
    s = empty;
  int k = rx_utf8_valid((const unsigned char *)s, len) ? 0 : 1;
  regmatch_t m[1] = {{0, (regoff_t)len}};
  locale_t old = uselocale(re->loc[k]);
  int r = regexec(&re->re[k], s, 1, m, REG_STARTEND);
  uselocale(old);
  return r == 0;
}

void nn_regex_free(void *p) {
  nn_regex *r = p;
  if (!r)
    return;
  for (int k = 0; k < 2; k++) {
    if (r->have[k])
      regfree(&r->re[k]);
    if (r->loc[k])
      freelocale(r->loc[k]);
  }
  nn_free(r);
}
