//! `accept` records what a results file says, and the file is plain JSON on disk: a
//! status turned from FAIL to PASS or a completion rewritten after the run must not become
//! last-good. What can be verified without running anything again is verified here: the
//! completion against its digest and the suite's normalizer, the case's status against its
//! samples, and, for the built-in grader, the samples' verdicts against a re-grading of
//! the completion. Completers and command graders are never started by `accept`.

use crate::cases::Case;
use crate::commands::project::Project;
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::graders::{completion_digest, Normalizer};
use crate::project::config::SuiteConfig;
use crate::run::completer::{completion_source, COMPLETIONS_FROM_FILE};
use crate::run::completer_files::completer_files;
use crate::run::results::{CaseResult, Results, Status};
use std::path::Path;

/// Refuses suites whose completions came from another completer than the one evalock.toml
/// configures now, or from script files (named on its argv, resolved in `project_root`
/// where `run` starts it) that have changed since: a result graded against the old
/// completer's output is no last-good answer of the new one. Completions read from a file
/// (`run --completions FILE`) were chosen by the person who ran them and are taken as
/// they are.
pub(super) fn refuse_other_completer(
    project: &Project,
    project_root: &Path,
    results: &Results,
    suites: &[String],
    display: &str,
) -> Result<()> {
    for suite_name in suites {
        let Some(config) = project.config.suite(suite_name) else {
            continue;
        };
        let why = match results.completions.get(suite_name) {
            Some(source) if source == COMPLETIONS_FROM_FILE => continue,
            Some(source) if current_source(config, project_root, suite_name, display)? == *source => {
                continue
            }
            Some(_) => format!(
                "suite `{suite_name}`'s `completer`, a script file its argv names, its `model` or `samples` changed since `evalock run` produced its completions"
            ),
            None => format!(
                "they do not record what produced suite `{suite_name}`'s completions (written by an older evalock)"
            ),
        };
        return Err(Error::Refused(format!(
            "refused: the results in {display} are stale: {why}; run `evalock run --suite {suite_name}` again; nothing was written"
        )));
    }
    Ok(())
}

/// The suite's completion source as the project and its script files are now. A script
/// file that cannot be read cannot vouch for the completions: refused, naming it.
fn current_source(
    config: &SuiteConfig,
    project_root: &Path,
    suite_name: &str,
    display: &str,
) -> Result<String> {
    let files = config
        .completer
        .as_deref()
        .map(|argv| completer_files(argv, project_root))
        .unwrap_or_default();
    if let Some((word, error)) = files
        .iter()
        .find_map(|file| file.content.as_ref().err().map(|error| (&file.word, error)))
    {
        return Err(Error::Refused(format!(
            "refused: cannot read `{word}`, a file suite `{suite_name}`'s `completer` names, to check that it still produces the completions in {display}: {error}; make it readable and run `evalock accept` again; nothing was written"
        )));
    }
    Ok(completion_source(config, false, None, &files))
}

/// Refuses results written by another evalock: its grader may give other verdicts and
/// reasons, so a re-grade that disagrees would be blamed on an edit that never happened.
pub(super) fn refuse_other_version(results: &Results, display: &str) -> Result<()> {
    let current = env!("CARGO_PKG_VERSION");
    if results.evalock_version == current {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "refused: the results in {display} are stale: evalock {} wrote them and this is evalock {current}, whose grading may differ; run `evalock run` again; nothing was written",
        results.evalock_version
    )))
}

/// Checks that `result` is what `run` wrote for `case` and gives its completion and
/// digest; `Err` (exit 2) names the case, the results file and what does not hold.
pub(super) fn verified_completion<'r>(
    project: &Project,
    suite_name: &str,
    case: &Case,
    result: &'r CaseResult,
    display: &str,
) -> Result<(&'r str, Digest)> {
    let edited = |what: String| {
        Error::Refused(format!(
            "refused: case `{}` in {display}: {what}, so the results file was changed after `evalock run` wrote it; run `evalock run --suite {suite_name}` again; nothing was written",
            result.case_id
        ))
    };
    let (Some(completion), Some(digest)) = (&result.completion, &result.digest) else {
        return Err(edited(format!(
            "it is {} but has no completion to record",
            result.status
        )));
    };
    if completion_digest(completion) != *digest {
        return Err(edited("the completion does not match its digest".into()));
    }
    let normalizer = suite_normalizer(project, suite_name);
    if normalizer.normalize(completion) != *completion {
        return Err(edited(format!(
            "the completion is not what the suite's normalizer `{normalizer}` makes of it"
        )));
    }
    if !result
        .samples
        .iter()
        .any(|sample| sample.digest.as_ref() == Some(digest))
    {
        return Err(edited("no sample produced the completion".into()));
    }
    if result.status.is_passing() {
        if let Some(sample) = result
            .samples
            .iter()
            .find(|sample| sample.status != Status::Pass)
        {
            return Err(edited(format!(
                "it is {} but sample {} is {}",
                result.status, sample.sample, sample.status
            )));
        }
    }
    regrade(project, suite_name, case, completion, result).map_err(edited)?;
    Ok((completion, *digest))
}

/// The built-in grader is pure: grading the completion again must give every sample that
/// produced it the verdict and reasons the file records. Only under the `exact`
/// normalizer, where the stored completion is the text that was graded; other
/// normalizers store a rewritten text, whose verdict may honestly differ.
fn regrade(
    project: &Project,
    suite_name: &str,
    case: &Case,
    completion: &str,
    result: &CaseResult,
) -> std::result::Result<(), String> {
    if suite_normalizer(project, suite_name) != Normalizer::Exact {
        return Ok(());
    }
    let grader = project.grader_for(suite_name);
    let Some(grade) = grader.grade_in_process(case.value(), completion) else {
        return Ok(());
    };
    let verdict = if grade.pass {
        Status::Pass
    } else {
        Status::Fail
    };
    let producing = result
        .samples
        .iter()
        .filter(|sample| sample.digest == result.digest);
    for sample in producing {
        if sample.status != verdict || sample.reasons != grade.reasons {
            let reasons = |reasons: &[String]| {
                if reasons.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", reasons.join(", "))
                }
            };
            return Err(format!(
                "sample {} is recorded {}{}, but grader `{}` grades its completion {verdict}{}",
                sample.sample,
                sample.status,
                reasons(&sample.reasons),
                grader.reference(),
                reasons(&grade.reasons),
            ));
        }
    }
    Ok(())
}

fn suite_normalizer(project: &Project, suite_name: &str) -> Normalizer {
    project
        .config
        .suite(suite_name)
        .and_then(|config| Normalizer::parse(&config.normalizer))
        .unwrap_or(Normalizer::Exact)
}
