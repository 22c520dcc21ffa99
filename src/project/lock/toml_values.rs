//! TOML keys and strings as the lock writes them, through `toml_writer`: a key bare when it
//! can be, every string a basic (double-quoted) string.

use toml_writer::{ToTomlKey, ToTomlValue, TomlKeyBuilder, TomlStringBuilder};

/// A TOML key: bare when it can be, else a basic string.
pub fn toml_key(key: &str) -> String {
    let builder = TomlKeyBuilder::new(key);
    builder
        .as_unquoted()
        .unwrap_or_else(|| builder.as_basic())
        .to_toml_key()
}

/// A TOML basic string.
pub fn toml_string(value: &str) -> String {
    TomlStringBuilder::new(value).as_basic().to_toml_value()
}

/// A TOML array of basic strings on one line: `["python3", "graders/check.py"]`.
pub fn toml_string_array(values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|value| toml_string(value)).collect();
    format!("[{}]", items.join(", "))
}
