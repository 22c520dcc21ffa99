//! promptfoo configurations (`promptfooconfig.yaml`, `promptfooconfig.<name>.yaml`) as
//! case files: each inline test of `tests:` is a case at its lines, with `defaultTest`
//! merged in as promptfoo merges it (its vars under the test's, its assertions first), so
//! editing `defaultTest` edits every inline case. Tests in files the configuration names
//! (`tests: file://tests.csv`, a list of `file://` paths or globs) are the suite's case
//! files too, read in their own format.

use super::documents::{close_yaml_spans, yaml_error, yaml_options, Element, Elements};
use super::strict_json::StrictValue;
use serde::Deserialize;
use serde_json::Value;

type Position = (u32, u32, String);

/// Whether `path` names a promptfoo configuration.
pub fn is_promptfoo_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.starts_with("promptfooconfig")
        && [".yaml", ".yml", ".json"]
            .iter()
            .any(|extension| name.ends_with(extension))
}

/// Whether `path`, holding `text`, is a promptfoo configuration: named as promptfoo names
/// its default (`promptfooconfig*.yaml`), or any YAML file that configures what promptfoo
/// runs (`promptfoo eval -c customer-service-eval.yaml`): top-level `tests:` beside
/// `prompts:` or `providers:`.
pub fn is_promptfoo_config_text(path: &str, text: &[u8]) -> bool {
    if is_promptfoo_config(path) {
        return true;
    }
    let lower = path.to_ascii_lowercase();
    if !(lower.ends_with(".yaml") || lower.ends_with(".yml")) {
        return false;
    }
    let top_level = |key: &str| {
        text.split(|byte| *byte == b'\n').any(|line| {
            line.strip_prefix(key.as_bytes())
                .is_some_and(|rest| rest.first() == Some(&b':'))
        })
    };
    top_level("tests") && (top_level("prompts") || top_level("providers"))
}

/// Whether `path` has an extension a configuration can have: worth reading to ask
/// [`is_promptfoo_config_text`].
pub fn may_be_config(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".yaml", ".yml", ".json"]
        .iter()
        .any(|extension| lower.ends_with(extension))
}

/// What evalock reads of a configuration; everything else (prompts, providers) is the
/// runner's.
#[derive(Deserialize)]
struct Config {
    #[serde(default)]
    tests: Option<Value>,
    #[serde(default, rename = "defaultTest")]
    default_test: Option<StrictValue>,
}

#[derive(Deserialize)]
struct InlineTests {
    #[serde(default)]
    tests: Vec<serde_saphyr::Spanned<StrictValue>>,
}

/// The inline tests of a configuration's text, `defaultTest` merged into each.
pub(super) fn test_elements(text: &str) -> Result<Elements, Position> {
    let config: Config = serde_saphyr::from_str_with_options(text, yaml_options())
        .map_err(|error| yaml_error(&error))?;
    if !matches!(config.tests, Some(Value::Array(_))) {
        return Ok((Vec::new(), Vec::new()));
    }
    let inline: InlineTests = serde_saphyr::from_str_with_options(text, yaml_options())
        .map_err(|error| yaml_error(&error))?;
    let defaults = config.default_test.map(|StrictValue(value)| value);
    let line_count = crate::text::LineIndex::new(text.as_bytes()).line_count();
    let mut elements: Vec<Element> = inline
        .tests
        .into_iter()
        .filter(|test| test.value.0.is_object())
        .map(|test| {
            let line = u32::try_from(test.referenced.line())
                .unwrap_or(u32::MAX)
                .max(1);
            Element {
                value: with_defaults(test.value.0, defaults.as_ref()),
                line,
                end_line: line,
                key: None,
            }
        })
        .collect();
    close_yaml_spans(text, &mut elements, line_count);
    // A test ends before the next key of the configuration (`providers:` after `tests:`).
    let lines: Vec<&str> = text.split('\n').collect();
    for element in &mut elements {
        let top_level_key = (element.line..element.end_line).find(|line| {
            lines.get(*line as usize).is_some_and(|next| {
                next.starts_with(|c: char| !c.is_whitespace() && c != '#' && c != '-')
            })
        });
        if let Some(before) = top_level_key {
            element.end_line = before.max(element.line);
            while element.end_line > element.line
                && lines
                    .get(element.end_line as usize - 1)
                    .is_some_and(|line| {
                        line.trim().is_empty() || line.trim_start().starts_with('#')
                    })
            {
                element.end_line -= 1;
            }
        }
    }
    Ok((elements, Vec::new()))
}

/// `test` with `defaults` under it: default vars the test does not set, default
/// assertions before its own, other keys the test lacks.
pub(crate) fn with_defaults(test: Value, defaults: Option<&Value>) -> Value {
    let (Value::Object(mut test), Some(Value::Object(defaults))) = (test.clone(), defaults) else {
        return test;
    };
    for (key, default) in defaults {
        match (key.as_str(), test.get_mut(key), default) {
            ("vars", Some(Value::Object(vars)), Value::Object(default_vars)) => {
                for (name, value) in default_vars {
                    vars.entry(name.clone()).or_insert_with(|| value.clone());
                }
            }
            ("assert", Some(Value::Array(asserts)), Value::Array(default_asserts)) => {
                let mut merged = default_asserts.clone();
                merged.append(asserts);
                *asserts = merged;
            }
            (_, Some(_), _) => {}
            (_, None, _) => {
                test.insert(key.clone(), default.clone());
            }
        }
    }
    Value::Object(test)
}

/// A configuration's `defaultTest`, merged into the tests of the files it names too;
/// `None` without one or for unreadable text.
pub fn default_test(text: &str) -> Option<Value> {
    let config: Config = serde_saphyr::from_str_with_options(text, yaml_options()).ok()?;
    config
        .default_test
        .map(|StrictValue(value)| value)
        .filter(Value::is_object)
}

/// The test files a configuration names, as project-relative paths or globs (`file://`
/// paths are relative to the configuration's folder). Unreadable text names none: its
/// parse reports it.
pub fn test_file_references(config_path: &str, text: &str) -> Vec<String> {
    let Ok(config) = serde_saphyr::from_str_with_options::<Config>(text, yaml_options()) else {
        return Vec::new();
    };
    let named: Vec<&str> = match &config.tests {
        Some(Value::String(reference)) => vec![reference.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let folder = config_path
        .rsplit_once('/')
        .map_or("", |(folder, _)| folder);
    named
        .into_iter()
        .filter_map(|reference| reference.strip_prefix("file://"))
        .filter_map(|path| match path.starts_with('/') {
            // Kept as written: it matches nothing, and is reported as absolute.
            true => Some(path.to_owned()),
            false => join(folder, path),
        })
        .collect()
}

/// `relative` from `folder`, without leaving the project.
pub(crate) fn join(folder: &str, relative: &str) -> Option<String> {
    if relative.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = folder.split('/').filter(|part| !part.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "description: support bot\nprompts:\n  - file://prompts/support.txt\ndefaultTest:\n  vars:\n    tone: polite\n  assert:\n    - type: not-contains\n      value: As an AI\ntests:\n  - vars:\n      question: Where is my order?\n    assert:\n      - type: icontains\n        value: order\n\n  # a second test\n  - vars:\n      question: Refund please\n      tone: firm\n\nproviders:\n  - openai:gpt-4o-mini\n";

    #[test]
    fn inline_tests_keep_their_lines_and_take_the_default_test() {
        let (elements, refused) = test_elements(CONFIG).unwrap();
        assert!(refused.is_empty());
        assert_eq!(elements.len(), 2);
        assert_eq!((elements[0].line, elements[0].end_line), (11, 15));
        assert_eq!((elements[1].line, elements[1].end_line), (18, 20));
        assert_eq!(elements[0].value["vars"]["tone"], "polite");
        assert_eq!(elements[1].value["vars"]["tone"], "firm");
        let asserts = elements[0].value["assert"].as_array().unwrap();
        assert_eq!(asserts[0]["type"], "not-contains");
        assert_eq!(asserts[1]["type"], "icontains");
        assert_eq!(elements[1].value["assert"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn test_files_are_named_from_the_configuration_folder() {
        let text =
            "tests:\n  - file://tests/*.csv\n  - file://../shared/more.yaml\n  - vars: {q: x}\n";
        assert_eq!(
            test_file_references("evals/promptfooconfig.yaml", text),
            ["evals/tests/*.csv", "shared/more.yaml"]
        );
        assert_eq!(
            test_file_references("promptfooconfig.yaml", "tests: file://../x.csv\n"),
            Vec::<String>::new()
        );
        assert_eq!(
            test_file_references("promptfooconfig.yaml", "tests: file:///Users/me/x.csv\n"),
            ["/Users/me/x.csv"]
        );
        assert!(is_promptfoo_config("evals/promptfooconfig.smoke.yaml"));
        assert!(!is_promptfoo_config("evals/config.yaml"));
        let named_otherwise = b"description: x\nprompts:\n  - hi {{q}}\ntests:\n  - vars: {q: a}\n";
        assert!(is_promptfoo_config_text(
            "evals/support-eval.yaml",
            named_otherwise
        ));
        assert!(!is_promptfoo_config_text(
            "evals/support-eval.json",
            named_otherwise
        ));
        assert!(!is_promptfoo_config_text(
            "evals/cases.yaml",
            b"- id: tests\n  input: prompts\n"
        ));
    }
}
