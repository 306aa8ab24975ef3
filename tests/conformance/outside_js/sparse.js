#!/usr/bin/env node
// sparse.js - inhomogeneous sparse counting (004-alg3, with 004-alg2 and its A_sub = 004-lem3.1 inside), written
// outside dpstream from its public docs only (docs/conformance.md: the protocol, the table of algorithms' sites and
// releases; docs/hypercube.md; docs/catalog.md), speaking the conformance protocol v1 in own and
// transcript mode, with the bulk op `runs`. In transcript mode every discrete Laplace draw is reported honestly: its
// site, the scale it was drawn with (a planted fault's too) and its value:
//
//   node sparse.js [FAULT]
//
// FAULT plants one realistic implementation bug (tests/conformance/test_outside_synthesizers.py):
//   none         correct (the default)
//   scale/1.5    every discrete Laplace scale divided by 1.5 (thresholds, tests, A_sub's nodes, S~'s updates)
// and correct-but-different controls:
//   own-rng      another PRNG (sfc32) than the default xoshiro128**
//   integer      the segment test in integers: N + lambda' - lambda >= floor(T_0) + 1 (the docs' form, equal)
//
// Evaluation order, deliberately not the reference's: the discrete Laplace is the difference of two geometric
// variables drawn by inversion (floor(-b log u)); the threshold test is N + lambda' > T~ with T~ = T_0 + lambda
// in floating point (the default) or the integer form (FAULT integer).
//
// Node 20, no packages. The own-mode noise is for tests, NOT a secure sampler.
'use strict';

const fs = require('fs');
const readline = require('readline');

const FAULTS = ['none', 'scale/1.5', 'own-rng', 'integer'];
const args = process.argv.slice(2);
if (args.length > 1 || (args.length === 1 && !FAULTS.includes(args[0]))) {
    process.stderr.write(`sparse.js: usage: node sparse.js [${FAULTS.join('|')}]\n`);
    process.exit(2);
}
const FAULT = args.length === 1 ? args[0] : 'none';
const DIVISOR = FAULT === 'scale/1.5' ? 1.5 : 1;

class Refused extends Error {}

function refuse(message) {
    throw new Refused(message);
}

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

// ---- generators: xoshiro128** (default) or sfc32, seeded from the init's seed --------------------------

function rotl(x, k) {
    return (x << k) | (x >>> (32 - k));
}

class Xoshiro {
    constructor(seed) {
        let x = BigInt(seed) & 0xffffffffffffffffn;
        const words = [];
        for (let i = 0; i < 2; i++) {  // splitmix64
            x = (x + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
            let z = x;
            z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
            z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
            z ^= z >> 31n;
            words.push(Number(z & 0xffffffffn), Number(z >> 32n));
        }
        this.s = Uint32Array.from(words);
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

function uniform(generator) {  // on {1, ..., 2^53 - 1} / 2^53
    for (;;) {
        const k = (generator.next32() >>> 5) * 67108864 + (generator.next32() >>> 6);
        if (k !== 0) return k / 9007199254740992;
    }
}

// the draws of the current step or run, reported in transcript mode (null in own mode)
let DRAWS = null;

// Lap_Z(b): P(k) proportional to exp(-|k| / b), the difference of two geometric variables on {0, 1, ...} of ratio
// exp(-1/b), each floor(-b log u). The planted fault divides b.
function discreteLaplace(generator, b, site) {
    const scale = b / DIVISOR;
    const value = Math.floor(-scale * Math.log(uniform(generator))) - Math.floor(-scale * Math.log(uniform(generator)));
    if (DRAWS !== null) DRAWS.push({site, kind: 'discrete_laplace', params: {scale}, value});
    return value;
}

// ---- 004-lem3.1: the Binary Mechanism on integers (001-alg10 with discrete Laplace) ------------------------

function bitLength(t) {
    let n = 0;
    while (t >= 1) {
        t = Math.floor(t / 2);
        n += 1;
    }
    return n;
}

class BinaryMechanism {
    constructor(epsilon, T, prefix) {
        this.scale = bitLength(T) / epsilon;
        this.prefix = prefix;
        this.t = 0;
        this.alpha = [];
        this.noisy = [];
    }

    // one input: the p-sum of node (t - 2^j, t], j = lsb(t), noised once; g(t) = the noisy p-sums of t's bits
    step(x, generator) {
        this.t += 1;
        let j = 0;
        while ((Math.floor(this.t / 2 ** j) % 2) === 0) j += 1;
        let sum = x;
        for (let i = 0; i < j; i++) {
            sum += this.alpha[i] || 0;
            this.alpha[i] = 0;
            this.noisy[i] = 0;
        }
        this.alpha[j] = sum;
        this.noisy[j] = sum + discreteLaplace(generator, this.scale, `${this.prefix}001-alg10 L8 t=${this.t}`);
        let release = 0;
        for (let i = 0; 2 ** i <= this.t; i++) {
            if (Math.floor(this.t / 2 ** i) % 2 === 1) release += this.noisy[i];
        }
        return release;
    }
}

// ---- 004-alg2: sparse counting -------------------------------------------------------------------------------

class SparseCounter {
    constructor(epsilon, T, generator, prefix) {
        this.epsilon = epsilon;
        this.T0 = 9 * Math.log(T) / epsilon;
        this.prefix = prefix;
        this.sub = new BinaryMechanism(epsilon / 2, T, `${prefix}004-alg2 u8 / `);
        this.t = 0;  // this counter's steps
        this.j = 0;  // the open segment
        this.generator = generator;
        this.latest = 0;  // A_sub's latest release
        this.open();
    }

    open() {
        this.count = 0;
        this.read = false;
        this.j += 1;
        this.lambda = discreteLaplace(this.generator, 2 / this.epsilon, `${this.prefix}004-alg2 u2 j=${this.j}`);
    }

    ends(lambdaPrime) {
        if (FAULT === 'integer') return this.count + lambdaPrime - this.lambda >= Math.floor(this.T0) + 1;
        return this.count + lambdaPrime > this.T0 + this.lambda;
    }

    step(x) {
        this.t += 1;
        if (this.read) {
            const lambdaPrime = discreteLaplace(this.generator, 2 / this.epsilon,
                `${this.prefix}004-alg2 u3 j=${this.j} t=${this.t - 1}`);
            if (this.ends(lambdaPrime)) {
                this.latest = this.sub.step(this.count, this.generator);
                this.open();
            }
        }
        this.count += x;
        this.read = true;
        return this.latest;
    }
}

// ---- 004-alg3: inhomogeneous sparse counting ---------------------------------------------------------------

function levelStart(r, epsilon) {
    return Math.ceil(2 ** r / epsilon);
}

class InhomogeneousCounter {
    constructor(epsilon, r0, epsR, generator) {
        this.epsilon = epsilon;
        this.r0 = r0;
        this.epsR = epsR;
        this.generator = generator;
        this.t = 0;
        this.level = null;  // the current level r (null before t_r0)
        this.sums = {};     // each level's input sum
        this.sTilde = 0;
        this.counter = null;
    }

    step(x) {
        this.t += 1;
        if (this.t < levelStart(this.r0, this.epsilon)) return 0;
        let r = this.level === null ? this.r0 : this.level;
        while (levelStart(r + 1, this.epsilon) <= this.t) r += 1;
        if (this.level === null || r > this.level) {
            // every level that ended, empty ones too (the first level r0 is empty when t_r0 = t_(r0+1))
            for (let k = this.level === null ? this.r0 : this.level; k < r; k++) {
                this.sTilde += (this.sums[k] || 0) + discreteLaplace(this.generator, 2 / this.epsR, `004-alg3 u3 r=${k}`);
            }
            this.level = r;
            this.counter = new SparseCounter(this.epsR / 2, levelStart(r + 1, this.epsilon) - levelStart(r, this.epsilon),
                this.generator, `004-alg3 u2 r=${r} / `);
        }
        this.sums[r] = (this.sums[r] || 0) + x;
        return this.sTilde + this.counter.step(x);
    }
}

// ---- the protocol -----------------------------------------------------------------------------------------

function isObject(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function positive(params, name) {
    const v = params[name];
    if (typeof v !== 'number' || !Number.isFinite(v) || !(v > 0)) refuse(`params.${name}: must be a number > 0`);
    return v;
}

let session = null;

function init(message) {
    if (message.algorithm !== '004-alg3') refuse('algorithm: must be 004-alg3');
    if (message.noise !== 'own' && message.noise !== 'transcript') refuse('noise: own or transcript');
    const p = message.params;
    if (!isObject(p)) refuse('params: must be an object');
    for (const key of Object.keys(p)) {
        if (!['epsilon', 'r0', 'eps_r'].includes(key)) refuse(`params: unknown key ${key}`);
    }
    const r0 = p.r0;
    if (!Number.isSafeInteger(r0) || r0 < 0 || r0 > 62) refuse('params.r0: must be an integer in [0, 62]');
    const seed = message.seed;
    if (!Number.isSafeInteger(seed) || seed < 0) refuse('seed: must be an integer >= 0');
    const generator = FAULT === 'own-rng' ? new Sfc32(seed) : new Xoshiro(seed);
    session = {config: [positive(p, 'epsilon'), r0, positive(p, 'eps_r')], generator,
        transcript: message.noise === 'transcript'};
    session.counter = fresh();
    return {ok: true};
}

function fresh() {
    return new InhomogeneousCounter(...session.config, session.generator);
}

function bit(x, where) {
    if (x !== 0 && x !== 1) refuse(`${where}: must be 0 or 1`);
    return x;
}

// runs fn with the draws it makes collected (transcript mode) and returns [its value, the draws]
function collecting(fn) {
    DRAWS = session.transcript ? [] : null;
    try {
        return [fn(), DRAWS];
    } finally {
        DRAWS = null;
    }
}

function freshRun(inputs) {
    if (!Array.isArray(inputs)) refuse('inputs: must be an array');
    inputs.forEach((x, i) => bit(x, `inputs[${i}]`));  // every input checked before any step
    return collecting(() => {
        const counter = fresh();
        return inputs.map((x) => counter.step(x));
    });
}

function withDraws(answer, draws) {
    if (draws !== null) answer.draws = draws;
    return answer;
}

const OPS = {
    hello: () => ({protocol: 1, implementation: `dpstream outside JS sparse counting (fault ${FAULT})`,
        algorithms: ['004-alg3'], modes: ['own', 'transcript'], ops: ['runs']}),
    init,
    step: (m) => {
        if (session === null) refuse('step before a successful init');
        const x = bit(m.input, 'input');
        const [release, draws] = collecting(() => session.counter.step(x));
        return withDraws({release}, draws);
    },
    run: (m) => {
        if (session === null) refuse('run before a successful init');
        const [releases, draws] = freshRun(m.inputs);
        return withDraws({releases}, draws);
    },
    runs: (m) => {
        if (session === null) refuse('runs before a successful init');
        if (!Number.isSafeInteger(m.count) || m.count < 1 || m.count > 1e6) refuse('count: an integer in [1, 10^6]');
        const all = [];
        const draws = [];
        for (let r = 0; r < m.count; r++) {
            const [releases, runDraws] = freshRun(m.inputs);
            all.push(releases);
            draws.push(runDraws);
        }
        return session.transcript ? {runs: all, draws} : {runs: all};
    },
};

readline.createInterface({input: process.stdin, crlfDelay: Infinity}).on('line', (line) => {
    let answer;
    try {
        let message;
        try {
            message = JSON.parse(line);
        } catch (error) {
            refuse(`not a JSON line: ${error.message}`);
        }
        if (!isObject(message) || typeof message.op !== 'string' || !Object.hasOwn(OPS, message.op)) {
            refuse(`op: must be one of ${Object.keys(OPS).join(', ')}`);
        }
        answer = OPS[message.op](message);
    } catch (error) {
        if (!(error instanceof Refused)) throw error;
        answer = {error: error.message};
    }
    say(answer);
});
