//! GitHub: the only module that talks to GitHub. `evalock github` hands it a report;
//! it anchors each finding on the pull request's diff, posts one review (at most 30 new
//! comments) and one sticky summary comment, cleans up comments whose finding is gone,
//! and, when it cannot post (read-only token, 403, no pull request, GitHub down),
//! returns workflow commands and writes the step summary instead.
//!
//! Nothing here changes the gate's exit code: failures come back as text to report.

mod anchor;
mod api;
mod body;
mod client;
pub mod diff;
mod event;
mod plan;
mod summary;

pub use anchor::{Anchor, AnchorContext, Side};
pub use body::{comment_body, marker_fingerprints, MAX_BODY_UNITS, MAX_FINDINGS_PER_COMMENT};
pub use client::redact;
pub use diff::PullDiff;
pub use event::{graphql_url_for, pull_request_from_payload, Environment, PullRequest};
pub use plan::{Anchored, Cleanup, Comment, Plan, MAX_INLINE_COMMENTS};

use crate::report::Report;
use api::{Api, DiffAnswer, NewReviewComment};
use client::{ApiError, Client, ClientConfig};
use std::time::Duration;

/// What `evalock github` posts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Inline review comments plus the sticky summary.
    Review,
    /// Only the sticky summary comment.
    Summary,
    /// No API calls: workflow commands and the step summary.
    Annotations,
}

/// The pull request's diff as `git diff` prints it, from the merge base of the two commits
/// (base, head) to the head: for when GitHub's is too large. The caller reads git.
pub type LocalDiff<'a> = &'a dyn Fn(&str, &str) -> Result<String, String>;

pub struct PublishOptions<'a> {
    /// The project's folder within the repository (`""` at the top): findings carry
    /// project-relative paths, GitHub repository-relative ones.
    pub prefix: String,
    pub local_diff: Option<LocalDiff<'a>>,
    pub mode: Mode,
    pub environment: Environment,
    /// The variable the token came from, for messages (never the token).
    pub token_env: String,
}

/// What happened to the summary comment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SummaryAction {
    #[default]
    None,
    Created,
    Updated,
    Unchanged,
}

/// What one run did on the pull request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Posted {
    pub inline: usize,
    pub file_level: usize,
    pub already_posted: usize,
    pub in_summary: usize,
    pub resolved: usize,
    pub deleted: usize,
    pub kept_for_humans: usize,
    pub summary: SummaryAction,
}

/// Everything the binary prints afterwards.
#[derive(Debug, Default)]
pub struct Outcome {
    pub posted: Option<Posted>,
    /// Workflow commands for standard output when nothing could be posted.
    pub workflow_commands: Option<String>,
    /// Why the run fell back to workflow commands.
    pub fallback_reason: Option<String>,
    pub step_summary_written: bool,
    /// Failures, for standard error. They never change the exit code.
    pub problems: Vec<String>,
    /// Things worth knowing (a diff taken from git because GitHub's was too large).
    pub notes: Vec<String>,
}

/// Posts a report to the pull request this run is about, or falls back.
pub fn publish(report: &Report, options: &PublishOptions<'_>) -> Outcome {
    let mut outcome = Outcome::default();
    let prefix = options.prefix.clone();
    let environment = &options.environment;
    // A saved report may carry the prefix already (`evalock report --path-prefix`).
    let report = &report.clone().project_relative();
    let reason = match (options.mode, environment.pull_request(), &environment.token) {
        (Mode::Annotations, _, _) => Some("annotations mode: nothing is posted".to_owned()),
        (_, Err(reason), _) => Some(reason),
        (_, Ok(_), None) => Some(format!(
            "no token in ${}: nothing can be posted",
            options.token_env
        )),
        (_, Ok(pull), Some(token)) => {
            let client = Client::new(ClientConfig {
                api_url: environment.api_url.clone(),
                graphql_url: environment.graphql_url.clone(),
                token: token.clone(),
                backoff_unit: Duration::from_millis(environment.backoff_ms),
            });
            let api = Api {
                client: &client,
                pull: &pull,
            };
            let target = Target {
                api: &api,
                prefix: &prefix,
                local_diff: options.local_diff,
            };
            match post(report, &target, options.mode, &mut outcome.notes) {
                Ok(posted) => {
                    outcome.posted = Some(posted);
                    None
                }
                Err(error) => {
                    let reason = if error.is_rate_limited() {
                        format!("GitHub's rate limit was still in force after retrying; re-run the job in a few minutes: {error}")
                    } else if error.is_forbidden() {
                        format!("the token may not write to this pull request (a fork's pull request gets a read-only token): {error}")
                    } else {
                        error.to_string()
                    };
                    outcome
                        .problems
                        .push(format!("could not post to the pull request: {reason}"));
                    Some(reason)
                }
            }
        }
    };
    if let Some(reason) = reason {
        fall_back(report, &prefix, environment, reason, &mut outcome);
    }
    outcome
}

/// Where posting goes and what anchoring needs.
struct Target<'a> {
    api: &'a Api<'a>,
    prefix: &'a str,
    local_diff: Option<LocalDiff<'a>>,
}

fn post(
    report: &Report,
    target: &Target<'_>,
    mode: Mode,
    notes: &mut Vec<String>,
) -> Result<Posted, ApiError> {
    let api = target.api;
    let anchored = if mode == Mode::Review {
        let diff = pull_diff(target, notes)?;
        let context = AnchorContext {
            diff: &diff,
            prefix: target.prefix,
        };
        Anchored::all(&report.findings, |finding| context.anchor(finding))
    } else {
        Anchored::all(&report.findings, |_| Anchor::Summary)
    };
    let (plan, mut posted) = if mode == Mode::Review {
        let comments = api.review_comments()?;
        let threads = match api.review_threads() {
            Ok(threads) => Some(threads),
            Err(error) => {
                let why = match error.is_rate_limited() {
                    true => "GitHub's GraphQL rate limit is spent",
                    false => "review threads are unavailable",
                };
                notes.push(format!(
                    "{why}, so outdated comments are deleted instead of resolved: {error}"
                ));
                None
            }
        };
        let existing = plan::Existing {
            comments: &comments,
            threads: threads.as_deref(),
            prefix: target.prefix,
        };
        let mut plan = plan::plan(anchored, &existing, MAX_INLINE_COMMENTS);
        let posted = post_comments(report, &mut plan, target, notes)?;
        (plan, posted)
    } else {
        (
            plan::plan(
                anchored,
                &plan::Existing {
                    comments: &[],
                    threads: None,
                    prefix: target.prefix,
                },
                0,
            ),
            Posted::default(),
        )
    };
    let listed: Vec<&Anchored> = plan.summary_findings().collect();
    posted.in_summary = listed.len();
    posted.already_posted = plan.already_posted.len();
    let context = summary::SummaryContext {
        prefix: target.prefix,
        head_sha: Some(&api.pull.head_sha),
        commented: plan.commented_findings(),
    };
    let body = summary::render(report, &listed, &context);
    posted.summary = upsert_summary(api, target.prefix, &body)?;
    Ok(posted)
}

/// Posts the review, the file-level comments and the cleanups. A review GitHub rejects
/// (422) moves its findings to the summary instead of failing the run.
fn post_comments(
    report: &Report,
    plan: &mut Plan,
    target: &Target<'_>,
    notes: &mut Vec<String>,
) -> Result<Posted, ApiError> {
    let api = target.api;
    let mut posted = Posted::default();
    if !plan.inline.is_empty() {
        let comments: Vec<NewReviewComment> = plan
            .inline
            .iter()
            .filter_map(|comment| new_review_comment(comment, target.prefix))
            .collect();
        let findings: usize = plan
            .inline
            .iter()
            .map(|comment| comment.findings.len())
            .sum();
        let review_body = format!(
            "evalock: **{}**. {} new finding{} on the changed lines below; the summary comment has the rest.",
            report.verdict().as_str(),
            findings,
            if findings == 1 { "" } else { "s" }
        );
        match api.create_review(&review_body, &comments) {
            Ok(()) => posted.inline = comments.len(),
            Err(error)
                if !error.is_forbidden()
                    && matches!(error, ApiError::Status { status: 422, .. }) =>
            {
                notes.push(format!("GitHub rejected the review, so its findings are in the summary instead: {error}"));
                let rejected = std::mem::take(&mut plan.inline);
                plan.refused_to_summary(rejected);
            }
            Err(error) => return Err(error),
        }
    }
    let mut rejected = Vec::new();
    for comment in std::mem::take(&mut plan.file_level) {
        let Anchor::File { path } = &comment.anchor else {
            continue;
        };
        match api.create_file_comment(
            path,
            &comment_body(&comment.findings, &comment.anchor, target.prefix),
        ) {
            Ok(()) => {
                posted.file_level += 1;
                plan.file_level.push(comment);
            }
            Err(error @ ApiError::Status { status: 422, .. }) => {
                notes.push(format!(
                    "GitHub rejected a file comment on {path}, so it is in the summary: {error}"
                ));
                rejected.push(comment);
            }
            Err(error) => return Err(error),
        }
    }
    plan.refused_to_summary(rejected);
    // A comment that cannot be cleaned up is worth a note, not the summary: only a
    // refused token or a rate limit, which every later request would meet too, stops
    // the run.
    for cleanup in &plan.cleanups {
        let result = match cleanup {
            Cleanup::Resolve { thread_id, .. } => {
                api.resolve_thread(thread_id).map(|()| posted.resolved += 1)
            }
            Cleanup::Delete { comment_id } => api
                .delete_review_comment(*comment_id)
                .map(|()| posted.deleted += 1),
            Cleanup::KeepForHuman { .. } => {
                posted.kept_for_humans += 1;
                Ok(())
            }
        };
        match result {
            Err(error) if error.is_forbidden() || error.is_rate_limited() => return Err(error),
            Err(error) => notes.push(format!("an outdated comment stays: {error}")),
            Ok(()) => {}
        }
    }
    Ok(posted)
}

fn new_review_comment(comment: &Comment, prefix: &str) -> Option<NewReviewComment> {
    let Anchor::Lines {
        path,
        side,
        start_line,
        line,
    } = &comment.anchor
    else {
        return None;
    };
    let spans = start_line < line;
    Some(NewReviewComment {
        path: path.clone(),
        body: comment_body(&comment.findings, &comment.anchor, prefix),
        line: *line,
        side: side.as_str(),
        start_line: spans.then_some(*start_line),
        start_side: spans.then_some(side.as_str()),
    })
}

/// Finds this project's sticky summary (any page) and edits it, or creates it.
fn upsert_summary(api: &Api<'_>, prefix: &str, body: &str) -> Result<SummaryAction, ApiError> {
    let marker = summary::summary_marker(prefix);
    let existing = api
        .issue_comments()?
        .into_iter()
        .find(|comment| comment.body.contains(&marker));
    match existing {
        Some(comment) if comment.body == body => Ok(SummaryAction::Unchanged),
        Some(comment) => api
            .update_issue_comment(comment.id, body)
            .map(|()| SummaryAction::Updated),
        None => api
            .create_issue_comment(body)
            .map(|()| SummaryAction::Created),
    }
}

/// The pull request's diff from GitHub, or from local git when GitHub answers 406
/// (too large). Without either, every finding goes to the summary.
fn pull_diff(target: &Target<'_>, notes: &mut Vec<String>) -> Result<PullDiff, ApiError> {
    let pull = target.api.pull;
    match target.api.pull_diff()? {
        DiffAnswer::Diff(text) => Ok(PullDiff::parse(&text)),
        DiffAnswer::TooLarge => {
            let local = match target.local_diff {
                Some(local_diff) => local_diff(&pull.base_sha, &pull.head_sha),
                None => Err("not in a git repository".to_owned()),
            };
            match local {
                Ok(text) => {
                    notes.push("GitHub's diff was too large (HTTP 406): anchored on `git diff <merge base>..<head>` instead".to_owned());
                    Ok(PullDiff::parse(&text))
                }
                Err(error) => {
                    notes.push(format!(
                        "GitHub's diff was too large (HTTP 406) and the local one is unavailable ({error}; check out with `fetch-depth: 0`): every finding is in the summary"
                    ));
                    Ok(PullDiff::default())
                }
            }
        }
    }
}

/// Workflow commands and the job summary (`report::github`, `report::markdown`) with
/// repository-relative paths.
fn fall_back(
    report: &Report,
    prefix: &str,
    environment: &Environment,
    reason: String,
    outcome: &mut Outcome,
) {
    let in_repository = report.clone().with_path_prefix(prefix);
    outcome.workflow_commands = Some(crate::report::github::render(&in_repository));
    if let Some(path) = &environment.step_summary {
        // The action writes this same job summary before posting; it is not repeated.
        let markdown = crate::report::markdown::render(&in_repository);
        let already_there =
            std::fs::read_to_string(path).is_ok_and(|text| text.contains(&markdown));
        let mut text = if already_there {
            String::new()
        } else {
            markdown
        };
        text.push_str(&format!(
            "\n_evalock did not post to the pull request: {}._\n",
            one_line(&reason)
        ));
        match event::append_step_summary(path, &text) {
            Ok(()) => outcome.step_summary_written = true,
            Err(error) => outcome
                .problems
                .push(format!("could not write the step summary: {error}")),
        }
    }
    outcome.fallback_reason = Some(reason);
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}
