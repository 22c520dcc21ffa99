//! What one run posts, decided without the network: which findings share a comment
//! (those at one place), which comments are new inline or file-level ones (at most 30
//! open on the pull request),
//! which findings go to the summary, which comments are already on the pull request, and
//! what happens to comments whose findings changed or disappeared.

use super::anchor::{Anchor, Side};
use super::api::{ReviewComment, ReviewThread};
use super::body::{marker_fingerprints, read_marker, MAX_FINDINGS_PER_COMMENT};
use crate::finding::Finding;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many of evalock's comments open on a pull request at once; GitHub's UI
/// and reviewers cope with no more.
pub const MAX_INLINE_COMMENTS: usize = 30;

/// A finding with the place it will be shown.
#[derive(Debug, Clone)]
pub struct Anchored {
    pub finding: Finding,
    pub anchor: Anchor,
}

impl Anchored {
    /// Each of `findings` with the place `anchor` gives it.
    pub fn all(findings: &[Finding], anchor: impl Fn(&Finding) -> Anchor) -> Vec<Anchored> {
        findings
            .iter()
            .map(|finding| Anchored {
                finding: finding.clone(),
                anchor: anchor(finding),
            })
            .collect()
    }
}

/// One comment: the findings shown at one place, most severe first. Its marker carries
/// all their fingerprints, so it is current exactly while the same findings are there.
#[derive(Debug, Clone)]
pub struct Comment {
    pub anchor: Anchor,
    pub findings: Vec<Finding>,
}

impl Comment {
    /// The fingerprints the comment's marker carries, as a set: what a re-run compares.
    pub fn fingerprints(&self) -> BTreeSet<&str> {
        self.findings
            .iter()
            .map(|finding| finding.fingerprint.as_str())
            .collect()
    }

    /// Its findings, each with the comment's place, for the summary.
    fn into_anchored(self) -> impl Iterator<Item = Anchored> {
        let anchor = self.anchor;
        self.findings.into_iter().map(move |finding| Anchored {
            finding,
            anchor: anchor.clone(),
        })
    }
}

/// What to do with an evalock comment whose findings are gone or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleanup {
    /// Resolve its thread (GraphQL): the conversation stays readable, collapsed.
    Resolve { comment_id: u64, thread_id: String },
    /// No thread to resolve (GraphQL unavailable): delete the comment.
    Delete { comment_id: u64 },
    /// A person replied: the conversation is theirs, left as it is.
    KeepForHuman { comment_id: u64 },
}

#[derive(Debug, Default)]
pub struct Plan {
    /// New comments on lines, in the order they are posted.
    pub inline: Vec<Comment>,
    /// New file-level comments.
    pub file_level: Vec<Comment>,
    /// Findings with nothing in the diff to attach to, or whose comment GitHub refused.
    pub summary_only: Vec<Anchored>,
    /// Anchorable findings beyond the comment cap.
    pub overflow: Vec<Anchored>,
    /// Comments already on the pull request (an open thread) with the same findings, and
    /// open ones kept, with the findings they show, because the comment that would
    /// replace them is over the cap.
    pub already_posted: Vec<Comment>,
    pub cleanups: Vec<Cleanup>,
}

impl Plan {
    /// Everything the summary lists because it is not (or not yet) a comment.
    pub fn summary_findings(&self) -> impl Iterator<Item = &Anchored> {
        self.summary_only.iter().chain(&self.overflow)
    }

    /// Moves comments beyond the comment cap to the summary.
    pub fn to_summary(&mut self, comments: Vec<Comment>) {
        self.overflow
            .extend(comments.into_iter().flat_map(Comment::into_anchored));
    }

    /// Moves comments that GitHub would not take (422) to the summary. They are listed as
    /// findings without a place in the diff, not as over the comment limit: the run's
    /// notes say why they are there.
    pub fn refused_to_summary(&mut self, comments: Vec<Comment>) {
        self.summary_only
            .extend(
                comments
                    .into_iter()
                    .flat_map(Comment::into_anchored)
                    .map(|anchored| Anchored {
                        anchor: Anchor::Summary,
                        ..anchored
                    }),
            );
    }

    /// How many findings are, or now will be, comments on the pull request.
    pub fn commented_findings(&self) -> usize {
        [&self.inline, &self.file_level, &self.already_posted]
            .into_iter()
            .flatten()
            .map(|comment| comment.findings.len())
            .sum()
    }
}

/// Existing review comments, seen through their markers.
pub struct Existing<'a> {
    pub comments: &'a [ReviewComment],
    /// `None` when threads could not be listed: then nothing can be resolved, and every
    /// marked comment counts as open.
    pub threads: Option<&'a [ReviewThread]>,
    /// This project's folder in the repository (`""` at the top): only comments whose
    /// marker names it are this run's to count and to clean up.
    pub prefix: &'a str,
}

pub fn plan(mut anchored: Vec<Anchored>, existing: &Existing<'_>, max_comments: usize) -> Plan {
    // The most severe findings get the inline slots, and head their comment; the order is
    // otherwise the usual one.
    anchored.sort_by_key(|item| std::cmp::Reverse(item.finding.severity));
    let mut plan = Plan::default();
    let mut seen = BTreeSet::new();
    let mut placed = Vec::new();
    for item in anchored {
        if matches!(item.anchor, Anchor::Summary) {
            plan.summary_only.push(item);
        } else if !seen.insert(item.finding.fingerprint.clone()) {
            // The same finding twice (two reports said it): it is shown once.
            plan.already_posted.push(Comment {
                anchor: item.anchor,
                findings: vec![item.finding],
            });
        } else {
            placed.push(item);
        }
    }
    let comments = comments_by_place(placed);
    let open = open_markers(existing);
    // The cap holds for evalock's open comments on the pull request, not per run: the
    // comments still current stay and count first, so a re-run with the same findings
    // posts nothing new, and a slot freed by a fixed finding goes to the most severe
    // finding still waiting in the summary. It is decided before the cleanups: an open
    // comment whose place a finding joined is only replaced if the new comment is posted.
    let (current_open, new): (Vec<Comment>, Vec<Comment>) = comments
        .iter()
        .cloned()
        .partition(|comment| open.contains(&comment.fingerprints()));
    // Open comments whose findings are all still there, in a comment that has changed
    // (a finding joined their place), hold their slot until that comment replaces them.
    let subsumed = |comment: &Comment| {
        let fingerprints = comment.fingerprints();
        open.iter()
            .filter(|set| set.is_subset(&fingerprints) && **set != fingerprints)
            .count()
    };
    let mut used = current_open.len() + new.iter().map(subsumed).sum::<usize>();
    plan.already_posted.extend(current_open);
    let mut kept = Vec::new();
    for comment in new {
        let replaces = subsumed(&comment);
        // Posting it takes a slot and frees those of the comments it replaces.
        if used + 1 > max_comments + replaces {
            let (still_open, rest) = keep_open(comment, &open);
            for (fingerprints, comment) in still_open {
                kept.push(fingerprints);
                plan.already_posted.push(comment);
            }
            plan.to_summary(rest.into_iter().collect());
        } else {
            used = used + 1 - replaces;
            if matches!(comment.anchor, Anchor::File { .. }) {
                plan.file_level.push(comment);
            } else {
                plan.inline.push(comment);
            }
        }
    }
    let current: BTreeSet<BTreeSet<&str>> = comments
        .iter()
        .map(Comment::fingerprints)
        .chain(plan.summary_only.iter().map(|item| {
            // A finding that went to the summary keeps the comment it had on its own.
            BTreeSet::from([item.finding.fingerprint.as_str()])
        }))
        .chain(kept)
        .collect();
    plan.cleanups = cleanups(existing, &current);
    plan
}

/// A comment over the cap at a place where open comments show some of its findings (a
/// finding joined them there): those comments stay open, as they would have without the
/// newcomer, since the comment that would replace them cannot be posted. Returns them,
/// each with its fingerprints and the findings it shows, and what is left of the comment
/// for the summary, if anything.
fn keep_open<'a>(
    comment: Comment,
    open: &BTreeSet<BTreeSet<&'a str>>,
) -> (Vec<(BTreeSet<&'a str>, Comment)>, Option<Comment>) {
    let fingerprints = comment.fingerprints();
    let mut candidates: Vec<&BTreeSet<&'a str>> = open
        .iter()
        .filter(|set| set.is_subset(&fingerprints))
        .collect();
    // The comments that show the most first; two showing one finding are not both kept.
    candidates.sort_by_key(|set| std::cmp::Reverse(set.len()));
    let mut covered: BTreeSet<&str> = BTreeSet::new();
    let mut chosen = Vec::new();
    for set in candidates {
        if set.is_disjoint(&covered) {
            covered.extend(set.iter().copied());
            chosen.push(set.clone());
        }
    }
    let still_open = chosen
        .into_iter()
        .map(|set| {
            let findings = comment
                .findings
                .iter()
                .filter(|finding| set.contains(finding.fingerprint.as_str()))
                .cloned()
                .collect();
            let kept = Comment {
                anchor: comment.anchor.clone(),
                findings,
            };
            (set, kept)
        })
        .collect();
    let rest: Vec<Finding> = comment
        .findings
        .iter()
        .filter(|finding| !covered.contains(finding.fingerprint.as_str()))
        .cloned()
        .collect();
    let rest = (!rest.is_empty()).then(|| Comment {
        anchor: comment.anchor.clone(),
        findings: rest,
    });
    (still_open, rest)
}

/// Where on the pull request a comment shows: GitHub shows a line comment below its last
/// line, so comments that end on the same line of the same side are in one place.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Line { path: String, side: Side, line: u32 },
    File { path: String },
}

fn place_of(anchor: &Anchor) -> Option<Place> {
    match anchor {
        Anchor::Lines {
            path, side, line, ..
        } => Some(Place::Line {
            path: path.clone(),
            side: *side,
            line: *line,
        }),
        Anchor::File { path } => Some(Place::File { path: path.clone() }),
        Anchor::Summary => None,
    }
}

/// One comment per place, in the order of each place's first (most severe) finding, each
/// with its findings in the order given, at most [`MAX_FINDINGS_PER_COMMENT`] to a
/// comment. A line comment spans the widest range of its findings: ranges that end on
/// the same line of one hunk (or one run of removed lines) overlap, so their union is in
/// it too.
fn comments_by_place(placed: Vec<Anchored>) -> Vec<Comment> {
    let mut comments: Vec<Comment> = Vec::new();
    let mut open_comment: BTreeMap<Place, usize> = BTreeMap::new();
    for item in placed {
        let Some(place) = place_of(&item.anchor) else {
            continue;
        };
        match open_comment.get(&place).copied() {
            Some(index)
                if comments
                    .get(index)
                    .is_some_and(|comment| comment.findings.len() < MAX_FINDINGS_PER_COMMENT) =>
            {
                if let Some(comment) = comments.get_mut(index) {
                    widen(&mut comment.anchor, &item.anchor);
                    comment.findings.push(item.finding);
                }
            }
            _ => {
                open_comment.insert(place, comments.len());
                comments.push(Comment {
                    anchor: item.anchor,
                    findings: vec![item.finding],
                });
            }
        }
    }
    comments
}

fn widen(anchor: &mut Anchor, other: &Anchor) {
    if let (
        Anchor::Lines { start_line, .. },
        Anchor::Lines {
            start_line: other_start,
            ..
        },
    ) = (anchor, other)
    {
        *start_line = (*start_line).min(*other_start);
    }
}

/// The fingerprints of a comment this project posted (not a reply), if it is one.
/// Fingerprints do not name the project, so another project in the same repository (a
/// sibling folder, or one nested in this one) can post the very same fingerprint: the
/// marker's project tells them apart. A marker from before markers named their project
/// counts by the comment's path, which is exact for a repository with one project.
fn own_fingerprints<'a>(comment: &'a ReviewComment, prefix: &str) -> Option<BTreeSet<&'a str>> {
    if comment.in_reply_to_id.is_some() {
        return None;
    }
    let marker = read_marker(&comment.body)?;
    let ours = match marker.project {
        Some(project) => project == prefix,
        None => belongs_to_project(&comment.path, prefix),
    };
    ours.then(|| marker.fingerprints.into_iter().collect())
}

fn belongs_to_project(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The fingerprint sets of this project's comments in unresolved threads.
fn open_markers<'a>(existing: &Existing<'a>) -> BTreeSet<BTreeSet<&'a str>> {
    let resolved: BTreeSet<u64> = existing
        .threads
        .into_iter()
        .flatten()
        .filter(|thread| thread.is_resolved)
        .filter_map(|thread| thread.first_comment_id)
        .collect();
    existing
        .comments
        .iter()
        .filter(|comment| !resolved.contains(&comment.id))
        .filter_map(|comment| own_fingerprints(comment, existing.prefix))
        .collect()
}

/// This project's comments that show no current set of findings: one of their findings
/// is gone, or a finding joined or left their place.
fn cleanups(existing: &Existing<'_>, current: &BTreeSet<BTreeSet<&str>>) -> Vec<Cleanup> {
    let threads_by_comment: Option<BTreeMap<u64, &ReviewThread>> =
        existing.threads.map(|threads| {
            threads
                .iter()
                .filter_map(|thread| Some((thread.first_comment_id?, thread)))
                .collect()
        });
    let human_replied: BTreeSet<u64> = existing
        .comments
        .iter()
        .filter(|comment| marker_fingerprints(&comment.body).is_none())
        .filter_map(|comment| comment.in_reply_to_id)
        .collect();
    let mut cleanups = Vec::new();
    for comment in existing.comments {
        let Some(fingerprints) = own_fingerprints(comment, existing.prefix) else {
            continue;
        };
        if current.contains(&fingerprints) {
            continue;
        }
        let cleanup = if human_replied.contains(&comment.id) {
            Cleanup::KeepForHuman {
                comment_id: comment.id,
            }
        } else {
            match &threads_by_comment {
                Some(threads) => match threads.get(&comment.id) {
                    Some(thread) if thread.is_resolved => continue,
                    Some(thread) => Cleanup::Resolve {
                        comment_id: comment.id,
                        thread_id: thread.id.clone(),
                    },
                    None => Cleanup::Delete {
                        comment_id: comment.id,
                    },
                },
                None => Cleanup::Delete {
                    comment_id: comment.id,
                },
            }
        };
        cleanups.push(cleanup);
    }
    cleanups
}

#[cfg(test)]
mod tests;
