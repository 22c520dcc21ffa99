//! A JSON value that refuses what `case-v1` cannot hash honestly: duplicate keys and
//! non-finite numbers. Works with any serde format (JSON, YAML).

use crate::text::LineIndex;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// YAML reads `.nan`, `.inf` and a number past a double's range (`1e400`) alike, as a
/// double that is not finite: the message names all three.
pub(crate) const NON_FINITE_MESSAGE: &str = "NaN, Infinity and numbers past a double's range (such as 1e400) are not allowed: JSON and case-v1 cannot represent them";

/// Deserializes into a [`serde_json::Value`], rejecting duplicate keys and NaN/Infinity.
#[derive(Debug, Clone, PartialEq)]
pub struct StrictValue(pub Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Value, E> {
        i64::try_from(value)
            .map(|small| Value::Number(small.into()))
            .map_err(|_| E::custom(format!("integer {value} is out of range for JSON")))
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Value, E> {
        u64::try_from(value)
            .map(|small| Value::Number(small.into()))
            .map_err(|_| E::custom(format!("integer {value} is out of range for JSON")))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| E::custom(NON_FINITE_MESSAGE))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        StrictValue::deserialize(deserializer).map(|strict| strict.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = access.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<MapKey>()? {
            // Refused as soon as the key is read, so the parser's position is the key's
            // own (not the end of its value, which may hold the same key again).
            if map.contains_key(&key.0) {
                return Err(de::Error::custom(format!("duplicate key `{}`", key.0)));
            }
            let StrictValue(value) = access.next_value()?;
            map.insert(key.0, value);
        }
        Ok(Value::Object(map))
    }
}

/// Line and column (1-based) where the key starts that a JSON error of [`StrictValue`]
/// (or a derived reader's `duplicate field`) refuses as a duplicate. serde_json reports
/// where it stopped, just after the key's closing quote; the key's opening quote is the
/// first unescaped quote before it. `None` for any other error.
pub(crate) fn duplicate_key_position(text: &str, error: &serde_json::Error) -> Option<(u32, u32)> {
    let message = error.to_string();
    if !message.starts_with("duplicate key `") && !message.starts_with("duplicate field `") {
        return None;
    }
    let index = LineIndex::new(text.as_bytes());
    let line = u32::try_from(error.line()).ok()?;
    let closing = (index.line_start(line)? + error.column()).checked_sub(1)?;
    let bytes = text.as_bytes();
    if bytes.get(closing) != Some(&b'"') {
        return None;
    }
    let escaped = |at: usize| {
        let backslashes = bytes[..at].iter().rev().take_while(|&&byte| byte == b'\\');
        backslashes.count() % 2 == 1
    };
    let opening = (0..closing)
        .rev()
        .find(|&at| bytes[at] == b'"' && !escaped(at))?;
    Some(index.position_of(bytes, opening))
}

/// A mapping key: JSON keys are strings; YAML scalars (numbers, booleans) become strings.
struct MapKey(String);

impl<'de> Deserialize<'de> for MapKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = MapKey;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a string key")
            }
            fn visit_str<E>(self, value: &str) -> Result<MapKey, E> {
                Ok(MapKey(value.to_owned()))
            }
            fn visit_string<E>(self, value: String) -> Result<MapKey, E> {
                Ok(MapKey(value))
            }
            fn visit_bool<E>(self, value: bool) -> Result<MapKey, E> {
                Ok(MapKey(value.to_string()))
            }
            fn visit_i64<E>(self, value: i64) -> Result<MapKey, E> {
                Ok(MapKey(value.to_string()))
            }
            fn visit_u64<E>(self, value: u64) -> Result<MapKey, E> {
                Ok(MapKey(value.to_string()))
            }
        }
        deserializer.deserialize_any(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_rejected_with_a_position() {
        let error = serde_json::from_str::<StrictValue>("{\"a\": 1,\n \"a\": 2}").unwrap_err();
        assert!(error.to_string().contains("duplicate key `a`"), "{error}");
        assert_eq!(error.line(), 2);
    }

    fn duplicate_at(text: &str) -> Option<(u32, u32)> {
        let error = serde_json::from_str::<StrictValue>(text).unwrap_err();
        duplicate_key_position(text, &error)
    }

    #[test]
    fn a_duplicate_key_is_placed_where_its_second_occurrence_starts() {
        // The last key of its object, its value running over lines: the key's own line.
        let last = "[\n  {\n    \"a\": 1,\n    \"a\": [\n      2\n    ]\n  }\n]\n";
        assert_eq!(duplicate_at(last), Some((4, 5)));
        // Not the last: the second key, not the end of its value.
        assert_eq!(
            duplicate_at(r#"{"id": "b", "id": "c", "x": 1}"#),
            Some((1, 13))
        );
        // Its value holds the same key again: still the outer key.
        assert_eq!(duplicate_at(r#"{"a": 1, "a": {"a": 2}}"#), Some((1, 10)));
        // Escaped quotes and backslashes inside the key, and a key spelled with \u.
        assert_eq!(duplicate_at(r#"{"q\"\\": 1, "q\"\\": 2}"#), Some((1, 14)));
        assert_eq!(duplicate_at(r#"{"ab": 1, "a\u0062": 2}"#), Some((1, 11)));
    }

    #[test]
    fn other_errors_have_no_duplicate_position() {
        assert_eq!(duplicate_at(r#"{"a": 1,}"#), None);
        assert_eq!(duplicate_at(r#"{"a": NaN}"#), None);
        // A string value that merely reads like the message is not mistaken for one.
        assert_eq!(duplicate_at(r#"["duplicate key `a`", }"#), None);
    }

    #[test]
    fn nested_duplicates_are_rejected_too() {
        assert!(serde_json::from_str::<StrictValue>(r#"{"a": {"b": 1, "b": 1}}"#).is_err());
        assert!(serde_json::from_str::<StrictValue>(r#"{"a": {"b": 1, "c": 1}}"#).is_ok());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(100_000);
        assert!(serde_json::from_str::<StrictValue>(&deep).is_err());
    }
}
