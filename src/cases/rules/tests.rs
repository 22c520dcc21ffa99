use super::against_lock::{pair_with_lock, LockedCases, Paired, Unpaired};
use super::*;
use crate::cases::CaseBody;
use crate::digest::bytes_digest;
use crate::project::lock::CaseLock;
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
        body: CaseBody::Graded(None),
        var_files: None,
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
        .cases()
        .filter(|case| seen.insert(&*case.id))
        .map(|case| (case, locked.get(&case.id)))
        .collect();
    let missing = locked.iter().filter(|(id, _)| !seen.contains(id)).collect();
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

/// A suite `s` whose case `ids[n]` is on line n + 1.
fn suite_of_lines(ids: &[&str]) -> SuiteModel {
    SuiteModel::new(
        "s".into(),
        ids.iter()
            .enumerate()
            .map(|(index, id)| Case {
                line: index as u32 + 1,
                ..case(id)
            })
            .collect(),
    )
}

#[test]
fn repeated_ids_are_found_in_file_order_with_their_first_case() {
    let ids = ["c", "a", "c", "b", "a", "c"];
    let suite = suite_of_lines(&ids);
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

#[test]
fn ids_equal_after_nfc_normalisation_are_found_with_the_first_of_their_form() {
    let nfc = "caf\u{e9}";
    let nfd = "cafe\u{301}";
    // The Kelvin sign's NFC form is the ASCII `K`.
    let ids = [
        nfd,
        "K",
        "na\u{ef}ve",
        nfc,
        nfd,
        "\u{212a}",
        "cafe",
        "\u{e9}t\u{e9}",
    ];
    let suite = suite_of_lines(&ids);
    let twins: Vec<(u32, u32)> = suite
        .normalisation_twins()
        .into_iter()
        .map(|(twin, first)| (twin.line, first.line))
        .collect();
    // Line 5 repeats line 1 byte for byte: that is the plain duplicate, not a twin.
    assert_eq!(twins, vec![(4, 1), (6, 2)]);
    let findings = duplicate_case_ids(&suite);
    assert_eq!(findings.len(), 3);
    assert!(
        findings
            .iter()
            .any(|finding| finding.message.contains("after Unicode NFC normalisation")),
        "{findings:?}"
    );
    let distinct = SuiteModel::new(
        "s".into(),
        vec![case(nfc), case("cafe"), case("na\u{ef}ve")],
    );
    assert!(distinct.normalisation_twins().is_empty());
    assert!(duplicate_case_ids(&distinct).is_empty());
}

/// A project of one suite `s` whose cases are `(id, version, content)` on lines 1, 2, …,
/// with a lock of `locked` ids (each at version 1) when given.
struct Snapshot {
    suites: Vec<SuiteModel>,
    lock: Option<crate::project::lock::Lock>,
}

impl Snapshot {
    fn side(&self) -> Side<'_> {
        Side {
            suites: &self.suites,
            lock: self.lock.as_ref(),
            source: "test",
            former: &[],
        }
    }
}

fn project_of(cases: &[(&str, u64, &str)], locked_ids: Option<&[&str]>) -> Snapshot {
    let cases = cases
        .iter()
        .enumerate()
        .map(|(index, (id, version, content))| Case {
            line: index as u32 + 1,
            version: *version,
            digest: bytes_digest(content.as_bytes()),
            ..case(id)
        })
        .collect();
    let lock = locked_ids.map(|ids| {
        let mut lock = crate::project::lock::Lock::new();
        lock.cases.insert("s".into(), locked(ids));
        lock
    });
    Snapshot {
        lock,
        suites: vec![SuiteModel::new("s".into(), cases)],
    }
}

/// What EL102 and EL103 must find, by lookups: (rule, line, subject) of each finding.
fn against_base_by_lookup(project: &Snapshot, base: &Snapshot) -> Vec<(RuleId, String)> {
    let mut found = Vec::new();
    let (suite, base_suite) = (&project.suites[0], &base.suites[0]);
    for case in suite.cases() {
        if let Some(base_case) = base_suite.case(&case.id) {
            let edited = case.version == base_case.version
                && case.contract_digest() != base_case.contract_digest();
            if edited || case.version < base_case.version {
                found.push((
                    RuleId::CaseEditedInPlace,
                    format!("{}:{}", case.id, case.line),
                ));
            }
        }
    }
    let mut base_ids = BTreeSet::new();
    base_ids.extend(base_suite.cases().map(|case| &*case.id));
    if let Some(lock) = base.lock.as_ref().and_then(|lock| lock.cases.get("s")) {
        base_ids.extend(lock.keys());
    }
    for id in base_ids {
        if suite.case(id).is_none() {
            found.push((RuleId::CaseRemoved, id.to_owned()));
        }
    }
    found.sort();
    found
}

fn against_base_found(project: &Snapshot, base: &Snapshot) -> Vec<(RuleId, String)> {
    let (project, base) = (project.side(), base.side());
    let mut found: Vec<(RuleId, String)> = cases_edited_in_place(&project, &base)
        .into_iter()
        .chain(cases_removed(&project, &base))
        .map(|finding| {
            let what = match finding.rule {
                RuleId::CaseEditedInPlace => {
                    let line = finding
                        .location
                        .as_ref()
                        .and_then(|at| at.line)
                        .unwrap_or(0);
                    format!("{}:{line}", finding.subject.case.unwrap_or_default())
                }
                _ => finding.subject.case.unwrap_or_default(),
            };
            (finding.rule, what)
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_base_rules_pair_cases_as_lookups_would() {
    let bases: &[&[(&str, u64, &str)]] = &[
        &[],
        &[("a", 1, "a"), ("b", 1, "b"), ("c", 2, "c")],
        &[
            ("c", 1, "c"),
            ("a", 1, "a"),
            ("c", 3, "other c"),
            ("0", 1, "0"),
        ],
        &[("b", 2, "b"), ("b", 1, "b"), ("d", 1, "d")],
    ];
    let heads: &[&[(&str, u64, &str)]] = &[
        &[],
        &[("a", 1, "a"), ("b", 1, "b"), ("c", 2, "c")],
        &[
            ("c", 1, "edited"),
            ("a", 1, "a"),
            ("c", 1, "c"),
            ("z", 1, "z"),
        ],
        &[
            ("b", 1, "b"),
            ("b", 2, "edited b"),
            ("a", 0, "a"),
            ("d", 1, "d"),
        ],
        &[("d", 5, "d")],
    ];
    let locks: &[Option<&[&str]>] = &[
        None,
        Some(&[]),
        Some(&["a", "e"]),
        Some(&["0", "b", "x", "y"]),
    ];
    for base_cases in bases {
        for lock in locks {
            let base = project_of(base_cases, *lock);
            for head_cases in heads {
                let project = project_of(head_cases, None);
                assert_eq!(
                    against_base_found(&project, &base),
                    against_base_by_lookup(&project, &base),
                    "base {base_cases:?} with lock {lock:?}, head {head_cases:?}"
                );
            }
        }
    }
}
