#!/usr/bin/env node
// ort-run.js - ONNX Runtime (onnxruntime-node) as a dev-only oracle and
// benchmark peer.  Never a product dependency: installed on demand into
// tools/ort/node_modules (git-ignored) by tools/ort/install.sh.
//
//   node ort-run.js MODEL.onnx [--threads N] [--input NAME=FILE.pb ...] [--bench RUNS]
//                   [--save-outputs DIR]
//   node ort-run.js MODEL.onnx --bench RUNS --profile PREFIX
//       also prints ONNX Runtime's own time per op type and its slowest nodes
//       (its profiler's JSON is kept as PREFIX_*.json): the peer's side of
//       NN_PROFILE=1 nn-run ...
//   node ort-run.js --make-case MODEL.onnx OUT_DIR [--input NAME=FILE.pb ...]
//       writes OUT_DIR/model.onnx + test_data_set_0/input_K.pb, output_K.pb with
//       ONNX Runtime's outputs (the layout `nn-run --check` reads)
//
// Inputs not given are filled with the same deterministic pseudo-random data
// nn-run uses only when shapes match; for comparisons pass --input files
// (nn-run --save-inputs writes them).
'use strict';
const fs = require('fs');
const path = require('path');
// ORT_NODE_MODULE: another copy of the package (tools/ort/cap-isa.py makes
// one that runs its AVX2 kernels on an AVX-512 machine)
const ort = require(process.env.ORT_NODE_MODULE || 'onnxruntime-node');

// ---- minimal TensorProto codec (fields: dims 1, data_type 2, float_data 4,
// int32_data 5, int64_data 7, name 8, raw_data 9, double_data 10) ----------
const DT = {1: 'float32', 2: 'uint8', 3: 'int8', 5: 'int16', 6: 'int32', 7: 'int64', 9: 'bool',
            10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64'};
const DT_CODE = Object.fromEntries(Object.entries(DT).map(([k, v]) => [v, Number(k)]));
const ARR = {float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int16: Int16Array,
             int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array,
             float64: Float64Array, uint32: Uint32Array, uint64: BigUint64Array};

function readVarint(buf, pos) {
  let result = 0n, shift = 0n;
  for (;;) {
    const b = buf[pos++];
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    shift += 7n;
  }
  return [result, pos];
}

function decodeTensor(buf) {
  let pos = 0;
  const t = {dims: [], dataType: 0, name: '', raw: null, floats: [], ints64: [], ints32: [], doubles: []};
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      if (field === 1) t.dims.push(Number(BigInt.asIntN(64, v)));
      else if (field === 2) t.dataType = Number(v);
      else if (field === 7) t.ints64.push(BigInt.asIntN(64, v));
      else if (field === 5) t.ints32.push(Number(BigInt.asIntN(32, v)));
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const body = buf.subarray(pos, pos + Number(len));
      pos += Number(len);
      if (field === 8) t.name = body.toString('utf8');
      else if (field === 9) t.raw = Buffer.from(body);
      else if (field === 1) { let p = 0; while (p < body.length) { let v; [v, p] = readVarint(body, p); t.dims.push(Number(v)); } }
      else if (field === 4) for (let i = 0; i < body.length; i += 4) t.floats.push(body.readFloatLE(i));
      else if (field === 10) for (let i = 0; i < body.length; i += 8) t.doubles.push(body.readDoubleLE(i));
      else if (field === 7) { let p = 0; while (p < body.length) { let v; [v, p] = readVarint(body, p); t.ints64.push(BigInt.asIntN(64, v)); } }
      else if (field === 5) { let p = 0; while (p < body.length) { let v; [v, p] = readVarint(body, p); t.ints32.push(Number(BigInt.asIntN(32, v))); } }
    } else if (wire === 5) pos += 4;
    else if (wire === 1) pos += 8;
    else throw new Error('bad wire type ' + wire);
  }
  const type = DT[t.dataType];
  if (!type) throw new Error('unsupported tensor type ' + t.dataType);
  const Arr = ARR[type];
  let data;
  if (t.raw) data = new Arr(t.raw.buffer.slice(t.raw.byteOffset, t.raw.byteOffset + t.raw.length));
  else if (type === 'float32') data = Float32Array.from(t.floats);
  else if (type === 'float64') data = Float64Array.from(t.doubles);
  else if (type === 'int64') data = BigInt64Array.from(t.ints64);
  else data = Arr.from(t.ints32);
  if (type === 'bool') data = Uint8Array.from(data, (x) => (x ? 1 : 0));
  return {name: t.name, tensor: new ort.Tensor(type, type === 'bool' ? Uint8Array.from(data) : data, t.dims)};
}

function writeVarint(out, v) {
  v = BigInt.asUintN(64, BigInt(v));
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
}

function encodeTensor(name, t) {
  const out = [];
  for (const d of t.dims) { out.push(0x08); writeVarint(out, d); }
  out.push(0x10); writeVarint(out, DT_CODE[t.type]);
  const nb = Buffer.from(name, 'utf8');
  out.push(0x42); writeVarint(out, nb.length);
  const head = Buffer.from(out);
  const d = t.data;
  const raw = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  const rawHead = [0x4a];
  writeVarint(rawHead, raw.length);
  return Buffer.concat([head, nb, Buffer.from(rawHead), raw]);
}

function parseArgs(argv) {
  const o = {threads: 1, bench: 0, inputs: [], saveOutputs: null, makeCase: null, model: null,
             profile: null};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--threads') o.threads = Number(argv[++i]);
    else if (a === '--bench') o.bench = Number(argv[++i]);
    else if (a === '--input') o.inputs.push(argv[++i]);
    else if (a === '--save-outputs') o.saveOutputs = argv[++i];
    else if (a === '--profile') o.profile = argv[++i];
    else if (a === '--make-case') { o.model = argv[++i]; o.makeCase = argv[++i]; }
    else if (!o.model) o.model = a;
    else throw new Error('unknown argument ' + a);
  }
  if (!o.model) throw new Error('usage: ort-run.js MODEL.onnx [--threads N] [--input NAME=FILE.pb] [--bench RUNS]');
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const session = await ort.InferenceSession.create(o.model, {
    intraOpNumThreads: o.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    enableProfiling: !!o.profile, profileFilePrefix: o.profile || undefined,
  });
  const feeds = {};
  const files = [];
  for (const spec of o.inputs) {
    const eq = spec.indexOf('=');
    const file = eq >= 0 ? spec.slice(eq + 1) : spec;
    const t = decodeTensor(fs.readFileSync(file));
    const name = eq >= 0 ? spec.slice(0, eq) : t.name;
    feeds[name] = t.tensor;
    files.push([name, file]);
  }
  for (const name of session.inputNames)
    if (!feeds[name]) throw new Error(`input '${name}' not given (use --input ${name}=FILE.pb)`);
  const t0 = process.hrtime.bigint();
  const results = await session.run(feeds);
  const firstMs = Number(process.hrtime.bigint() - t0) / 1e6;
  for (const name of session.outputNames) {
    const t = results[name];
    let sum = 0;
    for (const v of t.data) sum += Number(v);
    console.log(`output ${name}: ${t.type} [${t.dims.join('x')}] sum=${sum.toPrecision(6)}`);
  }
  console.log(`first_run_ms=${firstMs.toFixed(3)}`);
  if (o.saveOutputs || o.makeCase) {
    const dir = o.makeCase ? path.join(o.makeCase, 'test_data_set_0') : o.saveOutputs;
    fs.mkdirSync(dir, {recursive: true});
    session.outputNames.forEach((name, k) =>
      fs.writeFileSync(path.join(dir, `output_${k}.pb`), encodeTensor(name, results[name])));
    if (o.makeCase) {
      fs.copyFileSync(o.model, path.join(o.makeCase, 'model.onnx'));
      session.inputNames.forEach((name, k) =>
        fs.writeFileSync(path.join(dir, `input_${k}.pb`), encodeTensor(name, feeds[name])));
      console.log(`case written to ${o.makeCase}`);
    }
  }
  if (o.bench > 0) {
    for (let w = 0; w < 3; w++) await session.run(feeds);
    const ms = [];
    for (let r = 0; r < o.bench; r++) {
      const a = process.hrtime.bigint();
      await session.run(feeds);
      ms.push(Number(process.hrtime.bigint() - a) / 1e6);
    }
    ms.sort((x, y) => x - y);
    const n = ms.length;
    const med = n % 2 ? ms[(n - 1) / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    console.log(`peak_rss_bytes=${process.resourceUsage().maxRSS * 1024}`);
    console.log(`median_ms=${med.toFixed(4)} min_ms=${ms[0].toFixed(4)}`);
  }
  if (o.profile) {
    await session.endProfiling();
    // the binding does not return the file's name: the newest PREFIX_*.json
    const dir = path.dirname(path.resolve(o.profile)), base = path.basename(o.profile) + '_';
    const files = fs.readdirSync(dir).filter((f) => f.startsWith(base) && f.endsWith('.json'))
      .map((f) => path.join(dir, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
    if (files.length) printProfile(files[0]);
  }
}

// Time per op type and the slowest nodes, per run, from the profiler's JSON.
function printProfile(file) {
  const ev = JSON.parse(fs.readFileSync(file, 'utf8'));
  const runs = ev.filter((e) => e.name === 'model_run').length || 1;
  const byType = new Map(), byNode = new Map();
  let total = 0;
  for (const e of ev) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const op = (e.args && e.args.op_name) || '?';
    const t = byType.get(op) || {us: 0, n: 0};
    t.us += e.dur; t.n++;
    byType.set(op, t);
    const key = e.name.slice(0, -'_kernel_time'.length) + ' ' + op;
    byNode.set(key, (byNode.get(key) || 0) + e.dur);
    total += e.dur;
  }
  console.log(`profile: ${(total / runs / 1000).toFixed(3)} ms per run in nodes (${file})`);
  for (const [op, t] of [...byType].sort((a, b) => b[1].us - a[1].us))
    console.log(`profile: ${op.padEnd(24)} ${String(Math.round(t.n / runs)).padStart(4)} nodes ` +
                `${(t.us / runs / 1000).toFixed(3).padStart(9)} ms ${(100 * t.us / total).toFixed(1).padStart(5)} %`);
  for (const [k, us] of [...byNode].sort((a, b) => b[1] - a[1]).slice(0, 15))
    console.log(`profile: node ${k.padEnd(40)} ${(us / runs / 1000).toFixed(3).padStart(9)} ms`);
}

main().catch((e) => { console.error('ort-run: ' + e.message); process.exit(2); });
