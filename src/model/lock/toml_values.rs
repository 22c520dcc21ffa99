//! TOML keys, basic strings and decimals written by hand: the lock renders 200,000 of
//! each, so they go straight into a writer without a TOML serialiser.

use std::fmt::{self, Write};

/// A TOML key: bare when it can be, else a basic string.
pub fn toml_key(key: &str) -> String {
    TomlKey(key).to_string()
}

/// A TOML basic string. JSON string escapes are a subset TOML accepts.
pub fn toml_string(value: &str) -> String {
    TomlString(value).to_string()
}

/// A TOML array of basic strings on one line: `["python3", "graders/check.py"]`.
pub fn toml_string_array(values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|value| toml_string(value)).collect();
    format!("[{}]", items.join(", "))
}

/// Writes [`toml_key`] without building a string (a lock renders 200,000 of them).
pub struct TomlKey<'a>(pub &'a str);

impl fmt::Display for TomlKey<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_toml_key(out, self.0)
    }
}

/// Writes [`toml_string`] without building a string.
pub struct TomlString<'a>(pub &'a str);

impl fmt::Display for TomlString<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_toml_string(out, self.0)
    }
}

/// [`toml_key`] into any writer.
pub(super) fn write_toml_key(out: &mut impl Write, key: &str) -> fmt::Result {
    match is_bare_key(key) {
        true => out.write_str(key),
        false => write_toml_string(out, key),
    }
}

/// Whether TOML takes `key` unquoted (and [`toml_key`] writes it so).
pub(in crate::model) fn is_bare_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

/// [`toml_string`] into any writer.
pub(super) fn write_toml_string(out: &mut impl Write, value: &str) -> fmt::Result {
    out.write_char('"')?;
    let mut plain_from = 0;
    for (at, character) in value.char_indices() {
        let escape = match character {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\t' => Some("\\t"),
            '\r' => Some("\\r"),
            control if control.is_control() => None,
            _ => continue,
        };
        out.write_str(&value[plain_from..at])?;
        match escape {
            Some(escape) => out.write_str(escape)?,
            None => write!(out, "\\u{:04X}", u32::from(character))?,
        }
        plain_from = at + character.len_utf8();
    }
    out.write_str(&value[plain_from..])?;
    out.write_char('"')
}

/// `value` in decimal, as `{}` formats it.
pub(in crate::model) fn push_decimal(out: &mut String, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits[start..]).unwrap_or_default());
}
