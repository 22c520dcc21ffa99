//! `evalock calibrate`: a suite's grader run on completions people labelled, and how far
//! it agrees with them ([`crate::graders::calibration`]).

use crate::commands::project::Project;
use crate::error::{Error, Result};
use crate::graders::calibration::{calibrate as measure, Calibration, Confusion};
use crate::source::{ContentSource, WorktreeSource};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// What to calibrate: a suite, or every suite of a grader, against a labels file.
pub struct CalibrateOptions<'a> {
    pub suite: Option<&'a str>,
    pub grader: Option<&'a str>,
    /// JSONL of `{"case_id", "completion", "verdict": "pass"|"fail", "labeller"?, "suite"?}`;
    /// without it, the grader's own `labels`.
    pub labels: Option<&'a Path>,
}

/// The calibration of one suite's grader.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteCalibration {
    pub suite: String,
    pub grader: String,
    pub labels: String,
    #[serde(flatten)]
    pub calibration: Calibration,
}

/// One labelled completion.
struct Label {
    line: u32,
    suite: Option<String>,
    case_id: String,
    completion: String,
    pass: bool,
}

pub fn calibrate(
    project_root: &Path,
    options: &CalibrateOptions<'_>,
) -> Result<Vec<SuiteCalibration>> {
    let project = Project::load(&WorktreeSource::new(project_root))?;
    let suites: Vec<&str> = match (options.suite, options.grader) {
        (Some(suite), _) => {
            project
                .suite(suite)
                .ok_or_else(|| Error::Usage(format!("no suite `{suite}` in evalock.toml")))?;
            vec![suite]
        }
        (None, Some(grader)) => {
            let named: Vec<&str> = project
                .suites
                .iter()
                .filter(|suite| project.grader_for(&suite.name).id == grader)
                .map(|suite| suite.name.as_str())
                .collect();
            if named.is_empty() {
                return Err(Error::Usage(format!("no suite is graded by `{grader}`")));
            }
            named
        }
        (None, None) => match project.suites.as_slice() {
            [only] => vec![only.name.as_str()],
            _ => {
                return Err(Error::Usage(
                    "name the suite (`--suite S`) or the grader (`--grader G`) to calibrate"
                        .to_owned(),
                ))
            }
        },
    };
    let labels_path = match options.labels {
        Some(path) => path.to_path_buf(),
        None => {
            let grader = project.grader_for(suites[0]).id;
            configured_labels(&project, &grader)
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "grader `{grader}` names no `labels` file in evalock.toml: pass `--labels FILE`"
                    ))
                })?
                .into()
        }
    };
    let display = labels_path.display().to_string();
    let text = std::fs::read_to_string(project_root.join(&labels_path))
        .map_err(|error| Error::io(&display, error))?;
    let labels = read_labels(&display, &text)?;
    let mut outcomes = Vec::new();
    for suite_name in suites {
        let suite_labels: Vec<&Label> = labels
            .iter()
            .filter(|label| {
                label
                    .suite
                    .as_deref()
                    .is_none_or(|named| named == suite_name)
            })
            .collect();
        let pairs = grade_labels(
            &project,
            project_root,
            &[suite_name],
            &suite_labels,
            &display,
        )?;
        outcomes.push(SuiteCalibration {
            suite: suite_name.to_owned(),
            grader: project.grader_for(suite_name).reference(),
            labels: display.clone(),
            calibration: measure(&pairs),
        });
    }
    Ok(outcomes)
}

/// The labels file `[grader.<id>]` names, if any.
pub fn configured_labels(project: &Project, grader: &str) -> Option<String> {
    project.config.graders.get(grader)?.labels.clone()
}

/// Grader `grader` run on every label of its labels file (`labels_path`, read from
/// `source`): the counts `evalock lock` pins and `check` verifies. Each label's case is
/// looked up in the label's `suite`, else in the grader's suites in config order.
pub fn measure_labels(
    source: &dyn ContentSource,
    project_root: &Path,
    grader: &str,
    labels_path: &str,
) -> Result<Confusion> {
    let project = Project::load(source)?.with_workdir(project_root.to_path_buf());
    let suites: Vec<&str> = project
        .suites
        .iter()
        .filter(|suite| project.grader_for(&suite.name).id == grader)
        .map(|suite| suite.name.as_str())
        .collect();
    let bytes = crate::source::read_regular_file(source, labels_path)?.ok_or_else(|| {
        Error::malformed(
            labels_path,
            format!("grader `{grader}` names labels `{labels_path}`, and there is no such file: add it or remove `labels`"),
        )
    })?;
    let text = crate::text::require_clean_text(&bytes)
        .map_err(|(line, _, message)| Error::malformed(format!("{labels_path}:{line}"), message))?;
    let labels = read_labels(labels_path, text)?;
    let labels: Vec<&Label> = labels.iter().collect();
    let mut counts = Confusion::default();
    for (grader_pass, person_pass) in
        grade_labels(&project, project_root, &suites, &labels, labels_path)?
    {
        counts.add(grader_pass, person_pass);
    }
    Ok(counts)
}

/// `(grader passed, person passed)` for each label, its case found in its own `suite` or
/// the first of `suites` that has it.
fn grade_labels(
    project: &Project,
    project_root: &Path,
    suites: &[&str],
    labels: &[&Label],
    display: &str,
) -> Result<Vec<(bool, bool)>> {
    let mut pairs = Vec::new();
    for label in labels {
        let found = suites
            .iter()
            .filter(|name| label.suite.as_deref().is_none_or(|named| named == **name))
            .find_map(|name| Some((*name, project.suite(name)?.case(&label.case_id)?)));
        let Some((suite_name, case)) = found else {
            return Err(Error::malformed(
                format!("{display}:{}", label.line),
                format!(
                    "the label names case `{}`, which {} does not have",
                    label.case_id,
                    match suites {
                        [only] => format!("suite `{only}`"),
                        _ => format!(
                            "no suite graded by `{}`",
                            project
                                .grader_for(suites.first().copied().unwrap_or_default())
                                .id
                        ),
                    }
                ),
            ));
        };
        let grader = project.grader_for(suite_name);
        let policy = crate::run::process_policy(&project.config, suite_name, project_root);
        let grade = crate::run::grade(&grader, case.value(), &label.completion, &policy).map_err(
            |problem| {
                Error::Refused(format!(
                    "{display}:{}: the grader could not judge the labelled completion: {problem}",
                    label.line
                ))
            },
        )?;
        pairs.push((grade.pass, label.pass));
    }
    Ok(pairs)
}

/// The labels of a JSONL text; a line that is not a label is an error at its line.
fn read_labels(display: &str, text: &str) -> Result<Vec<Label>> {
    let mut labels = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{display}:{number}");
        let value: Value = serde_json::from_str(line)
            .map_err(|error| Error::malformed(&at, format!("not a JSON object: {error}")))?;
        let string = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let case_id = string("case_id")
            .ok_or_else(|| Error::malformed(&at, "a label needs a string `case_id`"))?;
        let completion = match value.get("completion") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Null) | None => {
                return Err(Error::malformed(&at, "a label needs its `completion`"))
            }
            Some(other) => other.to_string(),
        };
        let pass = match value.get("verdict").and_then(Value::as_str) {
            Some("pass") => true,
            Some("fail") => false,
            _ => {
                return Err(Error::malformed(
                    &at,
                    "a label's `verdict` is \"pass\" or \"fail\"",
                ))
            }
        };
        labels.push(Label {
            line: number,
            suite: string("suite"),
            case_id,
            completion,
            pass,
        });
    }
    Ok(labels)
}
