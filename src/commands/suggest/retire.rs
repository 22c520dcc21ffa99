//! The fix of a case removed instead of retired (EL103), as a change a reviewer commits:
//! the case's line as the base wrote it, with `"retired": true`, put back where the pull
//! request removed it. GitHub comments only on lines the new side has, so the suggestion
//! replaces the line that took the case's place (or, at the end of the file, the line
//! before it) with itself and the restored case: the same line the review anchors the
//! finding on.

use super::{case_members, line_of, same_case_with};
use crate::finding::{Finding, RelatedKind, Suggestion};
use crate::rules::RuleId;
use crate::source::ContentSource;
use serde_json::Value;
use similar::{Algorithm, DiffOp, TextDiff};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long the line diff of one file may take before it gives a coarser answer: a
/// coarser diff may place the case elsewhere than GitHub's, and then no suggestion is
/// shown, which is safe.
const DIFF_DEADLINE: Duration = Duration::from_secs(2);

/// Gives each EL103 finding whose case was one line at the base (JSONL) and whose file
/// is still there the lines that put it back, retired. Cases removed from the same place
/// share one suggestion that restores them all, in their base order: whichever of their
/// findings the comment shows, one click restores every one.
pub fn suggest_restores(
    findings: &mut [Finding],
    source: &dyn ContentSource,
    base: &dyn ContentSource,
) {
    let mut by_file: BTreeMap<String, Vec<(usize, u32)>> = BTreeMap::new();
    for (index, finding) in findings.iter().enumerate() {
        if let Some((path, line)) = removed_line(finding) {
            by_file.entry(path).or_default().push((index, line));
        }
    }
    for (path, removed) in by_file {
        let read = |from: &dyn ContentSource| {
            from.read(&path)
                .ok()
                .flatten()
                .and_then(|bytes| String::from_utf8(bytes).ok())
        };
        let (Some(before), Some(after)) = (read(base), read(source)) else {
            continue;
        };
        let places = Places::new(&before, &after);
        // The restored lines of each place on the new side, in base order.
        let mut at: BTreeMap<Place, Vec<(u32, usize, String)>> = BTreeMap::new();
        for (index, line) in removed {
            let finding = &findings[index];
            let restored = finding.subject.case.as_deref().and_then(|id| {
                line_of(before.as_bytes(), line).and_then(|text| retired_line(text, id))
            });
            if let (Some(restored), Some(place)) = (restored, places.of_removed(line)) {
                at.entry(place).or_default().push((line, index, restored));
            }
        }
        for (place, mut restored) in at {
            restored.sort();
            let Some(neighbour) = line_of(after.as_bytes(), place.line) else {
                continue;
            };
            let mut lines: Vec<&str> = restored.iter().map(|(_, _, text)| text.as_str()).collect();
            match place.before {
                true => lines.push(neighbour),
                false => lines.insert(0, neighbour),
            }
            let text = lines.join("\n");
            for (_, index, _) in &restored {
                findings[*index].suggestion = Some(Suggestion {
                    line: place.line,
                    text: text.clone(),
                });
            }
        }
    }
}

/// The file and the one base line of the case an EL103 finding is about, when the case
/// was one line and its file keeps its path.
fn removed_line(finding: &Finding) -> Option<(String, u32)> {
    if finding.rule != RuleId::CaseRemoved {
        return None;
    }
    let path = &finding.location.as_ref()?.path;
    let at_base = finding
        .related
        .iter()
        .find(|related| related.kind == RelatedKind::Base)?;
    let line = at_base.location.line?;
    let one_line = at_base.location.end_line.is_none_or(|end| end == line);
    (one_line && at_base.location.path == *path).then(|| (path.clone(), line))
}

/// A line of the new side and whether the restored cases go before it (it took their
/// place) or after it (they ended the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    line: u32,
    before: bool,
}

/// Where each removed line of the old side went in the new side, from one line diff.
struct Places {
    /// `(old_first, old_last, new_index)` of each run the diff removed (0-based lines,
    /// `new_index` the new-side line that follows the run).
    removals: Vec<(usize, usize, usize)>,
    new_lines: usize,
}

impl Places {
    fn new(before: &str, after: &str) -> Self {
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .deadline(Instant::now() + DIFF_DEADLINE)
            .diff_lines(before, after);
        let removals = diff
            .ops()
            .iter()
            .filter_map(|op| match *op {
                DiffOp::Delete {
                    old_index,
                    old_len,
                    new_index,
                }
                | DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    ..
                } => Some((old_index, old_index + old_len - 1, new_index)),
                _ => None,
            })
            .collect();
        Places {
            removals,
            new_lines: diff.new_slices().len(),
        }
    }

    /// The place of old line `line` (1-based), when the diff removed it.
    fn of_removed(&self, line: u32) -> Option<Place> {
        let old = usize::try_from(line.checked_sub(1)?).ok()?;
        let (_, _, new_index) = self
            .removals
            .iter()
            .find(|(first, last, _)| (*first..=*last).contains(&old))?;
        let place = match *new_index < self.new_lines {
            true => Place {
                line: u32::try_from(new_index + 1).ok()?,
                before: true,
            },
            false => Place {
                line: u32::try_from(*new_index).ok().filter(|line| *line > 0)?,
                before: false,
            },
        };
        Some(place)
    }
}

/// Case `id`'s line with `"retired": true` added before its closing `}`, in the line's
/// own spacing; the line unchanged when the case was retired already. Every other byte
/// stays as written, and the result is parsed again to be sure it is the same case,
/// retired. `None` for a line that is not the whole case.
pub fn retired_line(line: &str, id: &str) -> Option<String> {
    let members = case_members(line, id)?;
    match members.get("retired") {
        Some(Value::Bool(true)) => return Some(line.to_owned()),
        Some(_) => return None,
        None => {}
    }
    let close = line.rfind('}')?;
    let last = line[..close].trim_end().len();
    let member = match line.contains("\": ") {
        true => ", \"retired\": true",
        false => ",\"retired\":true",
    };
    let retired = format!("{}{member}{}", &line[..last], &line[last..]);
    same_case_with(retired, members, "retired", Value::Bool(true))
}

#[cfg(test)]
mod tests {
    use super::{retired_line, Place, Places};

    #[test]
    fn a_case_line_is_marked_retired_in_its_own_spacing() {
        assert_eq!(
            retired_line(r#"{"id": "a", "version": 2, "input": "hi"}"#, "a").as_deref(),
            Some(r#"{"id": "a", "version": 2, "input": "hi", "retired": true}"#)
        );
        assert_eq!(
            retired_line(r#"{"id":"a","input":{"x":1}}  "#, "a").as_deref(),
            Some(r#"{"id":"a","input":{"x":1},"retired":true}  "#)
        );
        assert_eq!(
            retired_line(r#"{"id": "a", "retired": true}"#, "a").as_deref(),
            Some(r#"{"id": "a", "retired": true}"#)
        );
    }

    #[test]
    fn no_restored_line_for_another_case_or_a_line_that_is_not_a_case() {
        assert_eq!(retired_line(r#"{"id": "b"}"#, "a"), None);
        assert_eq!(retired_line(r#"{"id": "a", "retired": false}"#, "a"), None);
        assert_eq!(retired_line(r#"  "id": "a","#, "a"), None);
        assert_eq!(retired_line(r#"["a"]"#, "a"), None);
    }

    #[test]
    fn a_removed_line_goes_before_the_line_that_took_its_place_or_after_the_last() {
        let places = Places::new("a\nb\nc\nd\n", "a\nc\n");
        let before_line_2 = Place {
            line: 2,
            before: true,
        };
        assert_eq!(places.of_removed(2), Some(before_line_2));
        assert_eq!(
            places.of_removed(4),
            Some(Place {
                line: 2,
                before: false
            })
        );
        assert_eq!(places.of_removed(1), None, "kept lines are not removed");
        // Replaced by another line: before the line that replaced it.
        let places = Places::new("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(places.of_removed(2), Some(before_line_2));
        // Nothing left to comment on.
        assert_eq!(Places::new("a\n", "").of_removed(1), None);
    }
}
