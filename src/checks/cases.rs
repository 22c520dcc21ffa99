//! EL1xx: golden cases and prompts against the lock and the base revision.

use crate::finding::{Finding, Location, Subject};
use crate::model::lock::{CaseLock, Recipes};
use crate::model::{Case, Project, SuiteModel, CONFIG_FILE, LOCK_FILE};
use crate::rules::RuleId;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

pub fn check(project: &Project, base: Option<&Project>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for suite in &project.suites {
        findings.extend(malformed_cases(suite));
        findings.extend(duplicate_case_ids(suite));
    }
    findings.extend(cases_unlocked(project));
    findings.extend(prompts_unlocked(project));
    if let Some(base) = base {
        findings.extend(cases_edited_in_place(project, base));
        findings.extend(cases_removed(project, base));
    }
    findings
}

/// A suite's cases (the first of each id) with their lock entries, and the entries no case
/// has. Cases usually come sorted by id, as the lock lists them: then one merge pass pairs
/// them, otherwise each case is looked up.
fn pair_with_lock<'a>(cases: &'a [Case], locked: &'a LockedCases) -> LockPairs<'a> {
    match cases.windows(2).all(|pair| pair[0].id < pair[1].id) {
        true => pair_by_merge(cases, locked),
        false => pair_by_lookup(cases, locked),
    }
}

type LockedCases = BTreeMap<String, CaseLock>;
type LockPairs<'a> = (
    Vec<(&'a Case, Option<&'a CaseLock>)>,
    Vec<(&'a String, &'a CaseLock)>,
);

fn pair_by_lookup<'a>(cases: &'a [Case], locked: &'a LockedCases) -> LockPairs<'a> {
    let mut seen = HashSet::with_capacity(cases.len());
    let paired = cases
        .iter()
        .filter(|case| seen.insert(case.id.as_str()))
        .map(|case| (case, locked.get(&case.id)))
        .collect();
    let missing = locked
        .iter()
        .filter(|(id, _)| !seen.contains(id.as_str()))
        .collect();
    (paired, missing)
}

/// [`pair_by_lookup`] for cases with strictly increasing ids.
fn pair_by_merge<'a>(cases: &'a [Case], locked: &'a LockedCases) -> LockPairs<'a> {
    let mut paired = Vec::with_capacity(cases.len());
    let mut missing = Vec::new();
    let mut entries = locked.iter().peekable();
    for case in cases {
        while let Some((id, entry)) = entries.next_if(|(id, _)| id.as_str() < case.id.as_str()) {
            missing.push((id, entry));
        }
        let entry = entries
            .next_if(|(id, _)| **id == case.id)
            .map(|(_, entry)| entry);
        paired.push((case, entry));
    }
    missing.extend(entries);
    (paired, missing)
}

fn case_location(case: &Case) -> Location {
    Location::span(&*case.file, case.line, case.end_line)
}

fn case_at(case: &Case) -> String {
    format!("{}:{}", case.file, case.line)
}

/// EL105: every place in a case file that could not become a case, and globs that match nothing.
pub fn malformed_cases(suite: &SuiteModel) -> Vec<Finding> {
    let mut findings: Vec<Finding> = suite
        .problems
        .iter()
        .map(|problem| {
            Finding::new(
                RuleId::MalformedCase,
                Subject::suite(&suite.name),
                problem.message.clone(),
            )
            .at(Location::line(&problem.file, problem.line).with_column(problem.column))
            .help(format!(
                "fix {}:{}:{} and run `evalock check` again",
                problem.file, problem.line, problem.column
            ))
            .discriminator(&format!("{}:{}", problem.file, problem.message))
        })
        .collect();
    for pattern in &suite.unmatched_globs {
        findings.push(
            Finding::new(
                RuleId::MalformedCase,
                Subject::suite(&suite.name),
                format!("suite `{}`: no case file matches `{pattern}`", suite.name),
            )
            .at(Location::file(CONFIG_FILE))
            .help("fix the glob in evalock.toml, or add the case file")
            .discriminator(pattern),
        );
    }
    findings
}

/// EL104: ids must be unique within a suite, across all of its files.
pub fn duplicate_case_ids(suite: &SuiteModel) -> Vec<Finding> {
    let mut first_seen: HashMap<&str, &Case> = HashMap::with_capacity(suite.cases.len());
    let mut findings = Vec::new();
    for case in &suite.cases {
        match first_seen.get(case.id.as_str()) {
            None => {
                first_seen.insert(&case.id, case);
            }
            Some(first) => findings.push(
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
                .discriminator(&case_at(case)),
            ),
        }
    }
    findings
}

/// EL101: each case against its lock entry, and each lock entry against the cases.
pub fn cases_unlocked(project: &Project) -> Vec<Finding> {
    let Some(lock) = &project.lock else {
        if project
            .suites
            .iter()
            .all(|suite| suite.cases.is_empty() && suite.prompts.is_empty())
        {
            return Vec::new();
        }
        return vec![Finding::new(
            RuleId::CaseUnlocked,
            Subject::default(),
            format!("there is no {LOCK_FILE} yet: nothing is frozen"),
        )
        .at(Location::file(CONFIG_FILE))
        .help("run `evalock lock` and commit evalock.lock")];
    };
    if lock.recipes != Recipes::default() {
        return vec![Finding::new(
            RuleId::CaseUnlocked,
            Subject::default(),
            format!(
                "{LOCK_FILE} was written with other hash recipes ({:?})",
                lock.recipes
            ),
        )
        .at(Location::line(LOCK_FILE, 1))
        .help("run `evalock lock` to re-pin every case with the current recipes")];
    }
    let mut findings = Vec::new();
    let empty = BTreeMap::new();
    for suite in &project.suites {
        let locked = lock.cases.get(&suite.name).unwrap_or(&empty);
        let (paired, missing) = pair_with_lock(&suite.cases, locked);
        for (case, entry) in paired {
            // Built only for findings: most cases are clean.
            let subject = || Subject::case(&suite.name, &case.id);
            let finding = match entry {
                None => Finding::new(
                    RuleId::CaseUnlocked,
                    subject(),
                    format!("case `{}` ({}) is new and not in {LOCK_FILE}", case.id, case_at(case)),
                )
                .help("review the case, then run `evalock lock`"),
                Some(entry) if entry.digest == case.digest => {
                    if entry.version != case.version || entry.retired != case.retired || *entry.file != *case.file {
                        Finding::new(
                            RuleId::CaseUnlocked,
                            subject(),
                            format!("case `{}` ({}) moved or changed its lock metadata", case.id, case_at(case)),
                        )
                        .help("run `evalock lock`")
                    } else {
                        continue;
                    }
                }
                Some(entry) if entry.version == case.version && !case.retired => Finding::new(
                    RuleId::CaseUnlocked,
                    subject(),
                    format!("case `{}` ({}) changed but is still version {}", case.id, case_at(case), case.version),
                )
                .help(format!(
                    "bump `version` to {} if its contract changed (shipped cases are never edited in place), then run `evalock lock`",
                    case.version + 1
                )),
                Some(entry) => Finding::new(
                    RuleId::CaseUnlocked,
                    subject(),
                    format!(
                        "case `{}` ({}) changed: version {} in {LOCK_FILE}, {} now",
                        case.id,
                        case_at(case),
                        entry.version,
                        case.version
                    ),
                )
                .help("run `evalock lock` to freeze the new version"),
            };
            findings.push(finding.at(case_location(case)));
        }
        for (id, entry) in missing {
            findings.push(
                Finding::new(
                    RuleId::CaseUnlocked,
                    Subject::case(&suite.name, id),
                    format!("locked case `{id}` (version {}) is missing from {}", entry.version, entry.file),
                )
                .at(Location::file(&*entry.file))
                .help("restore the case and mark it `\"retired\": true` instead of deleting it, then run `evalock lock`"),
            );
        }
    }
    let configured: BTreeSet<&str> = project
        .suites
        .iter()
        .map(|suite| suite.name.as_str())
        .collect();
    for name in lock
        .suites
        .keys()
        .chain(lock.cases.keys())
        .collect::<BTreeSet<_>>()
    {
        if !configured.contains(name.as_str()) {
            findings.push(
                Finding::new(
                    RuleId::CaseUnlocked,
                    Subject::suite(name),
                    format!("suite `{name}` is in {LOCK_FILE} but no longer in {CONFIG_FILE}"),
                )
                .at(Location::file(CONFIG_FILE))
                .help("restore the suite, or run `evalock lock` if removing it is intended"),
            );
        }
    }
    findings
}

/// EL107: each prompt file against its locked digest.
pub fn prompts_unlocked(project: &Project) -> Vec<Finding> {
    let Some(lock) = &project.lock else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    for suite in &project.suites {
        let locked = lock.suites.get(&suite.name);
        let locked_prompts = locked
            .map(|entry| entry.prompts.clone())
            .unwrap_or_default();
        let subject = Subject::suite(&suite.name);
        for prompt in &suite.prompts {
            let message = match (&prompt.digest, locked_prompts.get(&prompt.path)) {
                (None, _) => format!(
                    "prompt file {} of suite `{}` is missing (or is a symlink)",
                    prompt.path, suite.name
                ),
                (Some(_), None) => format!(
                    "prompt file {} of suite `{}` is not in {LOCK_FILE}",
                    prompt.path, suite.name
                ),
                (Some(current), Some(frozen)) if current != frozen => format!(
                    "prompt {} of suite `{}` changed ({} locked, {} now)",
                    prompt.path,
                    suite.name,
                    frozen.short(),
                    current.short()
                ),
                _ => continue,
            };
            findings.push(
                Finding::new(RuleId::PromptUnlocked, subject.clone(), message)
                    .at(Location::file(&prompt.path))
                    .discriminator(&prompt.path),
            );
        }
        let current: BTreeSet<&str> = suite
            .prompts
            .iter()
            .map(|prompt| prompt.path.as_str())
            .collect();
        for path in locked_prompts
            .keys()
            .filter(|path| !current.contains(path.as_str()))
        {
            findings.push(
                Finding::new(
                    RuleId::PromptUnlocked,
                    subject.clone(),
                    format!(
                        "prompt {path} is pinned for suite `{}` but no longer configured",
                        suite.name
                    ),
                )
                .at(Location::file(CONFIG_FILE))
                .discriminator(path),
            );
        }
    }
    findings
}

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
        let mut base_ids: BTreeMap<&str, (&str, u64)> = base_suite
            .cases
            .iter()
            .filter(|case| !case.retired)
            .map(|case| (case.id.as_str(), (&*case.file, case.version)))
            .collect();
        if let Some(locked) = base
            .lock
            .as_ref()
            .and_then(|lock| lock.cases.get(&base_suite.name))
        {
            for (id, entry) in locked.iter().filter(|(_, entry)| !entry.retired) {
                base_ids
                    .entry(id.as_str())
                    .or_insert((&*entry.file, entry.version));
            }
        }
        let current = project.suite(&base_suite.name);
        for (id, (file, version)) in base_ids {
            if current.is_some_and(|suite| suite.case(id).is_some()) {
                continue;
            }
            let message = match current {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::bytes_digest;
    use crate::model::cases::CaseValue;
    use std::sync::Arc;

    fn case(id: &str) -> Case {
        Case {
            id: id.into(),
            version: 1,
            digest: bytes_digest(id.as_bytes()),
            contract: None,
            file: Arc::from("evals/a.jsonl"),
            line: 1,
            end_line: 1,
            retired: false,
            grader_version: None,
            body: CaseValue::Probed(None),
        }
    }

    fn locked(ids: &[&str]) -> LockedCases {
        ids.iter()
            .map(|id| {
                let entry = CaseLock {
                    version: 1,
                    digest: bytes_digest(id.as_bytes()),
                    file: Arc::from("evals/a.jsonl"),
                    retired: false,
                };
                (id.to_string(), entry)
            })
            .collect()
    }

    #[test]
    fn merging_sorted_cases_pairs_them_as_lookups_do() {
        let lock_sets: &[&[&str]] = &[
            &[],
            &["a"],
            &["a", "c", "e"],
            &["0", "b", "d", "z"],
            &["a", "b", "c", "d", "e", "f"],
        ];
        let case_sets: &[&[&str]] = &[&[], &["a"], &["a", "b", "c"], &["b", "d", "f", "g"], &["c"]];
        for ids in case_sets {
            let cases: Vec<Case> = ids.iter().map(|id| case(id)).collect();
            for lock_ids in lock_sets {
                let lock = locked(lock_ids);
                assert_eq!(
                    pair_by_merge(&cases, &lock),
                    pair_by_lookup(&cases, &lock),
                    "cases {ids:?}, lock {lock_ids:?}"
                );
            }
        }
        // Unsorted or repeated ids take the lookup path: first of each id, lock order.
        let cases: Vec<Case> = ["c", "a", "c"].iter().map(|id| case(id)).collect();
        let lock = locked(&["a", "b"]);
        let (paired, missing) = pair_with_lock(&cases, &lock);
        let paired: Vec<(&str, bool)> = paired
            .iter()
            .map(|(case, entry)| (case.id.as_str(), entry.is_some()))
            .collect();
        assert_eq!(paired, vec![("c", false), ("a", true)]);
        let missing: Vec<&str> = missing.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(missing, vec!["b"]);
    }
}
