//! Results files of other runners as completions: promptfoo's output (`promptfoo eval -o
//! out.json`) and inspect_ai's JSON eval logs (`inspect eval --log-format json`). Each
//! result carries the case as its runner saw it (promptfoo's `testCase`, with `defaultTest`
//! merged in; inspect's sample), from which the suite's identity rule works out the case
//! id the lock uses: the same `vars` digest, key path or `id`. Grading, baselines and the
//! gate are then evalock's own, as for any `--completions` file.

use crate::cases::identity::Identity;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The runner a results file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    Promptfoo,
    Inspect,
}

impl Runner {
    pub fn name(self) -> &'static str {
        match self {
            Runner::Promptfoo => "promptfoo",
            Runner::Inspect => "inspect_ai",
        }
    }
}

/// One completion of another runner, with the case it answered.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignResult {
    /// Where it is in the file, for messages: `results.results[3]`, `samples[0]`.
    pub at: String,
    /// The case as the runner saw it: the fields identity rules read.
    pub record: Map<String, Value>,
    /// The completion, a JSON (non-string) output taken as its JSON text.
    pub completion: String,
}

/// A results file of another runner, or `None` when `bytes` is not one (a JSONL file of
/// `{"case_id", "completion"}` lines is read as it always was).
pub fn read(display: &str, bytes: &[u8]) -> Option<Result<(Runner, Vec<ForeignResult>)>> {
    if bytes.starts_with(b"PK\x03\x04") {
        return Some(Err(Error::malformed(
            display,
            "an inspect_ai `.eval` log is a zip archive: write JSON with `inspect eval --log-format json`, or convert it with `inspect log convert --to json`",
        )));
    }
    let start = bytes.iter().position(|byte| !byte.is_ascii_whitespace())?;
    if bytes[start] != b'{' {
        return None;
    }
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let object = value.as_object()?;
    if object.contains_key("case_id") {
        return None;
    }
    if let Some(results) = object
        .get("results")
        .and_then(|results| results.get("results"))
    {
        return Some(promptfoo(display, results).map(|found| (Runner::Promptfoo, found)));
    }
    if object.get("eval").is_some_and(Value::is_object) {
        return Some(inspect(display, object).map(|found| (Runner::Inspect, found)));
    }
    None
}

/// promptfoo's `results.results`: one entry per test, prompt and provider.
fn promptfoo(display: &str, results: &Value) -> Result<Vec<ForeignResult>> {
    let Some(results) = results.as_array() else {
        return Err(Error::malformed(
            display,
            "promptfoo output: `results.results` is not a list",
        ));
    };
    let mut found = Vec::new();
    for (index, result) in results.iter().enumerate() {
        let at = format!("results.results[{index}]");
        // A provider error has no output: the case has no completion, and the run says so.
        let output = match result
            .get("response")
            .and_then(|response| response.get("output"))
        {
            None | Some(Value::Null) => continue,
            Some(Value::String(text)) => text.clone(),
            Some(other) => serde_json::to_string(other).unwrap_or_default(),
        };
        let record = match (result.get("testCase"), result.get("vars")) {
            (Some(Value::Object(test)), _) => test.clone(),
            (_, Some(Value::Object(vars))) => {
                Map::from_iter([("vars".to_owned(), Value::Object(vars.clone()))])
            }
            _ => {
                return Err(Error::malformed(
                    format!("{display}: {at}"),
                    "promptfoo output: a result without `testCase` or `vars` cannot be matched to a case",
                ))
            }
        };
        found.push(ForeignResult {
            at,
            record,
            completion: output,
        });
    }
    Ok(found)
}

/// inspect_ai's `samples`: one entry per sample and epoch.
fn inspect(display: &str, log: &Map<String, Value>) -> Result<Vec<ForeignResult>> {
    let samples = match log.get("samples") {
        Some(Value::Array(samples)) => samples,
        // A log of a run that stopped before any sample, or written with `--no-log-samples`.
        None | Some(Value::Null) => {
            return Err(Error::malformed(
                display,
                "inspect_ai eval log without samples: run inspect without `--no-log-samples`",
            ))
        }
        Some(_) => {
            return Err(Error::malformed(
                display,
                "inspect_ai eval log: `samples` is not a list",
            ))
        }
    };
    let mut found = Vec::new();
    for (index, sample) in samples.iter().enumerate() {
        let at = format!("samples[{index}]");
        let Some(sample) = sample.as_object() else {
            return Err(Error::malformed(
                format!("{display}: {at}"),
                "inspect_ai eval log: a sample is not an object",
            ));
        };
        // A sample that errored has no completion: the case has none, and the run says so.
        if sample.get("error").is_some_and(|error| !error.is_null()) {
            continue;
        }
        let Some(completion) = sample
            .get("output")
            .and_then(|output| output.get("completion"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let mut record = Map::new();
        for key in [
            "id", "input", "target", "metadata", "choices", "files", "setup",
        ] {
            match sample.get(key) {
                None | Some(Value::Null) => {}
                Some(value) => {
                    record.insert(key.to_owned(), value.clone());
                }
            }
        }
        if let Some(Value::Array(messages)) = record.get_mut("input") {
            for message in messages.iter_mut() {
                as_written(message);
            }
        }
        found.push(ForeignResult {
            at,
            record,
            completion: completion.to_owned(),
        });
    }
    Ok(found)
}

/// A chat message of a sample's input as the dataset wrote it: inspect adds the message
/// `id` and `source` (and writes absent fields as null) when it logs a sample.
fn as_written(message: &mut Value) {
    if let Value::Object(fields) = message {
        fields.remove("id");
        fields.remove("source");
        fields.retain(|_, value| !value.is_null());
    }
}

/// The case id a suite identifying cases by `identity` gives `result`, or why none.
pub fn case_id(result: &ForeignResult, identity: &Identity) -> std::result::Result<String, String> {
    let mut record = result.record.clone();
    match identity {
        // The record's own id: inspect numbers samples without one from 1.
        Identity::Member => {
            return match record.get("id") {
                Some(Value::String(id)) if !id.is_empty() => Ok(id.clone()),
                Some(Value::Number(number)) => Ok(number.to_string()),
                _ => Err("it has no `id`".to_owned()),
            }
        }
        // Any other rule ignores an id the runner gave the result.
        _ => {
            record.remove("id");
        }
    }
    identity.identify(&mut record)?;
    match record.get("id") {
        Some(Value::String(id)) => Ok(id.clone()),
        _ => Err("its identity could not be worked out".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn results(value: Value) -> (Runner, Vec<ForeignResult>) {
        read("out.json", value.to_string().as_bytes())
            .unwrap()
            .unwrap()
    }

    #[test]
    fn a_promptfoo_result_is_matched_by_its_vars() {
        let (runner, found) = results(json!({
            "evalId": "eval-1",
            "results": {"version": 3, "results": [
                {"testCase": {"vars": {"q": "2 + 2"}, "assert": []}, "vars": {"q": "2 + 2"},
                 "response": {"output": "4"}},
                {"testCase": {"vars": {"q": "json"}}, "response": {"output": {"a": 1}}},
                {"testCase": {"vars": {"q": "failed"}}, "response": {"error": "rate limit"}},
            ]}
        }));
        assert_eq!(runner, Runner::Promptfoo);
        assert_eq!(
            found.len(),
            2,
            "a result without output gives no completion"
        );
        assert_eq!(found[0].completion, "4");
        assert_eq!(found[1].completion, "{\"a\":1}");
        let by_vars = Identity::Content(vec!["vars".to_owned()]);
        let mut case = Map::from_iter([("vars".to_owned(), json!({"q": "2 + 2"}))]);
        by_vars.identify(&mut case).unwrap();
        assert_eq!(
            Ok(case["id"].as_str().unwrap().to_owned()),
            case_id(&found[0], &by_vars)
        );
        assert_eq!(
            case_id(&found[0], &Identity::Member),
            Err("it has no `id`".to_owned())
        );
    }

    #[test]
    fn an_inspect_sample_is_matched_by_its_input_or_its_id() {
        let (runner, found) = results(json!({
            "version": 2, "status": "success", "eval": {"task": "arithmetic"},
            "samples": [
                {"id": 1, "epoch": 1, "input": "What is 2 + 2?", "target": "4",
                 "output": {"completion": "4"}},
                {"id": "capital", "epoch": 1,
                 "input": [{"id": "m1", "role": "user", "content": "Capital?", "source": "input", "tool_call_id": null}],
                 "target": "Paris", "output": {"completion": "Paris"}},
                {"id": 3, "epoch": 1, "input": "x", "error": {"message": "boom"}, "output": {"completion": ""}},
            ]
        }));
        assert_eq!(runner, Runner::Inspect);
        assert_eq!(found.len(), 2, "a sample that errored gives no completion");
        let by_input = Identity::Content(vec!["input".to_owned()]);
        let mut case = Map::from_iter([("input".to_owned(), json!("What is 2 + 2?"))]);
        by_input.identify(&mut case).unwrap();
        assert_eq!(
            case_id(&found[0], &by_input).unwrap(),
            case["id"].as_str().unwrap()
        );
        let mut chat = Map::from_iter([(
            "input".to_owned(),
            json!([{"role": "user", "content": "Capital?"}]),
        )]);
        by_input.identify(&mut chat).unwrap();
        assert_eq!(
            case_id(&found[1], &by_input).unwrap(),
            chat["id"].as_str().unwrap()
        );
        assert_eq!(case_id(&found[1], &Identity::Member).unwrap(), "capital");
        assert_eq!(case_id(&found[0], &Identity::Member).unwrap(), "1");
    }

    #[test]
    fn a_results_file_of_the_wrong_shape_is_refused_at_its_place() {
        for (text, expected) in [
            (r#"{"results": {"results": 5}}"#, "out.json: promptfoo output: `results.results` is not a list"),
            (r#"{"results": {"results": [{"response": {"output": "x"}}]}}"#, "out.json: results.results[0]: promptfoo output: a result without `testCase` or `vars`"),
            (r#"{"eval": {}, "samples": 3}"#, "out.json: inspect_ai eval log: `samples` is not a list"),
            (r#"{"eval": {}, "samples": [1]}"#, "out.json: samples[0]: inspect_ai eval log: a sample is not an object"),
            (r#"{"eval": {}}"#, "out.json: inspect_ai eval log without samples"),
        ] {
            let error = read("out.json", text.as_bytes()).unwrap().unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn completions_lines_and_other_json_are_not_taken_for_another_runner() {
        assert!(read("c.jsonl", b"{\"case_id\": \"a\", \"completion\": \"x\"}\n").is_none());
        assert!(read("c.jsonl", b"{\"case_id\": \"a\"}\n{\"case_id\": \"b\"}\n").is_none());
        assert!(read("c.json", b"{\"something\": 1}").is_none());
        assert!(read("c.json", b"[1, 2]").is_none());
        let zipped = read("log.eval", b"PK\x03\x04rest").unwrap().unwrap_err();
        assert!(zipped.to_string().contains("--log-format json"), "{zipped}");
    }
}
