//! A suite as loaded from one snapshot: its cases (indexed by id), prompts and digests.

use crate::cases::{Case, CaseProblem, ParsedCaseFile};
use crate::digest::{tree_digest, Digest, EntryKind, TreeEntry};
use crate::project::lock::{CaseEntries, CaseLock};
use rayon::slice::ParallelSliceMut;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One prompt file of a suite; `digest` is `None` when the file is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptFile {
    pub path: String,
    pub digest: Option<Digest>,
}

/// A case glob that matched no file, with the line of evalock.toml that writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmatchedGlob {
    pub pattern: String,
    pub line: u32,
    /// The pattern names a directory that holds files: a glob of its files was meant.
    pub names_directory: bool,
    /// A folder on the pattern's way that is a symlink, which evalock never follows.
    pub through_symlink: Option<String>,
    /// The file that names the pattern, when it is not evalock.toml (a promptfoo
    /// configuration's `tests: file://…`); `line` is then that file's.
    pub named_in: Option<String>,
}

/// A suite as found in one snapshot.
#[derive(Debug)]
pub struct SuiteModel {
    pub name: String,
    content: SuiteCases,
    /// Case globs that matched no file.
    pub unmatched_globs: Vec<UnmatchedGlob>,
    pub prompts: Vec<PromptFile>,
}

/// What a suite's case files hold, with what lookups by id need.
#[derive(Debug)]
struct SuiteCases {
    /// The case files, sorted; their cases come in this order.
    files: Vec<String>,
    /// What each file yielded, in the order of `files`. A check with a base shares a file's
    /// part between the two snapshots when both hold the same bytes (see
    /// [`crate::cases::load::Reuse`]); kept apart, the parts are never copied into one list.
    parts: Vec<Arc<ParsedCaseFile>>,
    /// Where each part's cases start among the suite's positions, and then their count.
    starts: Vec<u32>,
    /// Positions of the cases sorted by id (first occurrence first), so lookups by id
    /// are a binary search rather than a scan.
    case_index: Vec<u32>,
    /// Positions of the cases whose id an earlier case already has, in file order
    /// (usually none).
    repeats: Vec<u32>,
    /// Every id is ASCII (nearly always), so none differs from another only in Unicode
    /// normalisation.
    ascii_ids: bool,
}

impl SuiteCases {
    /// The parts of `files` (sorted, one part each), indexed by id.
    fn new(files: Vec<String>, parts: Vec<Arc<ParsedCaseFile>>) -> SuiteCases {
        let mut starts = Vec::with_capacity(parts.len() + 1);
        let mut count = 0u32;
        for part in &parts {
            starts.push(count);
            count = count.saturating_add(u32::try_from(part.cases.len()).unwrap_or(u32::MAX));
        }
        starts.push(count);
        let cases = parts.iter().flat_map(|part| &part.cases);
        // The ids with their positions, sorted as pairs: a comparison reads two ids, not
        // two cases scattered over the suite's memory. A stable sort keeps the first of
        // duplicate ids first. Whether every id is ASCII is read on the way, while the
        // sort is about to read the ids anyway.
        let mut ascii_ids = true;
        let mut by_id: Vec<(&str, u32)> = cases
            .zip(0..u32::MAX)
            .map(|(case, position)| {
                ascii_ids &= case.id.is_ascii();
                (&*case.id, position)
            })
            .collect();
        by_id.par_sort_by(|left, right| left.0.cmp(right.0));
        let mut repeats: Vec<u32> = by_id
            .windows(2)
            .filter(|pair| pair[0].0 == pair[1].0)
            .map(|pair| pair[1].1)
            .collect();
        repeats.sort_unstable();
        let case_index = by_id.into_iter().map(|(_, position)| position).collect();
        SuiteCases {
            files,
            parts,
            starts,
            case_index,
            repeats,
            ascii_ids,
        }
    }

    /// The case at a position of the suite.
    fn at(&self, position: usize) -> &Case {
        let position = position as u32;
        let part = self.starts.partition_point(|start| *start <= position) - 1;
        &self.parts[part].cases[(position - self.starts[part]) as usize]
    }

    fn cases(&self) -> impl Iterator<Item = &Case> + '_ {
        self.parts.iter().flat_map(|part| &part.cases)
    }
}

impl SuiteModel {
    /// `bytes-v1` of the only prompt file, `tree-v1` over several; `None` without prompts
    /// or when one is missing.
    pub fn prompt_digest(&self) -> Option<Digest> {
        prompt_digest(&self.prompts)
    }

    /// The cases and their suite, with what lookups by id need.
    pub fn new(name: String, cases: Vec<Case>) -> SuiteModel {
        let parsed = ParsedCaseFile {
            cases,
            problems: Vec::new(),
        };
        SuiteModel::of(name, Vec::new(), vec![Arc::new(parsed)])
    }

    /// The suite `name` holding what its case `files` (sorted) yielded, one part each in
    /// the same order (neither globs that matched nothing nor prompts).
    pub(super) fn of(
        name: String,
        files: Vec<String>,
        parts: Vec<Arc<ParsedCaseFile>>,
    ) -> SuiteModel {
        SuiteModel {
            name,
            content: SuiteCases::new(files, parts),
            unmatched_globs: Vec::new(),
            prompts: Vec::new(),
        }
    }

    /// Every case, in file order.
    pub fn cases(&self) -> impl Iterator<Item = &Case> + '_ {
        self.content.cases()
    }

    /// How many cases the suite holds.
    pub fn case_count(&self) -> usize {
        self.content
            .starts
            .last()
            .map_or(0, |count| *count as usize)
    }

    /// The case at a position of [`SuiteModel::cases`].
    pub fn case_at(&self, position: usize) -> &Case {
        self.content.at(position)
    }

    /// The case files, sorted.
    pub fn case_files(&self) -> &[String] {
        &self.content.files
    }

    /// What case file `path` yielded, when it is one of the suite's.
    pub fn parsed_file(&self, path: &str) -> Option<&Arc<ParsedCaseFile>> {
        let index = self
            .content
            .files
            .binary_search_by(|file| file.as_str().cmp(path))
            .ok()?;
        self.content.parts.get(index)
    }

    /// Places in case files that could not become cases (EL105).
    pub fn problems(&self) -> impl Iterator<Item = &CaseProblem> + '_ {
        self.content.parts.iter().flat_map(|part| &part.problems)
    }

    /// The first case of each id, in file order.
    pub fn first_of_each_id(&self) -> impl Iterator<Item = &Case> {
        self.first_of_each_id_at().map(|(_, case)| case)
    }

    /// [`SuiteModel::first_of_each_id`] with the position of each case.
    pub fn first_of_each_id_at(&self) -> impl Iterator<Item = (usize, &Case)> {
        let mut repeats = self.content.repeats.iter().peekable();
        self.content
            .cases()
            .enumerate()
            .filter(move |(position, _)| {
                repeats
                    .next_if(|repeat| **repeat as usize == *position)
                    .is_none()
            })
    }

    /// Every case, repeated ids included, in id order (the first of an id first): for
    /// pairing a suite's cases with another sorted list in one pass.
    pub fn cases_by_id(&self) -> impl Iterator<Item = &Case> + '_ {
        self.content
            .case_index
            .iter()
            .map(|position| self.content.at(*position as usize))
    }

    /// Each case, in id order, with the first case of `other` that has its id (as a
    /// lookup by id would find it), for the cases `other` has: both lists walked once.
    pub fn paired_by_id<'a>(
        &'a self,
        other: &'a SuiteModel,
    ) -> impl Iterator<Item = (&'a Case, &'a Case)> + 'a {
        let mut others = other.first_cases_by_id().peekable();
        self.cases_by_id().filter_map(move |case| {
            while others.next_if(|found| found.id < case.id).is_some() {}
            others
                .peek()
                .filter(|found| found.id == case.id)
                .map(|found| (case, *found))
        })
    }

    /// The first case of each id, in id order.
    pub fn first_cases_by_id(&self) -> impl Iterator<Item = &Case> + '_ {
        self.first_positions_by_id()
            .map(|position| self.content.at(position))
    }

    /// The positions of the first case of each id, in id order.
    pub fn first_positions_by_id(&self) -> impl Iterator<Item = usize> + '_ {
        let mut previous: Option<&str> = None;
        self.content.case_index.iter().filter_map(move |position| {
            let id = self.content.at(*position as usize).id.as_ref();
            let first = previous != Some(id);
            previous = Some(id);
            first.then_some(*position as usize)
        })
    }

    /// Each case that repeats an earlier case's id, with that first case, in file order.
    pub fn repeated_ids(&self) -> impl Iterator<Item = (&Case, &Case)> {
        self.content.repeats.iter().filter_map(|position| {
            let repeat = self.content.at(*position as usize);
            Some((repeat, self.case(&repeat.id)?))
        })
    }

    /// The first case with this id.
    pub fn case(&self, id: &str) -> Option<&Case> {
        self.case_position(id)
            .map(|position| self.content.at(position))
    }

    /// The position of the first case with this id.
    fn case_position(&self, id: &str) -> Option<usize> {
        let first = self
            .content
            .case_index
            .partition_point(|position| self.content.at(*position as usize).id.as_ref() < id);
        let position = *self.content.case_index.get(first)? as usize;
        (*self.content.at(position).id == *id).then_some(position)
    }

    /// Each case whose id differs from an earlier case's id only in Unicode normalisation
    /// (`café` written with U+00E9 and with `e` + U+0301), with the first case of that
    /// NFC form, in file order. Ids that are the same bytes are [`SuiteModel::repeated_ids`].
    pub fn normalisation_twins(&self) -> Vec<(&Case, &Case)> {
        if self.content.ascii_ids {
            return Vec::new();
        }
        // Two different ids with one NFC form cannot both be in NFC, so only the ids that
        // are not (rare; never an all-ASCII one) are normalised; the form is then looked
        // up among all ids, as it may be written in NFC by another case.
        let mut by_form: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (position, case) in self.first_of_each_id_at() {
            if let Some(form) = nfc_when_different(&case.id) {
                by_form.entry(form).or_default().push(position);
            }
        }
        let mut twins: Vec<(usize, usize)> = Vec::new();
        for (form, mut positions) in by_form {
            positions.extend(self.case_position(&form));
            positions.sort_unstable();
            if let Some((first, later)) = positions.split_first() {
                twins.extend(later.iter().map(|position| (*position, *first)));
            }
        }
        twins.sort_unstable();
        twins
            .into_iter()
            .map(|(twin, first)| (self.content.at(twin), self.content.at(first)))
            .collect()
    }

    /// Lock entries for this suite's cases (the first of duplicate ids wins).
    pub fn case_locks(&self) -> CaseEntries {
        let firsts = || {
            self.first_positions_by_id()
                .map(|position| self.content.at(position))
        };
        let mut entries = CaseEntries::new();
        for case in firsts() {
            let entry = CaseLock {
                version: case.version,
                digest: case.digest,
                file: Arc::clone(&case.file),
                retired: case.retired,
            };
            entries.insert(case.id.to_string(), entry);
        }
        entries
    }
}

/// The NFC form of `id` when it is not `id` itself.
fn nfc_when_different(id: &str) -> Option<String> {
    use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};
    if id.is_ascii() || is_nfc_quick(id.chars()) == IsNormalized::Yes {
        return None;
    }
    let form: String = id.nfc().collect();
    (form != id).then_some(form)
}

fn prompt_digest(prompts: &[PromptFile]) -> Option<Digest> {
    match prompts {
        [] => None,
        [only] => only.digest,
        several => {
            let entries = several
                .iter()
                .map(|prompt| {
                    Some(TreeEntry {
                        path: prompt.path.clone(),
                        kind: EntryKind::File,
                        digest: prompt.digest?,
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            tree_digest(&entries).ok()
        }
    }
}

/// `suite-v1`: sha256 over `<id as JSON> <version> <digest>\n` for every entry, sorted by id.
pub fn suite_digest(entries: &CaseEntries) -> Digest {
    use sha2::{Digest as _, Sha256};
    use std::fmt::Write as _;
    // Into the hash a block of lines at a time: a check verifies every suite's digest, and
    // a suite of 200,000 cases would otherwise be a 20 MB listing.
    const BLOCK: usize = 64 * 1024;
    let mut hasher = Sha256::new();
    let mut lines = String::with_capacity(BLOCK + 256);
    for (id, entry) in entries {
        write_json_string(id, &mut lines);
        let _ = writeln!(lines, " {} {}", entry.version, entry.digest);
        if lines.len() >= BLOCK {
            hasher.update(lines.as_bytes());
            lines.clear();
        }
    }
    hasher.update(lines.as_bytes());
    Digest::from_sha256_bytes(&hasher.finalize().into())
}

/// `text` as a JSON string, as serde_json writes it: an id without quotes, backslashes
/// or control characters (nearly all) is copied between quotes.
fn write_json_string(text: &str, out: &mut String) {
    let plain = !text
        .bytes()
        .any(|byte| byte == b'"' || byte == b'\\' || byte < 0x20);
    match plain {
        true => {
            out.push('"');
            out.push_str(text);
            out.push('"');
        }
        false => out.push_str(&serde_json::to_string(text).unwrap_or_default()),
    }
}

/// The `prompt` digest a suite's lock entry should hold for its per-file prompt pins:
/// `bytes-v1` of the one file, `tree-v1` over several, none without prompts.
pub fn locked_prompt_digest(prompts: &BTreeMap<String, Digest>) -> Option<Digest> {
    let files: Vec<PromptFile> = prompts
        .iter()
        .map(|(path, digest)| PromptFile {
            path: path.clone(),
            digest: Some(*digest),
        })
        .collect();
    prompt_digest(&files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::CaseBody;

    fn case(id: String, line: u32) -> Case {
        Case {
            digest: crate::digest::bytes_digest(id.as_bytes()),
            id: id.into(),
            version: 1,
            contract: None,
            file: Arc::from("evals/a.jsonl"),
            line,
            end_line: line,
            retired: false,
            grader_version: None,
            body: CaseBody::Graded(None),
            var_files: None,
        }
    }

    /// Suites small and large find the first case of each id and every repeat, whatever the
    /// order of the ids in the file.
    #[test]
    fn suites_of_every_size_index_the_first_case_of_each_id() {
        for count in [0, 1, 7, 1_000, 61_234] {
            // Ids out of order, every seventh one repeating an earlier id.
            let ids: Vec<String> = (0..count)
                .map(|position| {
                    let number = (position * 7_919) % (count + 1);
                    match position % 7 == 6 {
                        true => format!("case-{}", number / 2),
                        false => format!("case-{number}"),
                    }
                })
                .collect();
            let cases: Vec<Case> = ids
                .iter()
                .enumerate()
                .map(|(position, id)| case(id.clone(), position as u32 + 1))
                .collect();
            let suite = SuiteModel::new("s".into(), cases);

            let mut first_line: BTreeMap<&str, u32> = BTreeMap::new();
            let mut repeats = Vec::new();
            for (position, id) in ids.iter().enumerate() {
                match first_line.contains_key(id.as_str()) {
                    true => repeats.push(position as u32),
                    false => {
                        first_line.insert(id, position as u32 + 1);
                    }
                }
            }
            assert!(count < 1_000 || !repeats.is_empty());
            assert_eq!(suite.content.repeats, repeats, "{count} cases");
            let found: Vec<(&str, u32)> = suite
                .first_positions_by_id()
                .map(|position| {
                    (
                        suite.case_at(position).id.as_ref(),
                        suite.case_at(position).line,
                    )
                })
                .collect();
            let expected: Vec<(&str, u32)> = first_line.into_iter().collect();
            assert_eq!(found, expected, "{count} cases");
            for (id, line) in &expected {
                assert_eq!(suite.case(id).map(|case| case.line), Some(*line));
            }
        }
    }

    /// The copied fast path writes what serde_json writes, for every kind of id.
    #[test]
    fn ids_are_written_as_serde_json_writes_them() {
        for id in [
            "refund-no-order-id",
            "",
            "café ✓ 𝄞",
            "say \"hi\"",
            "back\\slash",
            "tab\there",
            "line\nbreak",
            "\u{1}\u{1f}\u{7f}",
            "\u{2028}",
        ] {
            let mut written = String::new();
            write_json_string(id, &mut written);
            assert_eq!(written, serde_json::to_string(id).unwrap(), "{id:?}");
        }
    }
}
