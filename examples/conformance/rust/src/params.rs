//! Checks of `params` shared by the algorithms: every error names the field and the rule.

use crate::json::Json;
use crate::noise::{refuse, Fail};

/// Unknown keys are refused rather than ignored: an ignored key might ask for a variant we do not
/// implement.
pub fn only_keys(object: &Json, allowed: &[&str], place: &str) -> Result<(), Fail> {
    if let Json::Object(members) = object {
        for (key, _) in members {
            if !allowed.contains(&key.as_str()) {
                return refuse(format!(
                    "{place}: unknown key {key:?} (allowed: {})",
                    allowed.join(", ")
                ));
            }
        }
    }
    Ok(())
}

pub fn positive_number(p: &Json, name: &str) -> Result<f64, Fail> {
    let v = p.get(name);
    match v.and_then(Json::as_finite) {
        Some(x) if x > 0.0 => Ok(x),
        _ => refuse(format!(
            "params.{name}: must be a finite number > 0 (got {})",
            describe(v)
        )),
    }
}

/// An integer >= min, read by value (16, 16.0 and 1.6e1 are 16; 2.5 and null are refused); `fallback` when absent.
pub fn integer_at_least(p: &Json, name: &str, min: i128, fallback: Option<i128>) -> Result<i128, Fail> {
    let v = p.get(name);
    if let (None, Some(x)) = (v, fallback) {
        return Ok(x);
    }
    match v.and_then(Json::as_integer) {
        Some(x) if x >= min => Ok(x),
        _ => refuse(format!(
            "params.{name}: must be an integer >= {min} (got {})",
            describe(v)
        )),
    }
}

pub fn describe(v: Option<&Json>) -> String {
    v.map_or_else(|| "missing".to_string(), Json::describe)
}
