//! 003-alg2 (StreamingMWEM) written outside dpstream, from its public docs only, speaking the
//! dpstream conformance protocol v1 (docs/conformance.md): JSON Lines on stdin/stdout, noise modes
//! `tape`, `own` and `transcript`, and the bulk op `runs`.
//!
//! ```text
//! mwem [FAULT]     FAULT one of (default none):
//!   none          correct
//!   em*1.5, em*2  leak: the exponential mechanism run with 1.5 / 2 times its epsilon
//!   scale/1.5, scale/2   leak: every measurement's Laplace scale divided by 1.5 / 2
//!   noiseless     leak: the first measurement of each run (t = 1, l = 1) released without noise
//!   own-rng       correct control: another generator family (PCG-XSL-RR 128/64) and other samplers
//!   linear-space  correct control: the straightforward floating-point evaluation order
//! ```
//! Every fault reports honestly in transcript mode the parameters and values it actually used.
//!
//! Floating-point evaluation order of the default program: see the header of src/mwem.rs
//! (multiplicative weights in log space with log-sum-exp renormalisation, reversed sums, ...).
//! The own-mode samplers are NOT secure (src/noise.rs): for tests only.

mod io;
mod json;
mod mwem;
mod noise;
mod params;

use io::Io;
use json::Json;
use mwem::{Fault, State};
use noise::{Mode, Rng, Source};
use params::{Batch, Config};

const ALGORITHM: &str = "003-alg2";

struct Session {
    cfg: Config,
    mode: Mode,
    rng: Rng,
    state: State,
}

fn parse_fault(s: &str) -> Option<Fault> {
    Some(match s {
        "none" => Fault::None,
        "em*1.5" => Fault::EmTimes(1.5),
        "em*2" => Fault::EmTimes(2.0),
        "scale/1.5" => Fault::ScaleOver(1.5),
        "scale/2" => Fault::ScaleOver(2.0),
        "noiseless" => Fault::Noiseless,
        "own-rng" => Fault::OwnRng,
        "linear-space" => Fault::LinearSpace,
        _ => return None,
    })
}

fn init(m: &Json, fault: Fault) -> Result<Session, String> {
    match m.get("algorithm").and_then(|a| a.as_str()) {
        Some(ALGORITHM) => {}
        Some(a) => return Err(format!("algorithm: this program serves only {} (got {:?})", ALGORITHM, a)),
        None => return Err("init: 'algorithm' must be a string".into()),
    }
    let mode = match m.get("noise").and_then(|n| n.as_str()) {
        Some("tape") => Mode::Tape,
        Some("own") => Mode::Own,
        Some("transcript") => Mode::Transcript,
        _ => return Err("init: 'noise' must be one of tape, own, transcript".into()),
    };
    let seed = match m.get("seed").and_then(|s| s.as_num()) {
        Some(s) if s >= 0.0 && s.fract() == 0.0 && s < 18446744073709551616.0 => s as u64,
        _ => return Err("init: 'seed' must be an integer >= 0".into()),
    };
    let params = m.get("params").ok_or("init: 'params' is required")?;
    let cfg = params::parse(params)?;
    let state = mwem::fresh(&cfg);
    Ok(Session { cfg, mode, rng: Rng::new(seed, fault == Fault::OwnRng), state })
}

/// Checks a whole stream before the first draw (shapes, codes, removals, horizon).
fn check_stream(cfg: &Config, inputs: &Json) -> Result<Vec<Batch>, String> {
    let list = inputs.as_arr().ok_or("inputs: must be a JSON array")?;
    let mut st = mwem::fresh(cfg);
    let mut out = Vec::with_capacity(list.len());
    for (i, x) in list.iter().enumerate() {
        let b = params::check_input(cfg, x).map_err(|e| format!("input {}: {}", i + 1, e))?;
        st.f = mwem::admit(cfg, &st, &b).map_err(|e| format!("input {}: {}", i + 1, e))?;
        st.t += 1;
        out.push(b);
    }
    Ok(out)
}

/// One fresh run over checked batches: appends the releases ([g_1, ...]) to `out`; the draws go to
/// `src.draws`.
fn one_run(cfg: &Config, fault: Fault, batches: &[Batch], src: &mut Source, out: &mut String) -> Result<(), String> {
    let mut st = mwem::fresh(cfg);
    out.push('[');
    for (i, b) in batches.iter().enumerate() {
        let f = mwem::admit(cfg, &st, b)?;
        st = mwem::step(cfg, fault, &st, b, f, src)?;
        if i > 0 {
            out.push(',');
        }
        json::push_nums(out, &st.g);
    }
    out.push(']');
    Ok(())
}

fn handle(line: &str, session: &mut Option<Session>, fault: Fault, io: &mut Io) -> String {
    let m = match json::parse(line) {
        Ok(v) => v,
        Err(e) => return json::error_line(&e),
    };
    let op = match (&m, m.get("op").and_then(|o| o.as_str())) {
        (Json::Obj(_), Some(op)) => op.to_string(),
        _ => return json::error_line("a request is a JSON object with a string 'op'"),
    };
    match op.as_str() {
        "hello" => format!(
            "{{\"protocol\":1,\"implementation\":\"outside-rust-mwem\",\"algorithms\":[\"{}\"],\"modes\":[\"tape\",\"own\",\"transcript\"],\"ops\":[\"runs\"]}}",
            ALGORITHM
        ),
        "init" => match init(&m, fault) {
            Ok(s) => {
                *session = Some(s);
                "{\"ok\":true}".into()
            }
            Err(e) => {
                *session = None; // a refused init forgets the earlier run
                json::error_line(&e)
            }
        },
        "step" => {
            let s = match session.as_mut() {
                Some(s) => s,
                None => return json::error_line("step before a successful init"),
            };
            let x = match m.get("input") {
                Some(x) => x,
                None => return json::error_line("step: 'input' is required"),
            };
            let b = match params::check_input(&s.cfg, x) {
                Ok(b) => b,
                Err(e) => return json::error_line(&e),
            };
            let f = match mwem::admit(&s.cfg, &s.state, &b) {
                Ok(f) => f,
                Err(e) => return json::error_line(&e),
            };
            let mut src = Source { mode: s.mode, rng: &mut s.rng, io, draws: String::new() };
            match mwem::step(&s.cfg, fault, &s.state, &b, f, &mut src) {
                Ok(new) => {
                    let mut out = String::from("{\"release\":");
                    json::push_nums(&mut out, &new.g);
                    if s.mode == Mode::Transcript {
                        out.push_str(",\"draws\":[");
                        out.push_str(&src.draws);
                        out.push(']');
                    }
                    out.push('}');
                    s.state = new;
                    out
                }
                Err(e) => json::error_line(&e),
            }
        }
        "run" => {
            let s = match session.as_mut() {
                Some(s) => s,
                None => return json::error_line("run before a successful init"),
            };
            let batches = match m.get("inputs").ok_or("run: 'inputs' is required".to_string()).and_then(|i| check_stream(&s.cfg, i)) {
                Ok(b) => b,
                Err(e) => return json::error_line(&e),
            };
            let mut src = Source { mode: s.mode, rng: &mut s.rng, io, draws: String::new() };
            let mut rel = String::new();
            match one_run(&s.cfg, fault, &batches, &mut src, &mut rel) {
                Ok(()) => {
                    let mut out = String::from("{\"releases\":");
                    out.push_str(&rel);
                    if s.mode == Mode::Transcript {
                        out.push_str(",\"draws\":[");
                        out.push_str(&src.draws);
                        out.push(']');
                    }
                    out.push('}');
                    out
                }
                Err(e) => json::error_line(&e),
            }
        }
        "runs" => {
            let s = match session.as_mut() {
                Some(s) => s,
                None => return json::error_line("runs before a successful init"),
            };
            if s.mode == Mode::Tape {
                return json::error_line("runs is an own-mode and transcript-mode op");
            }
            let count = match m.get("count").and_then(|c| c.as_int()) {
                Some(c) if (1..=1_000_000).contains(&c) => c as usize,
                _ => return json::error_line("runs: 'count' must be an integer in [1, 10^6]"),
            };
            let batches = match m.get("inputs").ok_or("runs: 'inputs' is required".to_string()).and_then(|i| check_stream(&s.cfg, i)) {
                Ok(b) => b,
                Err(e) => return json::error_line(&e),
            };
            let transcript = s.mode == Mode::Transcript;
            let mut runs = String::with_capacity(count * 64);
            let mut draws = String::new();
            runs.push_str("{\"runs\":[");
            if transcript {
                draws.push_str(",\"draws\":[");
            }
            for r in 0..count {
                if r > 0 {
                    runs.push(',');
                    if transcript {
                        draws.push(',');
                    }
                }
                let mut src = Source { mode: s.mode, rng: &mut s.rng, io, draws: String::new() };
                if let Err(e) = one_run(&s.cfg, fault, &batches, &mut src, &mut runs) {
                    return json::error_line(&e);
                }
                if transcript {
                    draws.push('[');
                    draws.push_str(&src.draws);
                    draws.push(']');
                }
            }
            runs.push(']');
            if transcript {
                draws.push(']');
                runs.push_str(&draws);
            }
            runs.push('}');
            runs
        }
        other => json::error_line(&format!("unknown op {:?}", other)),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() > 1 {
        eprintln!("usage: mwem [FAULT]");
        std::process::exit(2);
    }
    let fault = match parse_fault(args.first().map(|s| s.as_str()).unwrap_or("none")) {
        Some(f) => f,
        None => {
            eprintln!("mwem: unknown FAULT {:?} (none, em*1.5, em*2, scale/1.5, scale/2, noiseless, own-rng, linear-space)", args[0]);
            std::process::exit(2);
        }
    };
    let mut io = Io::new();
    let mut session: Option<Session> = None;
    while let Some(line) = io.next_line() {
        let answer = match line {
            Ok(l) => handle(&l, &mut session, fault, &mut io),
            Err(e) => json::error_line(&e),
        };
        io.say(&answer);
    }
}
