//! EL102 and EL103: cases against those of the base revision (what a change may not do to
//! a case that already shipped); apart because only a check with a base runs them.

use super::{case_at, case_location, files_with_problems};
use crate::finding::{Finding, Location, Subject};
use crate::model::Project;
use crate::rules::RuleId;
use std::collections::BTreeMap;

/// EL102: compared with the base, a case kept its id and version but its contract moved.
pub fn cases_edited_in_place(project: &Project, base: &Project) -> Vec<Finding> {
    let mut findings = Vec::new();
    for suite in &project.suites {
        let Some(base_suite) = base.suite(&suite.name) else {
            continue;
        };
        for case in &suite.cases {
            let Some(base_case) = base_suite.case(&case.id) else {
                continue;
            };
            let subject = || Subject::case(&suite.name, &case.id);
            if case.version == base_case.version
                && case.contract_digest() != base_case.contract_digest()
            {
                findings.push(
                    Finding::new(
                        RuleId::CaseEditedInPlace,
                        subject(),
                        format!(
                            "case `{}` ({}) was edited in place: still version {} as in {}",
                            case.id,
                            case_at(case),
                            case.version,
                            base.source
                        ),
                    )
                    .at(case_location(case))
                    .help(format!(
                        "bump `version` to {} and run `evalock lock`",
                        case.version + 1
                    )),
                );
            } else if case.version < base_case.version {
                findings.push(
                    Finding::new(
                        RuleId::CaseEditedInPlace,
                        subject(),
                        format!(
                            "case `{}` ({}) went back from version {} to {}",
                            case.id,
                            case_at(case),
                            base_case.version,
                            case.version
                        ),
                    )
                    .at(case_location(case))
                    .help(format!(
                        "versions only move forward: set `version` to {}",
                        base_case.version + 1
                    )),
                );
            }
        }
    }
    findings
}

/// EL103: a case the base froze (in its lock or its files) is gone instead of retired.
pub fn cases_removed(project: &Project, base: &Project) -> Vec<Finding> {
    let mut findings = Vec::new();
    for base_suite in &base.suites {
        // Retired cases too: a retired case stays in its file, so its id is never reused
        // for another contract.
        let mut base_ids: BTreeMap<&str, (&str, u64, bool)> = base_suite
            .cases
            .iter()
            .map(|case| (case.id.as_str(), (&*case.file, case.version, case.retired)))
            .collect();
        if let Some(locked) = base
            .lock
            .as_ref()
            .and_then(|lock| lock.cases.get(&base_suite.name))
        {
            for (id, entry) in locked {
                base_ids
                    .entry(id)
                    .or_insert((&*entry.file, entry.version, entry.retired));
            }
        }
        let current = project.suite(&base_suite.name);
        let unreadable = current.map(files_with_problems).unwrap_or_default();
        for (id, (file, version, retired)) in base_ids {
            if current.is_some_and(|suite| suite.case(id).is_some()) || unreadable.contains(file) {
                continue;
            }
            let message = match current {
                Some(_) if retired => format!(
                    "retired case `{id}` (version {version}, {file}) was deleted: a retired case stays in its file, so its id is never reused"
                ),
                Some(_) => format!(
                    "case `{id}` (version {version}, {file}) was removed instead of retired"
                ),
                None => format!(
                    "suite `{}` was removed with its case `{id}` (version {version}, {file})",
                    base_suite.name
                ),
            };
            findings.push(
                Finding::new(RuleId::CaseRemoved, Subject::case(&base_suite.name, id), message)
                    .at(Location::file(file))
                    .help(format!(
                        "restore case `{id}` in {file} with `\"retired\": true` (a removed case is retired, never deleted), then run `evalock lock`"
                    )),
            );
        }
    }
    findings
}
