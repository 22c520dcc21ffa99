//! A JSON value that refuses what `case-v1` cannot hash honestly: duplicate keys and
//! non-finite numbers. Works with any serde format (JSON, YAML).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

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
        Number::from_f64(value).map(Value::Number).ok_or_else(|| {
            E::custom("NaN and Infinity are not allowed: JSON and case-v1 cannot represent them")
        })
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
            let StrictValue(value) = access.next_value()?;
            if map.contains_key(&key.0) {
                return Err(de::Error::custom(format!("duplicate key `{}`", key.0)));
            }
            map.insert(key.0, value);
        }
        Ok(Value::Object(map))
    }
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
