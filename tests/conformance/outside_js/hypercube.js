#!/usr/bin/env node
// hypercube.js - online differentially private synthetic data in [0,1]^d (He, Vershynin, Zhu; dpstream anchor
// 004-alg1), written outside dpstream from its public docs only: docs/conformance.md (protocol v1, error model,
// transcript mode), docs/hypercube.md (004-alg1/2/3, the schedules (4.1) and (5.1), consistency 004-alg4, the
// exact arithmetic of the branches), docs/errata/hypercube.md (E-hypercube-1..15: which reading is the default),
// docs/counters.md, docs/tape-format.md, docs/catalog.md and the known-answer vectors' data. No dpstream code read.
//
//   node hypercube.js [FAULT]
//
// README
// ------
// One program, one algorithm (004-alg1), three noise modes:
//   tape        every draw is asked of the harness ({"draw": {site, kind, params}}, answered {"value": V});
//   own         draws from a seeded generator (xoshiro128** from the init's seed, splitmix32-expanded);
//   transcript  own mode, and every draw actually made is reported {site, kind, params, value} with the
//               parameters actually used (also under a planted fault: the report is honest).
// Ops: hello, init, step, run, and the bulk op runs (own and transcript mode only).
//
// What a step does (t = 1, 2, ...; eps the budget, d the dimension):
//   * validate x_t: a flat JSON array of d finite numbers in [0, 1] (booleans, strings, null refused), before
//     any draw; a refused step changes nothing;
//   * depth r = largest j with t_j = ceil(2^j / eps) <= t (0 before t_1); t_j is computed on the exact value of
//     the double eps in integer (BigInt) arithmetic: eps = M 2^E, t_j = ceil(2^(j-E) / M);
//   * the regions of a new depth j get their 004-alg3 counter: r0 = j (d >= 2), or r0 = 0 with the history
//     x_1..x_{t-1} replayed into it (d = 1, E-hypercube-2);
//   * every region counter (depths 1..r) is stepped with 1{x_t in Omega_theta}; depth k -> k+1 halves
//     coordinate k mod d (E-hypercube-13), lower halves half-open, 1 in the last cell;
//   * 004-alg3 (per region): level k = [t_k, t_{k+1}); at the first step of a level every ended level k adds
//     (its input sum + Lap_Z(2/eps_{j,k})) to S~ (site 004-alg3 u3 r=<k>), and the new level runs 004-alg2 with
//     eps_{j,r}/2 and horizon t_{r+1} - t_r (scope 004-alg3 u2 r=<r>); release S~ + c_t;
//   * 004-alg2: threshold Lap_Z(4/eps_{j,r}) at u2 j=<j> on floor(T_0), T_0 = 9 ln T / (eps_{j,r}/2); a test
//     Lap_Z(4/eps_{j,r}) at u3 j=<j> t=<t-1> once the open segment has read an input; the segment ends when
//     N + lambda' >= floor(T_0) + lambda + 1, and A_sub (004-lem3.1, eps_{j,r}/4, horizon T, discrete Laplace
//     scale bit_length(T) 4 / eps_{j,r}) steps with N; c_t = A_sub's latest release;
//   * consistency (004-alg4, EQUAL_SHIFT) over depths 0..r with n'_root = t and the noisy counts clamped at 0;
//   * uniform_box at 004-alg1 u8 t=<t> theta=<bits> (theta=root at depth 0) for each depth-r region with
//     m_theta > 0; the points are released region by region in the order of theta read in binary.
// Schedules: d >= 2: eps_{j,r} = C1 eps 2^((j-r)(1-1/d)/2), C1 = (1 - 2^(-(1-1/d)/2))/2 (4.1);
//            d = 1:  eps_{j,r} = (3/pi^2) eps/(j+1)^2 (5.1).
// Refused at init: unknown algorithm or parameter keys, epsilon not a finite number > 0 or >= 2^17
// (MAX_START_DEPTH 16), d not an integer >= 1, a budget whose scale is infinite (epsilon 1e-320). Refused at a
// step: a scale beyond 1e15 (tape-format.md's largest discrete_laplace scale) or a threshold beyond 2^62.
//
// Floating point, deliberately NOT the obvious evaluation order (the kit's error model must absorb it):
//   * C1 = -expm1(-ln2 (d-1)/(2d)) / 2 instead of (1 - 2^(-(1-1/d)/2))/2;
//   * eps_{j,r} = eps * (2^((j-r)(d-1)/(2d)) * C1) (another association, exponent (d-1)/(2d) not (1-1/d)/2);
//     d = 1: (eps * 3) / (pi * pi * (j+1) * (j+1));
//   * 004-alg2's scales 4/eps_r (not 2/(eps_r/2)), A_sub's (4 bit_length(T))/eps_r, T_0 = 18 ln(T)/eps_r;
//   * level times in exact integer arithmetic (not the float quotient 2^j/eps);
//   * the segment test as N + lambda' - lambda > floor(T_0) (integers, equal to the docs' form);
//   * the Binary Mechanism's p-sums and releases summed from the highest node to the lowest;
//   * own-mode discrete Laplace: the difference of two geometric variables, each floor(-b ln u) by inversion,
//     u uniform on (0, 1] with 53 bits; uniform_box: low + (high - low) u, u on [0, 1), redrawn if it rounds to high.
//
// FAULT (planted mistakes, to measure the kit's power; all report honestly in transcript mode):
//   none                correct (default)
//   whole-eps           every region counter gets the whole eps instead of its schedule's eps_{j,r} (a leak)
//   level-under-noised  the depth-1 regions' counters run at 2 eps_{1,r} (every scale there halved; small leak)
//   scale/4             every discrete Laplace scale divided by 4
//   noiseless           the depth-1 region counters release their exact count (of x_i in the region, t_{r0} <= i
//                       <= t) and draw nothing (a gross leak; their sites are missing from transcripts)
//   own-rng             control, correct: sfc32 instead of xoshiro128**
//
// Node 20, no packages. The own-mode noise is for tests, NOT a secure sampler (floating point, seeded PRNG).
'use strict';

const fs = require('fs');

const FAULTS = ['none', 'whole-eps', 'level-under-noised', 'scale/4', 'noiseless', 'own-rng'];
const argv = process.argv.slice(2);
if (argv.length > 1 || (argv.length === 1 && !FAULTS.includes(argv[0]))) {
    process.stderr.write(`hypercube.js: usage: node hypercube.js [${FAULTS.join('|')}]\n`);
    process.exit(2);
}
const FAULT = argv.length === 1 ? argv[0] : 'none';

const MAX_SCALE = 1e15;              // tape-format.md: discrete_laplace 0 < scale <= 1e15
const MAX_EPSILON = 2 ** 17;         // docs/hypercube.md: eps >= 2^17 refused (MAX_START_DEPTH = 16)
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

class Refused extends Error {}

function refuse(message) {
    throw new Refused(message);
}

class EndOfInput extends Error {}

// ---- lines in, lines out (synchronous, so that a draw request can wait for its answer mid-step) ----------

const MAX_LINE = 64 * 1024 * 1024;

class LineReader {
    constructor(fd) {
        this.fd = fd;
        this.data = Buffer.alloc(0);
        this.chunk = Buffer.alloc(1 << 20);
        this.eof = false;
        this.skipping = false;
    }

    // the next line as a Buffer (without '\n'), {tooLong: true} for a line over 64 MiB, null at end of input
    next() {
        for (;;) {
            const nl = this.data.indexOf(10);
            if (nl >= 0) {
                const line = this.data.subarray(0, nl);
                this.data = this.data.subarray(nl + 1);
                if (this.skipping) {
                    this.skipping = false;
                    return {tooLong: true};
                }
                return line;
            }
            if (this.data.length > MAX_LINE) {
                this.skipping = true;
                this.data = Buffer.alloc(0);
            }
            if (this.eof) {
                if (this.data.length > 0 || this.skipping) {
                    const line = this.data;
                    this.data = Buffer.alloc(0);
                    if (this.skipping) {
                        this.skipping = false;
                        return {tooLong: true};
                    }
                    return line;
                }
                return null;
            }
            let n;
            try {
                n = fs.readSync(this.fd, this.chunk, 0, this.chunk.length, null);
            } catch (error) {
                if (error.code === 'EAGAIN') {
                    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
                    continue;
                }
                if (error.code === 'EOF') n = 0;
                else throw error;
            }
            if (n === 0) this.eof = true;
            else this.data = this.data.length === 0 ? Buffer.from(this.chunk.subarray(0, n))
                : Buffer.concat([this.data, this.chunk.subarray(0, n)]);
        }
    }
}

const input = new LineReader(0);
const utf8 = new TextDecoder('utf-8', {fatal: true});

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

// ---- generators ------------------------------------------------------------------------------------------

function rotl(x, k) {
    return (x << k) | (x >>> (32 - k));
}

function splitmix32(state) {  // returns [next state, output]
    const s = (state + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad) >>> 0;
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97) >>> 0;
    z = (z ^ (z >>> 15)) >>> 0;
    return [s, z];
}

class Xoshiro128 {
    constructor(seed) {
        let state = (seed >>> 0) ^ Math.imul(Math.floor(seed / 4294967296) >>> 0, 0x85ebca6b);
        this.s = new Uint32Array(4);
        for (let i = 0; i < 4; i++) {
            const [next, out] = splitmix32(state >>> 0);
            state = next;
            this.s[i] = out;
        }
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

class Sfc32 {
    constructor(seed) {
        this.a = 0xcafef00d;
        this.b = seed >>> 0;
        this.c = Math.floor(seed / 4294967296) >>> 0;
        this.d = 1;
        for (let i = 0; i < 16; i++) this.next32();
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

function bits53(g) {  // uniform integer in [0, 2^53)
    return (g.next32() >>> 5) * 67108864 + (g.next32() >>> 6);
}

function uniformHalfOpen(g) {  // [0, 1)
    return bits53(g) / 9007199254740992;
}

function uniformPositive(g) {  // (0, 1]
    return (bits53(g) + 1) / 9007199254740992;
}

// ---- the noise door: tape (ask the harness), own (draw), transcript (draw and report) -------------------

function askHarness(request) {
    say({draw: request});
    const line = input.next();
    if (line === null) throw new EndOfInput();
    let answer;
    try {
        answer = JSON.parse(utf8.decode(line));
    } catch (error) {
        refuse(`draw ${request.site}: the answer is not JSON`);
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer) || !Object.hasOwn(answer, 'value')) {
        refuse(`draw ${request.site}: the answer must be {"value": ...}`);
    }
    return answer.value;
}

function drawDiscreteLaplace(noise, site, statedScale) {
    const scale = FAULT === 'scale/4' ? statedScale / 4 : statedScale;
    if (!Number.isFinite(scale) || !(scale > 0) || scale > MAX_SCALE) {
        refuse(`the discrete Laplace scale ${scale} at '${site}' is beyond what any noise source accepts (budget too small)`);
    }
    let value;
    if (noise.mode === 'tape') {
        value = askHarness({site, kind: 'discrete_laplace', params: {scale}});
        if (!Number.isSafeInteger(value)) refuse(`draw ${site}: the value must be an integer within +-(2^53 - 1)`);
    } else {
        const g = noise.rng;
        const a = Math.floor(-scale * Math.log(uniformPositive(g)));
        const b = Math.floor(-scale * Math.log(uniformPositive(g)));
        value = a - b + 0;
        if (noise.mode === 'transcript') noise.draws.push({site, kind: 'discrete_laplace', params: {scale}, value});
    }
    return value;
}

function drawUniformBox(noise, site, low, high, count) {
    let rows;
    if (noise.mode === 'tape') {
        rows = askHarness({site, kind: 'uniform_box', params: {low, high, count}});
        const ok = Array.isArray(rows) && rows.length === count && rows.every((row) => Array.isArray(row)
            && row.length === low.length && row.every((v) => typeof v === 'number' && Number.isFinite(v)));
        if (!ok) refuse(`draw ${site}: the value must be ${count} rows of ${low.length} finite numbers`);
    } else {
        const g = noise.rng;
        rows = [];
        for (let i = 0; i < count; i++) {
            const row = [];
            for (let c = 0; c < low.length; c++) {
                let v;
                do {
                    v = low[c] + (high[c] - low[c]) * uniformHalfOpen(g);
                } while (v >= high[c]);
                row.push(v);
            }
            rows.push(row);
        }
        if (noise.mode === 'transcript') {
            noise.draws.push({site, kind: 'uniform_box', params: {low, high, count}, value: rows});
        }
    }
    return rows;
}

// ---- exact level times t_j = ceil(2^j / eps) on the exact value of the double eps ------------------------

function decompose(x) {  // x > 0 finite: [M odd BigInt, E] with x = M 2^E
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    const hi = view.getUint32(0);
    const lo = view.getUint32(4);
    const expBits = (hi >>> 20) & 0x7ff;
    let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    let E;
    if (expBits === 0) {
        E = -1074;
    } else {
        mant |= 1n << 52n;
        E = expBits - 1075;
    }
    while ((mant & 1n) === 0n) {
        mant >>= 1n;
        E += 1;
    }
    return [mant, E];
}

function makeLevelTimes(eps) {
    const [M, E] = decompose(eps);
    const cache = [];
    return (j) => {
        if (cache[j] === undefined) {
            if (j < E) {
                cache[j] = 1;
            } else {
                const q = ((1n << BigInt(j - E)) + M - 1n) / M;
                cache[j] = q > BigInt(MAX_SAFE) ? Infinity : Number(q);
            }
        }
        return cache[j];
    };
}

// ---- privacy schedules (4.1) and (5.1), evaluated in another order -----------------------------------------

function makeSchedule(eps, d) {
    const cache = new Map();
    const c1 = -Math.expm1(-Math.LN2 * (d - 1) / (2 * d)) / 2;
    const exponentPerLevel = (d - 1) / (2 * d);
    return (j, r) => {
        const key = j * 4096 + r;
        let v = cache.get(key);
        if (v === undefined) {
            if (FAULT === 'whole-eps') v = eps;
            else if (d === 1) v = (eps * 3) / (Math.PI * Math.PI * (j + 1) * (j + 1));
            else v = eps * (Math.pow(2, (j - r) * exponentPerLevel) * c1);
            if (FAULT === 'level-under-noised' && j === 1) v *= 2;
            cache.set(key, v);
        }
        return v;
    };
}

function bitLength(n) {
    let b = 0;
    while (n >= 1) {
        n = Math.floor(n / 2);
        b += 1;
    }
    return b;
}

// ---- 004-lem3.1: Binary Mechanism on integers (discrete Laplace), plain objects so a step can be cloned ----

function bmNew(T, scale, prefix) {
    return {T, scale, prefix, k: 0, alpha: [], noisy: []};
}

function bmStep(b, x, noise) {
    const k = b.k + 1;
    let j = 0;
    while (Math.floor(k / 2 ** j) % 2 === 0) j += 1;
    let sum = x;
    for (let i = j - 1; i >= 0; i--) sum += b.alpha[i] || 0;  // highest node first
    const z = drawDiscreteLaplace(noise, `${b.prefix}001-alg10 L8 t=${k}`, b.scale);
    for (let i = 0; i < j; i++) {
        b.alpha[i] = 0;
        b.noisy[i] = 0;
    }
    b.alpha[j] = sum;
    b.noisy[j] = sum + z;
    b.k = k;
    let release = 0;
    for (let i = bitLength(k) - 1; i >= 0; i--) {
        if (Math.floor(k / 2 ** i) % 2 === 1) release += b.noisy[i];
    }
    return release;
}

// ---- 004-alg2: sparse counting with eps_r / 2 inside level r ------------------------------------------------

function alg2New(epsR, T, prefix, noise) {
    const scale = 4 / epsR;                 // 2 / (eps_r / 2)
    const T0 = (18 * Math.log(T)) / epsR;   // 9 ln T / (eps_r / 2)
    if (!(T0 <= 2 ** 62)) refuse(`the threshold 9 ln(T)/eps of '${prefix}' is beyond 2^62 (budget too small)`);
    const s = {T, scale, floorT0: Math.floor(T0), prefix, t: 0, j: 0, read: false, count: 0, lambda: 0, latest: 0,
        sub: bmNew(T, (4 * bitLength(T)) / epsR, `${prefix}004-alg2 u8 / `)};
    alg2Open(s, noise);
    return s;
}

function alg2Open(s, noise) {
    s.j += 1;
    s.count = 0;
    s.read = false;
    s.lambda = drawDiscreteLaplace(noise, `${s.prefix}004-alg2 u2 j=${s.j}`, s.scale);
}

function alg2Step(s, x, noise) {
    s.t += 1;
    if (s.read) {
        const lambdaPrime = drawDiscreteLaplace(noise, `${s.prefix}004-alg2 u3 j=${s.j} t=${s.t - 1}`, s.scale);
        if (s.count + lambdaPrime - s.lambda > s.floorT0) {
            s.latest = bmStep(s.sub, s.count, noise);
            alg2Open(s, noise);
        }
    }
    s.count += x;
    s.read = true;
    return s.latest;
}

// ---- 004-alg3: inhomogeneous sparse counting, one per region ----------------------------------------------

function alg3New(j, r0, prefix) {
    return {j, r0, prefix, level: -1, sTilde: 0, sums: {}, sub: null, exact: FAULT === 'noiseless' && j === 1,
        count: 0};
}

function alg3Step(c, t, x, noise, ctx) {
    const tr0 = ctx.levelTime(c.r0);
    if (t < tr0) return 0;
    if (c.exact) {  // FAULT noiseless: the exact count, no draw
        c.count += x;
        return c.count;
    }
    let r = c.level < 0 ? c.r0 : c.level;
    while (ctx.levelTime(r + 1) <= t) r += 1;
    if (c.level < 0 || r > c.level) {
        for (let k = c.level < 0 ? c.r0 : c.level; k < r; k++) {
            const z = drawDiscreteLaplace(noise, `${c.prefix}004-alg3 u3 r=${k}`, 2 / ctx.budget(c.j, k));
            c.sTilde += (c.sums[k] || 0) + z;
        }
        c.level = r;
        const T = ctx.levelTime(r + 1) - ctx.levelTime(r);
        if (!Number.isSafeInteger(T)) refuse('the level is beyond 2^53 steps');
        c.sub = alg2New(ctx.budget(c.j, r), T, `${c.prefix}004-alg3 u2 r=${r} / `, noise);
    }
    c.sums[r] = (c.sums[r] || 0) + x;
    return c.sTilde + alg2Step(c.sub, x, noise);
}

// ---- 004-alg1 ----------------------------------------------------------------------------------------------

function thetaBits(j, index) {
    return j === 0 ? 'root' : index.toString(2).padStart(j, '0');
}

function regionBox(j, index, d) {
    const low = new Array(d).fill(0);
    const high = new Array(d).fill(1);
    for (let k = 0; k < j; k++) {
        const bit = Math.floor(index / 2 ** (j - 1 - k)) % 2;
        const c = k % d;
        const mid = (low[c] + high[c]) / 2;
        if (bit === 1) low[c] = mid;
        else high[c] = mid;
    }
    return [low, high];
}

function pathIndices(x, depth, d) {  // index of the region holding x at every depth 0..depth
    const low = new Array(d).fill(0);
    const high = new Array(d).fill(1);
    const out = [0];
    let index = 0;
    for (let k = 0; k < depth; k++) {
        const c = k % d;
        const mid = (low[c] + high[c]) / 2;
        const bit = x[c] >= mid ? 1 : 0;
        if (bit === 1) low[c] = mid;
        else high[c] = mid;
        index = index * 2 + bit;
        out.push(index);
    }
    return out;
}

function depthAt(t, ctx, from) {
    let j = from;
    while (ctx.levelTime(j + 1) <= t) j += 1;
    return j;
}

function equalShift(m, a, b) {
    return Math.min(Math.max(a + Math.floor((m - a - b) / 2), 0), m);
}

function alg1New() {
    return {t: 0, depth: 0, regions: [null], history: []};
}

function alg1Step(s, x, noise, ctx) {
    const d = ctx.d;
    const t = s.t + 1;
    const r = depthAt(t, ctx, s.depth);
    for (let j = s.depth + 1; j <= r; j++) {
        const level = [];
        for (let i = 0; i < 2 ** j; i++) {
            const c = alg3New(j, d === 1 ? 0 : j, `004-alg1 u6 theta=${thetaBits(j, i)} / `);
            if (d === 1) {  // r0 = 0: replay the history into the new counter (E-hypercube-2)
                s.history.forEach((past, k) => {
                    const idx = pathIndices(past, j, d)[j];
                    alg3Step(c, k + 1, idx === i ? 1 : 0, noise, ctx);
                });
            }
            level.push(c);
        }
        s.regions.push(level);
    }
    const path = pathIndices(x, r, d);
    const noisy = [[t]];
    for (let j = 1; j <= r; j++) {
        noisy.push(s.regions[j].map((c, i) => alg3Step(c, t, path[j] === i ? 1 : 0, noise, ctx)));
    }
    // 004-alg4 (EQUAL_SHIFT) with n'_root = t and the counts clamped at 0
    const consistent = [[t]];
    for (let j = 1; j <= r; j++) {
        const parents = consistent[j - 1];
        const row = new Array(2 ** j);
        for (let p = 0; p < parents.length; p++) {
            const a = Math.max(noisy[j][2 * p], 0);
            const b = Math.max(noisy[j][2 * p + 1], 0);
            row[2 * p] = equalShift(parents[p], a, b);
            row[2 * p + 1] = parents[p] - row[2 * p];
        }
        consistent.push(row);
    }
    const points = [];
    consistent[r].forEach((m, i) => {
        if (m > 0) {
            const [low, high] = regionBox(r, i, d);
            for (const row of drawUniformBox(noise, `004-alg1 u8 t=${t} theta=${thetaBits(r, i)}`, low, high, m)) {
                points.push(row);
            }
        }
    });
    for (const row of noisy) {
        for (const v of row) if (!Number.isSafeInteger(v)) refuse('a noisy count left +-(2^53 - 1)');
    }
    s.t = t;
    s.depth = r;
    if (d === 1) s.history.push(x);
    return {t, depth: r, noisy, consistent, points};
}

// ---- the protocol ----------------------------------------------------------------------------------------

function isObject(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}

let session = null;

function init(m) {
    session = null;  // a refused init leaves no algorithm
    if (m.algorithm !== '004-alg1') refuse(`algorithm: this program serves 004-alg1 only (got ${JSON.stringify(m.algorithm)})`);
    if (!['tape', 'own', 'transcript'].includes(m.noise)) refuse('noise: one of "tape", "own", "transcript"');
    const p = m.params;
    if (!isObject(p)) refuse('params: must be an object');
    for (const key of Object.keys(p)) {
        if (key !== 'epsilon' && key !== 'd') refuse(`params: unknown parameter ${JSON.stringify(key)}`);
    }
    if (!Object.hasOwn(p, 'epsilon')) refuse('epsilon: required');
    if (!Object.hasOwn(p, 'd')) refuse('d: required');
    const eps = p.epsilon;
    if (typeof eps !== 'number' || !Number.isFinite(eps)) refuse('epsilon: must be a finite number');
    if (!(eps > 0)) refuse('epsilon: must be > 0');
    if (eps >= MAX_EPSILON) refuse('epsilon: must be < 2^17 (the partition would start deeper than 16)');
    const d = p.d;
    if (typeof d !== 'number' || !Number.isSafeInteger(d)) refuse('d: must be an integer');
    if (d < 1) refuse('d: must be an integer >= 1');
    const seed = m.seed;
    if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) refuse('seed: must be an integer >= 0');
    const ctx = {eps, d, levelTime: makeLevelTimes(eps), budget: makeSchedule(eps, d)};
    if (!Number.isFinite(4 / ctx.budget(1, d === 1 ? 0 : 1))) {
        refuse(`epsilon: ${eps} gives an infinite noise scale`);
    }
    session = {ctx, mode: m.noise, rng: FAULT === 'own-rng' ? new Sfc32(seed) : new Xoshiro128(seed), state: alg1New()};
    return {ok: true};
}

function checkPoint(x, d, where) {
    if (!Array.isArray(x)) refuse(`${where}: a point is a JSON array of d = ${d} numbers`);
    if (x.length !== d) refuse(`${where}: a point has d = ${d} coordinates (got ${x.length})`);
    for (const v of x) {
        if (typeof v !== 'number' || !Number.isFinite(v)) refuse(`${where}: coordinates are finite JSON numbers`);
        if (!(v >= 0 && v <= 1)) refuse(`${where}: a point lies in [0, 1]^d (got ${v})`);
    }
    return x;
}

function noiseFor(session) {
    return {mode: session.mode, rng: session.rng, draws: session.mode === 'transcript' ? [] : null};
}

function freshRun(inputs) {
    const noise = noiseFor(session);
    const state = alg1New();
    const releases = inputs.map((x) => alg1Step(state, x, noise, session.ctx));
    return [releases, noise.draws];
}

function checkInputs(m) {
    if (!Array.isArray(m.inputs)) refuse('inputs: must be an array');
    m.inputs.forEach((x, i) => checkPoint(x, session.ctx.d, `inputs[${i}]`));
    return m.inputs;
}

const OPS = {
    hello: () => ({protocol: 1, implementation: `outside-js-hypercube (fault ${FAULT})`, algorithms: ['004-alg1'],
        modes: ['tape', 'own', 'transcript'], ops: ['runs']}),
    init,
    step: (m) => {
        if (session === null) refuse('step before a successful init');
        const x = checkPoint(m.input, session.ctx.d, 'input');
        const noise = noiseFor(session);
        const copy = structuredClone(session.state);  // a failing draw leaves the run unchanged
        const release = alg1Step(copy, x, noise, session.ctx);
        session.state = copy;
        return session.mode === 'transcript' ? {release, draws: noise.draws} : {release};
    },
    run: (m) => {
        if (session === null) refuse('run before a successful init');
        const [releases, draws] = freshRun(checkInputs(m));
        return session.mode === 'transcript' ? {releases, draws} : {releases};
    },
    runs: (m) => {
        if (session === null) refuse('runs before a successful init');
        if (session.mode === 'tape') refuse('runs: own and transcript mode only');
        if (typeof m.count !== 'number' || !Number.isSafeInteger(m.count) || m.count < 1 || m.count > 1e6) {
            refuse('count: an integer in [1, 10^6]');
        }
        const inputs = checkInputs(m);
        const runs = [];
        const draws = [];
        for (let k = 0; k < m.count; k++) {
            const [releases, runDraws] = freshRun(inputs);
            runs.push(releases);
            draws.push(runDraws);
        }
        return session.mode === 'transcript' ? {runs, draws} : {runs};
    },
};

function handle(raw) {
    if (raw.tooLong) refuse('line longer than 64 MiB (skipped)');
    let text;
    try {
        text = utf8.decode(raw);
    } catch (error) {
        refuse('the line is not UTF-8');
    }
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') refuse('empty line: send one JSON object per line');
    let message;
    try {
        message = JSON.parse(text);
    } catch (error) {
        refuse(`not JSON: ${error.message}`);
    }
    if (!isObject(message)) refuse('a message is a JSON object');
    if (typeof message.op !== 'string') refuse('op: a string is required');
    if (!Object.hasOwn(OPS, message.op)) refuse(`unknown op ${JSON.stringify(message.op)}`);
    return OPS[message.op](message);
}

for (;;) {
    const line = input.next();
    if (line === null) break;
    let answer;
    try {
        answer = handle(line);
    } catch (error) {
        if (error instanceof EndOfInput) break;
        if (error instanceof Refused) answer = {error: error.message};
        else if (error instanceof RangeError) answer = {error: `refused: ${error.message}`};
        else throw error;
    }
    say(answer);
}
process.exit(0);
