//! EL102 and EL103: cases against those of the base revision (what a change may not do to
//! a case that already shipped); apart because only a check with a base runs them.

use super::{case_at, case_location, files_it_reads, files_with_problems, Side};
use crate::finding::{Finding, Location, RelatedKind, Subject};
use crate::rules::RuleId;

/// EL102: compared with the base, a case kept its id and version but its contract moved.
pub fn cases_edited_in_place(project: &Side<'_>, base: &Side<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for suite in project.suites {
        let Some(base_suite) = base.suite(&suite.name) else {
            continue;
        };
        let suite = project.compared_with_base(&suite.name).unwrap_or(suite);
        for (case, base_case) in suite.paired_by_id(base_suite) {
            let subject = || Subject::case(&suite.name, &case.id);
            if case.version == base_case.version
                && case.contract_digest() != base_case.contract_digest()
            {
                findings.push(
                    Finding::new(
                        RuleId::CaseEditedInPlace,
                        subject(),
                        format!(
                            "case `{}` ({}) was edited in place: still version {} as in {}{}",
                            case.id,
                            case_at(case),
                            case.version,
                            base.source,
                            files_it_reads(case)
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

/// EL110: a case that, at a new version, asks its grader less than at the base: its
/// negative controls (`mutate`) or known-good completions (`expect_pass`) removed, or its
/// `expect.max_chars` raised or dropped. An edit at the same version is EL102 already.
pub fn assertions_loosened(project: &Side<'_>, base: &Side<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for suite in project.suites {
        let Some(base_suite) = base.suite(&suite.name) else {
            continue;
        };
        let suite = project.compared_with_base(&suite.name).unwrap_or(suite);
        // Paired in one pass: a lookup by id for each of 200,000 cases took a tenth of a
        // pull request's check.
        for (case, base_case) in suite.paired_by_id(base_suite) {
            if case.version <= base_case.version {
                continue;
            }
            let (Some(then), now) = (base_case.graded_value(), case.graded_value()) else {
                continue;
            };
            let now = now.unwrap_or_default();
            let count = |value: &serde_json::Value, key: &str| match value.get(key) {
                Some(serde_json::Value::Array(items)) => items.len(),
                Some(serde_json::Value::Null) | None => 0,
                Some(_) => 1,
            };
            let mut loosened = Vec::new();
            for (key, what) in [
                ("mutate", "negative controls (`mutate`)"),
                ("expect_pass", "known-good completions (`expect_pass`)"),
            ] {
                let (before, after) = (count(&then, key), count(&now, key));
                if after < before {
                    loosened.push((key, format!("has {after} {what} where it had {before}")));
                }
            }
            let max_chars = |value: &serde_json::Value| {
                value
                    .pointer("/expect/max_chars")
                    .and_then(serde_json::Value::as_u64)
            };
            if let Some(before) = max_chars(&then) {
                match max_chars(&now) {
                    Some(after) if after > before => loosened.push((
                        "max_chars",
                        format!("raises `expect.max_chars` from {before} to {after}"),
                    )),
                    None => {
                        loosened.push(("max_chars", format!("drops `expect.max_chars` ({before})")))
                    }
                    Some(_) => {}
                }
            }
            for (key, change) in loosened {
                findings.push(
                    Finding::new(
                        RuleId::PolicyLoosened,
                        Subject::case(&suite.name, &case.id),
                        format!(
                            "case `{}` ({}) {change} at version {}, compared with version {} in {}",
                            case.id,
                            case_at(case),
                            case.version,
                            base_case.version,
                            base.source
                        ),
                    )
                    .at(case_location(case))
                    .help(format!(
                        "keep what the case asks of its grader; if loosening it is intended, give a commit since the base the trailer `Evalock-Approved: EL110 {}: <why>`",
                        case.file
                    ))
                    .discriminator(&format!("assertion\u{1f}{key}")),
                );
            }
        }
    }
    findings
}

/// EL103: a case the base froze (in its lock or its files) is gone instead of retired.
pub fn cases_removed(project: &Side<'_>, base: &Side<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for base_suite in base.suites {
        // Retired cases too: a retired case stays in its file, so its id is never reused
        // for another contract.
        let cases = base_suite.first_cases_by_id().map(|case| {
            let lines = Some((case.line, case.end_line));
            (&*case.id, (&*case.file, case.version, case.retired, lines))
        });
        let locked = base
            .lock
            .as_ref()
            .and_then(|lock| lock.cases.get(&base_suite.name))
            .into_iter()
            .flatten()
            .map(|(id, entry)| (id, (&*entry.file, entry.version, entry.retired, None)));
        let current = project.compared_with_base(&base_suite.name);
        let unreadable = current.map(files_with_problems).unwrap_or_default();
        // Every list here is in id order: the current cases are paired in one pass.
        let mut current_ids = current
            .into_iter()
            .flat_map(|suite| suite.first_cases_by_id())
            .map(|case| &*case.id)
            .peekable();
        for (id, (file, version, retired, lines)) in merge_by_id(cases, locked) {
            while current_ids.next_if(|current| *current < id).is_some() {}
            if current_ids.peek() == Some(&id) || unreadable.contains(file) {
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
            let finding =
                Finding::new(RuleId::CaseRemoved, Subject::case(&base_suite.name, id), message)
                    .at(Location::file(file))
                    .help(format!(
                        "restore case `{id}` in {file} with `\"retired\": true` (a removed case is retired, never deleted), then run `evalock lock`"
                    ));
            // Where it stood at the base: the old side of a pull request's diff.
            findings.push(match lines {
                Some((line, end_line)) => {
                    finding.related(RelatedKind::Base, Location::span(file, line, end_line))
                }
                None => finding,
            });
        }
    }
    findings
}

/// Two lists sorted by id, as one; where both hold an id, the first list's item.
fn merge_by_id<'a, T>(
    first: impl Iterator<Item = (&'a str, T)>,
    second: impl Iterator<Item = (&'a str, T)>,
) -> impl Iterator<Item = (&'a str, T)> {
    let mut first = first.peekable();
    let mut second = second.peekable();
    std::iter::from_fn(move || {
        let take_first = match (first.peek(), second.peek()) {
            (Some((one, _)), Some((other, _))) => one <= other,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if take_first {
            let item = first.next()?;
            second.next_if(|(other, _)| *other == item.0);
            Some(item)
        } else {
            second.next()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::merge_by_id;

    #[test]
    fn merging_keeps_id_order_and_the_first_lists_item_for_a_shared_id() {
        let first = [("a", 1), ("c", 1), ("d", 1)];
        let second = [("b", 2), ("c", 2), ("e", 2)];
        let merged: Vec<_> = merge_by_id(first.into_iter(), second.into_iter()).collect();
        assert_eq!(merged, [("a", 1), ("b", 2), ("c", 1), ("d", 1), ("e", 2)]);
        let only_second: Vec<_> = merge_by_id([].into_iter(), second.into_iter()).collect();
        assert_eq!(only_second, second);
        let only_first: Vec<_> = merge_by_id(first.into_iter(), [].into_iter()).collect();
        assert_eq!(only_first, first);
    }
}
