#!/usr/bin/env node
// synth.js - two synthesizers of the dpstream catalog, written outside dpstream from its public docs
// only (docs/conformance.md, docs/tape-format.md, docs/catalog.md, docs/phdstream.md, docs/longitudinal.md,
// docs/errata/phdstream.md, and the printed lines of 001-alg1 that docs/phdstream.md points to), speaking the
// conformance protocol v1 in the noise modes tape, own and transcript, with the bulk op `runs`:
//
//   001-alg1  PHDStreamTree (PrivTree_T on G(., t-1) + nabla F(., t) with eps/2, Laplace(2/eps) leaf noise,
//             G(., t) = G(., t-1) + Ext_T(d(., t)))
//   002-alg1  fixed time window synthesizer (discrete Gaussian window histograms, coins, choices)
//
//   node synth.js [FAULT]
//
// FAULT plants one realistic implementation bug (tests/conformance/test_outside_synthesizers.py):
//   none         correct (the default)
//   scale/1.5    every Laplace scale and discrete Gaussian sigma divided by 1.5 (variance / 2.25)
//   scale/3      ... divided by 3 (variance / 9)
//   variance/3   every scale divided by sqrt(3) (variance / 3)
//   shared       one draw reused for two sites (two different counts get the same noise value)
//   noiseless    one count per step released without noise
//   joint        two counts get antithetic noise z and -z (each marginal law right, their sum exact)
// and correct-but-different controls:
//   rounded      releases rounded to integers after noising (post-processing of the release)
//   clamped      noisy counts clamped at 0 (001-alg1: released G values; 002-alg1: the noisy histogram)
//   own-rng      another PRNG (sfc32) than the default xoshiro128**
// In transcript mode the draws are reported honestly: the parameters and values actually used (an additive
// draw's value is the noise actually added; a skipped noise is reported with value 0).
//
// Node 20, no packages. The own-mode noise is for tests, NOT a secure sampler (floating-point Laplace).
'use strict';

const fs = require('fs');

const FAULTS = ['none', 'scale/1.5', 'scale/3', 'variance/3', 'shared', 'noiseless', 'joint',
    'rounded', 'clamped', 'own-rng'];
const args = process.argv.slice(2);
if (args.length > 1 || (args.length === 1 && !FAULTS.includes(args[0]))) {
    process.stderr.write(`synth.js: usage: node synth.js [${FAULTS.join('|')}]\n`);
    process.exit(2);
}
const FAULT = args.length === 1 ? args[0] : 'none';
// the factor every noise scale (Laplace scale, discrete Gaussian sigma) is divided by
const SCALE_DIVISOR = {'scale/1.5': 1.5, 'scale/3': 3, 'variance/3': Math.sqrt(3)}[FAULT] || 1;

class Refused extends Error {}
class EndOfInput extends Error {}

function refuse(message) {
    throw new Refused(message);
}

function describe(value) {
    if (value === undefined) return 'missing';
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

// ---- lines in, lines out (synchronous: a tape-mode draw waits for its answer mid-step) -------

class LineReader {
    constructor(fd) {
        this.fd = fd;
        this.buffer = Buffer.alloc(1 << 16);
        this.pending = [];
        this.lines = [];
        this.eof = false;
    }

    next() {
        while (this.lines.length === 0) {
            if (this.eof) {
                if (this.pending.length === 0) return null;
                const last = Buffer.concat(this.pending).toString('utf8');
                this.pending = [];
                return last;
            }
            this.fill();
        }
        return this.lines.shift();
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

// ---- generators ----------------------------------------------------------------------------

function rotl(x, k) {
    return (x << k) | (x >>> (32 - k));
}

function splitmix64Words(seed) {
    let x = BigInt(seed) & 0xffffffffffffffffn;
    const words = [];
    for (let i = 0; i < 2; i++) {
        x = (x + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
        let z = x;
        z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
        z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
        z ^= z >> 31n;
        words.push(Number(z & 0xffffffffn), Number(z >> 32n));
    }
    return words;
}

// xoshiro128** (the default)
class Xoshiro {
    constructor(seed) {
        this.s = Uint32Array.from(splitmix64Words(seed));
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

// sfc32 (Chris Doty-Humphrey's small fast counting generator): the `own-rng` control
class Sfc32 {
    constructor(seed) {
        this.a = 0x9e3779b9;
        this.b = seed >>> 0;
        this.c = Math.floor(seed / 4294967296) >>> 0;
        this.d = 1;
        for (let i = 0; i < 20; i++) this.next32();
    }

    next32() {
        const t = (((this.a + this.b) | 0) + this.d) | 0;
        this.d = (this.d + 1) | 0;
        this.a = this.b ^ (this.b >>> 9);
        this.b = (this.c + (this.c << 3)) | 0;
        this.c = rotl(this.c, 21);
        this.c = (this.c + t) | 0;
        return t >>> 0;
    }
}

// u uniform on {1, ..., 2^53 - 1} / 2^53
function uniform(generator) {
    for (;;) {
        const k = (generator.next32() >>> 5) * 67108864 + (generator.next32() >>> 6);
        if (k !== 0) return k / 9007199254740992;
    }
}

function laplaceSample(generator, b) {
    const d = uniform(generator) - 0.5;
    return -b * (d < 0 ? -1 : 1) * Math.log(1 - 2 * Math.abs(d));
}

// pmf proportional to exp(-|z|/t) on Z: a sign and a geometric magnitude (P[M >= m] = e^{-m/t}), -0 drawn again
function discreteLaplaceSample(generator, t) {
    for (;;) {
        const negative = uniform(generator) < 0.5;
        const magnitude = Math.floor(-t * Math.log(uniform(generator)));
        if (negative && magnitude === 0) continue;
        return negative ? -magnitude : magnitude;
    }
}

// Canonne, Kamath, Steinke (2020), Algorithm 3, in floating point: pmf proportional to exp(-z^2 / (2 sigma2))
function discreteGaussianSample(generator, sigma2) {
    const t = Math.floor(Math.sqrt(sigma2)) + 1;
    for (;;) {
        const y = discreteLaplaceSample(generator, t);
        const a = Math.abs(y) - sigma2 / t;
        if (uniform(generator) < Math.exp(-(a * a) / (2 * sigma2))) return y;
    }
}

// a uniform k-subset of {0, ..., n-1}, sorted (partial Fisher-Yates)
function choiceSample(generator, n, k) {
    const pool = Array.from({length: n}, (_, i) => i);
    for (let i = 0; i < k; i++) {
        const j = i + Math.floor(uniform(generator) * (n - i));
        const tmp = pool[i];
        pool[i] = pool[j];
        pool[j] = tmp;
    }
    return pool.slice(0, k).sort((a, b) => a - b);
}

// ---- the noise door: tape (asked of the harness), own, transcript (own, reported) -----------

function isObject(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isFiniteNumber(v) {
    return typeof v === 'number' && Number.isFinite(v);
}

function isInteger(v) {
    return typeof v === 'number' && Number.isSafeInteger(v);
}

class Noise {
    constructor(mode, seed) {
        this.mode = mode;
        if (mode !== 'tape') this.generator = FAULT === 'own-rng' ? new Sfc32(seed) : new Xoshiro(seed);
        this.draws = [];  // transcript mode: the draws of the current step or run
    }

    ask(site, kind, params, check) {
        say({draw: {site, kind, params}});
        const line = input.next();
        if (line === null) throw new EndOfInput();
        let answer;
        try {
            answer = JSON.parse(line);
        } catch (error) {
            refuse(`draw ${site}: the answer is not JSON`);
        }
        if (!isObject(answer) || Object.keys(answer).length !== 1 || !check(answer.value)) {
            refuse(`draw ${site}: bad answer ${describe(answer)}`);
        }
        return answer.value;
    }

    record(site, kind, params, value) {
        if (this.mode === 'transcript') this.draws.push({site, kind, params, value});
        return value;
    }

    // a draw of `kind` at `site`: sampled by `sample` (own, transcript) or asked of the harness (tape)
    draw(site, kind, params, sample, check) {
        if (this.mode === 'tape') return this.ask(site, kind, params, check);
        return this.record(site, kind, params, sample(this.generator));
    }

    laplace(site, scale) {
        return this.draw(site, 'laplace', {scale}, (g) => laplaceSample(g, scale), isFiniteNumber);
    }

    discreteGaussian(site, sigma2) {
        return this.draw(site, 'discrete_gaussian', {sigma2}, (g) => discreteGaussianSample(g, sigma2), isInteger);
    }

    coin(site) {
        return this.draw(site, 'coin', {}, (g) => uniform(g) < 0.5, (v) => typeof v === 'boolean');
    }

    choice(site, n, k) {
        return this.draw(site, 'choice', {n, k}, (g) => choiceSample(g, n, k), (v) => Array.isArray(v));
    }

    // a planted fault's noise: not drawn, but the value actually used, reported as the site's draw (tape mode:
    // the site is asked for as the reference would, and its answer ignored)
    used(site, kind, params, value) {
        if (this.mode === 'tape') this.ask(site, kind, params, kind === 'laplace' ? isFiniteNumber : isInteger);
        return this.record(site, kind, params, value);
    }
}

// Additive noise for a list of counts at `sites` (in order), with the planted faults of the counts:
// shared (the second count reuses the first's draw), noiseless (the first gets none), joint (z, -z).
function noisyAdditive(noise, sites, kind, params, drawOne) {
    const values = [];
    for (let i = 0; i < sites.length; i++) {
        if (i === 0 && FAULT === 'noiseless') values.push(noise.used(sites[i], kind, params, 0));
        else if (i === 1 && FAULT === 'shared') values.push(noise.used(sites[i], kind, params, values[0]));
        else if (i === 1 && FAULT === 'joint') values.push(noise.used(sites[i], kind, params, -values[0] + 0));
        else values.push(drawOne(sites[i]));
    }
    return values;
}

// ---- parameter checks ----------------------------------------------------------------------

function onlyKeys(object, allowed, where) {
    for (const key of Object.keys(object)) {
        if (!allowed.includes(key)) refuse(`${where}: unknown key ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})`);
    }
}

function positiveNumber(params, name) {
    const v = params[name];
    if (!isFiniteNumber(v) || !(v > 0)) refuse(`params.${name}: must be a finite number > 0 (got ${describe(v)})`);
    return v;
}

function integerAtLeast(params, name, min, fallback) {
    const v = params[name];
    if (v === undefined && fallback !== undefined) return fallback;
    if (!isInteger(v) || v < min) refuse(`params.${name}: must be an integer >= ${min} (got ${describe(v)})`);
    return v;
}

// ---- 001-alg1: PHDStreamTree ---------------------------------------------------------------

const LAMBDA_RULES = ['general', 'proof', 'printed'];
const MAX_LAPLACE_SCALE = 1.8e305;

function labelOf(path) {
    return path.length === 0 ? 'root' : path.join('.');
}

const phdStreamTree = {
    configure(params) {
        onlyKeys(params, ['d', 'D', 'fanout', 'epsilon', 'theta', 'lambda_rule'], 'params');
        const d = integerAtLeast(params, 'd', 1);
        const D = integerAtLeast(params, 'D', 0);
        if (D > 64) refuse(`params.D: must be <= 64 (got ${D})`);
        const fanout = integerAtLeast(params, 'fanout', 2, 2);
        if (fanout > 65536) refuse(`params.fanout: must be <= 65536 (got ${fanout})`);
        let vertices = 0;
        for (let k = 0, level = 1; k <= D; k++, level *= fanout) {
            vertices += level;
            if (vertices > 2 ** 22) refuse(`params.D: the tree T would have more than 2^22 vertices (D = ${D}, fanout = ${fanout})`);
        }
        const epsilon = positiveNumber(params, 'epsilon');
        let theta = 0;
        if (params.theta !== undefined) {
            theta = params.theta;
            if (!isFiniteNumber(theta) || theta < 0) refuse(`params.theta: must be a finite number >= 0 (got ${describe(theta)})`);
        }
        const rule = params.lambda_rule === undefined ? 'general' : params.lambda_rule;
        if (!LAMBDA_RULES.includes(rule)) refuse(`params.lambda_rule: must be one of ${LAMBDA_RULES.join(', ')} (got ${describe(rule)})`);
        const e = epsilon / 2;  // [001-alg1 L5] PrivTree with eps/2
        const b = fanout;
        const lambda = rule === 'general' ? Math.max(D, 1) / e
            : rule === 'proof' ? (2 * b - 1) / ((b - 1) * e) : ((2 * b - 1) / (b - 1)) * 2 / e;
        const delta = lambda * Math.log(b);
        const leafScale = 2 / epsilon;  // [001-alg1 L6] Lap(2/eps)
        if (!(lambda <= MAX_LAPLACE_SCALE) || !(leafScale <= MAX_LAPLACE_SCALE) || !Number.isFinite(delta)) {
            refuse(`params.epsilon: too small, the noise scales overflow (got ${epsilon})`);
        }
        return {d, D, fanout, theta, lambda, delta, leafScale};
    },

    // U(v): the d(., s) summed over v and its descendants (weight 1 on ancestors); P(v): d(v, s) summed
    // over the steps where v was a leaf. Ext_T's verbal rule (E-phdstream-2): G(u) = U(u) + the sum over
    // the strict ancestors a of P(a) beta^-(depth(u) - depth(a)).
    fresh() {
        return {t: 0, U: new Map(), P: new Map(), present: new Map()};
    },

    // the path of child indices of the leaf cell of T holding point x (depth D)
    pathOf(config, x) {
        const lo = new Array(config.d).fill(0);
        const w = new Array(config.d).fill(1);
        const path = [];
        for (let k = 0; k < config.D; k++) {
            const c = k % config.d;
            let i = Math.floor(((x[c] - lo[c]) / w[c]) * config.fanout);
            if (i >= config.fanout) i = config.fanout - 1;
            if (i < 0) i = 0;
            path.push(i);
            lo[c] += (i * w[c]) / config.fanout;
            w[c] /= config.fanout;
        }
        return path;
    },

    checkInput(config, state, batch, where) {
        if (!isObject(batch)) refuse(`${where}: must be {"points": [...], "moves": [...]} (got ${describe(batch)})`);
        onlyKeys(batch, ['points', 'moves'], where);
        const {points, moves} = batch;
        if (!Array.isArray(points) || !Array.isArray(moves)) refuse(`${where}: points and moves must be arrays`);
        if (points.length !== moves.length) refuse(`${where}: points and moves must have the same length`);
        const removals = new Map();
        const keys = [];
        for (let i = 0; i < points.length; i++) {
            const p = points[i];
            if (!Array.isArray(p) || p.length !== config.d) refuse(`${where}.points[${i}]: must be an array of d = ${config.d} numbers`);
            for (const x of p) {
                if (!isFiniteNumber(x) || x < 0 || x > 1) refuse(`${where}.points[${i}]: coordinates must lie in [0, 1] (got ${describe(p)})`);
            }
            if (moves[i] !== 1 && moves[i] !== -1) refuse(`${where}.moves[${i}]: must be 1 or -1 (got ${describe(moves[i])})`);
            const key = JSON.stringify(p.map((x) => x + 0));
            keys.push(key);
            if (moves[i] === -1) removals.set(key, (removals.get(key) || 0) + 1);
        }
        for (const [key, count] of removals) {
            if ((state.present.get(key) || 0) < count) refuse(`${where}: removal of the point ${key}, which is not present`);
        }
        return {points, moves, keys};
    },

    step(config, state, batch, noise) {
        const t = state.t + 1;
        // (4): nabla F(v, t) = the sum of the moves of the batch's points in v, at every vertex of their paths
        const nabla = new Map();
        for (let i = 0; i < batch.points.length; i++) {
            const path = this.pathOf(config, batch.points[i]);
            for (let k = 0; k <= path.length; k++) {
                const label = labelOf(path.slice(0, k));
                nabla.set(label, (nabla.get(label) || 0) + batch.moves[i]);
            }
        }
        // [001-alg1 L5] T(t) <- PrivTree_T(G(., t-1) + nabla F(., t), eps/2, theta), breadth first
        const nodes = [];
        const leaves = [];
        const queue = [{path: [], push: 0}];
        const scale = config.lambda / SCALE_DIVISOR;
        for (let head = 0; head < queue.length; head++) {
            const {path, push} = queue[head];
            const label = labelOf(path);
            const depth = path.length;
            const F = (state.U.get(label) || 0) + push + (nabla.get(label) || 0);
            const b = Math.max(F - depth * config.delta, config.theta - config.delta);
            const noisy = b + noise.laplace(`001-alg5 L11 t=${t} v=${label}`, scale);
            nodes.push(label);
            if (depth < config.D && noisy > config.theta) {
                const down = (push + (state.P.get(label) || 0)) / config.fanout;
                for (let i = 0; i < config.fanout; i++) queue.push({path: path.concat([i]), push: down});
            } else {
                leaves.push(label);
            }
        }
        // [001-alg1 L6] d(v, t) <- nabla F(v, t) + Lap(2/eps) on the leaves of T(t)
        const leafScale = config.leafScale / SCALE_DIVISOR;
        const z = noisyAdditive(noise, leaves.map((v) => `001-alg1 L6 t=${t} v=${v}`), 'laplace', {scale: leafScale},
            (site) => noise.laplace(site, leafScale));
        // [001-alg1 L7] G(., t) <- G(., t-1) + Ext_T(d(., t)), committed on copies
        const U = new Map(state.U);
        const P = new Map(state.P);
        leaves.forEach((v, i) => {
            const dv = (nabla.get(v) || 0) + z[i];
            P.set(v, (P.get(v) || 0) + dv);
            const parts = v === 'root' ? [] : v.split('.');
            for (let k = 0; k <= parts.length; k++) {
                const a = labelOf(parts.slice(0, k));
                U.set(a, (U.get(a) || 0) + dv);
            }
        });
        const values = {};
        const push = new Map([['root', 0]]);
        for (const label of nodes) {  // parents come before children
            const p = push.get(label);
            let G = (U.get(label) || 0) + p;
            if (!Number.isFinite(G)) refuse(`G(${label}, ${t}) overflows the double range`);
            if (FAULT === 'rounded') G = Math.round(G);
            if (FAULT === 'clamped') G = Math.max(G, 0);
            values[label] = G;
            const down = (p + (P.get(label) || 0)) / config.fanout;
            const parts = label === 'root' ? [] : label.split('.');
            for (let i = 0; i < config.fanout; i++) push.set(labelOf(parts.concat([i])), down);
        }
        const present = new Map(state.present);
        batch.keys.forEach((key, i) => present.set(key, (present.get(key) || 0) + batch.moves[i]));
        state.t = t;
        state.U = U;
        state.P = P;
        state.present = present;
        return {t, nodes, leaves, values};
    },
};

// ---- 002-alg1: the fixed time window synthesizer --------------------------------------------

function bits(code, width) {
    return width === 0 ? '-' : code.toString(2).padStart(width, '0');
}

const fixedWindow = {
    configure(params) {
        onlyKeys(params, ['T', 'k', 'rho', 'n_pad'], 'params');
        const T = integerAtLeast(params, 'T', 1);
        const k = integerAtLeast(params, 'k', 1);
        if (k > T) refuse(`params.k: must be <= T = ${T} (got ${k})`);
        if (k > 30) refuse(`params.k: at most 30 here (2^k bins; got ${k})`);
        const rho = positiveNumber(params, 'rho');
        const nPad = integerAtLeast(params, 'n_pad', 0);
        const sigma2 = (T - k + 1) / rho;  // E-longitudinal-1: N_Z(0, (T - k + 1)/rho) per bin
        if (!(sigma2 <= 1e30)) refuse(`params.rho: too small, the variance (T - k + 1)/rho = ${sigma2} exceeds 1e30`);
        return {T, k, rho, nPad, sigma2};
    },

    // codes: every individual's last k reports (oldest bit most significant); records: every synthetic
    // record's last k bits; p: the previous targets
    fresh() {
        return {t: 0, n: null, codes: null, records: null, p: null, failed: false};
    },

    checkInput(config, state, column, where) {
        if (state.failed) refuse(`${where}: the synthesizer failed at t=${state.failed} (padding exhausted)`);
        if (!Array.isArray(column)) refuse(`${where}: must be an array of 0/1 reports (got ${describe(column)})`);
        if (state.n !== null && column.length !== state.n) refuse(`${where}: must hold n = ${state.n} reports (got ${column.length})`);
        for (const x of column) {
            if (x !== 0 && x !== 1) refuse(`${where}: every report must be 0 or 1 (got ${describe(x)})`);
        }
        if (state.t >= config.T) refuse(`${where}: step ${state.t + 1} is past the horizon T = ${config.T}`);
        return column.map((x) => x + 0);
    },

    step(config, state, column, noise) {
        const {k, nPad} = config;
        const t = state.t + 1;
        const bins = 2 ** k;
        const codes = state.codes === null ? column.map(() => 0) : state.codes.slice();
        column.forEach((x, i) => { codes[i] = (2 * codes[i] + x) % bins; });
        const commit = (release) => {
            state.t = t;
            state.n = column.length;
            state.codes = codes;
            return release;
        };
        if (t < k) return commit(null);
        // [u2-u3] C_s^t and C^_s^t = C_s^t + n_pad + N_Z(0, sigma2)
        const C = new Array(bins).fill(0);
        for (const c of codes) C[c]++;
        const sigma2 = config.sigma2 / (SCALE_DIVISOR * SCALE_DIVISOR);
        const sites = C.map((_, s) => `002-alg1 u3 t=${t} s=${bits(s, k)}`);
        const z = noisyAdditive(noise, sites, 'discrete_gaussian', {sigma2}, (site) => noise.discreteGaussian(site, sigma2));
        const Chat = C.map((c, s) => {
            const v = c + nPad + z[s];
            return FAULT === 'clamped' ? Math.max(v, 0) : v;
        });
        const exhausted = (p) => {
            const s = p.findIndex((v) => v < 0);
            if (s >= 0) {
                state.failed = t;
                refuse(`padding exhausted at t=${t}, pattern ${bits(s, k)}, target ${p[s]}`);
            }
        };
        if (t === k) {
            // [u5] p = C^; [u6] records laid out by pattern in increasing code
            exhausted(Chat);
            const records = [];
            Chat.forEach((count, s) => { for (let j = 0; j < count; j++) records.push(s); });
            const columns = [];
            for (let j = 1; j <= k; j++) columns.push(records.map((s) => (s >> (k - j)) & 1));
            state.records = records;
            state.p = Chat;
            return commit({p: Chat, columns});
        }
        // [u8-u17] for every overlap z: Delta_z, a coin when it is a half-integer, the targets
        const half = bins / 2;
        const p = new Array(bins).fill(0);
        for (let zc = 0; zc < half; zc++) {
            const delta = (state.p[zc] + state.p[half + zc] - Chat[2 * zc] - Chat[2 * zc + 1]) / 2;
            let b = 0;
            if (!Number.isInteger(delta)) b = noise.coin(`002-alg1 u11 t=${t} z=${bits(zc, k - 1)}`) ? 0.5 : -0.5;
            p[2 * zc] = Chat[2 * zc] + delta + b;
            p[2 * zc + 1] = Chat[2 * zc + 1] + delta - b;
        }
        exhausted(p);
        // [u16] p_{z1}^t of the records ending in z (index order) get 1
        const records = state.records.slice();
        const bit = new Array(records.length).fill(0);
        for (let zc = 0; zc < half; zc++) {
            const I = [];
            records.forEach((s, i) => { if (s % half === zc) I.push(i); });
            const chosen = noise.choice(`002-alg1 u16 t=${t} z=${bits(zc, k - 1)}`, I.length, p[2 * zc + 1]);
            for (const j of chosen) bit[I[j]] = 1;
        }
        records.forEach((s, i) => { records[i] = 2 * (s % half) + bit[i]; });
        state.records = records;
        state.p = p;
        return commit({p, columns: [bit]});
    },
};

const ALGORITHMS = {'001-alg1': phdStreamTree, '002-alg1': fixedWindow};

// ---- the session ---------------------------------------------------------------------------

let session = null;

function ready(op) {
    if (session === null) refuse(`${op} before a successful init`);
    return session;
}

function hello(message) {
    onlyKeys(message, ['op'], 'hello');
    return {
        protocol: 1,
        implementation: `dpstream outside JS synthesizers (fault ${FAULT})`,
        algorithms: Object.keys(ALGORITHMS),
        modes: ['tape', 'own', 'transcript'],
        ops: ['runs'],
    };
}

function init(message) {
    onlyKeys(message, ['op', 'algorithm', 'params', 'noise', 'seed'], 'init');
    if (typeof message.algorithm !== 'string' || !Object.hasOwn(ALGORITHMS, message.algorithm)) {
        refuse(`algorithm: must be one of ${Object.keys(ALGORITHMS).join(', ')} (got ${describe(message.algorithm)})`);
    }
    const algorithm = ALGORITHMS[message.algorithm];
    if (!isObject(message.params)) refuse(`params: must be an object (got ${describe(message.params)})`);
    const config = algorithm.configure(message.params);
    if (!['tape', 'own', 'transcript'].includes(message.noise)) refuse(`noise: must be tape, own or transcript (got ${describe(message.noise)})`);
    const seed = message.seed;
    if (!isInteger(seed) || seed < 0) refuse(`seed: must be an integer >= 0 (got ${describe(seed)})`);
    session = {algorithm, config, state: algorithm.fresh(), noise: new Noise(message.noise, seed)};
    return {ok: true};
}

function cloneState(state) {
    return {...state};  // every field is replaced, never mutated, by a step
}

function step(message) {
    onlyKeys(message, ['op', 'input'], 'step');
    const s = ready('step');
    if (!('input' in message)) refuse('step needs the key input');
    const checked = s.algorithm.checkInput(s.config, s.state, message.input, 'input');
    const state = cloneState(s.state);
    s.noise.draws = [];
    let release;
    try {
        release = s.algorithm.step(s.config, state, checked, s.noise);
    } finally {
        if (state.failed) s.state.failed = state.failed;  // an exhausted padding ends the run
    }
    s.state = state;
    return s.noise.mode === 'transcript' ? {release, draws: s.noise.draws} : {release};
}

// a fresh run: every input is checked (against the state it would meet) before its step
function freshRun(s, inputs) {
    const state = s.algorithm.fresh();
    s.noise.draws = [];
    return inputs.map((x, i) => s.algorithm.step(s.config, state, s.algorithm.checkInput(s.config, state, x, `inputs[${i}]`), s.noise));
}

function run(message) {
    onlyKeys(message, ['op', 'inputs'], 'run');
    const s = ready('run');
    if (!Array.isArray(message.inputs)) refuse(`inputs: must be an array (got ${describe(message.inputs)})`);
    const releases = freshRun(s, message.inputs);
    return s.noise.mode === 'transcript' ? {releases, draws: s.noise.draws} : {releases};
}

function runs(message) {
    onlyKeys(message, ['op', 'inputs', 'count'], 'runs');
    const s = ready('runs');
    if (s.noise.mode === 'tape') refuse('runs: only in own and transcript mode');
    if (!Array.isArray(message.inputs)) refuse(`inputs: must be an array (got ${describe(message.inputs)})`);
    if (!isInteger(message.count) || message.count < 1 || message.count > 1e6) {
        refuse(`count: must be an integer in [1, 10^6] (got ${describe(message.count)})`);
    }
    const all = [];
    const draws = [];
    for (let r = 0; r < message.count; r++) {
        all.push(freshRun(s, message.inputs));
        draws.push(s.noise.draws);
    }
    return s.noise.mode === 'transcript' ? {runs: all, draws} : {runs: all};
}

const OPS = {hello, init, step, run, runs};

function handle(line) {
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
            if (!(error instanceof Refused)) throw error;
            answer = {error: error.message};
        }
        say(answer);
    }
}

main();
