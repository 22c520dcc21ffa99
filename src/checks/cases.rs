//! EL1xx: golden cases and prompts against the lock and the base revision.

use crate::finding::{Finding, Location, Subject};
use crate::model::lock::Recipes;
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
        let mut seen = HashSet::with_capacity(suite.cases.len());
        for case in &suite.cases {
            if !seen.insert(case.id.as_str()) {
                continue;
            }
            // Built only for findings: most cases are clean.
            let subject = || Subject::case(&suite.name, &case.id);
            let finding = match locked.get(&case.id) {
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
        for (id, entry) in locked {
            if !seen.contains(id.as_str()) {
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
