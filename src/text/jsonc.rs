//! JSON with comments and trailing commas, as editors write MCP configurations, read
//! through `jsonc-parser` so that every value keeps its line.

use super::LineIndex;
use jsonc_parser::ast::{Object, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};

/// A parsed document and the index that turns its byte offsets into lines.
pub struct Document<'a> {
    pub value: Value<'a>,
    lines: LineIndex,
}

/// Where a document stopped parsing: 1-based line and column, and why.
pub struct SyntaxError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl<'a> Document<'a> {
    /// Parses `text`; an empty document is a syntax error.
    pub fn parse(text: &'a str) -> Result<Document<'a>, SyntaxError> {
        let lines = LineIndex::new(text.as_bytes());
        let parsed = jsonc_parser::parse_to_ast(
            text,
            &CollectOptions::default(),
            // What VS Code's JSONC allows beyond JSON, and nothing of JSON5.
            &ParseOptions {
                allow_comments: true,
                allow_trailing_commas: true,
                allow_loose_object_property_names: false,
                allow_missing_commas: false,
                allow_single_quoted_strings: false,
                allow_hexadecimal_numbers: false,
                allow_unary_plus_numbers: false,
                allow_bare_decimal_point_numbers: false,
                allow_non_finite_numbers: false,
                allow_extended_string_escapes: false,
            },
        )
        .map_err(|error| {
            let (line, column) = lines.position_of(text.as_bytes(), error.range().start);
            SyntaxError {
                line,
                column,
                message: error.kind().to_string(),
            }
        })?;
        let value = parsed.value.ok_or(SyntaxError {
            line: 1,
            column: 1,
            message: "the file is empty: it must hold a JSON object".to_owned(),
        })?;
        Ok(Document { value, lines })
    }

    /// 1-based line where `node` starts.
    pub fn line(&self, node: &impl Ranged) -> u32 {
        self.lines.line_of(node.start())
    }
}

/// The string value of `object[key]`, if it is one.
pub fn string<'b>(object: &'b Object<'_>, key: &str) -> Option<&'b str> {
    object.get_string(key).map(|literal| literal.value.as_ref())
}

/// A JSON type name for messages.
pub fn type_name(value: &Value<'_>) -> &'static str {
    match value {
        Value::StringLit(_) => "a string",
        Value::NumberLit(_) => "a number",
        Value::BooleanLit(_) => "a boolean",
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::NullKeyword(_) => "null",
    }
}

/// The value as serde_json holds it, for the canonical digest of a schema. A number that
/// serde_json cannot hold becomes its text.
pub fn to_serde(value: &Value<'_>) -> serde_json::Value {
    match value {
        Value::StringLit(literal) => serde_json::Value::String(literal.value.to_string()),
        Value::NumberLit(number) => serde_json::from_str(number.value)
            .unwrap_or_else(|_| serde_json::Value::String(number.value.to_owned())),
        Value::BooleanLit(boolean) => serde_json::Value::Bool(boolean.value),
        Value::NullKeyword(_) => serde_json::Value::Null,
        Value::Array(array) => {
            serde_json::Value::Array(array.elements.iter().map(to_serde).collect())
        }
        Value::Object(object) => serde_json::Value::Object(
            object
                .properties
                .iter()
                .map(|property| (property.name.as_str().to_owned(), to_serde(&property.value)))
                .collect(),
        ),
    }
}

impl Document<'_> {
    /// Every string value of a member named `key`, at any depth, with its line.
    pub fn strings_named(&self, key: &str) -> Vec<(u32, String)> {
        let mut found = Vec::new();
        self.collect_named(&self.value, key, &mut found);
        found
    }

    fn collect_named(&self, value: &Value<'_>, key: &str, found: &mut Vec<(u32, String)>) {
        match value {
            Value::Object(object) => {
                for property in &object.properties {
                    if let (true, Value::StringLit(literal)) =
                        (property.name.as_str() == key, &property.value)
                    {
                        found.push((self.line(&property.value), literal.value.to_string()));
                    }
                    self.collect_named(&property.value, key, found);
                }
            }
            Value::Array(array) => {
                for element in &array.elements {
                    self.collect_named(element, key, found);
                }
            }
            _ => {}
        }
    }
}
