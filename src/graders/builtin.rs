//! The built-in deterministic grader: a case's `expect` assertions over one completion.
//! It never calls a model and it fails closed: an assertion it cannot evaluate, an
//! unknown assertion, or a case with no assertions is a failure, never a pass.
//! Every failure is a grep-friendly reason code such as `missing_key:status`.

mod state;
#[cfg(test)]
mod tests;
mod text;
mod tools;

use super::envelope::Completion;
use super::expect::{Assertions, Expect, Strings};
use super::Grade;
use serde_json::{Map, Value};
use std::fmt;
use text::check_text;
use tools::check_tools;

/// Grades `raw` against the case's `expect` (absent: no assertions, which fails).
pub fn grade(expect: Option<&Value>, raw: &str) -> Grade {
    grade_with(&Expect::of_value(expect), &Completion::read(raw))
}

/// [`grade`] with `expect` and the completion already read.
pub fn grade_with(expect: &Expect<'_>, completion: &Completion<'_>) -> Grade {
    Grade::from_reasons(assess(expect, completion, false).found)
}

/// Whether `completion` passes: `grade(expect, raw).pass`, but stops at the first failure
/// (the probes of EL303 and EL304 need only the verdict, for every case of every check).
pub fn passes(expect: &Expect<'_>, completion: &Completion<'_>) -> bool {
    !assess(expect, completion, true).failed
}

fn assess(expect: &Expect<'_>, completion: &Completion<'_>, stop_at_first: bool) -> Reasons {
    let mut reasons = Reasons::new(stop_at_first);
    if completion.raw.trim().is_empty() {
        reasons.push(format_args!("empty_completion"));
        if reasons.settled() {
            return reasons;
        }
    }
    match expect {
        Expect::Missing => reasons.push(format_args!("no_assertions")),
        Expect::Object(expect) if expect.members == 0 => {
            reasons.push(format_args!("no_assertions"))
        }
        Expect::Object(expect) => check_all(expect, completion, &mut reasons),
        Expect::NotObject => reasons.push(format_args!("invalid_expect")),
    }
    reasons
}

/// Failure reasons in the order found, without repeats.
struct Reasons {
    found: Vec<String>,
    failed: bool,
    /// Only the verdict is wanted: the first reason settles it, and no reason is written
    /// out (the probes grade every case several times in every check).
    stop_at_first: bool,
}

impl Reasons {
    fn new(stop_at_first: bool) -> Self {
        Reasons {
            found: Vec::new(),
            failed: false,
            stop_at_first,
        }
    }

    fn push(&mut self, reason: fmt::Arguments<'_>) {
        self.failed = true;
        if self.stop_at_first {
            return;
        }
        let reason = reason.to_string();
        if !self.found.contains(&reason) {
            self.found.push(reason);
        }
    }

    /// The verdict is known and nothing more is wanted.
    fn settled(&self) -> bool {
        self.stop_at_first && self.failed
    }
}

fn check_all(expect: &Assertions<'_>, completion: &Completion<'_>, reasons: &mut Reasons) {
    for key in &expect.unknown {
        reasons.push(format_args!("unknown_assertion:{key}"));
        if reasons.settled() {
            return;
        }
    }
    if expect.wants_json {
        match (&completion.json, completion.object()) {
            (None, _) => reasons.push(format_args!("parse_fail")),
            (Some(_), None) => reasons.push(format_args!("not_object")),
            (Some(_), Some(object)) => check_json(expect, object, reasons),
        }
        if reasons.settled() {
            return;
        }
    }
    check_text(expect, completion, reasons);
    if reasons.settled() {
        return;
    }
    check_tools(expect, completion, reasons);
    if reasons.settled() {
        return;
    }
    state::check_state(expect, completion, reasons);
}

/// The strings of an assertion (none when absent); an invalid one is reported as such.
fn strings<'e>(
    assertion: Option<&'e Strings<'_>>,
    key: &str,
    reasons: &mut Reasons,
) -> Vec<&'e str> {
    match assertion {
        None => Vec::new(),
        Some(strings) => strings.valid().unwrap_or_else(|| {
            reasons.push(format_args!("invalid_assertion:{key}"));
            Vec::new()
        }),
    }
}

fn check_json(expect: &Assertions<'_>, object: &Map<String, Value>, reasons: &mut Reasons) {
    if !matches!(expect.json, None | Some(Value::Bool(_))) {
        reasons.push(format_args!("invalid_assertion:json"));
    }
    for key in strings(expect.required_keys.as_ref(), "required_keys", reasons) {
        if !object.contains_key(key) {
            reasons.push(format_args!("missing_key:{key}"));
        }
    }
    if expect.allowed_keys.is_some() {
        let allowed = strings(expect.allowed_keys.as_ref(), "allowed_keys", reasons);
        for key in object.keys().filter(|key| !allowed.contains(&key.as_str())) {
            reasons.push(format_args!("unexpected_key:{key}"));
        }
    }
    if let Some(allowed) = &expect.status_in {
        match (allowed, object.get("status")) {
            (Value::Array(allowed), Some(status)) if allowed.contains(status) => {}
            (Value::Array(_), Some(Value::String(status))) => {
                reasons.push(format_args!("status_not_in:{status}"))
            }
            (Value::Array(_), Some(other)) => reasons.push(format_args!("status_not_in:{other}")),
            (Value::Array(_), None) => reasons.push(format_args!("missing_key:status")),
            _ => reasons.push(format_args!("invalid_assertion:status_in")),
        }
    }
    match &expect.equals {
        None => {}
        Some(Value::Object(pairs)) => {
            let document = Value::Object(object.clone());
            for (path, expected) in pairs {
                match lookup(&document, path) {
                    None => reasons.push(format_args!("missing_path:{path}")),
                    Some(actual) if actual == expected => {}
                    Some(_) => reasons.push(format_args!("not_equal:{path}")),
                }
            }
        }
        Some(_) => reasons.push(format_args!("invalid_assertion:equals")),
    }
}

/// A value inside a JSON document by path: a JSON pointer (`/a/0/b`), or dotted
/// (`a.0.b`, optionally starting with `$.`) where a number indexes an array.
pub fn lookup<'v>(document: &'v Value, path: &str) -> Option<&'v Value> {
    if path.starts_with('/') {
        return document.pointer(path);
    }
    let dotted = path.strip_prefix("$.").unwrap_or(path);
    dotted
        .split('.')
        .try_fold(document, |value, segment| match value {
            Value::Object(map) => map.get(segment),
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
            _ => None,
        })
}
