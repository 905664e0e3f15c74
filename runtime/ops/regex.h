/* regex.h - RegexFullMatch's patterns (RE2 syntax, as ONNX specifies) on
 * the C library's POSIX regular expressions (regcomp/regexec, extended
 * syntax): the matcher is libc's; this layer only rewrites the pattern.
 *
 * Supported RE2 syntax (everything a full match can tell apart):
 *   literals (UTF-8 included), . (any character but newline), [...] and
 *   [^...] with ranges, POSIX [:classes:] and the escapes below,
 *   \d \D \w \W \s \S (ASCII, as RE2), \b \B, \A \z, \n \t \r \f \v \a,
 *   \xHH, \x{H...}, escaped punctuation, groups ( ), (?: ), (?P<name> ),
 *   (?<name> ), alternation |, anchors ^ $, repeats * + ? {n} {n,} {n,m}
 *   and their lazy forms (the same language: a full match does not care
 *   which way a repeat prefers).
 * Refused with a message (NN_ERR_UNSUPPORTED at prepare): flags ((?i) ...),
 *   look-around, backreferences and octal escapes, \p{..} Unicode classes,
 *   \Q..\E, \C, negated escapes inside brackets ([\W]), [:^class:],
 *   patterns over NN_LIMIT_REGEX_BYTES or whose counted repeats expand past
 *   the bound of regex.c, and anything regcomp itself rejects (its
 *   message is passed on).
 * Matching: the whole string, as UTF-8 characters (one . per code point)
 * when the C library has the C.UTF-8 locale (glibc >= 2.35 always does);
 * a string that is not well-formed UTF-8 is matched byte by byte (each byte
 * one character, as RE2 takes an invalid byte), by a second compilation of
 * the pattern under the C locale.  \w and friends are ASCII either way.
 * Strings may hold NUL bytes (REG_STARTEND).
 */
#ifndef NN_OPS_REGEX_H
#define NN_OPS_REGEX_H

#include <stdbool.h>
#include <stddef.h>

typedef struct nn_regex nn_regex;

/* Compile pattern (len bytes) for full matching; NULL with a message in msg
 * when refused or out of memory.  Free with nn_regex_free. */
nn_regex *nn_regex_compile(const char *pattern, size_t len, char *msg, size_t msg_len);
/* Does the whole of s (len bytes) match?  s[len] must be a NUL: the match
 * stops at len (REG_STARTEND), but sanitizers' interceptors of regexec read
 * up to the NUL.  Thread-safe on one nn_regex. */
bool nn_regex_full_match(const nn_regex *re, const char *s, size_t len);
void nn_regex_free(void *re); /* NULL ok; void * to serve as a destructor */

/* The POSIX pattern a RE2 pattern becomes ("^(...)$"), for tests: the
 * number of bytes written (without the NUL) into out, or -1 with a message
 * when refused. */
long nn_regex_translate(const char *pattern, size_t len, char *out, size_t out_len, char *msg,
                        size_t msg_len);

#endif
