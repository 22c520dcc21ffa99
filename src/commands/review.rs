//! `evalock review`: the completion diffs of the last run's moved and regressed cases
//! against their baselines, for a person to read before `accept`.

pub mod html;

use crate::baselines::{BaselineState, SuiteBaseline};
use crate::commands::project::Project;
use crate::error::Result;
use crate::run::diff::completion_diff;
use crate::run::results::{Results, Status};
use crate::source::WorktreeSource;
use std::path::Path;

/// One case to look at.
#[derive(Debug, Clone)]
pub struct ReviewItem {
    pub suite: String,
    pub case_id: String,
    pub status: Status,
    /// `path:line` of the case.
    pub at: String,
    pub reasons: Vec<String>,
    pub diff: Option<String>,
    /// Where the tool calls of last-good and this run first part.
    pub trajectory: Option<String>,
    /// Why there is no diff, or why it may not be what the run compared with.
    pub note: Option<String>,
    /// The last-good completion and this run's, for a side-by-side view.
    pub baseline: Option<String>,
    pub current: String,
}

/// The cases to look at, for the terminal: no behaviour matrix is worked out.
pub fn review(project_root: &Path, from: &Path) -> Result<Vec<ReviewItem>> {
    let (project, results) = load(project_root, from)?;
    Ok(items(&project, &results))
}

fn load(project_root: &Path, from: &Path) -> Result<(Project, Results)> {
    let display = from.display().to_string();
    let results = Results::read(&project_root.join(from), &display)?;
    let project = Project::load(&WorktreeSource::new(project_root))?;
    Ok((project, results))
}

/// What `review --format html` shows: the items, the run they come from, and its
/// behaviour matrix against the working tree's last-good completions.
pub struct Review {
    pub items: Vec<ReviewItem>,
    pub results: Results,
    pub matrix: crate::run::compare::Comparison,
}

pub fn review_with_context(project_root: &Path, from: &Path) -> Result<Review> {
    let (project, results) = load(project_root, from)?;
    let items = items(&project, &results);
    let mut last_good = crate::commands::compare::baselines_of(&project, "last-good".to_owned());
    last_good
        .cases
        .retain(|case| results.suites.contains(&case.suite));
    let matrix = crate::run::compare::compare(
        &last_good,
        &results,
        "last-good",
        "this run",
        crate::run::compare::Slack::default(),
    );
    Ok(Review {
        items,
        results,
        matrix,
    })
}

fn items(project: &Project, results: &Results) -> Vec<ReviewItem> {
    let mut items = Vec::new();
    for result in results.cases.iter().filter(|case| {
        matches!(
            case.status,
            Status::Moved | Status::Regressed | Status::Improved
        )
    }) {
        let baseline = project
            .baselines
            .get(&result.suite)
            .map(|baseline| &**baseline);
        let entry = baseline.and_then(|baseline| baseline.entry(&result.case_id));
        let current = result.completion.as_deref().unwrap_or_default();
        let current_short = result
            .digest
            .as_ref()
            .map(|digest| digest.short().to_owned())
            .unwrap_or_default();
        let trajectory = entry.and_then(|entry| {
            crate::graders::envelope::trajectory_divergence(&entry.completion, current)
        });
        let (diff, note) = match entry {
            None => (None, Some(why_no_entry(baseline, &result.suite))),
            Some(entry) => {
                let diff = completion_diff(
                    &entry.completion,
                    current,
                    &format!("baseline ({})", entry.digest.short()),
                    &format!("current ({current_short})"),
                );
                let note = (result.baseline_digest.as_ref() != Some(&entry.digest)).then(|| {
                    "the baseline changed since this run: the diff is against the baseline as it is now".to_owned()
                });
                (diff, note)
            }
        };
        items.push(ReviewItem {
            suite: result.suite.clone(),
            case_id: result.case_id.clone(),
            status: result.status,
            at: format!("{}:{}", result.file, result.line),
            reasons: result.reasons.clone(),
            diff,
            trajectory,
            note,
            baseline: entry.map(|entry| entry.completion.clone()),
            current: current.to_owned(),
        });
    }
    items
}

/// Why a case has no baseline entry to diff against: a file that cannot be read is not an
/// entry that is gone, and says where it breaks.
fn why_no_entry(baseline: Option<&SuiteBaseline>, suite: &str) -> String {
    let Some(baseline) = baseline else {
        return format!("suite `{suite}` has no `baseline` file in evalock.toml any more");
    };
    let path = &baseline.path;
    match &baseline.state {
        BaselineState::Parsed { .. } => "its baseline entry is gone".to_owned(),
        BaselineState::Absent => format!("its baseline file {path} is gone"),
        BaselineState::Malformed {
            line,
            column,
            message,
        } => format!("{path}:{line}:{column} cannot be read as a baseline: {message}"),
        BaselineState::Directory => {
            format!("a directory stands where the baseline file {path} belongs")
        }
        BaselineState::Symlink => {
            format!("a symlink stands where the baseline file {path} belongs (never followed)")
        }
    }
}
