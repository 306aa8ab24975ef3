#!/usr/bin/env node
// cumulative.js - 002-alg2, "Private synthetic data preserving cumulative queries" (Bun, Gaboardi,
// Neunhoeffer, Zhang 2024), with one tree-aggregation counter (002-alg3, discrete Gaussian, rho-zCDP)
// per threshold b, written OUTSIDE dpstream from its public docs only (docs/conformance.md,
// docs/longitudinal.md, docs/counters.md, docs/tape-format.md, docs/catalog.md, docs/errata/longitudinal.md,
// the protocol's JSON Schema, `dpstream serve --describe` and the 002-alg2 vectors' data). It speaks the
// conformance protocol v1: JSON lines on stdin/stdout, modes tape, own and transcript, bulk op `runs`.
//
// Usage:  node cumulative.js [FAULT]
//
// FAULT (one of; default `none`):
//   none            correct: counter b (created at t = b, horizon T_b = T - b + 1) gets rho_b / 2
//                   (E-longitudinal-7) and draws N_Z(0, sigma2) per node, sigma2 = bit_length(T_b) / rho_b
//   variance/2.25   every discrete Gaussian variance divided by 2.25 (sigma / 1.5): a budget-level leak,
//                   2.25 rho on a pair that moves every counter as the accountant says
//   variance/3      every discrete Gaussian variance divided by 3
//   noiseless-b1    counter b = 1 releases its p-sums without noise (no draw at its sites): a gross leak
//   own-rng         CORRECT control: another generator (sfc32 instead of xoshiro128**), same laws
// A fault changes the program in every mode (tape mode asks for the faulty parameters too), and transcript
// mode reports honestly the draws actually made, with the parameters actually used.
//
// What it computes (round t, column x^t of the n reports; docs/longitudinal.md "Cumulative time synthesizer"
// and "On the wire"):
//   * budgets: rho_b given, or Corollary B.1's rho_b = rho L_b^3 / sum_b' L_b'^3, L_b = max(ceil(log2(T-b+1)), 1);
//   * z_b^t = #individuals of true weight b - 1 before round t reporting 1; counter b (local time tau = t - b + 1)
//     steps with it: p-sum alpha_j of the dyadic node (tau - 2^j, tau], j = lsb(tau), noised with a
//     `discrete_gaussian` at '002-alg2 u5 b=<b> / 002-alg3 u8 t=<tau>'; S~_b^t = sum of the noisy p-sums of the
//     set bits of tau;
//   * clamp S^_b^t = min(max(S~_b^t, S^_b^{t-1}), S^_{b-1}^{t-1}), S^_0 = n, S^_b^{b-1} = 0;
//   * for b = 1..t a `choice` at '002-alg2 u8 t=<t> b=<b>' of k = S^_b^t - S^_b^{t-1} of the n' synthetic
//     records of weight b - 1 before round t (increasing index): they report 1 at t (drawn also when k = 0 or n);
//   * release {"column": the n synthetic reports of round t, "S_hat": [n, S^_1^t, ..., S^_t^t]}.
//
// Evaluation order (deliberately NOT the obvious one, to exercise the kit's error model):
//   * sigma2 = (bit_length(T_b) * sum L^3) / (rho * L_b^3) for the default budgets (one division, the
//     products first), instead of bit_length / (2 * (rho L_b^3 / sum L^3 / 2)); with rho_b given,
//     bit_length / rho_b (2 * (rho_b / 2) is rho_b exactly);
//   * the counter's release adds its noisy p-sums from the HIGHEST set bit to the lowest, and a p-sum
//     adds the older p-sums from the highest level down (integers: exact either way);
//   * the rho_b sum check sums from the last budget to the first.
//
// Own-mode randomness: xoshiro128** (Blackman, Vigna) seeded through splitmix32 from init's seed (own-rng:
// sfc32 seeded the same way). Uniforms on (0, 1] with 53 bits. The discrete Gaussian is Canonne, Kamath and
// Steinke's (2020) Algorithm 3 in floating point: Y ~ discrete Laplace with scale t = floor(sigma) + 1 (a
// signed geometric variable by inversion, the (-, 0) outcome rejected), accepted with probability
// exp(-(|Y| - sigma2/t)^2 / (2 sigma2)). The choice is a partial Fisher-Yates shuffle (unbiased integers by
// rejection), sorted. NOT float-safe (floating-point exp/log): a test program, never for releasing data.
//
// Input rules (docs/conformance.md, "step", and the 002-alg2 must-reject vectors): a column is a flat JSON
// array of numbers 0 or 1 (1.0 is 1; booleans, strings, fractions, 2, -1 refused), of n entries once the
// first column of the run fixed n (n = 0 allowed); a step past T is refused. Params: T an integer in
// [1, 65536], rho a finite number > 0, rho_b (optional, never null) an array of T finite numbers > 0 whose sum
// is rho up to a relative 1e-9 (the docs do not say how close; see CUMULATIVE-QUESTIONS.md); unknown keys
// refused; a sigma2 that is not finite, 0 or above 1e30 (docs/tape-format.md's range) refused at init.
'use strict';

const fs = require('fs');

const FAULTS = ['none', 'variance/2.25', 'variance/3', 'noiseless-b1', 'own-rng'];
const args = process.argv.slice(2);
if (args.length > 1 || (args.length === 1 && !FAULTS.includes(args[0]))) {
    process.stderr.write(`cumulative.js: usage: node cumulative.js [${FAULTS.join('|')}]\n`);
    process.exit(2);
}
const FAULT = args.length === 1 ? args[0] : 'none';
const VARIANCE_DIVISOR = FAULT === 'variance/2.25' ? 2.25 : FAULT === 'variance/3' ? 3 : 1;

// ---- errors ---------------------------------------------------------------------------------------

class Refused extends Error {}
class EndOfInput extends Error {}

function refuse(message) {
    throw new Refused(message);
}

function describe(value) {
    if (value === undefined) return 'missing';
    let text;
    try {
        text = JSON.stringify(value);
    } catch (e) {
        text = String(value);
    }
    if (text === undefined) text = String(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

// ---- line I/O (synchronous, so that a draw request can wait for its answer mid-step) -------------

class LineReader {
    constructor(fd) {
        this.fd = fd;
        this.buffer = Buffer.alloc(1 << 20);
        this.pending = [];
        this.lines = [];
        this.head = 0;
        this.eof = false;
    }

    next() {
        while (this.head >= this.lines.length) {
            if (this.lines.length > 0) {
                this.lines = [];
                this.head = 0;
            }
            if (this.eof) {
                if (this.pending.length === 0) return null;
                const last = Buffer.concat(this.pending).toString('utf8');
                this.pending = [];
                return last;
            }
            this.fill();
        }
        return this.lines[this.head++];
    }

    fill() {
        let n;
        try {
            n = fs.readSync(this.fd, this.buffer, 0, this.buffer.length, null);
        } catch (error) {
            if (error.code === 'EAGAIN') {
                Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
                return;
            }
            if (error.code === 'EOF') n = 0;
            else throw error;
        }
        if (n === 0) {
            this.eof = true;
            return;
        }
        let start = 0;
        for (let i = 0; i < n; i++) {
            if (this.buffer[i] === 0x0a) {
                this.pending.push(Buffer.from(this.buffer.subarray(start, i)));
                this.lines.push(Buffer.concat(this.pending).toString('utf8'));
                this.pending = [];
                start = i + 1;
            }
        }
        if (start < n) this.pending.push(Buffer.from(this.buffer.subarray(start, n)));
    }
}

const input = new LineReader(0);

function say(message) {
    const bytes = Buffer.from(`${JSON.stringify(message)}\n`, 'utf8');
    let offset = 0;
    while (offset < bytes.length) {
        try {
            offset += fs.writeSync(1, bytes, offset, bytes.length - offset);
        } catch (error) {
            if (error.code !== 'EAGAIN') throw error;
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
        }
    }
}

// ---- generators --------------------------------------------------------------------------------

function splitmix32(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x9e3779b9) | 0;
        let z = a ^ (a >>> 16);
        z = Math.imul(z, 0x21f0aaad);
        z ^= z >>> 15;
        z = Math.imul(z, 0x735a2d97);
        z ^= z >>> 15;
        return z >>> 0;
    };
}

function rotl(x, k) {
    return (x << k) | (x >>> (32 - k));
}

// xoshiro128** (32-bit outputs)
class Xoshiro128 {
    constructor(seed) {
        const sm = splitmix32(seed);
        this.s = new Uint32Array([sm(), sm(), sm(), sm()]);
        if ((this.s[0] | this.s[1] | this.s[2] | this.s[3]) === 0) this.s[0] = 1;
    }

    next32() {
        const s = this.s;
        const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
        const t = s[1] << 9;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 11);
        return result;
    }
}

// sfc32 (Doty-Humphrey), the own-rng control
class Sfc32 {
    constructor(seed) {
        const sm = splitmix32(seed ^ 0x5bd1e995);
        this.a = sm() | 0;
        this.b = sm() | 0;
        this.c = sm() | 0;
        this.d = 1;
        for (let i = 0; i < 15; i++) this.next32();
    }

    next32() {
        const t = (((this.a + this.b) | 0) + this.d) | 0;
        this.d = (this.d + 1) | 0;
        this.a = this.b ^ (this.b >>> 9);
        this.b = (this.c + (this.c << 3)) | 0;
        this.c = (this.c << 21) | (this.c >>> 11);
        this.c = (this.c + t) | 0;
        return t >>> 0;
    }
}

class Random {
    constructor(seed) {
        this.g = FAULT === 'own-rng' ? new Sfc32(seed) : new Xoshiro128(seed);
    }

    // uniform on {1, ..., 2^53} / 2^53, i.e. (0, 1]
    uniform() {
        const k = (this.g.next32() >>> 5) * 67108864 + (this.g.next32() >>> 6);
        return (k + 1) / 9007199254740992;
    }

    bit() {
        return this.g.next32() >>> 31;
    }

    // uniform on {0, ..., m - 1}, 1 <= m <= 2^32, unbiased (rejection)
    below(m) {
        if (m === 1) return 0;
        const limit = 4294967296 - (4294967296 % m);
        for (;;) {
            const r = this.g.next32();
            if (r < limit) return r % m;
        }
    }
}

// discrete Laplace with scale t: P[y] proportional to exp(-|y| / t)
function discreteLaplace(rng, t) {
    for (;;) {
        const m = Math.floor(-t * Math.log(rng.uniform()));
        const negative = rng.bit();
        if (negative === 1 && m === 0) continue;
        return negative === 1 ? -m : m;
    }
}

// discrete Gaussian N_Z(0, sigma2), Canonne-Kamath-Steinke 2020, Algorithm 3, in floating point
function discreteGaussian(rng, sigma2) {
    const t = Math.floor(Math.sqrt(sigma2)) + 1;
    const centre = sigma2 / t;
    for (;;) {
        const y = discreteLaplace(rng, t);
        const d = Math.abs(y) - centre;
        if (rng.uniform() <= Math.exp(-(d * d) / (2 * sigma2))) return y === 0 ? 0 : y;  // no -0
    }
}

// uniform k-subset of {0..n-1}, sorted
function choice(rng, n, k, scratch) {
    for (let i = 0; i < n; i++) scratch[i] = i;
    for (let i = 0; i < k; i++) {
        const j = i + rng.below(n - i);
        const x = scratch[i];
        scratch[i] = scratch[j];
        scratch[j] = x;
    }
    return Array.from(scratch.subarray(0, k).sort());
}

// ---- noise sources ---------------------------------------------------------------------------------

function isObject(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isFiniteNumber(v) {
    return typeof v === 'number' && Number.isFinite(v);
}

function isSafeInteger(v) {
    return typeof v === 'number' && Number.isSafeInteger(v);
}

function askTape(site, kind, params) {
    say({draw: {site, kind, params}});
    const line = input.next();
    if (line === null) throw new EndOfInput();
    let answer;
    try {
        answer = JSON.parse(line);
    } catch (error) {
        refuse(`draw ${site}: the answer is not JSON`);
    }
    if (!isObject(answer) || !Object.hasOwn(answer, 'value') || Object.keys(answer).length !== 1) {
        refuse(`draw ${site}: the answer must be {"value": V} (got ${describe(answer)})`);
    }
    return answer.value;
}

// A noise source: tape (asks the harness), own (its generator), transcript (own + a record of every draw).
class Noise {
    constructor(mode, seed) {
        this.mode = mode;
        this.rng = mode === 'tape' ? null : new Random(seed);
        this.record = null;  // transcript: the draws of the current step / run
        this.scratch = new Int32Array(16);
    }

    gaussian(site, sigma2) {
        let value;
        if (this.mode === 'tape') {
            value = askTape(site, 'discrete_gaussian', {sigma2});
            if (!isSafeInteger(value)) refuse(`draw ${site}: a discrete_gaussian value is an integer (got ${describe(value)})`);
        } else {
            value = discreteGaussian(this.rng, sigma2);
            if (this.record !== null) {
                this.record.push({site, kind: 'discrete_gaussian', params: {sigma2}, value});
            }
        }
        return value;
    }

    choice(site, n, k) {
        let value;
        if (this.mode === 'tape') {
            value = askTape(site, 'choice', {n, k});
            let ok = Array.isArray(value) && value.length === k;
            for (let i = 0; ok && i < value.length; i++) {
                ok = isSafeInteger(value[i]) && value[i] >= 0 && value[i] < n && (i === 0 || value[i] > value[i - 1]);
            }
            if (!ok) refuse(`draw ${site}: a choice value is a sorted list of ${k} distinct integers in [0, ${n}) (got ${describe(value)})`);
        } else {
            if (this.scratch.length < n) this.scratch = new Int32Array(Math.max(n, 2 * this.scratch.length));
            value = choice(this.rng, n, k, this.scratch);
            if (this.record !== null) this.record.push({site, kind: 'choice', params: {n, k}, value});
        }
        return value;
    }
}

// ---- parameters ------------------------------------------------------------------------------------

const MAX_T = 65536;
const MAX_SIGMA2 = 1e30;

// floor(log2 m) + 1 for an integer m >= 1
function bitLength(m) {
    let n = 0;
    for (let u = m; u >= 1; u = Math.floor(u / 2)) n++;
    return n;
}

// ceil(log2 m) for an integer m >= 1: the least c with 2^c >= m
function ceilLog2(m) {
    let c = 0;
    while (2 ** c < m) c++;
    return c;
}

function configure(params) {
    if (!isObject(params)) refuse(`params: must be an object (got ${describe(params)})`);
    for (const key of Object.keys(params)) {
        if (!['T', 'rho', 'rho_b'].includes(key)) refuse(`params: unknown parameter ${JSON.stringify(key)} (002-alg2 takes T, rho, rho_b)`);
    }
    const T = params.T;
    if (T === undefined) refuse('params.T: required');
    if (typeof T !== 'number' || !Number.isInteger(T)) refuse(`params.T: must be an integer (got ${describe(T)})`);
    if (T < 1 || T > MAX_T) refuse(`params.T: must be an integer in [1, ${MAX_T}] (got ${describe(T)})`);
    const rho = params.rho;
    if (rho === undefined) refuse('params.rho: required');
    if (!isFiniteNumber(rho)) refuse(`params.rho: must be a finite number (got ${describe(rho)})`);
    if (!(rho > 0)) refuse(`params.rho: must be > 0 (got ${describe(rho)})`);

    const sigma2 = new Float64Array(T + 1);  // sigma2[b], b = 1..T
    if (Object.hasOwn(params, 'rho_b')) {
        const rb = params.rho_b;
        if (!Array.isArray(rb)) refuse(`params.rho_b: must be an array of T numbers (got ${describe(rb)})`);
        if (rb.length !== T) refuse(`params.rho_b: must hold T = ${T} budgets (got ${rb.length})`);
        for (let i = 0; i < T; i++) {
            if (!isFiniteNumber(rb[i]) || !(rb[i] > 0)) refuse(`params.rho_b[${i}]: must be a finite number > 0 (got ${describe(rb[i])})`);
        }
        let sum = 0;
        for (let i = T - 1; i >= 0; i--) sum += rb[i];  // last to first
        if (!(Math.abs(sum - rho) <= 1e-9 * Math.max(Math.abs(rho), Math.abs(sum)))) {
            refuse(`params.rho_b: must sum to rho = ${rho} (sums to ${sum})`);
        }
        for (let b = 1; b <= T; b++) {
            // counter b gets rho_b / 2: sigma2 = bit_length(T_b) / (2 (rho_b / 2)) = bit_length(T_b) / rho_b
            sigma2[b] = bitLength(T - b + 1) / rb[b - 1] / VARIANCE_DIVISOR;
        }
    } else {
        const L3 = new Float64Array(T + 1);
        let sumL3 = 0;
        for (let b = T; b >= 1; b--) {
            const L = Math.max(ceilLog2(T - b + 1), 1);
            L3[b] = L * L * L;
            sumL3 += L3[b];
        }
        for (let b = 1; b <= T; b++) {
            // rho_b = rho L_b^3 / sum L^3, counter b gets rho_b / 2, sigma2 = bit_length(T_b) / (2 (rho_b / 2))
            sigma2[b] = (bitLength(T - b + 1) * sumL3) / (rho * L3[b]) / VARIANCE_DIVISOR;
        }
    }
    for (let b = 1; b <= T; b++) {
        if (!Number.isFinite(sigma2[b]) || !(sigma2[b] > 0) || sigma2[b] > MAX_SIGMA2) {
            refuse(`params.${Object.hasOwn(params, 'rho_b') ? 'rho_b' : 'rho'}: counter b = ${b} would need the variance ${sigma2[b]}, outside (0, 1e30]`);
        }
    }
    return {T, sigma2};
}

// ---- the synthesizer -----------------------------------------------------------------------------

const LEVELS = 18;  // bit_length(65536) = 17

function freshState() {
    return {
        t: 0,
        n: -1,                 // fixed by the first column
        w: null,               // true weights (Int32Array n)
        ws: null,              // synthetic weights (Int32Array n)
        sHat: [0],             // S^_0..S^_t of the last round (S^_0 set to n at round 1)
        alpha: [],             // alpha[b]: p-sums of counter b (Float64Array LEVELS)
        alphaHat: [],          // noisy p-sums
    };
}

function cloneState(s) {
    return {
        t: s.t,
        n: s.n,
        w: s.w === null ? null : Int32Array.from(s.w),
        ws: s.ws === null ? null : Int32Array.from(s.ws),
        sHat: s.sHat.slice(),
        alpha: s.alpha.map((a) => (a === undefined ? a : Float64Array.from(a))),
        alphaHat: s.alphaHat.map((a) => (a === undefined ? a : Float64Array.from(a))),
    };
}

// Validate the column of step t + 1; returns it as a Uint8Array. Refuses without any change.
function checkColumn(config, nFixed, t, column, where) {
    if (!Array.isArray(column)) refuse(`${where}: a column is a JSON array of 0/1 reports (got ${describe(column)})`);
    if (t >= config.T) refuse(`${where}: step ${t + 1} is past the horizon T = ${config.T}`);
    const n = nFixed;
    if (n >= 0 && column.length !== n) refuse(`${where}: a column has n = ${n} entries (fixed by the first column), got ${column.length}`);
    const out = new Uint8Array(column.length);
    for (let i = 0; i < column.length; i++) {
        const x = column[i];
        if (typeof x !== 'number') refuse(`${where}[${i}]: a report is a JSON number 0 or 1 (got ${describe(x)})`);
        if (x !== 0 && x !== 1) refuse(`${where}[${i}]: a report must be 0 or 1 (got ${describe(x)})`);
        out[i] = x;
    }
    return out;
}

// One round on `state` (mutated). Returns the release.
function round(config, state, x, noise) {
    const t = state.t + 1;
    if (t === 1) {
        state.n = x.length;
        state.w = new Int32Array(state.n);
        state.ws = new Int32Array(state.n);
        state.sHat = [state.n];
    }
    const n = state.n;
    const prev = state.sHat;  // S^_0..S^_{t-1} of round t - 1 (S^_{t-1}^{t-1} included)

    // u4: z_b^t, b = 1..t: individuals of true weight b - 1 reporting 1
    const z = new Float64Array(t + 1);
    for (let i = 0; i < n; i++) if (x[i] === 1) z[state.w[i] + 1] += 1;

    // u5: every counter steps (counter t is created now), S~_b^t
    const sTilde = new Float64Array(t + 1);
    for (let b = 1; b <= t; b++) {
        if (b === t) {
            state.alpha[b] = new Float64Array(LEVELS);
            state.alphaHat[b] = new Float64Array(LEVELS);
        }
        const alpha = state.alpha[b];
        const alphaHat = state.alphaHat[b];
        const tau = t - b + 1;
        let j = 0;
        while (Math.floor(tau / 2 ** j) % 2 === 0) j++;
        let p = z[b];
        for (let i = j - 1; i >= 0; i--) p += alpha[i];  // highest level first
        let noisy;
        if (FAULT === 'noiseless-b1' && b === 1) {
            noisy = p;
        } else {
            noisy = p + noise.gaussian(`002-alg2 u5 b=${b} / 002-alg3 u8 t=${tau}`, config.sigma2[b]);
        }
        alpha[j] = p;
        alphaHat[j] = noisy;
        for (let i = 0; i < j; i++) alpha[i] = alphaHat[i] = 0;
        let g = 0;
        for (let i = LEVELS - 1; i >= 0; i--) {  // highest set bit first
            if (Math.floor(tau / 2 ** i) % 2 === 1) g += alphaHat[i];
        }
        sTilde[b] = g;
    }

    // u6: the clamp
    const sHat = new Array(t + 1);
    sHat[0] = n;
    for (let b = 1; b <= t; b++) {
        const before = b <= t - 1 ? prev[b] : 0;  // S^_b^{b-1} = 0
        sHat[b] = Math.min(Math.max(sTilde[b], before), prev[b - 1]);
    }

    // u7-u9: the synthetic records of weight b - 1 (before round t), increasing index; k = S^_b^t - S^_b^{t-1}
    const buckets = [];
    for (let b = 0; b < t; b++) buckets.push([]);
    for (let i = 0; i < n; i++) buckets[state.ws[i]].push(i);
    const column = new Array(n).fill(0);
    for (let b = 1; b <= t; b++) {
        const I = buckets[b - 1];
        const before = b <= t - 1 ? prev[b] : 0;
        const k = sHat[b] - before;
        const chosen = noise.choice(`002-alg2 u8 t=${t} b=${b}`, I.length, k);
        for (const c of chosen) column[I[c]] = 1;
    }
    for (let i = 0; i < n; i++) {
        state.w[i] += x[i];
        state.ws[i] += column[i];
    }
    state.sHat = sHat;
    state.t = t;
    return {column, S_hat: sHat};
}

// ---- the session ---------------------------------------------------------------------------------

let session = null;

function ready(op) {
    if (session === null) refuse(`${op} before a successful init`);
    return session;
}

function onlyKeys(message, allowed, where) {
    for (const key of Object.keys(message)) {
        if (!allowed.includes(key)) refuse(`${where}: unknown key ${JSON.stringify(key)}`);
    }
}

function hello(message) {
    onlyKeys(message, ['op'], 'hello');
    return {
        protocol: 1,
        implementation: `outside JS 002-alg2 (cumulative.js, fault ${FAULT})`,
        algorithms: ['002-alg2'],
        modes: ['tape', 'own', 'transcript'],
        ops: ['runs'],
    };
}

function init(message) {
    onlyKeys(message, ['op', 'algorithm', 'params', 'noise', 'seed'], 'init');
    if (message.algorithm !== '002-alg2') refuse(`algorithm: only "002-alg2" (got ${describe(message.algorithm)})`);
    const config = configure(message.params);
    if (!['tape', 'own', 'transcript'].includes(message.noise)) refuse(`noise: must be "tape", "own" or "transcript" (got ${describe(message.noise)})`);
    const seed = message.seed;
    if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed >= 4294967296) {
        refuse(`seed: must be an integer in [0, 2^32) (got ${describe(seed)})`);
    }
    session = {config, state: freshState(), noise: new Noise(message.noise, seed)};
    return {ok: true};
}

function step(message) {
    onlyKeys(message, ['op', 'input'], 'step');
    const s = ready('step');
    if (!Object.hasOwn(message, 'input')) refuse('step: needs the key input');
    const x = checkColumn(s.config, s.state.n, s.state.t, message.input, 'input');
    const state = cloneState(s.state);
    if (s.noise.mode === 'transcript') s.noise.record = [];
    try {
        const release = round(s.config, state, x, s.noise);
        s.state = state;
        return s.noise.mode === 'transcript' ? {release, draws: s.noise.record} : {release};
    } finally {
        s.noise.record = null;
    }
}

function checkStream(s, inputs) {
    if (!Array.isArray(inputs)) refuse(`inputs: must be an array (got ${describe(inputs)})`);
    if (inputs.length > s.config.T) refuse(`inputs: ${inputs.length} steps past the horizon T = ${s.config.T}`);
    const checked = [];
    let n = -1;
    for (let i = 0; i < inputs.length; i++) {
        const x = checkColumn(s.config, n, i, inputs[i], `inputs[${i}]`);
        if (i === 0) n = x.length;
        checked.push(x);
    }
    return checked;
}

function freshRun(s, checked) {
    const state = freshState();
    const releases = [];
    for (const x of checked) releases.push(round(s.config, state, x, s.noise));
    return releases;
}

function run(message) {
    onlyKeys(message, ['op', 'inputs'], 'run');
    const s = ready('run');
    const checked = checkStream(s, message.inputs);
    if (s.noise.mode === 'transcript') s.noise.record = [];
    try {
        const releases = freshRun(s, checked);
        return s.noise.mode === 'transcript' ? {releases, draws: s.noise.record} : {releases};
    } finally {
        s.noise.record = null;
    }
}

function runs(message) {
    onlyKeys(message, ['op', 'inputs', 'count'], 'runs');
    const s = ready('runs');
    if (s.noise.mode === 'tape') refuse('runs: own and transcript mode only');
    const count = message.count;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1e6) {
        refuse(`count: must be an integer in [1, 10^6] (got ${describe(count)})`);
    }
    const checked = checkStream(s, message.inputs);
    const all = [];
    const draws = [];
    try {
        for (let r = 0; r < count; r++) {
            if (s.noise.mode === 'transcript') s.noise.record = [];
            all.push(freshRun(s, checked));
            if (s.noise.mode === 'transcript') draws.push(s.noise.record);
        }
    } finally {
        s.noise.record = null;
    }
    return s.noise.mode === 'transcript' ? {runs: all, draws} : {runs: all};
}

const OPS = {hello, init, step, run, runs};

function handle(line) {
    if (line.trim() === '') refuse('empty line: expected one JSON object');
    let message;
    try {
        message = JSON.parse(line);
    } catch (error) {
        refuse(`not a JSON line: ${error.message}`);
    }
    if (!isObject(message)) refuse('a message must be a JSON object');
    if (typeof message.op !== 'string' || !Object.hasOwn(OPS, message.op)) {
        refuse(`op: must be one of ${Object.keys(OPS).join(', ')} (got ${describe(message.op)})`);
    }
    return OPS[message.op](message);
}

function main() {
    for (let line = input.next(); line !== null; line = input.next()) {
        let answer;
        try {
            answer = handle(line);
        } catch (error) {
            if (error instanceof EndOfInput) break;
            if (error instanceof Refused) answer = {error: error.message};
            else if (error instanceof RangeError) answer = {error: `cannot serve this request: ${error.message}`};
            else throw error;
        }
        say(answer);
    }
    process.exit(0);
}

main();
