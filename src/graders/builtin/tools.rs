//! The tool-call assertions (`must_call`, `must_not_call`, `args`) and
//! `require_clarification`: what the completion did rather than what it said.

use super::text::compile;
use super::{strings, Reasons};
use crate::graders::envelope::Completion;
use crate::graders::expect::{Assertions, Clarification};
use serde_json::Value;

pub(super) fn check_tools(
    expect: &Assertions<'_>,
    completion: &Completion<'_>,
    reasons: &mut Reasons,
) {
    for name in strings(expect.must_call.as_ref(), "must_call", reasons) {
        if completion.calls_named(name).next().is_none() {
            reasons.push(format_args!("missing_tool:{name}"));
        }
    }
    let forbidden_calls = strings(expect.must_not_call.as_ref(), "must_not_call", reasons);
    for name in &forbidden_calls {
        if completion.calls_named(name).next().is_some() {
            reasons.push(format_args!("forbidden_tool:{name}"));
        }
    }
    if !forbidden_calls.is_empty() {
        unreadable_calls(completion, reasons);
    }
    match &expect.args {
        None => {}
        Some(Value::Object(tools)) => {
            for (tool, spec) in tools {
                check_arguments(tool, spec, completion, reasons);
            }
        }
        Some(_) => reasons.push(format_args!("invalid_assertion:args")),
    }
    match &expect.require_clarification {
        None | Some(Clarification::Required(false)) => {}
        Some(Clarification::Required(true)) => check_clarification(completion, &[], reasons),
        Some(Clarification::Patterns(patterns)) => {
            let patterns = strings(Some(patterns), "require_clarification", reasons);
            check_clarification(completion, &patterns, reasons);
        }
        Some(Clarification::Invalid) => {
            reasons.push(format_args!("invalid_assertion:require_clarification"))
        }
    }
}

/// A call the grader cannot read may be any call: assertions that forbid calls fail
/// closed on it, naming where it is (`unreadable_tool_call:tool_calls[1]`).
fn unreadable_calls(completion: &Completion<'_>, reasons: &mut Reasons) {
    for at in &completion.unreadable_calls {
        reasons.push(format_args!("unreadable_tool_call:{at}"));
    }
}

/// Every expected argument must equal what the first call to `tool` passed; a plain value
/// or `{"eq": value}`.
fn check_arguments(tool: &str, spec: &Value, completion: &Completion<'_>, reasons: &mut Reasons) {
    let Value::Object(expected) = spec else {
        reasons.push(format_args!("invalid_assertion:args.{tool}"));
        return;
    };
    let Some(call) = completion.calls_named(tool).next() else {
        reasons.push(format_args!("missing_tool:{tool}"));
        return;
    };
    for (key, rule) in expected {
        let wanted = match rule {
            Value::Object(rule) if rule.len() == 1 && rule.contains_key("eq") => &rule["eq"],
            other => other,
        };
        if call.arguments.get(key) != Some(wanted) {
            reasons.push(format_args!("arg_mismatch:{tool}.{key}"));
        }
    }
}

/// Underspecified input: completing is the failure. Any tool call fails, and the reply
/// must ask: contain a `?`, or match one of the given patterns (case-insensitive).
fn check_clarification(completion: &Completion<'_>, patterns: &[&str], reasons: &mut Reasons) {
    for call in &completion.tool_calls {
        reasons.push(format_args!(
            "completed_without_clarification:{}",
            call.name
        ));
    }
    unreadable_calls(completion, reasons);
    let reply = completion.reply_text();
    let asked = if patterns.is_empty() {
        reply.contains('?')
    } else {
        patterns
            .iter()
            .any(|pattern| compile(pattern, true).is_some_and(|regex| regex.is_match(reply)))
    };
    if !asked {
        reasons.push(format_args!("no_clarifying_question"));
    }
}
