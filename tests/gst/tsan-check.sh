#!/bin/sh
# tsan-check.sh TEST_PROGRAM [ARGS...]
#
# Runs a gst test program of a ThreadSanitizer build (meson setup
# -Db_sanitize=thread) and sorts TSan's reports:
#
#   product  an access of a data race is made by onnxinfer's own code
#            (elements/, plugin/, runtime/: the innermost frame past TSan's
#            interceptors, or a g_malloc/g_free-like wrapper it calls), or a
#            frame of another kind of report (lock order, use after free...)
#            is: printed in full, and the run FAILS
#   test     the same for the test programs (tests/gst/): printed, counted
#   internal every access is made inside GLib/GStreamer: counted, with its
#            one-line summary (and where our code called in, if it did);
#            also a free() inside GStreamer (the last unref of a buffer,
#            memory or event) after our code's earlier use in another
#            thread: the reference count ordering them is an uninstrumented
#            atomic (a use after the free is ASan's and valgrind's to find).  GLib and GStreamer are not built with TSan;
#            tsan-glib-annotations.c tells TSan about GMutex/GCond and the
#            GstMiniObject reference counts when they are used from outside
#            those libraries, but their internal uses stay invisible and
#            produce reports that say nothing about our code.
#
# TSan suppressions cannot do this sorting: a suppression matches any frame
# of any stack of a report, and every streaming thread's stack runs through
# GLib and GStreamer, so suppressing their internal reports by library would
# also hide ours.
set -u

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT INT TERM
here=$(cd "$(dirname "$0")" && pwd)

# The plugin scanner (gst-plugin-scanner, forked by the test program) is not
# instrumented; with the TSan runtime preloaded it can load the TSan plugin.
preload=${ONNXINFER_TSAN_RUNTIME:-$(${CC:-cc} -print-file-name=libtsan.so)}
G_SLICE=always-malloc LD_PRELOAD="$preload${LD_PRELOAD:+:$LD_PRELOAD}" \
TSAN_OPTIONS="${TSAN_OPTIONS:-} halt_on_error=0 exitcode=0 history_size=4 log_path=$logdir/tsan" \
  "$@"
status=$?
if [ "$status" -eq 77 ]; then
  exit 77
fi

python3 - "$logdir" <<'EOF'
import glob, re, sys

PRODUCT = re.compile(r'(^|[ /.])(elements|plugin|runtime)/[^ ]*\.[ch]:\d+')
TEST = re.compile(r'(^|[ /.])tests/gst/[^ ]*\.[ch]:\d+')
INTERCEPTOR = re.compile(r'libtsan\.so|sanitizer_common|tsan_interceptors|'
                         r'tsan-glib-annotations\.c')
# GLib functions that only allocate, copy or free for their caller: an access
# there is the caller's.
THIN = re.compile(r'#\d+ (g_free|g_malloc0?|g_malloc_n|g_realloc|g_try_malloc|'
                  r'g_strdup|g_strndup|g_memdup2?|g_slice_\w+) ')

reports = []
for path in sorted(glob.glob(sys.argv[1] + '/tsan*')):
    cur = None
    for line in open(path, errors='replace'):
        if 'WARNING: ThreadSanitizer:' in line:
            cur = [line]
        elif cur is not None:
            cur.append(line)
            if line.startswith('SUMMARY: ThreadSanitizer'):
                reports.append(cur)
                cur = None

def stacks(rep):
    out, cur = [], None
    for line in rep[1:]:
        s = line.strip()
        if re.match(r'#\d+ ', s):
            if cur is None:
                cur = []
                out.append(cur)
            cur.append(s)
        else:
            cur = None
    return out

def owner(stack, code):
    """Whether the access of @stack is made by @code: its innermost frame
    (past TSan's interceptors), or a thin GLib wrapper called by @code."""
    frames = [f for f in stack if not INTERCEPTOR.search(f)]
    if not frames:
        return False
    if code.search(frames[0]):
        return True
    return bool(THIN.match(frames[0]) and len(frames) > 1 and
                code.search(frames[1]))

counts = {'product': 0, 'test': 0, 'internal': 0}
internal = {}
for rep in reports:
    st = stacks(rep)
    race = 'data race' in rep[0]
    if race:
        acc = st[:2]
        kind = ('product' if any(owner(s, PRODUCT) for s in acc) else
                'test' if any(owner(s, TEST) for s in acc) else 'internal')
        # The last reference to a buffer/memory/event dropped inside
        # GStreamer frees it after another thread's (earlier) use: the
        # reference count that orders them is an uninstrumented atomic.  A
        # real use after free shows the other way round (our access after
        # the free) and is ASan's and valgrind's to catch.
        lib = [f for f in acc[0] if not INTERCEPTOR.search(f)] if acc else []
        if (kind != 'internal' and acc and re.match(r'#0 free ', acc[0][0])
                and lib and not PRODUCT.search(lib[0]) and
                not TEST.search(lib[0]) and not THIN.match(lib[0])):
            kind = 'internal'
            handoff = True
        else:
            handoff = False
    else:
        handoff = False
        frames = [f for s in st for f in s]
        kind = ('product' if any(PRODUCT.search(f) for f in frames) else
                'test' if any(TEST.search(f) for f in frames) else 'internal')
    counts[kind] += 1
    if kind == 'internal':
        summ = re.sub(r'0x[0-9a-f]+', '', rep[-1].strip())
        if handoff:
            summ = 'free by GStreamer after a use (refcount hand-off): ' + summ
        via = [f for s in st[:2] for f in s if PRODUCT.search(f)]
        if via:
            summ += '  (reached from %s)' % re.sub(r'^#\d+ ', '', via[0]).split(' (')[0]
        internal[summ] = internal.get(summ, 0) + 1
    else:
        print('tsan-check: %s report:' % kind)
        sys.stdout.write(''.join(rep))

print('tsan-check: %d reports: %d on accesses by onnxinfer code, %d by test '
      'code, %d by GLib/GStreamer (not instrumented; their internal locks '
      'are invisible to TSan)' % (len(reports), counts['product'],
                                  counts['test'], counts['internal']))
for s, n in sorted(internal.items(), key=lambda x: -x[1]):
    print('  %4d  %s' % (n, s))
sys.exit(1 if counts['product'] else 0)
EOF
filter=$?
if [ "$status" -ne 0 ]; then
  echo "tsan-check: the test program failed (exit status $status)"
  exit "$status"
fi
exit $filter
