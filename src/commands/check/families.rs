//! Checks: pure functions from the model (and the base model) to findings. One module
//! per concern, named after its rule family.

use crate::baselines::rules as baselines;
use crate::cases::rules as cases;
use crate::commands::project::Project;
use crate::error::Result;
use crate::finding::{sort_findings, Finding, Subject};
use crate::graders::rules as graders;
use crate::rules::RuleId;
use crate::skills::rules as skills;
use std::collections::BTreeSet;

/// Every check that needs no run: the project against its lock, and against the base
/// revision when one is given.
pub fn check_project(project: &Project, base: Option<&Project>) -> Vec<Finding> {
    // Over the baselines loaded with the projects nothing is read, so nothing can fail.
    check_families(project, base, None)
        .map(|found| found.findings)
        .unwrap_or_default()
}

/// [`check_project`] for projects loaded without their baselines
/// ([`crate::commands::project::LoadOptions::read_baselines`]): each suite's baseline is
/// read from `sources` as its rules run, and dropped after.
pub fn check_project_reading_baselines(
    project: &Project,
    base: Option<&Project>,
    sources: baselines::BaselineSources<'_>,
) -> Result<baselines::InTurn> {
    check_families(project, base, Some(sources))
}

/// The rule families side by side; the baseline rules over the baselines loaded with the
/// projects, or read in turn from `sources`.
fn check_families(
    project: &Project,
    base: Option<&Project>,
    sources: Option<baselines::BaselineSources<'_>>,
) -> Result<baselines::InTurn> {
    let all_suites: BTreeSet<String> = project
        .suites
        .iter()
        .map(|suite| suite.name.clone())
        .collect();
    // The rule families read the same model and nothing else: they run side by side.
    let ((case_findings, skill_findings), (grader_findings, baseline_findings)) = rayon::join(
        || {
            rayon::join(
                || {
                    cases::check(
                        &project.cases_side(),
                        base.map(Project::cases_side).as_ref(),
                    )
                },
                || {
                    skills::check(
                        &project.skills_side(),
                        base.map(Project::skills_side).as_ref(),
                    )
                },
            )
        },
        || {
            rayon::join(
                || {
                    let command_grader = project.command_grader();
                    graders::check(
                        &project.graders_side(),
                        base.map(Project::graders_side).as_ref(),
                        &all_suites,
                        command_grader.as_deref(),
                    )
                },
                || {
                    let (side, base_side) =
                        (project.baselines_side(), base.map(Project::baselines_side));
                    let scope = baselines::Scope {
                        full: true,
                        absent_file_is_missing: false,
                    };
                    match sources {
                        Some(sources) => baselines::check_in_turn(
                            &side,
                            base_side.as_ref(),
                            &all_suites,
                            scope,
                            sources,
                        ),
                        None => Ok(baselines::InTurn {
                            findings: baselines::check(
                                &side,
                                base_side.as_ref(),
                                &all_suites,
                                scope,
                            ),
                            unreadable_at_base: Vec::new(),
                        }),
                    }
                },
            )
        },
    );
    let mut findings = case_findings;
    findings.extend(skill_findings);
    // Tool servers are a handful of small files: read after the others, not beside them.
    findings.extend(crate::mcp::rules::check(
        &project.mcp_side(),
        base.map(Project::mcp_side).as_ref(),
        true,
    ));
    findings.extend(grader_findings);
    let baselines::InTurn {
        findings: baseline_findings,
        unreadable_at_base,
    } = baseline_findings?;
    findings.extend(baseline_findings);
    graders::drop_outranked(&mut findings);
    drop_superseded(&mut findings);
    sort_findings(&mut findings);
    Ok(baselines::InTurn {
        findings,
        unreadable_at_base,
    })
}

/// When a stronger rule explains a subject, weaker restatements of it are noise:
/// a case removed vs base (EL103) is not also reported as missing from the lock (EL101).
fn drop_superseded(findings: &mut Vec<Finding>) {
    let removed: BTreeSet<Subject> = findings
        .iter()
        .filter(|finding| finding.rule == RuleId::CaseRemoved)
        .map(|finding| finding.subject.clone())
        .collect();
    findings.retain(|finding| {
        !(finding.rule == RuleId::CaseUnlocked && removed.contains(&finding.subject))
    });
}
