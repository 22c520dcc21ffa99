//! The completer seam: what a completer reads on stdin for one case and sample, how its
//! stdout becomes a completion, and completions produced elsewhere (`--completions FILE`).

use super::completer_files::CompleterFile;
use super::process::{run_process, ProcessPolicy};
use crate::cases::strict_json::{duplicate_key_position, StrictValue};
use crate::cases::Case;
use crate::digest::{bytes_digest, canonical_json};
use crate::error::{Error, Result};
use crate::project::config::SuiteConfig;
use crate::text::code_point_column;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// What every completer invocation is told about the suite.
#[derive(Debug, Clone)]
pub struct SuiteContext {
    pub suite: String,
    /// The prompt files' text, joined by newlines, when the suite has prompts.
    pub prompt: Option<String>,
    pub prompt_digest: Option<String>,
    pub model: Option<String>,
}

/// What a results file records as the source of a suite's completions when they were
/// read from `run --completions FILE`.
pub const COMPLETIONS_FROM_FILE: &str = "file";

/// What produced a suite's completions, as a results file records it: `file` for
/// `run --completions FILE`, else a digest of the suite settings that decide completions
/// besides the case and the prompt (which each result's context pins): the `completer`
/// argv, the content of the `files` it names ([`completer_files`]), `model` and the
/// samples per case, `samples_override` (`run --samples`) when given, as the run took
/// them. `accept` compares it with the configuration of the day (no override): a run of
/// another sample count than evalock.toml's is not its last-good answer, and an unset
/// `samples` is the one sample it means. An argv that names no file digests as it did
/// before files were covered, so older results of such completers stay current.
///
/// [`completer_files`]: super::completer_files::completer_files
pub fn completion_source(
    config: &SuiteConfig,
    from_file: bool,
    samples_override: Option<u32>,
    files: &[CompleterFile],
) -> String {
    if from_file {
        return COMPLETIONS_FROM_FILE.to_owned();
    }
    let samples = samples_override.or(config.samples()).unwrap_or(1).max(1);
    let mut settings = json!({
        "completer": config.completer,
        "model": config.model,
        "samples": samples,
    });
    if let (false, Value::Object(map)) = (files.is_empty(), &mut settings) {
        // A file `run` could not read matches no content `accept` reads later; `accept`
        // refuses outright a file it cannot read itself.
        let files = files
            .iter()
            .map(|file| {
                let content = file
                    .content
                    .as_ref()
                    .map_or_else(|_| "unreadable".to_owned(), ToString::to_string);
                json!({"word": file.word, "content": content})
            })
            .collect();
        map.insert("files".into(), Value::Array(files));
    }
    // Serialising strings and numbers cannot fail.
    let text = canonical_json(&settings).unwrap_or_default();
    bytes_digest(text.as_bytes()).to_string()
}

/// The JSON object written to the completer's stdin for one case and sample.
pub fn request(context: &SuiteContext, case: &Case, sample: u32) -> Vec<u8> {
    let mut request = json!({
        "suite": context.suite,
        "case_id": &*case.id,
        "case_version": case.version,
        "sample": sample,
        "input": case.value().get("input").cloned().unwrap_or(Value::Null),
        "prompt": context.prompt,
        "prompt_digest": context.prompt_digest,
    });
    if let (Some(model), Value::Object(map)) = (&context.model, &mut request) {
        map.insert("model".into(), Value::String(model.clone()));
    }
    let mut bytes = serde_json::to_vec(&request).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Runs the completer for one case and sample. `Err` is an EL504 message.
pub fn complete(
    argv: &[String],
    input: &[u8],
    policy: &ProcessPolicy,
) -> std::result::Result<String, String> {
    let output =
        run_process(argv, input, policy).map_err(|failure| format!("completer {failure}"))?;
    completion_text(output.stdout)
}

/// A completer's stdout as a completion: UTF-8 and not empty.
pub fn completion_text(stdout: Vec<u8>) -> std::result::Result<String, String> {
    let text = String::from_utf8(stdout).map_err(|_| "completer output is not UTF-8".to_owned())?;
    if text.trim().is_empty() {
        return Err("completer printed an empty completion".into());
    }
    Ok(text)
}

/// Completions produced elsewhere, by (suite or "", case id), in file order.
#[derive(Debug, Default)]
pub struct CompletionsFile {
    by_case: BTreeMap<(String, String), Vec<String>>,
    /// The first line naming each suite, to refuse a suite the project does not have.
    suite_lines: BTreeMap<String, usize>,
    /// The first line of each (suite or "", case id), to refuse a case no suite holds.
    case_lines: BTreeMap<(String, String), usize>,
    pub display: String,
}

impl CompletionsFile {
    /// Parses JSONL lines `{"case_id", "completion", "suite"?}`; a JSON (non-string)
    /// completion is taken as its JSON text. Several lines for one case are its samples.
    pub fn parse(display: &str, bytes: &[u8]) -> Result<CompletionsFile> {
        let text = crate::text::require_clean_text(bytes).map_err(|(line, column, message)| {
            Error::malformed(format!("{display}:{line}:{column}"), message)
        })?;
        let mut file = CompletionsFile {
            by_case: BTreeMap::new(),
            suite_lines: BTreeMap::new(),
            case_lines: BTreeMap::new(),
            display: display.to_owned(),
        };
        for (index, line) in text.split('\n').enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{display}:{}", index + 1);
            // Strict, as case files are: a key written twice is refused, not last-wins.
            let StrictValue(value) =
                serde_json::from_str::<StrictValue>(line).map_err(|error| {
                    let message = error.to_string();
                    let message = message.split(" at line ").next().unwrap_or(&message);
                    let column = duplicate_key_position(line, &error).map_or_else(
                        || code_point_column(line.as_bytes(), error.column()),
                        |(_, column)| column,
                    );
                    Error::malformed(format!("{at}:{column}"), message)
                })?;
            let field = |name: &str| value.get(name);
            let Some(Value::String(case_id)) = field("case_id") else {
                return Err(Error::malformed(at, "each line needs a string `case_id`"));
            };
            let suite = match field("suite") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(suite)) => suite.clone(),
                Some(_) => return Err(Error::malformed(at, "`suite` must be a string")),
            };
            let completion = match field("completion") {
                Some(Value::String(text)) => text.clone(),
                None | Some(Value::Null) => {
                    return Err(Error::malformed(at, "each line needs a `completion`"))
                }
                Some(other) => serde_json::to_string(other).unwrap_or_default(),
            };
            if !suite.is_empty() {
                file.suite_lines.entry(suite.clone()).or_insert(index + 1);
            }
            file.case_lines
                .entry((suite.clone(), case_id.clone()))
                .or_insert(index + 1);
            file.by_case
                .entry((suite, case_id.clone()))
                .or_default()
                .push(completion);
        }
        Ok(file)
    }

    /// Completions already matched to their cases (another runner's results file, see
    /// [`crate::run::foreign`]): (suite, case id, completion), in file order; several for
    /// one case are its samples.
    pub fn from_matched(display: &str, matched: Vec<(String, String, String)>) -> CompletionsFile {
        let mut file = CompletionsFile {
            display: display.to_owned(),
            ..CompletionsFile::default()
        };
        for (suite, case_id, completion) in matched {
            file.by_case
                .entry((suite, case_id))
                .or_default()
                .push(completion);
        }
        file
    }

    /// Refuses a line naming a suite the project does not define: its completions would
    /// be silently unused (and its cases reported as having none).
    pub fn refuse_unknown_suites(&self, is_suite: impl Fn(&str) -> bool) -> Result<()> {
        match self.suite_lines.iter().find(|(suite, _)| !is_suite(suite)) {
            Some((suite, line)) => Err(Error::malformed(
                format!("{}:{line}", self.display),
                format!("names suite `{suite}`, which evalock.toml does not define: correct `suite`, or leave it out to match the case id in any suite"),
            )),
            None => Ok(()),
        }
    }

    /// Refuses a line whose case is in no suite (the suite it names, else any suite): its
    /// completions would be silently unused, as a misspelt `case_id`'s are. `has_case`
    /// answers for a suite name ("" for any suite) and a case id.
    pub fn refuse_unknown_cases(&self, has_case: impl Fn(&str, &str) -> bool) -> Result<()> {
        let unknown = self
            .case_lines
            .iter()
            .filter(|((suite, case_id), _)| !has_case(suite, case_id))
            .min_by_key(|(_, line)| **line);
        match unknown {
            Some(((suite, case_id), line)) => {
                let holder = if suite.is_empty() {
                    "no suite holds".to_owned()
                } else {
                    format!("suite `{suite}` does not hold")
                };
                Err(Error::malformed(
                    format!("{}:{line}", self.display),
                    format!("names case `{case_id}`, which {holder}: correct `case_id`, or drop the line (its completion would go unused)"),
                ))
            }
            None => Ok(()),
        }
    }

    /// The completions of a case: lines naming its suite, else lines naming no suite.
    pub fn completions(&self, suite: &str, case_id: &str) -> &[String] {
        self.by_case
            .get(&(suite.to_owned(), case_id.to_owned()))
            .or_else(|| self.by_case.get(&(String::new(), case_id.to_owned())))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_source_covers_the_content_of_named_files_and_nothing_else() {
        let config: SuiteConfig = toml::from_str(
            "name = \"s\"\ncases = []\ncompleter = [\"python3\", \"bin/complete.py\"]\n",
        )
        .unwrap();
        let file = |content| CompleterFile {
            word: "bin/complete.py".into(),
            content,
        };
        let settings = json!({
            "completer": ["python3", "bin/complete.py"],
            "model": null,
            "samples": 1,
        });
        let unchanged = bytes_digest(canonical_json(&settings).unwrap().as_bytes()).to_string();
        assert_eq!(completion_source(&config, false, None, &[]), unchanged);
        let before = completion_source(&config, false, None, &[file(Ok(bytes_digest(b"a")))]);
        let after = completion_source(&config, false, None, &[file(Ok(bytes_digest(b"b")))]);
        let unreadable = completion_source(&config, false, None, &[file(Err("denied".into()))]);
        assert_ne!(before, unchanged);
        assert_ne!(before, after);
        assert_ne!(unreadable, before);
        assert_eq!(
            completion_source(&config, true, None, &[file(Ok(bytes_digest(b"a")))]),
            COMPLETIONS_FROM_FILE
        );
    }

    #[test]
    fn completions_file_groups_samples_and_prefers_the_suite() {
        let text = "{\"case_id\":\"a\",\"completion\":\"one\"}\n\n{\"case_id\":\"a\",\"completion\":{\"k\":1}}\n{\"suite\":\"s\",\"case_id\":\"a\",\"completion\":\"s-one\"}\n";
        let file = CompletionsFile::parse("c.jsonl", text.as_bytes()).unwrap();
        assert_eq!(file.completions("other", "a"), ["one", "{\"k\":1}"]);
        assert_eq!(file.completions("s", "a"), ["s-one"]);
        assert!(file.completions("s", "b").is_empty());
    }

    #[test]
    fn completions_file_errors_carry_the_line() {
        let error = CompletionsFile::parse(
            "c.jsonl",
            b"{\"case_id\":\"a\",\"completion\":\"x\"}\n{\"completion\":\"x\"}\n",
        )
        .unwrap_err();
        assert!(error.to_string().starts_with("c.jsonl:2: "), "{error}");
        assert_eq!(error.exit_code(), 65);
    }

    #[test]
    fn completions_file_is_read_strictly() {
        let twice = CompletionsFile::parse(
            "c.jsonl",
            b"{\"case_id\":\"a\",\"completion\":\"x\"}\n{\"case_id\":\"a\",\"completion\":\"x\",\"completion\":\"y\"}\n",
        )
        .unwrap_err();
        assert!(twice.to_string().starts_with("c.jsonl:2:"), "{twice}");
        assert!(twice.to_string().contains("duplicate key"), "{twice}");
        let broken = CompletionsFile::parse("c.jsonl", b"{\"case_id\": }\n").unwrap_err();
        assert!(!broken.to_string().contains("at line"), "{broken}");
        let named = CompletionsFile::parse(
            "c.jsonl",
            b"{\"case_id\":\"a\",\"completion\":\"x\"}\n{\"suite\":\"nope\",\"case_id\":\"a\",\"completion\":\"x\"}\n",
        )
        .unwrap();
        assert!(named.refuse_unknown_suites(|suite| suite == "nope").is_ok());
        let unknown = named
            .refuse_unknown_suites(|suite| suite == "support")
            .unwrap_err();
        assert!(
            unknown
                .to_string()
                .starts_with("c.jsonl:2: names suite `nope`"),
            "{unknown}"
        );
    }

    #[test]
    fn empty_and_binary_output_are_errors() {
        assert!(completion_text(b" \n".to_vec()).is_err());
        assert!(completion_text(vec![0xff, 0xfe]).is_err());
        assert_eq!(completion_text(b"ok\n".to_vec()).unwrap(), "ok\n");
    }
}
