//! EL1xx: golden cases and prompts against the lock and the base revision.

use crate::finding::{Finding, Location, Subject};
use crate::hash::Digest;
use crate::model::lock::{CaseEntries, CaseLock, Lock, Recipes};
use crate::model::{
    locked_prompt_digest, suite_digest, Case, ProblemKind, Project, SuiteModel, CONFIG_FILE,
    LOCK_FILE,
};
use crate::rules::{RuleId, Severity};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

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

/// A suite's cases (the first of each id, in file order) with their lock entries, and the
/// entries no case has (in id order): one merge of the cases in id order with the lock.
/// The pairs come as an iterator: a suite's list of them would be as long as the suite.
fn pair_with_lock<'a>(
    suite: &'a SuiteModel,
    locked: &'a LockedCases,
) -> (impl Iterator<Item = Paired<'a>> + 'a, Vec<Unpaired<'a>>) {
    let mut entry_of: Vec<Option<&CaseLock>> = vec![None; suite.cases.len()];
    let mut missing = Vec::new();
    let mut entries = locked.iter().peekable();
    for position in suite.first_positions_by_id() {
        let id = suite.cases[position].id.as_str();
        while let Some(unmatched) = entries.next_if(|(locked_id, _)| *locked_id < id) {
            missing.push(unmatched);
        }
        entry_of[position] = entries
            .next_if(|(locked_id, _)| *locked_id == id)
            .map(|(_, entry)| entry);
    }
    missing.extend(entries);
    let paired = suite
        .first_of_each_id_at()
        .map(move |(position, case)| (case, entry_of[position]));
    (paired, missing)
}

type LockedCases = CaseEntries;
/// A case with its lock entry, if it has one.
type Paired<'a> = (&'a Case, Option<&'a CaseLock>);
/// A lock entry no case has, with its id.
type Unpaired<'a> = (&'a str, &'a CaseLock);

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
            let finding = Finding::new(
                RuleId::MalformedCase,
                Subject::suite(&suite.name),
                problem.message.clone(),
            )
            .at(Location::line(&problem.file, problem.line).with_column(problem.column))
            .discriminator(&format!("{}:{}", problem.file, problem.message));
            match problem.kind {
                ProblemKind::Malformed => finding.help(format!(
                    "fix {}:{}:{} and run `evalock check` again",
                    problem.file, problem.line, problem.column
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
            (None, false) => (
                format!("suite `{}`: no case file matches `{pattern}`", suite.name),
                "fix the glob in evalock.toml, or add the case file".to_owned(),
            ),
        };
        findings.push(
            Finding::new(RuleId::MalformedCase, Subject::suite(&suite.name), message)
                .at(Location::line(CONFIG_FILE, unmatched.line))
                .help(help)
                .discriminator(pattern),
        );
    }
    findings
}

/// EL104: ids must be unique within a suite, across all of its files.
pub fn duplicate_case_ids(suite: &SuiteModel) -> Vec<Finding> {
    suite
        .repeated_ids()
        .map(|(case, first)| {
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
        })
        .collect()
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
                "{LOCK_FILE} was written with other hash recipes: {}",
                recipe_differences(&lock.recipes)
            ),
        )
        .at(Location::line(LOCK_FILE, 1))
        .help("run `evalock lock` to re-pin every case with the current recipes")];
    }
    // The suites' own summaries and their cases against their entries: both at once, the
    // suites spread over the threads (in order: the report is the same either way).
    let empty = CaseEntries::default();
    let (mut findings, per_suite) = rayon::join(
        || summaries_disagree(lock, &project.lock_case_digests),
        || {
            project
                .suites
                .par_iter()
                .flat_map_iter(|suite| {
                    suite_unlocked(suite, lock.cases.get(&suite.name).unwrap_or(&empty))
                })
                .collect::<Vec<_>>()
        },
    );
    findings.extend(per_suite);
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

/// EL101 for one suite: each case against its lock entry, and the entries no case has.
fn suite_unlocked(suite: &SuiteModel, locked: &LockedCases) -> Vec<Finding> {
    let mut findings = Vec::new();
    let (paired, missing) = pair_with_lock(suite, locked);
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
            // Retiring adds `retired` and so changes the digest; the contract (the case
            // without it) tells a plain retirement from an edit made with it.
            Some(entry) if case.retired && entry.version == case.version => {
                match case.contract.as_deref() == Some(&entry.digest) {
                    true => Finding::new(
                        RuleId::CaseUnlocked,
                        subject(),
                        format!("case `{}` ({}) is retired but {LOCK_FILE} still has it active", case.id, case_at(case)),
                    )
                    .help("run `evalock lock` to record the retirement"),
                    false => Finding::new(
                        RuleId::CaseUnlocked,
                        subject(),
                        format!("case `{}` ({}) was retired and edited, still version {}", case.id, case_at(case), case.version),
                    )
                    .help(format!(
                        "retire it unchanged, or bump `version` to {} if its contract changed, then run `evalock lock`",
                        case.version + 1
                    )),
                }
            }
            Some(entry) if entry.version == case.version => Finding::new(
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
    let unreadable = files_with_problems(suite);
    // A file that did not load in full reports its EL105 problems; its cases are not
    // "missing" (one bad byte would otherwise read as every case deleted).
    for (id, entry) in missing
        .into_iter()
        .filter(|(_, entry)| !unreadable.contains(&*entry.file))
    {
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
    findings
}

/// `case = "case-v2" (this evalock writes "case-v1")`, for each recipe that differs.
fn recipe_differences(recipes: &Recipes) -> String {
    let current = Recipes::default();
    [
        ("case", &recipes.case, &current.case),
        ("prompt", &recipes.prompt, &current.prompt),
        ("tree", &recipes.tree, &current.tree),
        ("suite", &recipes.suite, &current.suite),
    ]
    .into_iter()
    .filter(|(_, locked, current)| locked != current)
    .map(|(name, locked, current)| format!("{name} = {locked:?} (this evalock writes {current:?})"))
    .collect::<Vec<_>>()
    .join(", ")
}

/// A suite's `digest` and `prompt` lines summarize its case entries and prompt pins: a
/// lock edited by hand (or a merge conflict resolved by keeping one side's summary) is
/// caught here, as `lock --check` catches it, not only when the suite is re-locked.
/// `digests`: the summaries of the lock's case entries already worked out, by suite.
fn summaries_disagree(lock: &Lock, digests: &BTreeMap<String, Digest>) -> Vec<Finding> {
    let empty = CaseEntries::default();
    let mut findings: Vec<Finding> = lock
        .suites
        .par_iter()
        .flat_map_iter(|(name, suite_lock)| {
            let entries = lock.cases.get(name).unwrap_or(&empty);
            let mut wrong = Vec::new();
            let digest = digests
                .get(name)
                .copied()
                .unwrap_or_else(|| suite_digest(entries));
            if digest != suite_lock.digest {
                wrong.push("`digest` does not match its case entries");
            }
            if locked_prompt_digest(&suite_lock.prompts) != suite_lock.prompt {
                wrong.push("`prompt` does not match its prompt files");
            }
            wrong.into_iter().map(move |what| {
                Finding::new(
                    RuleId::CaseUnlocked,
                    Subject::suite(name),
                    format!("{LOCK_FILE}: suite `{name}`: {what} (edited by hand, or a merge conflict resolved by hand)"),
                )
                .at(Location::file(LOCK_FILE))
                .discriminator(what)
                .help("run `evalock lock` and commit the result (after a merge conflict, run it on the merged cases instead of editing the lock)")
            })
        })
        .collect();
    crate::finding::sort_findings(&mut findings);
    findings
}

/// The case files of a suite with a malformed-case problem (EL105): some of their cases
/// may not have loaded.
fn files_with_problems(suite: &SuiteModel) -> BTreeSet<&str> {
    suite
        .problems
        .iter()
        .filter(|problem| problem.is_malformed())
        .map(|problem| problem.file.as_str())
        .collect()
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
            let mut help = None;
            let message = match (&prompt.digest, locked_prompts.get(&prompt.path)) {
                (None, _) => {
                    help = Some(format!(
                        "restore {}, or point `prompt` of suite `{}` in {CONFIG_FILE} at the prompt it uses; then run `evalock lock`",
                        prompt.path, suite.name
                    ));
                    format!(
                        "prompt file {} of suite `{}` is missing (or is a symlink)",
                        prompt.path, suite.name
                    )
                }
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
            let finding = Finding::new(RuleId::PromptUnlocked, subject.clone(), message)
                .at(Location::file(&prompt.path))
                .discriminator(&prompt.path);
            findings.push(match help {
                Some(help) => finding.help(help),
                None => finding,
            });
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

    /// What pairing must give: the first case of each id in file order with its entry,
    /// and the entries no case has, in id order.
    type LockPairs<'a> = (Vec<Paired<'a>>, Vec<Unpaired<'a>>);

    fn pair_by_lookup<'a>(suite: &'a SuiteModel, locked: &'a LockedCases) -> LockPairs<'a> {
        let mut seen = std::collections::HashSet::new();
        let paired = suite
            .cases
            .iter()
            .filter(|case| seen.insert(case.id.as_str()))
            .map(|case| (case, locked.get(&case.id)))
            .collect();
        let missing = locked
            .iter()
            .filter(|(id, _)| !seen.contains(*id))
            .collect();
        (paired, missing)
    }

    #[test]
    fn pairing_with_the_lock_matches_lookups_in_any_case_order() {
        let lock_sets: &[&[&str]] = &[
            &[],
            &["a"],
            &["a", "c", "e"],
            &["0", "b", "d", "z"],
            &["a", "b", "c", "d", "e", "f"],
        ];
        let case_sets: &[&[&str]] = &[
            &[],
            &["a"],
            &["a", "b", "c"],
            &["b", "d", "f", "g"],
            &["c", "a", "c", "e", "a", "0"],
            &["z", "y", "b", "b", "b"],
        ];
        for ids in case_sets {
            let suite = SuiteModel::new("s".into(), ids.iter().map(|id| case(id)).collect());
            for lock_ids in lock_sets {
                let lock = locked(lock_ids);
                let (paired, missing) = pair_with_lock(&suite, &lock);
                assert_eq!(
                    (paired.collect(), missing),
                    pair_by_lookup(&suite, &lock),
                    "cases {ids:?}, lock {lock_ids:?}"
                );
            }
        }
    }

    #[test]
    fn repeated_ids_are_found_in_file_order_with_their_first_case() {
        let ids = ["c", "a", "c", "b", "a", "c"];
        let suite = SuiteModel::new(
            "s".into(),
            ids.iter()
                .enumerate()
                .map(|(index, id)| Case {
                    line: index as u32 + 1,
                    ..case(id)
                })
                .collect(),
        );
        let repeats: Vec<(u32, u32)> = suite
            .repeated_ids()
            .map(|(repeat, first)| (repeat.line, first.line))
            .collect();
        assert_eq!(repeats, vec![(3, 1), (5, 2), (6, 1)]);
        let firsts: Vec<u32> = suite.first_of_each_id().map(|case| case.line).collect();
        assert_eq!(firsts, vec![1, 2, 4]);
        assert_eq!(duplicate_case_ids(&suite).len(), 3);
        let unique = SuiteModel::new("s".into(), vec![case("a"), case("b")]);
        assert!(duplicate_case_ids(&unique).is_empty());
    }
}
