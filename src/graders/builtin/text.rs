//! The text assertions (`must_include`, `forbidden`, `forbid_patterns`, `regex`,
//! `max_chars`) and the per-thread cache of their compiled patterns.

use super::{strings, Reasons};
use crate::graders::envelope::Completion;
use crate::graders::expect::Assertions;
use regex::{Regex, RegexBuilder};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::HashMap;

/// Text assertions read what the assistant said: the decoded reply of a JSON envelope,
/// else the completion as written, and, when it is a JSON document without a reply, each
/// of its strings decoded. `forbidden` and `forbid_patterns` read every string of an
/// envelope too (tool-call arguments, other fields), so nothing forbidden passes behind an
/// escape or inside a call.
pub(super) fn check_text(
    expect: &Assertions<'_>,
    completion: &Completion<'_>,
    reasons: &mut Reasons,
) {
    let said = completion.asserted_text();
    let is_envelope = completion.reply_field().is_some();
    let any_text = expect.must_include.is_some()
        || expect.forbidden.is_some()
        || expect.forbid_patterns.is_some()
        || expect.regex.is_some();
    let decoded = if any_text {
        completion.decoded_strings()
    } else {
        Vec::new()
    };
    // What positive assertions (`must_include`, `regex`) may match, and what negative
    // ones (`forbidden`, `forbid_patterns`) must not.
    let required_in: Vec<&str> = match is_envelope {
        true => vec![said],
        false => std::iter::once(said)
            .chain(decoded.iter().copied())
            .collect(),
    };
    let forbidden_in: Vec<&str> = std::iter::once(said)
        .chain(decoded.iter().copied())
        .collect();
    let lowered =
        |texts: &[&str]| -> Vec<String> { texts.iter().map(|text| text.to_lowercase()).collect() };
    if expect.must_include.is_some() {
        let haystacks = lowered(&required_in);
        for needle in strings(expect.must_include.as_ref(), "must_include", reasons) {
            let needle_lowered = needle.to_lowercase();
            if !haystacks.iter().any(|text| text.contains(&needle_lowered)) {
                reasons.push(format_args!("missing:{needle}"));
            }
        }
    }
    if expect.forbidden.is_some() {
        let haystacks = lowered(&forbidden_in);
        for phrase in strings(expect.forbidden.as_ref(), "forbidden", reasons) {
            let phrase_lowered = phrase.to_lowercase();
            if haystacks.iter().any(|text| text.contains(&phrase_lowered)) {
                reasons.push(format_args!("forbidden:{phrase}"));
            }
        }
    }
    for pattern in strings(expect.forbid_patterns.as_ref(), "forbid_patterns", reasons) {
        match compile(pattern, true) {
            Some(regex) if forbidden_in.iter().any(|text| regex.is_match(text)) => {
                reasons.push(format_args!("forbid_pattern:{pattern}"))
            }
            Some(_) => {}
            None => reasons.push(format_args!("invalid_regex:{pattern}")),
        }
    }
    for pattern in strings(expect.regex.as_ref(), "regex", reasons) {
        match compile(pattern, false) {
            Some(regex) if required_in.iter().any(|text| regex.is_match(text)) => {}
            Some(_) => reasons.push(format_args!("regex_mismatch:{pattern}")),
            None => reasons.push(format_args!("invalid_regex:{pattern}")),
        }
    }
    match &expect.max_chars {
        None => {}
        Some(Value::Number(number)) if number.as_u64().is_some() => {
            let limit = number.as_u64().unwrap_or(0);
            let count = said.chars().count() as u64;
            if count > limit {
                reasons.push(format_args!("too_long:{count}>{limit}"));
            }
        }
        Some(_) => reasons.push(format_args!("invalid_assertion:max_chars")),
    }
}

/// `forbid_patterns` match case-insensitively (as the seeds' graders do); `regex` is
/// taken as written (`(?i)` makes it case-insensitive).
/// Each pattern is compiled once per thread (a suite repeats its patterns case after
/// case, and probes grade every case several times).
pub(super) fn compile(pattern: &str, case_insensitive: bool) -> Option<Regex> {
    /// Past this many patterns the cache starts over, bounding its memory.
    const MAX_CACHED: usize = 4096;
    thread_local! {
        /// Case-sensitive patterns, then case-insensitive ones.
        static COMPILED: RefCell<[HashMap<String, Option<Regex>>; 2]> = RefCell::default();
    }
    COMPILED.with(|compiled| {
        let mut compiled = compiled.borrow_mut();
        let compiled = &mut compiled[usize::from(case_insensitive)];
        if let Some(regex) = compiled.get(pattern) {
            return regex.clone();
        }
        let regex = RegexBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .size_limit(1 << 20)
            .build()
            .ok();
        if compiled.len() >= MAX_CACHED {
            compiled.clear();
        }
        compiled.insert(pattern.to_owned(), regex.clone());
        regex
    })
}
