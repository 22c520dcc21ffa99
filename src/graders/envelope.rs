//! Reading a completion: plain text, or a JSON envelope with a reply and tool calls.
//!
//! Accepted envelope shapes (the ones the seeds and common chat APIs produce):
//! - `{"reply"|"text"|"content"|"message": "...", "tool_calls": [{"name": "...", "arguments": {...}}]}`;
//!   a call may also be `{"function": {"name": "...", "arguments": "<JSON text>"}}`,
//!   `{"tool_name": "...", "arguments": {...}}` or `{"tool": {"name": "...", "args": {...}}}`,
//!   and use `args` for `arguments`;
//! - `{"tool_name": "...", "arguments": {...}, "content": "..."}` (one call);
//! - `{"tool": {"name": "...", "args": {...}}, "text": "..."}` (one call).
//!
//! A call in none of these shapes is recorded as unreadable, never dropped: the grader
//! cannot know what it calls.

use serde_json::{Map, Value};

/// One tool call found in a completion.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub name: String,
    pub arguments: Value,
}

/// A completion as the grader sees it.
#[derive(Debug, Clone)]
pub struct Completion<'a> {
    pub raw: &'a str,
    /// The parsed JSON document, when the completion is one.
    pub json: Option<Value>,
    pub tool_calls: Vec<ToolCall>,
    /// Where the envelope holds something that looks like a tool call but names no tool
    /// in any shape the grader knows (`tool_calls[2]`, `tool`): assertions that forbid
    /// calls cannot tell what it calls, so they fail.
    pub unreadable_calls: Vec<String>,
}

const REPLY_KEYS: &[&str] = &["reply", "text", "content", "message", "final_text"];

impl<'a> Completion<'a> {
    pub fn read(raw: &'a str) -> Completion<'a> {
        let json = match serde_json::from_str::<crate::cases::strict_json::StrictValue>(raw.trim())
        {
            Ok(crate::cases::strict_json::StrictValue(value)) => Some(value),
            Err(_) => None,
        };
        let mut calls = Calls::default();
        if let Some(Value::Object(map)) = &json {
            calls.read_envelope(map);
        }
        Completion {
            raw,
            json,
            tool_calls: calls.found,
            unreadable_calls: calls.unreadable,
        }
    }

    pub fn object(&self) -> Option<&Map<String, Value>> {
        self.json.as_ref().and_then(Value::as_object)
    }

    /// The envelope's reply field, decoded; `None` when the completion is not a JSON
    /// object with one.
    pub fn reply_field(&self) -> Option<&str> {
        let map = self.object()?;
        REPLY_KEYS
            .iter()
            .find_map(|key| map.get(*key).and_then(Value::as_str))
    }

    /// What the assistant said to the user: the envelope's reply field, else the whole text.
    pub fn reply_text(&self) -> &str {
        match (self.reply_field(), self.object()) {
            (Some(reply), _) => reply,
            (None, Some(_)) => "",
            (None, None) => self.raw,
        }
    }

    /// What text assertions read: the decoded reply of an envelope, else the completion as
    /// written (plain text, or a JSON document without a reply field).
    pub fn asserted_text(&self) -> &str {
        self.reply_field().unwrap_or(self.raw)
    }

    /// Every string value inside a JSON completion, decoded (the reply, tool-call
    /// arguments, other fields); none for plain text.
    pub fn decoded_strings(&self) -> Vec<&str> {
        fn collect<'v>(value: &'v Value, strings: &mut Vec<&'v str>) {
            match value {
                Value::String(text) => strings.push(text),
                Value::Array(items) => items.iter().for_each(|item| collect(item, strings)),
                Value::Object(map) => map.values().for_each(|item| collect(item, strings)),
                _ => {}
            }
        }
        let mut strings = Vec::new();
        if let Some(json) = &self.json {
            collect(json, &mut strings);
        }
        strings
    }

    pub fn calls_named<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s ToolCall> + 's {
        self.tool_calls.iter().filter(move |call| call.name == name)
    }
}

/// Where the tool-call trajectories of a last-good completion and the current one first
/// part (the seeds' AgentTwin): `at step 2 last-good called get_refund_policy; now
/// refund_payment, twice`. `None` when they call the same tools in the same order.
pub fn trajectory_divergence(last_good: &str, now: &str) -> Option<String> {
    let names = |raw: &str| -> Vec<String> {
        Completion::read(raw)
            .tool_calls
            .into_iter()
            .map(|call| call.name)
            .collect()
    };
    let (before, after) = (names(last_good), names(now));
    if before == after {
        return None;
    }
    let step = before
        .iter()
        .zip(&after)
        .position(|(a, b)| a != b)
        .unwrap_or(before.len().min(after.len()));
    let then = match before.get(step) {
        Some(name) => format!("last-good called {name}"),
        None => "last-good had stopped calling tools".to_owned(),
    };
    let now = match after.get(step) {
        Some(name) => {
            let times = after[step..].iter().filter(|call| *call == name).count();
            match times {
                1 => format!("now {name}"),
                2 => format!("now {name}, twice"),
                times => format!("now {name}, {times} times"),
            }
        }
        None => "now it stops calling tools".to_owned(),
    };
    Some(format!("at step {} {then}; {now}", step + 1))
}

/// The tool calls of an envelope, and where calls could not be read.
#[derive(Default)]
struct Calls {
    found: Vec<ToolCall>,
    unreadable: Vec<String>,
}

/// How a call names its tool, as a key of the call object: `{"function": {"name", "arguments"}}`,
/// `{"tool_name", "arguments"}`, `{"tool": {"name", "args"}}`, `{"name", "arguments"}`.
const CALL_KEYS: &[&str] = &["function", "tool_name", "tool", "name"];

/// The shapes an envelope may use at its top level for its one call (`name` there is not
/// a call).
const TOP_LEVEL_CALL_KEYS: &[&str] = &["tool_name", "tool"];

impl Calls {
    fn read_envelope(&mut self, map: &Map<String, Value>) {
        match map.get("tool_calls") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    let at = format!("tool_calls[{index}]");
                    match item {
                        Value::Object(call) => self.read_call(call, CALL_KEYS, &at),
                        _ => self.unreadable.push(at),
                    }
                }
            }
            Some(_) => self.unreadable.push("tool_calls".into()),
        }
        self.read_call(map, TOP_LEVEL_CALL_KEYS, "");
    }

    /// Every shape present in `call` is read (a call object that mixes two shapes is
    /// counted under both names, so neither can hide from `must_not_call`). An object of
    /// `tool_calls` in no known shape is unreadable; `at` names it in reasons (empty: the
    /// envelope itself, where each offending key is named instead).
    fn read_call(&mut self, call: &Map<String, Value>, keys: &[&str], at: &str) {
        let mut named = false;
        for key in keys {
            // `"tool_name": null` says there is no call.
            let Some(value) = call.get(*key).filter(|value| !value.is_null()) else {
                continue;
            };
            named = true;
            match call_by(call, key, value) {
                Some(found) => self.found.push(found),
                None if at.is_empty() => self.unreadable.push((*key).to_owned()),
                None => self.unreadable.push(format!("{at}.{key}")),
            }
        }
        if !named && !at.is_empty() {
            self.unreadable.push(at.to_owned());
        }
    }
}

/// The call `call` describes through `key`, or `None` when that part cannot be read (a
/// name that is not a string, a `function` or `tool` that is not an object with one).
fn call_by(call: &Map<String, Value>, key: &str, value: &Value) -> Option<ToolCall> {
    let (holder, name) = match (key, value) {
        ("function" | "tool", Value::Object(inner)) => (inner, inner.get("name")?),
        ("function" | "tool", _) => return None,
        _ => (call, value),
    };
    Some(ToolCall {
        name: name.as_str()?.to_owned(),
        arguments: arguments_of(holder),
    })
}

/// `arguments` or `args`; chat APIs send arguments as JSON text, which is decoded.
fn arguments_of(map: &Map<String, Value>) -> Value {
    let arguments = map
        .get("arguments")
        .or_else(|| map.get("args"))
        .cloned()
        .unwrap_or(Value::Null);
    match arguments {
        Value::String(text) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_envelope_shape() {
        let list = Completion::read(
            r#"{"reply":"ok","tool_calls":[{"name":"get_order","arguments":{"order_id":"1"}}]}"#,
        );
        assert_eq!(
            list.tool_calls,
            vec![ToolCall {
                name: "get_order".into(),
                arguments: json!({"order_id": "1"})
            }]
        );
        assert_eq!(list.reply_text(), "ok");

        let openai = Completion::read(
            r#"{"tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1}"}}]}"#,
        );
        assert_eq!(openai.tool_calls[0].arguments, json!({"a": 1}));

        let single =
            Completion::read(r#"{"tool_name":"lookup_order","arguments":{"x":1},"content":"hi"}"#);
        assert_eq!(single.tool_calls[0].name, "lookup_order");
        assert_eq!(single.reply_text(), "hi");

        let tool = Completion::read(r#"{"tool":{"name":"create_refund","args":{"order_id":"7"}}}"#);
        assert_eq!(tool.tool_calls[0].arguments, json!({"order_id": "7"}));
    }

    #[test]
    fn every_call_shape_is_read_inside_tool_calls_too() {
        let calls = Completion::read(
            r#"{"tool_calls":[{"tool_name":"a","arguments":{"x":1}},{"tool":{"name":"b","args":{"y":2}}},{"function":{"name":"c","arguments":"{}"}},{"name":"d"}]}"#,
        );
        let names: Vec<&str> = calls
            .tool_calls
            .iter()
            .map(|call| call.name.as_str())
            .collect();
        assert_eq!(names, vec!["a", "b", "c", "d"]);
        assert_eq!(calls.tool_calls[0].arguments, json!({"x": 1}));
        assert_eq!(calls.tool_calls[1].arguments, json!({"y": 2}));
        assert!(calls.unreadable_calls.is_empty());
    }

    #[test]
    fn calls_that_cannot_be_read_are_named_never_dropped() {
        let read = |raw: &str| Completion::read(raw).unreadable_calls;
        assert_eq!(
            read(r#"{"tool_calls":[{"name":"ok"},{"id":"call_1"},7,{"name":3}]}"#),
            vec!["tool_calls[1]", "tool_calls[2]", "tool_calls[3].name"]
        );
        assert_eq!(
            read(r#"{"tool_calls":"create_refund"}"#),
            vec!["tool_calls"]
        );
        assert_eq!(
            read(r#"{"tool":"create_refund","tool_name":{"n":1}}"#),
            vec!["tool_name", "tool"]
        );
        assert_eq!(
            read(r#"{"tool_calls":[{"function":{"arguments":"{}"}}]}"#),
            vec!["tool_calls[0].function"]
        );
        // Absent or null: no call, nothing unreadable.
        for quiet in [
            r#"{"reply":"hi","tool_calls":null,"tool_name":null,"tool":null}"#,
            r#"{"reply":"hi","tool_calls":[]}"#,
            r#"{"name":"Ada","reply":"hi"}"#,
            "[1]",
            "plain text",
        ] {
            let completion = Completion::read(quiet);
            assert!(completion.unreadable_calls.is_empty(), "{quiet}");
            assert!(completion.tool_calls.is_empty(), "{quiet}");
        }
    }

    #[test]
    fn text_assertions_read_the_decoded_reply() {
        let envelope = Completion::read(r#"{"reply":"caf\u00e9 \"ok\"","tool_calls":[]}"#);
        assert_eq!(envelope.asserted_text(), "café \"ok\"");
        let document = Completion::read(r#"{"status":"caf\u00e9"}"#);
        assert_eq!(document.asserted_text(), r#"{"status":"caf\u00e9"}"#);
        assert_eq!(document.decoded_strings(), vec!["café"]);
        assert_eq!(document.reply_text(), "");
        let text = Completion::read(r"caf\u00e9");
        assert_eq!(text.asserted_text(), r"caf\u00e9");
        assert!(text.decoded_strings().is_empty());
    }

    #[test]
    fn plain_text_has_no_calls_and_is_its_own_reply() {
        let text = Completion::read("Which order id should I refund?");
        assert!(text.json.is_none());
        assert!(text.tool_calls.is_empty());
        assert_eq!(text.reply_text(), "Which order id should I refund?");
    }

    #[test]
    fn trajectories_name_the_first_step_where_they_part() {
        let call = |names: &[&str]| {
            let calls: Vec<String> = names
                .iter()
                .map(|name| format!("{{\"name\": \"{name}\", \"arguments\": {{}}}}"))
                .collect();
            format!(
                "{{\"reply\": \"ok\", \"tool_calls\": [{}]}}",
                calls.join(", ")
            )
        };
        let good = call(&["get_order", "get_refund_policy", "refund_payment"]);
        assert_eq!(
            trajectory_divergence(
                &good,
                &call(&["get_order", "refund_payment", "refund_payment"])
            )
            .as_deref(),
            Some("at step 2 last-good called get_refund_policy; now refund_payment, twice")
        );
        assert_eq!(trajectory_divergence(&good, &good), None);
        assert_eq!(
            trajectory_divergence(&good, &call(&["get_order"])).as_deref(),
            Some("at step 2 last-good called get_refund_policy; now it stops calling tools")
        );
        assert_eq!(trajectory_divergence("plain text", "other text"), None);
    }
}
