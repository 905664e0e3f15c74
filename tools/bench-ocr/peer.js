#!/usr/bin/env node
// The OCR benchmark's peer: @gutenye/ocr-node (PaddleOCR v4 det + rec on
// onnxruntime-node, images decoded by sharp), installed on demand by
// install.sh into tools/bench-ocr/node_modules.  Dev-only, never a product
// dependency.
//
//   node tools/bench-ocr/peer.js [--warm N] [--threads T] IMAGE...
//
// Loads the peer once, then for each IMAGE prints the recognised lines in
// reading order, one per line, on stdout; with several images each block is
// preceded by `==> IMAGE <==`.  With --warm N each image is then run N more
// times and `peer-warm-ms IMAGE MS` (the mean of the N) goes to stderr.
// --threads T sets onnxruntime's intra-op threads (default: onnxruntime's
// own, one per core).  Everything but the lines goes to stderr; an image that
// fails is reported on stderr, the others still run, and the exit status is 1.
//
// Reading order is the one pipelines/ocr.sh uses (tools/ocr-read.c): top to
// bottom, lines whose vertical extents overlap by more than half the smaller
// height (their centres within about half a line height) form a row, read
// left to right; see keys() and lineOrder() below, and change them with
// ocr-read.c's.  The peer itself already joins the boxes of one row into one
// line (text joined with a space, box from the first to the last); those
// lines are what is sorted here.  The metrics ignore whitespace and line
// breaks (CER) or split on whitespace (words), so one line per row or one
// per box scores the same.
'use strict';

const path = require('node:path');

// setup/log noise to stderr only: stdout carries the lines and nothing else
const out = (s) => process.stdout.write(s);
for (const k of ['log', 'info', 'debug', 'warn']) console[k] = (...a) => console.error(...a);

function usage(msg) {
  if (msg) console.error('peer.js: ' + msg);
  console.error('usage: node peer.js [--warm N] [--threads T] IMAGE...');
  process.exit(2);
}

function parseArgs(argv) {
  const a = { warm: 0, threads: 0, images: [] };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i];
    if (v === '--warm' || v === '--threads') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 0) usage(v + ' takes a whole number');
      a[v.slice(2)] = n;
    } else if (v === '-h' || v === '--help') {
      usage();
    } else if (v.startsWith('--')) {
      usage('unknown option ' + v);
    } else {
      a.images.push(v);
    }
  }
  if (!a.images.length) usage('no image');
  return a;
}

// The reading order of tools/ocr-read.c (what pipelines/ocr.sh runs), the
// same keys and the same comparator.  box: the four corners in PaddleOCR's
// order (top-left, top-right, bottom-right, bottom-left), as the peer returns
// them; centre = the mean of the corners' y, height = the rotated box's own
// height |bottom-left - top-left|, so top/bottom = centre -/+ height / 2 (a
// slanted line's rows stay apart better than with its bounding box), left =
// the smallest corner x.
function keys(line) {
  const b = Array.isArray(line.box) && line.box.length === 4 ? line.box : null;
  if (!b) return { top: Infinity, bottom: Infinity, left: Infinity };
  const cy = (b[0][1] + b[1][1] + b[2][1] + b[3][1]) / 4;
  const h = Math.hypot(b[3][0] - b[0][0], b[3][1] - b[0][1]);
  return { top: cy - h / 2, bottom: cy + h / 2, left: Math.min(b[0][0], b[1][0], b[2][0], b[3][0]) };
}

// Top to bottom; two lines overlapping vertically by more than half the
// smaller height are one row, read left to right (ocr-read.c's line_order).
function lineOrder(a, b) {
  const ha = a.bottom - a.top;
  const hb = b.bottom - b.top;
  const overlap = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
  if (overlap > 0.5 * Math.min(ha, hb)) return a.left < b.left ? -1 : a.left > b.left ? 1 : 0;
  return a.top < b.top ? -1 : a.top > b.top ? 1 : 0;
}

function readingOrder(lines) {
  return lines
    .map((l) => ({ l, k: keys(l) }))
    .sort((x, y) => lineOrder(x.k, y.k))
    .map((x) => x.l);
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let Ocr;
  try {
    Ocr = (await import('@gutenye/ocr-node')).default;
  } catch (e) {
    console.error('peer.js: cannot load @gutenye/ocr-node (run sh ' +
      path.join(__dirname, 'install.sh') + '): ' + e.message);
    process.exit(2);
  }
  const onnxOptions = a.threads ? { intraOpNumThreads: a.threads, interOpNumThreads: 1 } : {};
  const ocr = await Ocr.create({ onnxOptions });
  let failed = false;
  for (const img of a.images) {
    if (a.images.length > 1) out(`==> ${img} <==\n`);
    let lines;
    try {
      lines = await ocr.detect(img);
    } catch (e) {
      console.error(`peer.js: ${img}: ${e && e.message ? e.message : e}`);
      failed = true;
      continue;
    }
    for (const l of readingOrder(lines)) {
      const t = String(l.text).trim();
      if (t) out(t + '\n');
    }
    if (a.warm > 0) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < a.warm; i++) await ocr.detect(img);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6 / a.warm;
      console.error(`peer-warm-ms ${img} ${ms.toFixed(3)}`);
    }
  }
  process.exitCode = failed ? 1 : 0;
}

main().catch((e) => {
  console.error('peer.js: ' + (e && e.stack ? e.stack : e));
  process.exit(2);
});
