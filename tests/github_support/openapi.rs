//! Validates requests against the vendored GitHub OpenAPI operations
//! (tests/github-api/openapi-operations.json, from @octokit/openapi): route, method,
//! path and query parameters, and the JSON body against its schema.
//!
//! The JSON Schema validator covers the keywords the vendored schemas use (checked: an
//! unknown keyword is itself a violation) and is stricter than GitHub in one way: a body
//! property the schema does not name is a violation, because GitHub silently ignores
//! it and the request would not do what evalock meant.

use super::http::Request;
use serde_json::Value;

pub struct Operations {
    operations: Vec<Value>,
}

/// The operation a request matched.
pub struct Matched {
    pub operation_id: String,
    pub path_params: Vec<(String, String)>,
}

/// Keywords that only document; everything else must be understood.
const ANNOTATIONS: &[&str] = &[
    "default",
    "format",
    "deprecated",
    "title",
    "readOnly",
    "writeOnly",
    "nullable",
];

impl Operations {
    pub fn load() -> Operations {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/github-api/openapi-operations.json");
        let text = std::fs::read_to_string(&path).expect("vendored OpenAPI operations");
        let document: Value =
            serde_json::from_str(&text).expect("vendored OpenAPI operations parse");
        Operations {
            operations: document["operations"]
                .as_array()
                .expect("operations")
                .clone(),
        }
    }

    /// The operation for this request, or every reason it matches none.
    pub fn validate(&self, request: &Request, base_path: &str) -> Result<Matched, Vec<String>> {
        let Some(path) = request.path.strip_prefix(base_path) else {
            return Err(vec![format!(
                "{} is outside the API root {base_path}",
                request.path
            )]);
        };
        let (operation, path_params) = self
            .operations
            .iter()
            .find_map(|operation| {
                if operation["method"].as_str()? != request.method {
                    return None;
                }
                Some((
                    operation,
                    match_template(operation["path"].as_str()?, path)?,
                ))
            })
            .ok_or_else(|| {
                vec![format!(
                    "no vendored operation for {} {path}",
                    request.method
                )]
            })?;
        let mut errors = Vec::new();
        let parameters = operation["parameters"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (name, value) in &path_params {
            match parameters
                .iter()
                .find(|parameter| parameter["in"] == "path" && parameter["name"] == name.as_str())
            {
                Some(parameter) => validate_text(
                    value,
                    &parameter["schema"],
                    &format!("path parameter {name}"),
                    &mut errors,
                ),
                None => errors.push(format!("path parameter {name} is not declared")),
            }
        }
        for (name, value) in &request.query {
            match parameters
                .iter()
                .find(|parameter| parameter["in"] == "query" && parameter["name"] == name.as_str())
            {
                Some(parameter) => validate_text(
                    value,
                    &parameter["schema"],
                    &format!("query parameter {name}"),
                    &mut errors,
                ),
                None => errors.push(format!(
                    "query parameter {name} is not declared for {}",
                    operation["operationId"]
                )),
            }
        }
        validate_body(request, &operation["requestBody"], &mut errors);
        if errors.is_empty() {
            Ok(Matched {
                operation_id: operation["operationId"].as_str().unwrap_or("").to_owned(),
                path_params,
            })
        } else {
            Err(errors)
        }
    }
}

fn match_template(template: &str, path: &str) -> Option<Vec<(String, String)>> {
    let template_parts: Vec<&str> = template.split('/').collect();
    let path_parts: Vec<&str> = path.split('/').collect();
    if template_parts.len() != path_parts.len() {
        return None;
    }
    let mut params = Vec::new();
    for (expected, actual) in template_parts.iter().zip(&path_parts) {
        if let Some(name) = expected
            .strip_prefix('{')
            .and_then(|rest| rest.strip_suffix('}'))
        {
            if actual.is_empty() {
                return None;
            }
            params.push((name.to_owned(), (*actual).to_owned()));
        } else if expected != actual {
            return None;
        }
    }
    Some(params)
}

fn validate_body(request: &Request, request_body: &Value, errors: &mut Vec<String>) {
    if request_body.is_null() {
        if !request.body.is_empty() {
            errors.push("this operation takes no request body".to_owned());
        }
        return;
    }
    if request.body.is_empty() {
        if request_body["required"] == true {
            errors.push("the request body is required".to_owned());
        }
        return;
    }
    if !request
        .header("content-type")
        .is_some_and(|value| value.starts_with("application/json"))
    {
        errors.push("the body is not sent as application/json".to_owned());
    }
    match serde_json::from_slice::<Value>(&request.body) {
        Ok(body) => validate(&body, &request_body["schema"], "body", errors),
        Err(error) => errors.push(format!("the body is not JSON: {error}")),
    }
}

/// A path or query parameter against its (scalar) schema.
fn validate_text(text: &str, schema: &Value, at: &str, errors: &mut Vec<String>) {
    let value = match schema["type"].as_str() {
        Some("integer") => match text.parse::<i64>() {
            Ok(number) => Value::from(number),
            Err(_) => return errors.push(format!("{at}: `{text}` is not an integer")),
        },
        Some("boolean") => match text {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return errors.push(format!("{at}: `{text}` is not a boolean")),
        },
        _ => Value::String(text.to_owned()),
    };
    validate(&value, schema, at, errors);
}

/// JSON Schema (the OpenAPI 3.0 subset the vendored operations use).
pub fn validate(value: &Value, schema: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(schema_object) = schema.as_object() else {
        return;
    };
    for keyword in schema_object.keys() {
        let known = [
            "type",
            "properties",
            "required",
            "items",
            "enum",
            "oneOf",
            "anyOf",
            "minLength",
            "maxLength",
            "minimum",
            "maximum",
            "additionalProperties",
        ];
        if !known.contains(&keyword.as_str()) && !ANNOTATIONS.contains(&keyword.as_str()) {
            errors.push(format!("{at}: the test validator does not understand `{keyword}`: extend tests/github_support/openapi.rs"));
        }
    }
    if value.is_null() && schema["nullable"] == true {
        return;
    }
    if let Some(expected) = schema["type"].as_str() {
        let matches = match expected {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "null" => value.is_null(),
            _ => false,
        };
        if !matches {
            errors.push(format!("{at}: expected {expected}, got {value}"));
            return;
        }
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            errors.push(format!(
                "{at}: {value} is not one of {}",
                Value::Array(allowed.clone())
            ));
        }
    }
    validate_bounds(value, schema, at, errors);
    for (keyword, need_one) in [("oneOf", true), ("anyOf", false)] {
        if let Some(choices) = schema[keyword].as_array() {
            let passing = choices
                .iter()
                .filter(|choice| {
                    let mut inner = Vec::new();
                    validate(value, choice, at, &mut inner);
                    inner.is_empty()
                })
                .count();
            if (need_one && passing != 1) || passing == 0 {
                errors.push(format!("{at}: matches {passing} of the {keyword} choices"));
            }
        }
    }
    if let (Some(object), Some(properties)) = (value.as_object(), schema["properties"].as_object())
    {
        for required in schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !object.contains_key(required) {
                errors.push(format!("{at}: `{required}` is required"));
            }
        }
        for (name, inner) in object {
            match properties.get(name) {
                Some(property_schema) => {
                    validate(inner, property_schema, &format!("{at}.{name}"), errors)
                }
                None if schema["additionalProperties"].is_object() => validate(
                    inner,
                    &schema["additionalProperties"],
                    &format!("{at}.{name}"),
                    errors,
                ),
                None => errors.push(format!(
                    "{at}: `{name}` is not a property GitHub knows here"
                )),
            }
        }
    }
    if let (Some(items), Some(item_schema)) = (value.as_array(), schema.get("items")) {
        for (index, item) in items.iter().enumerate() {
            validate(item, item_schema, &format!("{at}[{index}]"), errors);
        }
    }
}

fn validate_bounds(value: &Value, schema: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(text) = value.as_str() {
        let length = text.chars().count() as u64;
        if schema["minLength"]
            .as_u64()
            .is_some_and(|minimum| length < minimum)
        {
            errors.push(format!("{at}: shorter than minLength"));
        }
        if schema["maxLength"]
            .as_u64()
            .is_some_and(|maximum| length > maximum)
        {
            errors.push(format!("{at}: longer than maxLength"));
        }
    }
    if let Some(number) = value.as_f64() {
        if schema["minimum"]
            .as_f64()
            .is_some_and(|minimum| number < minimum)
        {
            errors.push(format!("{at}: below minimum"));
        }
        if schema["maximum"]
            .as_f64()
            .is_some_and(|maximum| number > maximum)
        {
            errors.push(format!("{at}: above maximum"));
        }
    }
}
