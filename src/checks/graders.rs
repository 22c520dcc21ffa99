//! EL3xx: graders as code. Sources pinned with their version (EL301), cases pinned to
//! the current version (EL302), graders that cannot fail (EL303) and negative controls
//! that pass (EL304).

use crate::finding::{Finding, Location, Subject};
use crate::grade::probe::{probe_case, MustFail};
use crate::grade::{Grader, GraderProgram, REFUSAL_PROBE};
use crate::model::{Case, GraderModel, Project, SuiteModel, CONFIG_FILE, LOCK_FILE};
use crate::rules::{RuleId, Severity};
use crate::run::process::ProcessPolicy;
use rayon::prelude::*;
use std::collections::BTreeSet;

/// Every grader check for the suites in `suites` (EL301 looks at all graders).
pub fn check(project: &Project, base: Option<&Project>, suites: &BTreeSet<String>) -> Vec<Finding> {
    let mut findings = graders_unversioned(project, base);
    let selected: Vec<&SuiteModel> = project
        .suites
        .iter()
        .filter(|suite| suites.contains(&suite.name))
        .collect();
    for suite in &selected {
        findings.extend(grader_version_drift(project, suite));
    }
    findings.extend(graders_that_cannot_fail(project, &selected));
    findings
}

fn case_location(case: &Case) -> Location {
    Location::span(&*case.file, case.line, case.end_line)
}

/// Cases that are run: not retired.
pub fn active_cases(suite: &SuiteModel) -> impl Iterator<Item = &Case> {
    suite.first_of_each_id().filter(|case| !case.retired)
}

/// EL301 as `evalock lock` enforces it: re-pinning changed sources under the same version
/// would launder the change, so the lock is not written.
pub fn changed_without_version_bump(project: &Project, lock: &crate::model::Lock) -> Vec<Finding> {
    project
        .graders
        .iter()
        .filter_map(|grader| {
            let locked = lock.graders.get(&grader.id)?;
            (locked.version == grader.version && locked.digest != grader.digest)
                .then(|| unversioned_change(grader, &locked.files, LOCK_FILE))
        })
        .collect()
}

/// EL301: a grader's sources moved but its version did not (against the lock and the base).
pub fn graders_unversioned(project: &Project, base: Option<&Project>) -> Vec<Finding> {
    let mut findings = Vec::new();
    let Some(lock) = &project.lock else {
        return findings;
    };
    for grader in &project.graders {
        let subject = Subject::grader(&grader.id);
        for pattern in &grader.unmatched_sources {
            findings.push(
                Finding::new(
                    RuleId::GraderChangedUnversioned,
                    subject.clone(),
                    format!(
                        "grader `{}`: `sources` pattern `{pattern}` matches no file, so nothing of it is pinned",
                        grader.id
                    ),
                )
                .severity(Severity::Warn)
                .at(Location::file(CONFIG_FILE))
                .help("fix the glob in `[grader.…] sources`, then run `evalock lock`")
                .discriminator(pattern),
            );
        }
        let message = match lock.graders.get(&grader.id) {
            None => format!(
                "grader `{}` (version {}) is not pinned in {LOCK_FILE}",
                grader.id, grader.version
            ),
            Some(locked) if locked.version == grader.version && locked.digest != grader.digest => {
                findings.push(unversioned_change(grader, &locked.files, LOCK_FILE));
                continue;
            }
            Some(locked) if locked.version != grader.version || locked.digest != grader.digest => {
                format!(
                    "grader `{}` is version {} now but {LOCK_FILE} pins version {}",
                    grader.id, grader.version, locked.version
                )
            }
            Some(_) => {
                if let Some(base_grader) = base.and_then(|base| base.grader_model(&grader.id)) {
                    if base_grader.version == grader.version && base_grader.digest != grader.digest
                    {
                        let base_files = base_grader
                            .files
                            .iter()
                            .map(|file| (file.path.clone(), file.digest))
                            .collect();
                        findings.push(unversioned_change(
                            grader,
                            &base_files,
                            &base.map(|b| b.source.clone()).unwrap_or_default(),
                        ));
                    }
                }
                continue;
            }
        };
        findings.push(
            Finding::new(RuleId::GraderChangedUnversioned, subject, message)
                .at(Location::file(CONFIG_FILE))
                .help("run `evalock lock` to pin the grader's version with its sources"),
        );
    }
    for id in lock
        .graders
        .keys()
        .filter(|id| project.grader_model(id).is_none())
    {
        findings.push(
            Finding::new(
                RuleId::GraderChangedUnversioned,
                Subject::grader(id),
                format!("grader `{id}` is pinned in {LOCK_FILE} but no longer configured in {CONFIG_FILE}"),
            )
            .at(Location::file(CONFIG_FILE))
            .help("restore `[grader.…]`, or run `evalock lock` if removing it is intended"),
        );
    }
    findings
}

fn unversioned_change(
    grader: &GraderModel,
    pinned: &std::collections::BTreeMap<String, crate::hash::Digest>,
    against: &str,
) -> Finding {
    let current: std::collections::BTreeMap<&str, &crate::hash::Digest> = grader
        .files
        .iter()
        .map(|file| (file.path.as_str(), &file.digest))
        .collect();
    let mut moved: Vec<String> = Vec::new();
    for (path, digest) in &current {
        match pinned.get(*path) {
            None => moved.push(format!("{path} (added)")),
            Some(old) if old != *digest => moved.push(format!("{path} (changed)")),
            Some(_) => {}
        }
    }
    for path in pinned
        .keys()
        .filter(|path| !current.contains_key(path.as_str()))
    {
        moved.push(format!("{path} (removed)"));
    }
    if moved.is_empty() {
        moved.push("file modes".into());
    }
    let first_file = grader
        .files
        .iter()
        .find(|file| pinned.get(&file.path) != Some(&file.digest))
        .map(|file| file.path.clone());
    Finding::new(
        RuleId::GraderChangedUnversioned,
        Subject::grader(&grader.id),
        format!(
            "grader `{}` changed ({}) but is still version {} as in {against}",
            grader.id,
            moved.join(", "),
            grader.version
        ),
    )
    .at(Location::file(first_file.unwrap_or_else(|| CONFIG_FILE.to_owned())))
    .help(format!(
        "bump `[grader.{}] version` in {CONFIG_FILE}, run `evalock lock`, then re-record baselines with `evalock run` and `evalock accept --reason \"…\"`",
        grader.id
    ))
    .discriminator(against)
}

/// EL302: a case pins a grader version that is not the suite grader's current one.
pub fn grader_version_drift(project: &Project, suite: &SuiteModel) -> Vec<Finding> {
    let grader = project.grader_for(&suite.name);
    active_cases(suite)
        .filter_map(|case| {
            let pinned = case.grader_version.as_deref()?;
            (pinned != grader.version).then(|| {
                Finding::new(
                    RuleId::GraderVersionDrift,
                    Subject::case(&suite.name, &case.id),
                    format!(
                        "case `{}` ({}:{}) pins grader version {pinned}, but grader `{}` is version {}",
                        case.id, case.file, case.line, grader.id, grader.version
                    ),
                )
                .at(case_location(case))
                .help(format!(
                    "review the case against grader {}: set `grader_version` to {:?} and bump the case `version` to {}, then run `evalock lock`",
                    grader.reference(),
                    grader.version,
                    case.version + 1
                ))
            })
        })
        .collect()
}

/// EL303 and EL304: every probe and negative control must fail its grader. Command
/// graders run only when the project knows its work directory. Cases are probed in
/// parallel and one at a time: nothing per probe is kept but the findings.
pub fn graders_that_cannot_fail(project: &Project, suites: &[&SuiteModel]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for suite in suites {
        let grader = project.grader_for(&suite.name);
        if matches!(grader.program, GraderProgram::Command(_)) && project.workdir.is_none() {
            continue;
        }
        let policy = crate::run::process_policy(
            project,
            &suite.name,
            project
                .workdir
                .as_deref()
                .unwrap_or(std::path::Path::new(".")),
        );
        let probed: Vec<&Case> = active_cases(suite)
            .filter(|case| {
                case.grader_version
                    .as_deref()
                    .is_none_or(|pinned| pinned == grader.version)
            })
            .collect();
        let per_case: Vec<Vec<Finding>> = probed
            .par_iter()
            .map(|case| must_fail_findings(suite, case, &grader, &policy))
            .collect();
        findings.extend(per_case.into_iter().flatten());
    }
    findings
}

/// The probes and negative controls of one case that its grader lets pass: worked out by
/// the load for the built-in grader, graded here for a command grader.
fn must_fail_findings(
    suite: &SuiteModel,
    case: &Case,
    grader: &Grader,
    policy: &ProcessPolicy,
) -> Vec<Finding> {
    let probed;
    let outcome = match case.probe() {
        Some(outcome) if grader.program == GraderProgram::Builtin => outcome,
        _ => {
            probed = probe_case(&case.id, case.value(), |completion| {
                grader
                    .grade(case.value(), completion, policy)
                    .is_ok_and(|grade| grade.pass)
            });
            &probed
        }
    };
    let mut findings: Vec<Finding> = outcome
        .passed
        .iter()
        .map(|kind| must_fail_finding(suite, case, grader, *kind))
        .collect();
    if let Some(problem) = &outcome.malformed_controls {
        findings.push(
            Finding::new(
                RuleId::ControlPassed,
                Subject::case(&suite.name, &case.id),
                problem.clone(),
            )
            .at(case_location(case))
            .help("write `mutate` as {\"completion\": …} or a list of them")
            .discriminator("malformed"),
        );
    }
    findings
}

fn must_fail_finding(suite: &SuiteModel, case: &Case, grader: &Grader, kind: MustFail) -> Finding {
    let subject = Subject::case(&suite.name, &case.id);
    let grader = grader.reference();
    let finding = match kind {
        MustFail::EmptyProbe => Finding::new(
            RuleId::GraderCannotFail,
            subject,
            format!("grader {grader} passes an empty completion for case `{}` ({}:{})", case.id, case.file, case.line),
        )
        .discriminator("empty"),
        MustFail::RefusalProbe => Finding::new(
            RuleId::GraderCannotFail,
            subject,
            format!(
                "grader {grader} passes the plain refusal {REFUSAL_PROBE:?} for case `{}` ({}:{})",
                case.id, case.file, case.line
            ),
        )
        .help("add an assertion a refusal fails (`json`, `must_include`, `must_call`), or mark the case `\"expects_refusal\": true` if refusing is the right answer")
        .discriminator("refusal"),
        MustFail::Control(index) => Finding::new(
            RuleId::ControlPassed,
            subject,
            format!(
                "the negative control `mutate[{index}]` of case `{}` ({}:{}) passes grader {grader}",
                case.id, case.file, case.line
            ),
        )
        .discriminator(&format!("mutate-{index}")),
    };
    finding.at(case_location(case))
}

/// EL302 outranks everything else said about the same case: the case is scored
/// against a retired contract, so its other findings are noise.
pub fn drop_outranked(findings: &mut Vec<Finding>) {
    let suite_and_case = |finding: &Finding| {
        (
            finding.subject.suite.as_deref().map(str::to_owned),
            finding.subject.case.clone(),
        )
    };
    let drifted: BTreeSet<(Option<String>, Option<String>)> = findings
        .iter()
        .filter(|finding| finding.rule == RuleId::GraderVersionDrift)
        .map(suite_and_case)
        .collect();
    findings.retain(|finding| {
        finding.rule == RuleId::GraderVersionDrift
            || finding.subject.case.is_none()
            || !drifted.contains(&suite_and_case(finding))
    });
}
