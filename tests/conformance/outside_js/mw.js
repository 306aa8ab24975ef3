#!/usr/bin/env node
// mw.js - the multiplicative-weights synthesizers of paper 003, written outside dpstream from its
// public docs only (docs/conformance.md, docs/tabular.md "The boxes exactly", docs/catalog.md,
// docs/tape-format.md, the protocol schema, `dpstream serve --describe` and the vectors' data):
//
//   003-alg2  StreamingMWEM                       (g_0 = 0, h_{t,0} uniform of mass N_t)
//   003-alg1  MWEM, select-measure-fit, one-shot  (h_0 = 1, a query may be selected again)
//   003-alg3  the main algorithm, Simple counters (g_0 = 1, h_{t,0} = g_{t-1}, counters eps/(2k))
//
// speaking the dpstream conformance protocol v1: JSON lines on stdin, one answer per line on stdout.
// Noise modes: "tape" (every draw asked of the harness), "own" (a seeded xoshiro128** generator,
// Laplace by inversion, the exponential mechanism by the Gumbel-max trick; NOT a secure sampler) and
// "transcript" (own, every draw reported with the parameters and value actually used).
//
// Floating-point evaluation order: deliberately NOT the straightforward one, to exercise the kit's
// error model ("The error model" of docs/conformance.md):
//   * the multiplicative weights live in log space: log p is updated by the exponent a(x) and
//     renormalised by log-sum-exp after every step; a dataset is N exp(log p) only when read;
//   * every array is summed from its last element to its first (rsum);
//   * averages are sum / k, never sum * (1/k);
//   * N q(p) is the sum over the query's cells of (N p(x)), never N times the sum of p.
//
//   node mw.js                     correct
//   node mw.js --mistake scale     every measurement noise scale 2k/eps multiplied by 1.5
//   node mw.js --mistake score     the exponential mechanism's first candidate scores +1
//   node mw.js --mistake release   every released cell multiplied by 1 + 1e-6
//   node mw.js --mistake leak-scale      every measurement noise scale 2k/eps divided by 2 (a privacy leak)
//   node mw.js --mistake leak-selection  the exponential mechanism run with twice its epsilon (a privacy leak)
'use strict';

const fs = require('fs');

// ---- command line ----------------------------------------------------------------------------

const MISTAKES = ['scale', 'score', 'release', 'leak-scale', 'leak-selection'];
let MISTAKE = null;
{
    const args = process.argv.slice(2);
    for (let i = 0; i < args.length; i++) {
        if (args[i] === '--mistake' && MISTAKES.includes(args[i + 1])) MISTAKE = args[++i];
        else {
            process.stderr.write(`mw.js: usage: node mw.js [--mistake ${MISTAKES.join('|')}]\n`);
            process.exit(2);
        }
    }
}

// ---- errors and JSON helpers -----------------------------------------------------------------

class Refused extends Error {}      // answered {"error": ...}; nothing changes
class EndOfInput extends Error {}   // stdin closed, possibly while a draw waited for its answer

function refuse(message) { throw new Refused(message); }

function show(v) {
    if (v === undefined) return 'missing';
    const s = JSON.stringify(v);
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const isFiniteNumber = (v) => typeof v === 'number' && Number.isFinite(v);
const isInteger = (v) => typeof v === 'number' && Number.isSafeInteger(v);  // 16.0 is 16

function onlyKeys(o, allowed, where) {
    for (const key of Object.keys(o)) {
        if (!allowed.includes(key)) refuse(`${where}: unknown key ${JSON.stringify(key)}`);
    }
}

// ---- lines in, lines out (synchronous, so that a draw can wait for its answer mid-step) --------

const reader = {buf: Buffer.alloc(1 << 16), pending: [], lines: [], eof: false};

function nextLine() {
    while (reader.lines.length === 0) {
        if (reader.eof) {
            if (reader.pending.length === 0) return null;
            const last = Buffer.concat(reader.pending).toString('utf8');
            reader.pending = [];
            return last;
        }
        let n;
        try {
            n = fs.readSync(0, reader.buf, 0, reader.buf.length, null);
        } catch (e) {
            if (e.code === 'EAGAIN') { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1); continue; }
            if (e.code !== 'EOF') throw e;
            n = 0;
        }
        if (n === 0) { reader.eof = true; continue; }
        let start = 0;
        for (let i = 0; i < n; i++) {
            if (reader.buf[i] !== 0x0a) continue;
            reader.pending.push(Buffer.from(reader.buf.subarray(start, i)));
            reader.lines.push(Buffer.concat(reader.pending).toString('utf8'));
            reader.pending = [];
            start = i + 1;
        }
        if (start < n) reader.pending.push(Buffer.from(reader.buf.subarray(start, n)));
    }
    return reader.lines.shift();
}

function say(message) {
    const bytes = Buffer.from(`${JSON.stringify(message)}\n`, 'utf8');
    for (let off = 0; off < bytes.length;) {
        try {
            off += fs.writeSync(1, bytes, off, bytes.length - off);
        } catch (e) {
            if (e.code !== 'EAGAIN') throw e;
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
        }
    }
}

// ---- the chosen evaluation order -------------------------------------------------------------

// Sum from the last element to the first.
function rsum(a) {
    let s = 0;
    for (let i = a.length - 1; i >= 0; i--) s += a[i];
    return s;
}

// log sum_x exp(lp[x]), shifted by the maximum; -inf entries (zero weights) contribute nothing.
function logSumExp(lp) {
    let mx = -Infinity;
    for (let i = lp.length - 1; i >= 0; i--) if (lp[i] > mx) mx = lp[i];
    if (!Number.isFinite(mx)) return mx;
    let s = 0;
    for (let i = lp.length - 1; i >= 0; i--) s += Math.exp(lp[i] - mx);
    return mx + Math.log(s);
}

// ---- own mode: xoshiro128** seeded through splitmix32; Laplace by inversion; Gumbel-max -------

class Generator {
    constructor(seed) {
        let x = seed >>> 0;
        const split = () => {  // splitmix32
            x = (x + 0x9e3779b9) >>> 0;
            let z = x;
            z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
            z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
            return (z ^ (z >>> 16)) >>> 0;
        };
        this.s = Uint32Array.from([split(), split(), split(), split()]);
        if ((this.s[0] | this.s[1] | this.s[2] | this.s[3]) === 0) this.s[0] = 1;
    }

    next32() {
        const s = this.s;
        const rotl = (v, k) => (v << k) | (v >>> (32 - k));
        const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
        const t = s[1] << 9;
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
        s[3] = rotl(s[3], 11);
        return result;
    }

    uniform() {  // in (0, 1), 53 bits
        for (;;) {
            const k = (this.next32() >>> 5) * 67108864 + (this.next32() >>> 6);
            if (k !== 0) return k / 9007199254740992;
        }
    }

    laplace(b) {
        const d = this.uniform() - 0.5;
        return -b * (d < 0 ? -1 : 1) * Math.log(1 - 2 * Math.abs(d));
    }

    // P[i] proportional to exp(epsilon scores[i] / (2 sensitivity)): argmax of utility + Gumbel.
    exponential(scores, epsilon, sensitivity) {
        let best = 0, bestValue = -Infinity;
        for (let i = 0; i < scores.length; i++) {
            const v = (epsilon * scores[i]) / (2 * sensitivity) - Math.log(-Math.log(this.uniform()));
            if (v > bestValue) { bestValue = v; best = i; }
        }
        return best;
    }
}

// ---- draws: asked of the harness (tape) or drawn here (own) -----------------------------------

function askTape(site, kind, params) {
    say({draw: {site, kind, params}});
    const line = nextLine();
    if (line === null) throw new EndOfInput();
    let answer;
    try { answer = JSON.parse(line); } catch (e) { refuse(`draw ${site}: the answer is not JSON`); }
    if (!isObject(answer) || Object.keys(answer).length !== 1 || !('value' in answer)) {
        refuse(`draw ${site}: the answer must be {"value": V} (got ${show(answer)})`);
    }
    return answer.value;
}

// transcript mode: every draw reported with the parameters and value actually used
function record(noise, site, kind, params, value) {
    if (noise.mode === 'transcript') noise.draws.push({site, kind, params, value});
    return value;
}

function drawLaplace(noise, site, scale) {
    if (noise.mode !== 'tape') return record(noise, site, 'laplace', {scale}, noise.generator.laplace(scale));
    const v = askTape(site, 'laplace', {scale});
    if (!isFiniteNumber(v)) refuse(`draw ${site}: a laplace value must be a finite number (got ${show(v)})`);
    return v;
}

function drawExponential(noise, site, scores, epsilon, sensitivity) {
    if (MISTAKE === 'score') scores = [scores[0] + 1, ...scores.slice(1)];
    if (noise.mode !== 'tape') {
        const v = noise.generator.exponential(scores, epsilon, sensitivity);
        return record(noise, site, 'exponential_mechanism', {scores, epsilon, sensitivity}, v);
    }
    const v = askTape(site, 'exponential_mechanism', {scores, epsilon, sensitivity});
    if (!isInteger(v) || v < 0 || v >= scores.length) refuse(`draw ${site}: index out of range (got ${show(v)})`);
    return v;
}

// ---- parameters: domain, queries, sizes --------------------------------------------------------

const MAX_CELLS = 65536;  // not in the docs: what `dpstream serve` refuses above (MW-QUESTIONS.md)

function parseDomain(d) {
    if (!isObject(d)) refuse(`params.domain: must be {"names": [...], "sizes": [...]} (got ${show(d)})`);
    onlyKeys(d, ['names', 'sizes'], 'params.domain');
    const {names, sizes} = d;
    if (!Array.isArray(names) || !names.every((n) => typeof n === 'string' && n !== '') || new Set(names).size !== names.length) {
        refuse(`params.domain.names: distinct non-empty strings (got ${show(names)})`);
    }
    if (!Array.isArray(sizes) || !sizes.every((s) => isInteger(s) && s >= 1)) {
        refuse(`params.domain.sizes: an array of integers >= 1 (got ${show(sizes)})`);
    }
    if (names.length !== sizes.length) refuse('params.domain: one size per attribute name');
    if (sizes.length === 0) refuse('params.domain: at least one attribute');
    let n = 1;
    for (const s of sizes) { n *= s; if (n > MAX_CELLS) refuse(`params.domain: more than ${MAX_CELLS} cells`); }
    const strides = new Array(sizes.length);  // row-major (C order)
    for (let i = sizes.length - 1, st = 1; i >= 0; i--) { strides[i] = st; st *= sizes[i]; }
    return {sizes: sizes.slice(), p: sizes.length, n, strides};
}

// A marginal query {columns, values} has one cell; a workload {columns} one cell per value combination
// of its columns (row-major). Each query keeps `cells`: for every query cell c, the domain cells in it,
// and `cellOf`: the query cell of every domain cell (-1 outside).
function parseQueries(qs, dom, unique) {
    if (!Array.isArray(qs) || qs.length === 0) refuse('params.queries: a non-empty array');
    const seen = new Set();
    let kind = null;
    const out = qs.map((q, qi) => {
        const where = `params.queries[${qi}]`;
        if (!isObject(q)) refuse(`${where}: an object {columns[, values]}`);
        onlyKeys(q, ['columns', 'values'], where);
        const isWorkload = !('values' in q);
        if (kind !== null && kind !== isWorkload) refuse('params.queries: only marginal queries or only workloads');
        kind = isWorkload;
        const cols = q.columns;
        if (!Array.isArray(cols) || cols.length === 0 || !cols.every((c) => isInteger(c) && c >= 0 && c < dom.p)) {
            refuse(`${where}.columns: a non-empty array of columns in [0, ${dom.p})`);
        }
        for (let i = 1; i < cols.length; i++) if (!(cols[i] > cols[i - 1])) refuse(`${where}.columns: strictly increasing`);
        let vals = null;
        if (!isWorkload) {
            vals = q.values;
            if (!Array.isArray(vals) || vals.length !== cols.length) refuse(`${where}.values: one value per column`);
            vals.forEach((v, i) => {
                if (!isInteger(v) || v < 0 || v >= dom.sizes[cols[i]]) refuse(`${where}.values: value outside its attribute's domain`);
            });
        }
        const key = JSON.stringify([cols, vals]);
        if (unique && seen.has(key)) refuse(`params.queries: the query ${key} is there twice`);
        seen.add(key);
        const width = isWorkload ? cols.reduce((w, c) => w * dom.sizes[c], 1) : 1;
        const cells = Array.from({length: width}, () => []);
        const cellOf = new Int32Array(dom.n).fill(-1);
        for (let x = 0; x < dom.n; x++) {
            let c = 0, match = true;
            cols.forEach((col, i) => {
                const v = Math.floor(x / dom.strides[col]) % dom.sizes[col];
                if (isWorkload) c = c * dom.sizes[col] + v;
                else if (v !== vals[i]) match = false;
            });
            if (match) { cells[c].push(x); cellOf[x] = c; }
        }
        return {cells, cellOf, width};
    });
    return {queries: out, workloads: kind};
}

// The common parameters of the three entries (docs/catalog.md).
function parseParams(algorithm, params) {
    if (!isObject(params)) refuse('params: must be an object');
    onlyKeys(params, ['domain', 'queries', 'k', 'epsilon', 'total', 'sizes', 'A_Dataset'], 'params');
    for (const name of ['domain', 'queries', 'k', 'epsilon']) if (!(name in params)) refuse(`params.${name} is required`);
    const dom = parseDomain(params.domain);
    const {queries, workloads} = parseQueries(params.queries, dom, algorithm !== '003-alg1');
    const k = params.k;
    if (!isInteger(k) || k < 1 || k > 1000) refuse(`params.k: an integer in [1, 1000] (got ${show(k)})`);
    if (algorithm !== '003-alg1' && k > queries.length) refuse(`params.k: must not exceed |Q| = ${queries.length}`);
    const eps = params.epsilon;
    if (!isFiniteNumber(eps) || !(eps > 0)) refuse(`params.epsilon: a finite number > 0 (got ${show(eps)})`);
    const scale = (2 * k) / eps;
    const emEpsilon = eps / (2 * k);
    if (!(scale <= 1.8e305) || !(emEpsilon > 0)) refuse(`params.epsilon: the noise scale 2k/epsilon is not finite (got ${eps})`);
    const total = 'total' in params ? params.total : 'public';
    if (total !== 'public' && total !== 'measured') refuse(`params.total: "public" or "measured" (got ${show(total)})`);
    const fitter = 'A_Dataset' in params ? params.A_Dataset : 'mw';
    if (fitter !== 'mw' && fitter !== 'mw-all') refuse(`params.A_Dataset: "mw" or "mw-all" (got ${show(fitter)})`);
    let sizes = null;
    if (total === 'public') {
        sizes = params.sizes;
        if (!Array.isArray(sizes)) refuse(`params.sizes: total "public" needs an array (got ${show(sizes)})`);
        if (!sizes.every((s) => isFiniteNumber(s) && s >= 0)) refuse('params.sizes: public sizes are finite numbers >= 0');
        if (algorithm === '003-alg1' && sizes.length !== 1) refuse('params.sizes: the offline box takes one public size');
    } else {
        if ('sizes' in params) refuse('params.sizes: only used with total "public"');
        if (!workloads) refuse('params.total: "measured" needs workloads');
    }
    const minWidth = Math.min(...queries.map((q) => q.width));
    const horizon = algorithm === '003-alg1' ? 1 : sizes === null ? Infinity : sizes.length;
    return {
        algorithm, dom, queries, workloads, k, eps, total, fitter, sizes, horizon,
        // the planted mistakes `scale` (more noise: no leak) and `leak-scale` (less: a leak)
        scale: MISTAKE === 'scale' ? scale * 1.5 : MISTAKE === 'leak-scale' ? scale / 2 : scale,
        weightScale: scale,                                // b of the measured total's weights
        emEpsilon: MISTAKE === 'leak-selection' ? 2 * emEpsilon : emEpsilon,  // the planted leak `leak-selection`
        sensitivity: workloads ? 1 / minWidth : 1,
    };
}

// ---- datasets, answers, scores ----------------------------------------------------------------

// q(h): one number per query cell, each a sum over its domain cells (last to first).
function answer(q, h) {
    return q.cells.map((xs) => {
        let s = 0;
        for (let i = xs.length - 1; i >= 0; i--) s += h[xs[i]];
        return s;
    });
}

// |a - b| for a marginal query; for a workload the mean over its cells minus the bias.
function score(q, workloads, target, current, bias) {
    const d = target.map((a, c) => Math.abs(a - current[c]));
    return workloads ? rsum(d) / q.width - bias : d[0];
}

// The inverse-variance weighted mean of the measured workloads' sums, clipped at 0.
function measuredTotal(measurements, b) {
    const w = measurements.map(({q}) => 1 / (q.width * b * b));
    const ws = measurements.map(({q, m}, i) => w[i] * rsum(m));
    return Math.max(0, rsum(ws) / rsum(w));
}

// ---- A_Dataset: multiplicative weights in log space --------------------------------------------

// From the dataset `init` and the mass N, one MW step per (q, m) of `steps`, in order. Returns N p.
function mwFit(init, steps, N, n) {
    if (N === 0) return new Float64Array(n);
    const lp = new Float64Array(n);
    const total = rsum(init);
    if (total > 0 && init.every((v) => v >= 0)) {
        for (let x = 0; x < n; x++) lp[x] = Math.log(init[x]);
        const z = logSumExp(lp);
        for (let x = 0; x < n; x++) lp[x] -= z;
    } else {
        lp.fill(-Math.log(n));
    }
    for (const {q, m} of steps) {
        // N q_c(p) as the sum over the cells x of q's cell c of N p(x)
        const a = q.cells.map((xs, c) => {
            let nq = 0;
            for (let i = xs.length - 1; i >= 0; i--) nq += N * Math.exp(lp[xs[i]]);
            const v = (m[c] - nq) / (2 * N);
            return Math.min(1e300, Math.max(-1e300, v));
        });
        for (let x = 0; x < n; x++) if (q.cellOf[x] >= 0) lp[x] += a[q.cellOf[x]];
        const z = logSumExp(lp);
        for (let x = 0; x < n; x++) lp[x] -= z;
    }
    const h = new Float64Array(n);
    for (let x = 0; x < n; x++) h[x] = N * Math.exp(lp[x]);
    return h;
}

// (h_1 + ... + h_k) / k, each cell summed from the last dataset to the first.
function average(hs, n) {
    const g = new Float64Array(n);
    for (let x = 0; x < n; x++) {
        let s = 0;
        for (let l = hs.length - 1; l >= 0; l--) s += hs[l][x];
        g[x] = s / hs.length;
    }
    return g;
}

function fit(cfg, init, measurements, N) {
    const steps = cfg.fitter === 'mw' ? measurements.slice(-1) : measurements;
    return mwFit(init, steps, N, cfg.dom.n);
}

// ---- inputs: records and batches ---------------------------------------------------------------

function cellOfRecord(dom, r, where) {
    if (!Array.isArray(r)) refuse(`${where}: a record is an array of ${dom.p} integer codes (got ${show(r)})`);
    if (r.length !== dom.p) refuse(`${where}: a record has p = ${dom.p} values (got ${show(r)})`);
    let x = 0;
    r.forEach((v, i) => {
        if (!isInteger(v)) refuse(`${where}: values are integer codes (got ${show(v)})`);
        if (v < 0 || v >= dom.sizes[i]) refuse(`${where}: value ${v} outside attribute ${i}'s domain [0, ${dom.sizes[i]})`);
        x += v * dom.strides[i];
    });
    return x;
}

// A batch {added, removed} -> nabla f_t (signed counts); every removed record must be present
// afterwards (f_{t-1} + nabla f_t >= 0 on every cell).
function parseBatch(cfg, present, input, where) {
    if (!isObject(input)) refuse(`${where}: a step is a JSON object {"added": [...], "removed": [...]}`);
    onlyKeys(input, ['added', 'removed'], where);
    if (!Array.isArray(input.added) || !Array.isArray(input.removed)) refuse(`${where}: a step has arrays "added" and "removed"`);
    const nabla = new Float64Array(cfg.dom.n);
    input.added.forEach((r, i) => { nabla[cellOfRecord(cfg.dom, r, `${where}.added[${i}]`)] += 1; });
    input.removed.forEach((r, i) => { nabla[cellOfRecord(cfg.dom, r, `${where}.removed[${i}]`)] -= 1; });
    const next = present.slice();
    for (let x = 0; x < cfg.dom.n; x++) {
        next[x] += nabla[x];
        if (next[x] < 0) refuse(`${where}: removes a record that is not present (cell ${x})`);
    }
    return {nabla, next};
}

function parseDataset(cfg, input, where) {
    if (!Array.isArray(input)) refuse(`${where}: a dataset is a JSON array of records`);
    const f = new Float64Array(cfg.dom.n);
    input.forEach((r, i) => { f[cellOfRecord(cfg.dom, r, `${where}[${i}]`)] += 1; });
    return f;
}

// ---- 003-alg2: StreamingMWEM ------------------------------------------------------------------

const streamingMWEM = {
    fresh(cfg) {
        return {t: 0, g: new Float64Array(cfg.dom.n), present: new Float64Array(cfg.dom.n), lastMass: 0};
    },

    check(cfg, state, input, where) {
        if (state.t >= cfg.horizon) refuse(`${where}: step ${state.t + 1} is past T = ${cfg.horizon} (the public sizes)`);
        return parseBatch(cfg, state.present, input, where);
    },

    step(cfg, state, {nabla, next}, noise) {
        const t = state.t + 1, n = cfg.dom.n, Q = cfg.queries;
        const mass = (M) => cfg.total === 'public' ? cfg.sizes[t - 1] : measuredTotal(M, cfg.weightScale);
        const firstMass = cfg.total === 'public' ? cfg.sizes[t - 1] : state.lastMass;
        let h = new Float64Array(n).fill(firstMass / n);  // h_{t,0}: uniform of mass N_t
        const targets = Q.map((q) => answer(q, nabla));
        const selected = new Set(), measurements = [], hs = [];
        let N = firstMass;
        for (let l = 1; l <= cfg.k; l++) {
            const J = [];
            for (let i = 0; i < Q.length; i++) if (!selected.has(i)) J.push(i);
            const scores = J.map((i) => score(Q[i], cfg.workloads, targets[i], answer(Q[i], h), 0));
            const j = J[drawExponential(noise, `003-alg2 L11 t=${t} l=${l}`, scores, cfg.emEpsilon, cfg.sensitivity)];
            selected.add(j);
            const m = targets[j].map((v, c) => v + drawLaplace(noise, `003-alg2 L16 t=${t} l=${l} cell=${c}`, cfg.scale));
            measurements.push({q: Q[j], m});
            N = mass(measurements);
            h = fit(cfg, h, measurements, N);
            hs.push(h);
        }
        const avg = average(hs, n);
        const g = new Float64Array(n);
        for (let x = 0; x < n; x++) g[x] = state.g[x] + avg[x];
        return {release: g, state: {t, g, present: next, lastMass: N}};
    },
};

// ---- 003-alg1: MWEM (select, measure, fit), one-shot -----------------------------------------------

const mwem = {
    fresh() {
        return {t: 0};
    },

    check(cfg, state, input, where) {
        if (state.t >= 1) refuse(`${where}: the offline box is one-shot: a second input is past T = 1`);
        return parseDataset(cfg, input, where);
    },

    step(cfg, state, f, noise) {
        const n = cfg.dom.n, Q = cfg.queries;
        let h = new Float64Array(n).fill(1);  // h_0 = 1
        const targets = Q.map((q) => answer(q, f));
        const measurements = [];
        for (let i = 1; i <= cfg.k; i++) {
            const scores = Q.map((q, qi) => score(q, cfg.workloads, targets[qi], answer(q, h), 0));
            const j = drawExponential(noise, `003-alg1 L7 i=${i}`, scores, cfg.emEpsilon, cfg.sensitivity);
            const m = targets[j].map((v, c) => v + drawLaplace(noise, `003-alg1 L8 i=${i} cell=${c}`, cfg.scale));
            measurements.push({q: Q[j], m});
            const N = cfg.total === 'public' ? cfg.sizes[0] : measuredTotal(measurements, cfg.weightScale);
            h = fit(cfg, h, measurements, N);
        }
        return {release: h, state: {t: 1}};
    },
};

// ---- 003-alg3: the main algorithm with Simple counters ---------------------------------------------

const mainAlgorithm = {
    fresh(cfg) {
        const n = cfg.dom.n;
        return {
            t: 0,
            g: new Float64Array(n).fill(1),              // g_0 = 1 (L4)
            present: new Float64Array(n),
            C: cfg.queries.map((q) => new Array(q.width).fill(0)),  // C_i(0) = 0
            r: cfg.queries.map((q) => new Array(q.width).fill(0)),  // r(0, i) = 0
            steps: cfg.queries.map(() => 0),             // local time of every counter C_i
        };
    },

    check(cfg, state, input, where) {
        if (state.t >= cfg.horizon) refuse(`${where}: step ${state.t + 1} is past T = ${cfg.horizon} (the public sizes)`);
        return parseBatch(cfg, state.present, input, where);
    },

    step(cfg, state, {nabla, next}, noise) {
        const t = state.t + 1, n = cfg.dom.n, Q = cfg.queries;
        const deltas = Q.map((q) => answer(q, nabla));                       // q_i(nabla f_t)
        const targets = Q.map((q, i) => {                                     // q_i(nabla f_t) + q_i(g_{t-1})
            const old = answer(q, state.g);
            return deltas[i].map((v, c) => v + old[c]);
        });
        const publicMass = cfg.total === 'public' ? rsum(cfg.sizes.slice(0, t)) : null;
        const C = state.C.map((c) => c.slice()), steps = state.steps.slice();
        const selected = [], measurements = [], hs = [];
        let h = state.g;                                                      // h_{t,0} = g_{t-1}
        for (let l = 1; l <= cfg.k; l++) {
            const J = [];
            for (let i = 0; i < Q.length; i++) if (!selected.includes(i)) J.push(i);
            const scores = J.map((i) => score(Q[i], cfg.workloads, targets[i], answer(Q[i], h), cfg.workloads ? Q[i].width : 0));
            const j = J[drawExponential(noise, `003-alg3 L12 t=${t} l=${l}`, scores, cfg.emEpsilon, cfg.sensitivity)];
            selected.push(j);
            steps[j] += 1;                                                    // C_j steps on q_j(nabla f_t)
            const scope = `003-alg3 L3 i=${j}`;
            C[j] = C[j].map((v, c) => {
                const site = cfg.workloads ? `${scope} / 001-sec4.3 i=${c} / 001-alg8 L4 t=${steps[j]}`
                    : `${scope} / 001-alg8 L4 t=${steps[j]}`;
                return v + (deltas[j][c] + drawLaplace(noise, site, cfg.scale));
            });
            measurements.push({q: Q[j], m: C[j].map((v, c) => v + state.r[j][c])});  // m(t, j) = C_j(t) + r(t-1, j)
            const N = publicMass !== null ? publicMass : measuredTotal(measurements, cfg.weightScale);
            h = fit(cfg, h, measurements, N);
            hs.push(h);
        }
        const g = average(hs, n);                                             // g_t = avg_l h_{t,l}
        const r = Q.map((q, i) => {                                           // L20-L21
            if (selected.includes(i)) return state.r[i];
            const qa = answer(q, g);
            return qa.map((v, c) => v - C[i][c]);
        });
        return {release: g, state: {t, g, present: next, C, r, steps}};
    },
};

const ALGORITHMS = {'003-alg2': streamingMWEM, '003-alg1': mwem, '003-alg3': mainAlgorithm};

// ---- the session -----------------------------------------------------------------------------------

let session = null;  // {algorithm, cfg, state, noise}

function ready(op) {
    if (session === null) refuse(`${op} before a successful init`);
    return session;
}

// One step on a copy of the state, committed by the caller: validate, draw, check the release.
function advance(s, state, input, where) {
    const checked = s.algorithm.check(s.cfg, state, input, where);
    const out = s.algorithm.step(s.cfg, state, checked, s.noise);
    const release = Array.from(out.release, (v) => (MISTAKE === 'release' ? v * (1 + 1e-6) : v));
    if (!release.every(Number.isFinite)) refuse(`${where}: the release would not be finite`);
    return {release, state: out.state};
}

const OPS = {
    hello(msg) {
        return {
            protocol: 1,
            implementation: `mw.js outside implementation (log-space MW, reversed sums)${MISTAKE ? `, mistake ${MISTAKE}` : ''}`,
            algorithms: Object.keys(ALGORITHMS),
            modes: ['tape', 'own', 'transcript'],
        };
    },

    init(msg) {
        onlyKeys(msg, ['op', 'algorithm', 'params', 'noise', 'seed'], 'init');
        if (typeof msg.algorithm !== 'string' || !Object.hasOwn(ALGORITHMS, msg.algorithm)) {
            refuse(`algorithm: one of ${Object.keys(ALGORITHMS).join(', ')} (got ${show(msg.algorithm)})`);
        }
        if (!['tape', 'own', 'transcript'].includes(msg.noise)) refuse(`noise: "tape", "own" or "transcript" (got ${show(msg.noise)})`);
        if (!isInteger(msg.seed) || msg.seed < 0 || msg.seed >= 2 ** 32) refuse(`seed: an integer in [0, 2^32) (got ${show(msg.seed)})`);
        const cfg = parseParams(msg.algorithm, msg.params);
        const algorithm = ALGORITHMS[msg.algorithm];
        const noise = msg.noise === 'tape' ? {mode: 'tape'} : {mode: msg.noise, generator: new Generator(msg.seed), draws: []};
        session = {algorithm, cfg, state: algorithm.fresh(cfg), noise};
        return {ok: true};
    },

    step(msg) {
        onlyKeys(msg, ['op', 'input'], 'step');
        const s = ready('step');
        if (!('input' in msg)) refuse('step needs the key input');
        s.noise.draws = [];
        const out = advance(s, s.state, msg.input, 'input');
        s.state = out.state;
        return s.noise.mode === 'transcript' ? {release: out.release, draws: s.noise.draws} : {release: out.release};
    },

    run(msg) {  // a fresh run over a whole stream; the step-by-step run is untouched
        onlyKeys(msg, ['op', 'inputs'], 'run');
        const s = ready('run');
        if (!Array.isArray(msg.inputs)) refuse('inputs: must be an array');
        let state = s.algorithm.fresh(s.cfg);
        s.noise.draws = [];
        const releases = [];
        msg.inputs.forEach((x, i) => {
            const out = advance(s, state, x, `inputs[${i}]`);
            state = out.state;
            releases.push(out.release);
        });
        return s.noise.mode === 'transcript' ? {releases, draws: s.noise.draws} : {releases};
    },
};

function handle(line) {
    if (line.trim() === '') refuse('empty line: one JSON object per line');
    let msg;
    try { msg = JSON.parse(line); } catch (e) { refuse(`not a JSON line: ${e.message}`); }
    if (!isObject(msg)) refuse('a message must be a JSON object');
    if (typeof msg.op !== 'string' || !Object.hasOwn(OPS, msg.op)) refuse(`op: one of ${Object.keys(OPS).join(', ')} (got ${show(msg.op)})`);
    return OPS[msg.op](msg);
}

for (let line = nextLine(); line !== null; line = nextLine()) {
    let reply;
    try {
        reply = handle(line);
    } catch (e) {
        if (e instanceof EndOfInput) break;
        if (!(e instanceof Refused)) {
            if (e instanceof RangeError || e instanceof TypeError) reply = {error: `internal: ${e.message}`};
            else throw e;
        } else reply = {error: e.message};
    }
    say(reply);
}
