//! The Binary tree counter (001-alg10) and PrivTree_T (001-alg5) of paper 001, written outside
//! dpstream, speaking its conformance protocol, version 1 (docs/conformance.md): one JSON object per
//! line on stdin, one answer per line on stdout, until stdin ends (then exit 0).
//!
//! ```text
//! dpstream-example                the algorithms as the reference corrects them (conforms)
//! dpstream-example --as-printed   001-alg10 with the printed noise scale log2(T)/epsilon
//!                                 (001-alg10 L8, erratum E-counters-1): NOT epsilon-DP
//! ```
//!
//! std only. Written from the public docs only (see README.md). The own-mode noise is an example,
//! NOT a secure sampler (noise.rs).

mod counter;
mod json;
mod lines;
mod noise;
mod params;
mod privtree;

use std::collections::HashMap;

use json::Json;
use lines::Lines;
use noise::{refuse, Fail, Generator, Noise};

const ALGORITHMS: [&str; 2] = ["001-alg10", "001-alg5"];

enum Config {
    Counter(counter::Config),
    PrivTree(privtree::Config),
}

/// A step's state (001-alg5: only whether its one input was taken).
#[derive(Clone)]
enum State {
    Counter(Box<counter::State>),
    PrivTree { t: u64 },
}

/// An input, checked and converted before anything is drawn.
enum Checked {
    Number(f64),
    Tree(HashMap<String, f64>),
}

struct Session {
    config: Config,
    state: State,
    noise: Noise,
}

fn fresh(config: &Config) -> State {
    match config {
        Config::Counter(_) => State::Counter(Box::new(counter::fresh())),
        Config::PrivTree(_) => State::PrivTree { t: 0 },
    }
}

fn steps_taken(state: &State) -> u64 {
    match state {
        State::Counter(s) => s.t,
        State::PrivTree { t } => *t,
    }
}

fn check_input(config: &Config, t: u64, x: &Json, place: &str) -> Result<Checked, Fail> {
    match config {
        Config::Counter(c) => counter::check_input(c, t, x, place).map(Checked::Number),
        Config::PrivTree(c) => privtree::check_input(c, t, x, place).map(Checked::Tree),
    }
}

fn step(config: &Config, state: &mut State, x: &Checked, noise: &mut Noise, io: &mut Lines) -> Result<Json, Fail> {
    match (config, state, x) {
        (Config::Counter(c), State::Counter(s), Checked::Number(v)) => counter::step(c, s, *v, noise, io),
        (Config::PrivTree(c), State::PrivTree { t }, Checked::Tree(values)) => {
            let release = privtree::run(c, values, noise, io)?;
            *t = 1;
            Ok(release)
        }
        _ => unreachable!("a checked input matches its algorithm"),
    }
}

/// A fresh run (same parameters, empty state) over a whole stream; every input is checked first.
fn fresh_run(session: &mut Session, inputs: &[Json], io: &mut Lines) -> Result<Json, Fail> {
    let mut checked = Vec::with_capacity(inputs.len());
    for (i, x) in inputs.iter().enumerate() {
        checked.push(check_input(&session.config, i as u64, x, &format!("inputs[{i}]"))?);
    }
    let mut state = fresh(&session.config);
    let mut releases = Vec::with_capacity(inputs.len());
    for x in &checked {
        releases.push(step(&session.config, &mut state, x, &mut session.noise, io)?);
    }
    Ok(Json::Array(releases))
}

struct Program {
    as_printed: bool,
    session: Option<Session>,
}

impl Program {
    fn hello(&self, message: &Json) -> Result<Json, Fail> {
        params::only_keys(message, &["op"], "hello")?;
        let name = if self.as_printed {
            "dpstream Rust example, 001-alg10 as printed (scale log2(T)/epsilon)"
        } else {
            "dpstream Rust example (001-alg10, 001-alg5)"
        };
        Ok(json::object(vec![
            ("protocol", json::integer(1)),
            ("implementation", json::string(name)),
            (
                "algorithms",
                Json::Array(ALGORITHMS.iter().map(|a| json::string(a)).collect()),
            ),
            ("modes", Json::Array(vec![json::string("tape"), json::string("own")])),
            ("ops", Json::Array(vec![json::string("runs")])),
        ]))
    }

    fn init(&mut self, message: &Json) -> Result<Json, Fail> {
        params::only_keys(message, &["op", "algorithm", "params", "noise", "seed"], "init")?;
        let p = message.get("params");
        let p = match p {
            Some(p @ Json::Object(_)) => p,
            _ => return refuse(format!("params: must be an object (got {})", params::describe(p))),
        };
        let config = match message.get("algorithm") {
            Some(Json::String(a)) if a == "001-alg10" => Config::Counter(counter::configure(p, self.as_printed)?),
            Some(Json::String(a)) if a == "001-alg5" => Config::PrivTree(privtree::configure(p)?),
            other => {
                return refuse(format!(
                    "algorithm: must be one of {} (got {})",
                    ALGORITHMS.join(", "),
                    params::describe(other)
                ))
            }
        };
        let seed = message.get("seed");
        let Some(seed_value) = seed.and_then(Json::as_integer).and_then(|s| u64::try_from(s).ok()) else {
            return refuse(format!(
                "seed: must be an integer >= 0 and < 2^64 (got {})",
                params::describe(seed)
            ));
        };
        let noise = match message.get("noise") {
            Some(Json::String(m)) if m == "tape" => Noise::Tape,
            Some(Json::String(m)) if m == "own" => Noise::Own(Generator::new(seed_value)),
            other => {
                return refuse(format!(
                    "noise: must be \"tape\" or \"own\" (got {})",
                    params::describe(other)
                ))
            }
        };
        // everything is valid: only now forget the previous run
        let state = fresh(&config);
        self.session = Some(Session { config, state, noise });
        Ok(json::object(vec![("ok", Json::Bool(true))]))
    }

    fn session(&mut self, op: &str) -> Result<&mut Session, Fail> {
        match self.session.as_mut() {
            Some(s) => Ok(s),
            None => refuse(format!("{op} before a successful init")),
        }
    }

    fn step(&mut self, message: &Json, io: &mut Lines) -> Result<Json, Fail> {
        params::only_keys(message, &["op", "input"], "step")?;
        let s = self.session("step")?;
        let Some(input) = message.get("input") else {
            return refuse("step needs the key input".to_string());
        };
        let checked = check_input(&s.config, steps_taken(&s.state), input, "input")?;
        // the step works on a copy, kept only when every draw succeeded (a bad tape answer changes nothing)
        let mut state = s.state.clone();
        let release = step(&s.config, &mut state, &checked, &mut s.noise, io)?;
        s.state = state;
        Ok(json::object(vec![("release", release)]))
    }

    fn run(&mut self, message: &Json, io: &mut Lines) -> Result<Json, Fail> {
        params::only_keys(message, &["op", "inputs"], "run")?;
        let s = self.session("run")?;
        let Some(Json::Array(inputs)) = message.get("inputs") else {
            return refuse(format!(
                "inputs: must be an array (got {})",
                params::describe(message.get("inputs"))
            ));
        };
        Ok(json::object(vec![("releases", fresh_run(s, inputs, io)?)]))
    }

    /// The bulk op of statistical checks (announced in hello as "ops": ["runs"]): `count` fresh runs
    /// over the same inputs, own mode only (in tape mode every run would ask for the same sites).
    fn runs(&mut self, message: &Json, io: &mut Lines) -> Result<Json, Fail> {
        params::only_keys(message, &["op", "inputs", "count"], "runs")?;
        let s = self.session("runs")?;
        if !matches!(s.noise, Noise::Own(_)) {
            return refuse("runs: only in own mode".to_string());
        }
        let Some(Json::Array(inputs)) = message.get("inputs") else {
            return refuse(format!(
                "inputs: must be an array (got {})",
                params::describe(message.get("inputs"))
            ));
        };
        let count = message.get("count");
        let Some(n) = count
            .and_then(Json::as_integer)
            .filter(|n| (0..=10_000_000).contains(n))
        else {
            return refuse(format!(
                "count: must be an integer in [0, 10^7] (got {})",
                params::describe(count)
            ));
        };
        let mut all = Vec::with_capacity(n as usize);
        for _ in 0..n {
            all.push(fresh_run(s, inputs, io)?);
        }
        Ok(json::object(vec![("runs", Json::Array(all))]))
    }

    fn handle(&mut self, line: Result<String, String>, io: &mut Lines) -> Result<Json, Fail> {
        let message = match line.and_then(|l| json::parse(&l)) {
            Ok(m @ Json::Object(_)) => m,
            Ok(_) => return refuse("a message must be a JSON object".to_string()),
            Err(e) => return refuse(format!("not a JSON line: {e}")),
        };
        match message.get("op") {
            Some(Json::String(op)) if op == "hello" => self.hello(&message),
            Some(Json::String(op)) if op == "init" => self.init(&message),
            Some(Json::String(op)) if op == "step" => self.step(&message, io),
            Some(Json::String(op)) if op == "run" => self.run(&message, io),
            Some(Json::String(op)) if op == "runs" => self.runs(&message, io),
            other => refuse(format!(
                "op: must be one of hello, init, step, run, runs (got {})",
                params::describe(other)
            )),
        }
    }
}

fn main() {
    let mut as_printed = false;
    for arg in std::env::args().skip(1) {
        if arg == "--as-printed" {
            as_printed = true;
        } else {
            eprintln!("dpstream-example: unknown argument {arg} (only --as-printed)");
            std::process::exit(2);
        }
    }
    let mut program = Program {
        as_printed,
        session: None,
    };
    let mut io = Lines::new();
    while let Some(line) = io.next_line() {
        let answer = match program.handle(line, &mut io) {
            Ok(answer) => answer,
            Err(Fail::EndOfInput) => break,
            Err(Fail::Refused(message)) => json::object(vec![("error", Json::String(message))]),
        };
        io.say(&json::to_string(&answer));
    }
}
