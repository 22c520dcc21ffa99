//! Reading a completion: plain text, or a JSON envelope with a reply and tool calls.
//!
//! Accepted envelope shapes (the ones the seeds and common chat APIs produce):
//! - `{"reply"|"text"|"content"|"message": "...", "tool_calls": [{"name": "...", "arguments": {...}}]}`;
//!   a call may also be `{"function": {"name": "...", "arguments": "<JSON text>"}}` or use `args`;
//! - `{"tool_name": "...", "arguments": {...}, "content": "..."}` (one call);
//! - `{"tool": {"name": "...", "args": {...}}, "text": "..."}` (one call).

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
}

const REPLY_KEYS: &[&str] = &["reply", "text", "content", "message", "final_text"];

impl<'a> Completion<'a> {
    pub fn read(raw: &'a str) -> Completion<'a> {
        let json = match serde_json::from_str::<crate::model::StrictValue>(raw.trim()) {
            Ok(crate::model::StrictValue(value)) => Some(value),
            Err(_) => None,
        };
        let tool_calls = match &json {
            Some(Value::Object(map)) => tool_calls_of(map),
            _ => Vec::new(),
        };
        Completion {
            raw,
            json,
            tool_calls,
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

fn tool_calls_of(map: &Map<String, Value>) -> Vec<ToolCall> {
    let mut calls = Vec::new();
    if let Some(Value::Array(items)) = map.get("tool_calls") {
        calls.extend(
            items
                .iter()
                .filter_map(|item| item.as_object().and_then(call_of)),
        );
    }
    if let Some(Value::String(name)) = map.get("tool_name") {
        calls.push(ToolCall {
            name: name.clone(),
            arguments: arguments_of(map),
        });
    }
    if let Some(Value::Object(tool)) = map.get("tool") {
        calls.extend(call_of(tool));
    }
    calls
}

fn call_of(item: &Map<String, Value>) -> Option<ToolCall> {
    if let Some(Value::Object(function)) = item.get("function") {
        let name = function.get("name")?.as_str()?.to_owned();
        return Some(ToolCall {
            name,
            arguments: arguments_of(function),
        });
    }
    let name = item.get("name")?.as_str()?.to_owned();
    Some(ToolCall {
        name,
        arguments: arguments_of(item),
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
}
