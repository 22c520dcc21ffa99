//! EL1xx: golden cases and prompts against the lock and the base revision.

mod against_base;
mod against_lock;
#[cfg(test)]
mod tests;

pub use against_base::{assertions_loosened, cases_edited_in_place, cases_removed};
pub use against_lock::{cases_unlocked, prompts_unlocked};

use crate::cases::suite::SuiteModel;
use crate::cases::{Case, ProblemKind};
use crate::finding::{Finding, Location, Subject};
use crate::project::config::CONFIG_FILE;
use crate::project::lock::Lock;
use crate::rules::{RuleId, Severity};
use std::collections::{BTreeMap, BTreeSet};

/// What the EL1xx rules read of one snapshot of the project.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub suites: &'a [SuiteModel],
    pub lock: Option<&'a Lock>,
    /// `working tree`, `index`, `main (1a2b3c4)`.
    pub source: &'a str,
    /// Suites whose identity rule changed since the base, their cases identified by the
    /// base's rule: the base's cases are compared with these (see `former_identities`).
    pub former: &'a [SuiteModel],
}

impl Side<'_> {
    pub fn suite(&self, name: &str) -> Option<&SuiteModel> {
        self.suites.iter().find(|suite| suite.name == name)
    }

    /// The suite as the base identifies its cases: re-identified by the base's rule when
    /// the suite changed rules, else as it is.
    pub fn compared_with_base(&self, name: &str) -> Option<&SuiteModel> {
        self.former
            .iter()
            .find(|suite| suite.name == name)
            .or_else(|| self.suite(name))
    }
}

pub fn check(project: &Side<'_>, base: Option<&Side<'_>>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for suite in project.suites {
        findings.extend(malformed_cases(suite));
        findings.extend(duplicate_case_ids(suite));
    }
    findings.extend(cases_unlocked(project));
    findings.extend(prompts_unlocked(project));
    if let Some(base) = base {
        findings.extend(cases_edited_in_place(project, base));
        findings.extend(cases_removed(project, base));
        findings.extend(assertions_loosened(project, base));
    }
    findings
}

fn case_location(case: &Case) -> Location {
    Location::span(&*case.file, case.line, case.end_line)
}

fn case_at(case: &Case) -> String {
    format!("{}:{}", case.file, case.line)
}

/// For a case whose `vars` name files: which, since an edit there moves the case.
fn files_it_reads(case: &Case) -> String {
    case.var_files.as_deref().map_or_else(String::new, |files| {
        let named: Vec<String> = files
            .0
            .iter()
            .map(|reference| format!("file://{reference}"))
            .collect();
        format!(
            " (its digest covers the files its `vars` name: {})",
            named.join(", ")
        )
    })
}

/// EL105: every place in a case file that could not become a case, and globs that match nothing.
pub fn malformed_cases(suite: &SuiteModel) -> Vec<Finding> {
    // One file can say the same thing of several of its cases (a duplicate `version` in
    // two): each is its own finding, so each needs its own fingerprint. Lines would move
    // it, so the second and later ones count which repetition they are.
    let mut seen: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut findings: Vec<Finding> = suite
        .problems()
        .map(|problem| {
            let repeat = seen
                .entry((&problem.file, &problem.message))
                .and_modify(|count| *count += 1)
                .or_insert(0);
            let discriminator = match *repeat {
                0 => format!("{}:{}", problem.file, problem.message),
                repeat => format!("{}:{}#{repeat}", problem.file, problem.message),
            };
            let finding = Finding::new(
                RuleId::MalformedCase,
                Subject::suite(&suite.name),
                problem.message.clone(),
            )
            .at(Location::line(&problem.file, problem.line).with_column(problem.column))
            .discriminator(&discriminator);
            match problem.kind {
                ProblemKind::Malformed => finding.help(format!(
                    "fix {}:{}:{} and run `evalock check` again",
                    problem.file, problem.line, problem.column
                )),
                ProblemKind::LfsPointer => finding.help(format!(
                    "to check it in this working tree, fetch it (`git lfs pull`); to pin its cases in commits, the pre-commit hook and pull requests, keep it in git itself: take the `filter=lfs` pattern that matches it out of .gitattributes, run `git add --renormalize {}`, commit, then `evalock lock`",
                    problem.file
                )),
                ProblemKind::ImpreciseNumber => finding.severity(Severity::Warn).help(format!(
                    "write the value at {}:{}:{} as a string (an id, a ticket number), or as the number it hashes as; the change moves the case's digest, so bump its `version` and run `evalock lock`",
                    problem.file, problem.line, problem.column
                )),
            }
        })
        .collect();
    for unmatched in &suite.unmatched_globs {
        let pattern = &unmatched.pattern;
        let (message, help) = match (&unmatched.through_symlink, unmatched.names_directory) {
            (Some(folder), _) => (
                format!("suite `{}`: no case file matches `{pattern}`: `{folder}` is a symlink, and evalock never follows symlinks", suite.name),
                format!("commit the case files themselves under `{folder}` (not a link to them), or point the glob at where they are"),
            ),
            (None, true) => {
                let directory = pattern.trim_end_matches('/');
                (
                    format!(
                        "suite `{}`: `{pattern}` is a directory, and a case glob matches files",
                        suite.name
                    ),
                    format!("match the case files in it, for example `{directory}/*.jsonl`"),
                )
            }
            (None, false) if pattern.starts_with('/') => (
                format!(
                    "suite `{}`: `{}` names the absolute path `{pattern}`, which only one machine has",
                    suite.name,
                    unmatched.named_in.as_deref().unwrap_or(CONFIG_FILE)
                ),
                "name the file relative to the configuration's folder (`file://tests.csv`) and commit it".to_owned(),
            ),
            (None, false) => (
                format!("suite `{}`: no case file matches `{pattern}`", suite.name),
                format!(
                    "fix the glob in {}, or add the case file",
                    unmatched.named_in.as_deref().unwrap_or(CONFIG_FILE)
                ),
            ),
        };
        let named_in = unmatched.named_in.as_deref().unwrap_or(CONFIG_FILE);
        findings.push(
            Finding::new(RuleId::MalformedCase, Subject::suite(&suite.name), message)
                .at(Location::line(named_in, unmatched.line))
                .help(help)
                .discriminator(pattern),
        );
    }
    findings
}

/// EL104: ids must be unique within a suite, across all of its files, also after Unicode
/// NFC normalisation (a reader cannot tell `café` from `cafe` + U+0301).
pub fn duplicate_case_ids(suite: &SuiteModel) -> Vec<Finding> {
    let repeats = suite.repeated_ids().map(|(case, first)| {
        Finding::new(
            RuleId::DuplicateCaseId,
            Subject::case(&suite.name, &case.id),
            format!(
                "case id `{}` is used twice in suite `{}` (first at {})",
                case.id,
                suite.name,
                case_at(first)
            ),
        )
        .at(case_location(case))
        .discriminator(&case_at(case))
    });
    let twins = suite.normalisation_twins().into_iter().map(|(case, first)| {
        Finding::new(
            RuleId::DuplicateCaseId,
            Subject::case(&suite.name, &case.id),
            format!(
                "case id `{}` in suite `{}` is the same as `{}` (first at {}) after Unicode NFC normalisation: a reader cannot tell them apart",
                case.id,
                suite.name,
                first.id,
                case_at(first)
            ),
        )
        .at(case_location(case))
        .help(format!(
            "spell both ids the same way (this one is {:?}, the first {:?}); if they are two cases, give this one a unique `id`",
            case.id, first.id
        ))
        .discriminator(&case_at(case))
    });
    repeats.chain(twins).collect()
}

/// The case files of a suite with a malformed-case problem (EL105): some of their cases
/// may not have loaded.
fn files_with_problems(suite: &SuiteModel) -> BTreeSet<&str> {
    suite
        .problems()
        .filter(|problem| problem.is_malformed())
        .map(|problem| problem.file.as_str())
        .collect()
}
