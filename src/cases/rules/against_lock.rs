//! EL101 and EL107: each case and prompt against its entry in evalock.lock, and each entry
//! against the cases: the merge of a suite with its lock entries is the `check` hot path.

use super::{case_at, case_location, files_it_reads, files_with_problems, Side};
use crate::cases::suite::{locked_prompt_digest, suite_digest, SuiteModel};
use crate::cases::Case;
use crate::finding::{Finding, Location, Subject};
use crate::project::config::CONFIG_FILE;
use crate::project::lock::LOCK_FILE;
use crate::project::lock::{CaseEntries, CaseLock, Lock, Recipes};
use crate::rules::RuleId;
use rayon::prelude::*;
use std::collections::BTreeSet;

/// A suite's cases (the first of each id, in file order) with their lock entries, and the
/// entries no case has (in id order): one merge of the cases in id order with the lock.
/// The pairs come as an iterator: a suite's list of them would be as long as the suite.
pub(super) fn pair_with_lock<'a>(
    suite: &'a SuiteModel,
    locked: &'a LockedCases,
) -> (impl Iterator<Item = Paired<'a>> + 'a, Vec<Unpaired<'a>>) {
    let mut entry_of: Vec<Option<&CaseLock>> = vec![None; suite.case_count()];
    let mut missing = Vec::new();
    let mut entries = locked.iter().peekable();
    for position in suite.first_positions_by_id() {
        let id = suite.case_at(position).id.as_ref();
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

pub(super) type LockedCases = CaseEntries;
/// A case with its lock entry, if it has one.
pub(super) type Paired<'a> = (&'a Case, Option<&'a CaseLock>);
/// A lock entry no case has, with its id.
pub(super) type Unpaired<'a> = (&'a str, &'a CaseLock);

/// EL101: each case against its lock entry, and each lock entry against the cases.
pub fn cases_unlocked(project: &Side<'_>) -> Vec<Finding> {
    let Some(lock) = project.lock else {
        if project
            .suites
            .iter()
            .all(|suite| suite.case_count() == 0 && suite.prompts.is_empty())
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
        || summaries_disagree(lock),
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
                format!("case `{}` ({}) changed but is still version {}{}", case.id, case_at(case), case.version, files_it_reads(case)),
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
fn summaries_disagree(lock: &Lock) -> Vec<Finding> {
    let empty = CaseEntries::default();
    let mut findings: Vec<Finding> = lock
        .suites
        .par_iter()
        .flat_map_iter(|(name, suite_lock)| {
            let entries = lock.cases.get(name).unwrap_or(&empty);
            let mut wrong = Vec::new();
            if suite_digest(entries) != suite_lock.digest {
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

/// EL107: each prompt file against its locked digest.
pub fn prompts_unlocked(project: &Side<'_>) -> Vec<Finding> {
    let Some(lock) = project.lock else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    for suite in project.suites {
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
