#!/usr/bin/env node
// example.js - the Binary tree counter (001-alg10) and PrivTree_T (001-alg5) of paper 001,
// written outside dpstream, speaking its conformance protocol, version 1 (docs/conformance.md):
// one JSON object per line on stdin, one answer per line on stdout, until stdin ends.
//
//   node example.js                 the algorithms as the reference corrects them (conforms)
//   node example.js --as-printed    001-alg10 with the printed noise scale log2(T)/epsilon
//                                   (001-alg10 L8, erratum E-counters-1): NOT epsilon-DP, for
//                                   showing that `dpstream conform` catches it
//
// Node 20, no packages. Written from the public docs only (README.md, docs/conformance.md,
// docs/catalog.md, docs/tape-format.md, docs/phdstream.md, docs/counters.md, docs/errata.md, the
// protocol schema, the vectors corpus and the C and Python examples). The own-mode noise is an
// example, NOT a secure sampler (see laplace() below).
'use strict';

const fs = require('fs');

const AS_PRINTED = process.argv.slice(2).includes('--as-printed');
for (const arg of process.argv.slice(2)) {
    if (arg !== '--as-printed') {
        process.stderr.write(`example.js: unknown argument ${arg} (only --as-printed)\n`);
        process.exit(2);
    }
}

// ---- errors --------------------------------------------------------------------------------

// A request we refuse: answered {"error": message}, and nothing changes.
class Refused extends Error {}
// stdin ended (possibly while a draw request waited for its answer): exit 0.
class EndOfInput extends Error {}

function refuse(message) {
    throw new Refused(message);
}

function describe(value) {
    if (value === undefined) return 'missing';
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

// ---- lines in, lines out (synchronous: a draw request waits for its answer mid-step) -------

class LineReader {
    constructor(fd) {
        this.fd = fd;
        this.buffer = Buffer.alloc(1 << 16);
        this.pending = [];  // chunks of the current, unfinished line
        this.lines = [];    // complete lines not yet returned
        this.eof = false;
    }

    // The next line without its '\n' (a last line without one counts), or null at end of input.
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
            if (error.code === 'EAGAIN') {  // a non-blocking pipe with nothing yet: wait a little
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

// ---- own mode: a seeded generator and Laplace by inversion ---------------------------------
//
// xoshiro128** (Vigna and Blackman), seeded through splitmix64 from the init's seed, so seeds 0, 1, 2
// give unrelated streams. JSON.parse reads numbers as doubles: a seed above 2^53 is rounded.

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

class Generator {
    constructor(seed) {
        this.s = Uint32Array.from(splitmix64Words(seed));
        if ((this.s[0] | this.s[1] | this.s[2] | this.s[3]) === 0) this.s[0] = 1;  // the forbidden state
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

    // u uniform on {1, ..., 2^53 - 1} / 2^53 (53 random bits; 0 is drawn again).
    uniform() {
        for (;;) {
            const k = (this.next32() >>> 5) * 67108864 + (this.next32() >>> 6);  // 27 + 26 bits
            if (k !== 0) return k / 9007199254740992;
        }
    }
}

function rotl(x, k) {
    return (x << k) | (x >>> (32 - k));
}

// Laplace(b) by inversion: z = -b sign(u - 1/2) log(1 - 2|u - 1/2|). NOT differentially private in
// the strict sense: floating-point inversion leaks through the low-order bits of x + z (Mironov, CCS
// 2012). Fine for an example and for the statistical checks; never for releasing data.
function laplace(generator, b) {
    if (b === 0) return 0;  // only the printed 001-alg10 scale at T = 1 asks for it
    const d = generator.uniform() - 0.5;
    return -b * (d < 0 ? -1 : 1) * Math.log(1 - 2 * Math.abs(d));
}

// ---- the noise source of a session: the harness's tape, or our generator -------------------

// One Laplace draw at `site`: in tape mode asked of the harness, whose answer {"value": V} is the
// noise (docs/tape-format.md: for additive kinds the noisy statistic is statistic + V).
function drawLaplace(noise, site, scale) {
    if (noise.mode === 'own') return laplace(noise.generator, scale);
    say({draw: {site, kind: 'laplace', params: {scale}}});
    const line = input.next();
    if (line === null) throw new EndOfInput();
    let answer;
    try {
        answer = JSON.parse(line);
    } catch (error) {
        refuse(`draw ${site}: the answer is not JSON`);
    }
    if (!isObject(answer) || Object.keys(answer).length !== 1 || !isFiniteNumber(answer.value)) {
        refuse(`draw ${site}: the answer must be {"value": <finite number>} (got ${describe(answer)})`);
    }
    return answer.value;
}

// ---- JSON value checks ---------------------------------------------------------------------

function isObject(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isFiniteNumber(v) {
    return typeof v === 'number' && Number.isFinite(v);
}

// JSON.parse cannot tell 16 from 16.0: both are accepted as the integer 16.
function isInteger(v) {
    return typeof v === 'number' && Number.isSafeInteger(v);
}

function onlyKeys(object, allowed, where) {
    for (const key of Object.keys(object)) {
        if (!allowed.includes(key)) {
            refuse(`${where}: unknown key ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})`);
        }
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

// ---- 001-alg10: the Binary tree counter ----------------------------------------------------

// The range every counter keeps (docs/counters.md, "Range"): |f(t)| and every p-sum within +-(2^53 - 1),
// Number.MAX_SAFE_INTEGER. Beyond it doubles round, so inputs at distance 1 could give p-sums 2 apart.
// JSON.parse reads 2^53 + 1 as 2^53, still outside: the check on the parsed number is the check on the
// number sent.
const MAX_STREAM_SUM = Number.MAX_SAFE_INTEGER;

function withinRange(v) {
    return v >= -MAX_STREAM_SUM && v <= MAX_STREAM_SUM;
}

// sum_{i<j} alpha_i + x with Neumaier's compensated summation: every rounding error of the running sum is
// kept exactly and added back once, so for integers whose sum lies within 2^53 the result is exact even
// when a partial sum leaves the range (left to right, M + 2 - M with M = 2^53 - 1 gives 1, not 2). The
// reference computes it correctly rounded (math.fsum); for real inputs the two can differ in the last bit.
function pSum(alpha, j, x) {
    let sum = 0;
    let compensation = 0;
    for (let i = 0; i <= j; i++) {
        const v = i < j ? alpha[i] : x;
        const next = sum + v;
        compensation += Math.abs(sum) >= Math.abs(v) ? (sum - next) + v : (v - next) + sum;
        sum = next;
    }
    return sum + compensation;
}

// floor(log2 t) + 1 for an integer t >= 1 (arithmetic, not 32-bit bit operations).
function bitLength(t) {
    let n = 0;
    for (let u = t; u >= 1; u = Math.floor(u / 2)) n++;
    return n;
}

const binaryTree = {
    configure(params) {
        onlyKeys(params, ['epsilon', 'T'], 'params');
        const epsilon = positiveNumber(params, 'epsilon');  // [001-alg10 L1]
        const T = integerAtLeast(params, 'T', 1);            // [001-alg10 L1] horizon T
        // [001-alg10 L8] corrected scale (floor(log2 T) + 1)/epsilon, erratum E-counters-1: an input
        // enters up to floor(log2 T) + 1 nodes. As printed: log2(T)/epsilon (NOT epsilon-DP).
        const scale = AS_PRINTED ? Math.log2(T) / epsilon : bitLength(T) / epsilon;
        if (!Number.isFinite(scale)) refuse(`params.epsilon: too small, the noise scale overflows (got ${epsilon})`);
        return {T, scale};
    },

    // [001-alg10 L3] alpha_i = alpha_hat_i = 0 for all i (64 bits cover every safe integer t)
    fresh() {
        return {t: 0, alpha: new Array(64).fill(0), alphaHat: new Array(64).fill(0)};
    },

    // The input of step t + 1 (t steps taken): a finite number within the range, within the horizon.
    checkInput(config, t, x, where) {
        if (!isFiniteNumber(x)) refuse(`${where}: must be a finite number (got ${describe(x)})`);
        if (!withinRange(x)) refuse(`${where}: must lie within +-(2^53 - 1) (MAX_STREAM_SUM) (got ${describe(x)})`);
        if (t >= config.T) refuse(`${where}: step ${t + 1} is past the horizon T = ${config.T}`);
        return x;
    },

    // One step: draw into locals, compute, then commit. Node j, the lowest set bit of t, gets the
    // p-sum of (t - 2^j, t]; g(t) adds the noisy nodes of the set bits of t, lowest bit first.
    step(config, state, x, noise) {
        const t = state.t + 1;
        let j = 0;                                            // [001-alg10 L6] j = min{i : b_i(t) != 0}
        while (Math.floor(t / 2 ** j) % 2 === 0) j++;
        const alphaJ = pSum(state.alpha, j, x);               // [001-alg10 L7] alpha_j = sum_{i<j} alpha_i + f(t)
        if (!withinRange(alphaJ)) {                           // refused before the draw
            refuse(`input: would take the p-sum alpha_${j} to ${alphaJ}, outside +-(2^53 - 1) (MAX_STREAM_SUM)`);
        }
        const z = drawLaplace(noise, `001-alg10 L8 t=${t}`, config.scale);
        const alphaHatJ = alphaJ + z;                         // [001-alg10 L8] + Lap(scale)
        let g = 0;                                            // [001-alg10 L10] sum over the set bits of t
        for (let i = 0, u = t; u >= 1; i++, u = Math.floor(u / 2)) {
            if (u % 2 === 1) g += i === j ? alphaHatJ : state.alphaHat[i];
        }
        if (!Number.isFinite(g) || !Number.isFinite(alphaJ)) refuse(`g(${t}) overflows the double range`);
        state.alpha[j] = alphaJ;                              // commit
        state.alphaHat[j] = alphaHatJ;
        for (let i = 0; i < j; i++) state.alpha[i] = state.alphaHat[i] = 0;  // [001-alg10 L9]
        state.t = t;
        return g;
    },
};

// ---- 001-alg5: PrivTree_T ------------------------------------------------------------------
//
// The tree T of [0,1]^d: the vertex at depth k cuts coordinate k mod d into `fanout` parts; a vertex
// is named "root" or by the dotted path of child indices ("0.1.1"). PrivTree only needs the labels:
// the cells (and so d) do not enter its decisions.

const LAMBDA_RULES = ['general', 'proof', 'printed'];

function parseLabel(label, config, where) {
    if (label === 'root') return [];
    const parts = label.split('.');
    const path = [];
    for (const part of parts) {
        if (!/^(0|[1-9][0-9]*)$/.test(part)) {
            refuse(`${where}: a vertex is "root" or a dotted path of child indices (got ${describe(label)})`);
        }
        const index = Number(part);
        if (index >= config.fanout) {
            refuse(`${where}: child index ${part} of ${describe(label)} must be < fanout = ${config.fanout}`);
        }
        path.push(index);
    }
    if (path.length > config.D) refuse(`${where}: vertex ${describe(label)} is deeper than D = ${config.D}`);
    return path;
}

function labelOf(path) {
    return path.length === 0 ? 'root' : path.join('.');
}

const privTree = {
    configure(params) {
        onlyKeys(params, ['d', 'D', 'fanout', 'epsilon', 'theta', 'lambda_rule'], 'params');
        const d = integerAtLeast(params, 'd', 1);
        const D = integerAtLeast(params, 'D', 0);
        const fanout = integerAtLeast(params, 'fanout', 2, 2);
        const epsilon = positiveNumber(params, 'epsilon');
        let theta = 0;
        if (params.theta !== undefined) {
            theta = params.theta;
            if (!isFiniteNumber(theta) || theta < 0) {
                refuse(`params.theta: must be a finite number >= 0 (got ${describe(theta)})`);
            }
        }
        const rule = params.lambda_rule === undefined ? 'general' : params.lambda_rule;
        if (!LAMBDA_RULES.includes(rule)) {
            refuse(`params.lambda_rule: must be one of ${LAMBDA_RULES.join(', ')} (got ${describe(rule)})`);
        }
        // [001-alg5 L3] the scale lambda (docs/phdstream.md, errata E-phdstream-3, -4):
        //   general  D/epsilon (Theorem 3.1 for every F in C(T)); at D = 0 the corpus uses 1/epsilon
        //   proof    (2 beta - 1)/((beta - 1) epsilon)   (Appendix A, valid on counts only)
        //   printed  (2 beta - 1)/(beta - 1) * 2/epsilon (L3 as printed)
        const b = fanout;
        const lambda = rule === 'general' ? Math.max(D, 1) / epsilon
            : rule === 'proof' ? (2 * b - 1) / ((b - 1) * epsilon)
                : ((2 * b - 1) / (b - 1)) * 2 / epsilon;
        const delta = lambda * Math.log(b);  // delta = lambda ln(beta) (errata E-phdstream-3, 'Default')
        if (!Number.isFinite(lambda) || !Number.isFinite(delta)) refuse(`params.epsilon: too small (got ${epsilon})`);
        return {d, D, fanout, epsilon, theta, lambda, delta, T: 1};
    },

    fresh() {
        return {t: 0};
    },

    // F: a consistent tree function {label: F(v)}; absent vertices count 0. Consistency (6), on the
    // vertices with children (erratum E-phdstream-1): F(v) = sum of F over children(v).
    // (JSON.parse keeps the last of two equal keys: a vertex named twice is not detected.)
    checkInput(config, t, F, where) {
        if (!isObject(F)) refuse(`${where}: F must be a JSON object {label: number} (got ${describe(F)})`);
        if (t >= 1) refuse(`${where}: PrivTree is one-shot, a second input is past T = 1`);
        const values = new Map();
        const childSums = new Map();  // parent label -> sum over its present children
        for (const [label, value] of Object.entries(F)) {
            const path = parseLabel(label, config, where);
            if (!isFiniteNumber(value)) {
                refuse(`${where}: F(${label}) must be a finite number (got ${describe(value)})`);
            }
            values.set(labelOf(path), value);
            if (path.length > 0) {
                const parent = labelOf(path.slice(0, -1));
                childSums.set(parent, (childSums.get(parent) || 0) + value);
            }
        }
        for (const label of values.keys()) {  // a present vertex with children whose children are all absent
            const depth = label === 'root' ? 0 : label.split('.').length;
            if (depth < config.D && !childSums.has(label)) childSums.set(label, 0);
        }
        for (const [parent, sum] of childSums) {
            const own = values.get(parent) || 0;
            if (Math.abs(own - sum) > 1e-9 * Math.max(1, Math.abs(own), Math.abs(sum))) {
                refuse(`${where}: F must be consistent (6): F(${parent}) = ${own} but its children sum to ${sum}`);
            }
        }
        return values;
    },

    // PrivTree_T (001-alg5 L9-L12): visit vertices breadth first from the root; at v, the biased count
    // b(v) = max(F(v) - depth(v) delta, theta - delta) plus Lap(lambda) decides whether v is split
    // (> theta, below depth D). Every visited vertex draws, depth D included. The visiting order is
    // sorted by (depth, path): that is the release's order of `nodes` and `leaves`. The docs give the
    // draw (L11) but not this rule: it is PrivTree's (Zhang et al. 2016), and the clamp at theta - delta
    // is confirmed by the corpus vector 001-alg5/privtree-d2-D4-eps2-theta1 (without it: 11 nodes, not 13).
    step(config, state, values, noise) {
        const nodes = [];
        const leaves = [];
        const queue = [[]];
        for (let head = 0; head < queue.length; head++) {
            const path = queue[head];
            const label = labelOf(path);
            const depth = path.length;
            const F = values.get(label) || 0;
            const b = Math.max(F - depth * config.delta, config.theta - config.delta);
            const noisy = b + drawLaplace(noise, `001-alg5 L11 v=${label}`, config.lambda);  // [001-alg5 L11]
            nodes.push(label);
            if (depth < config.D && noisy > config.theta) {
                for (let i = 0; i < config.fanout; i++) queue.push(path.concat([i]));
            } else {
                leaves.push(label);
            }
        }
        state.t = 1;
        return {nodes, leaves};
    },
};

const ALGORITHMS = {'001-alg10': binaryTree, '001-alg5': privTree};

// ---- the session ---------------------------------------------------------------------------

let session = null;  // {algorithm, config, state, noise} after a successful init

function ready(op) {
    if (session === null) refuse(`${op} before a successful init`);
    return session;
}

function hello(message) {
    onlyKeys(message, ['op'], 'hello');
    return {
        protocol: 1,
        implementation: AS_PRINTED ? 'dpstream JS example, 001-alg10 as printed (scale log2(T)/epsilon)'
            : 'dpstream JS example (001-alg10, 001-alg5)',
        algorithms: Object.keys(ALGORITHMS),
        modes: ['tape', 'own'],
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
    if (message.noise !== 'tape' && message.noise !== 'own') {
        refuse(`noise: must be "tape" or "own" (got ${describe(message.noise)})`);
    }
    const seed = message.seed;  // above 2^53 JSON.parse has already rounded it
    if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0) {
        refuse(`seed: must be an integer >= 0 (got ${describe(seed)})`);
    }
    // everything is valid: only now forget the previous run
    const noise = message.noise === 'own' ? {mode: 'own', generator: new Generator(seed)} : {mode: 'tape'};
    session = {algorithm, config, state: algorithm.fresh(), noise};
    return {ok: true};
}

function step(message) {
    onlyKeys(message, ['op', 'input'], 'step');
    const s = ready('step');
    if (!('input' in message)) refuse('step needs the key input');
    const checked = s.algorithm.checkInput(s.config, s.state.t, message.input, 'input');
    // the step works on a copy, kept only when every draw succeeded (a bad tape answer changes nothing)
    const state = structuredClone(s.state);
    const release = s.algorithm.step(s.config, state, checked, s.noise);
    s.state = state;
    return {release};
}

// A fresh run (same parameters, empty state) over a whole stream; every input is checked first.
function freshRun(s, inputs) {
    const checked = inputs.map((x, i) => s.algorithm.checkInput(s.config, i, x, `inputs[${i}]`));
    const state = s.algorithm.fresh();
    return checked.map((x) => s.algorithm.step(s.config, state, x, s.noise));
}

function run(message) {
    onlyKeys(message, ['op', 'inputs'], 'run');
    const s = ready('run');
    if (!Array.isArray(message.inputs)) refuse(`inputs: must be an array (got ${describe(message.inputs)})`);
    return {releases: freshRun(s, message.inputs)};
}

// The bulk op of statistical checks (announced in hello as "ops": ["runs"]): `count` fresh runs over
// the same inputs, own mode only (in tape mode every run would ask for the same sites again).
function runs(message) {
    onlyKeys(message, ['op', 'inputs', 'count'], 'runs');
    const s = ready('runs');
    if (s.noise.mode !== 'own') refuse('runs: only in own mode');
    if (!Array.isArray(message.inputs)) refuse(`inputs: must be an array (got ${describe(message.inputs)})`);
    if (!isInteger(message.count) || message.count < 0) {
        refuse(`count: must be an integer >= 0 (got ${describe(message.count)})`);
    }
    const all = [];
    for (let k = 0; k < message.count; k++) all.push(freshRun(s, message.inputs));
    return {runs: all};
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
