#!/usr/bin/env python3
"""ocr_transcript.py - pipelines/ocr.sh's program on a real page, scored.

Runs tools/ocr-read (PP-OCRv4 det -> rec through onnxinfer, the defaults
pipelines/ocr.sh uses) on real images and scores what it prints against the
hand transcriptions of tests/ocr/transcripts/ (written from the pictures):
character error rate (edit distance without whitespace, over the reference
length) and word accuracy (reference words matched by a word-level LCS).
Each --case IMAGE:TRANSCRIPT:MAX_CER:MIN_WORDS must stay within its bounds
(the issue's acceptance is CER <= 1 %, word accuracy >= 95 %).  Prints the
lines that differ.  Exits 77 when an image, the models or ocr-read are
absent (tools/fetch-media.sh).
"""
import argparse
import os
import subprocess
import sys


def skip(msg):
    print('SKIP: ' + msg)
    sys.exit(77)


def edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def lcs(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def score(ref_lines, hyp_lines):
    ref = ''.join(''.join(ref_lines).split())
    hyp = ''.join(''.join(hyp_lines).split())
    cer = edit_distance(ref, hyp) / max(1, len(ref))
    rw = ' '.join(ref_lines).split()
    hw = ' '.join(hyp_lines).split()
    return cer, lcs(rw, hw) / max(1, len(rw))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--reader', required=True)
    ap.add_argument('--det', required=True)
    ap.add_argument('--rec', required=True)
    ap.add_argument('--dict', required=True)
    ap.add_argument('--case', action='append', required=True,
                    help='IMAGE:TRANSCRIPT:MAX_CER:MIN_WORD_ACCURACY')
    a = ap.parse_args()
    for what, p in (('ocr-read', a.reader), ('detector', a.det), ('recogniser', a.rec),
                    ('dictionary', a.dict)):
        if not os.path.exists(p):
            skip('%s %s absent (tools/fetch-media.sh, ninja)' % (what, p))
    ok = True
    for case in a.case:
        image, transcript, max_cer, min_words = case.rsplit(':', 3)
        if not os.path.exists(image):
            skip('%s absent (tools/fetch-media.sh)' % image)
        with open(transcript, encoding='utf-8') as f:
            ref = [ln.rstrip('\n') for ln in f if ln.strip()]
        r = subprocess.run([a.reader, '--det', a.det, '--rec', a.rec, '--dict', a.dict, image],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr)
            raise SystemExit('ocr-read failed on %s (%d)' % (image, r.returncode))
        hyp = r.stdout.splitlines()
        cer, words = score(ref, hyp)
        good = cer <= float(max_cer) and words >= float(min_words)
        ok = ok and good
        print('%s: %d lines read, %d in the transcription; CER %.2f %% (max %.2f), word '
              'accuracy %.1f %% (min %.1f): %s' % (os.path.basename(image), len(hyp), len(ref),
                                                  100 * cer, 100 * float(max_cer), 100 * words,
                                                  100 * float(min_words),
                                                  'ok' if good else 'FAIL'))
        for i in range(max(len(ref), len(hyp))):
            want = ref[i] if i < len(ref) else ''
            got = hyp[i] if i < len(hyp) else ''
            if want != got:
                print('  line %d: expected %r\n          read     %r' % (i + 1, want, got))
    print('OK' if ok else 'FAILED')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
