//! What the fake GitHub does for each operation, after validation passed.

use super::graphql::{Argument, Operation};
use super::http::{Request, Response};
use super::openapi::Matched;
use super::{IssueComment, Review, ReviewComment, State, Thread, BOT, READ_ONLY_TOKEN};
use serde_json::{json, Value};

/// GitHub's limit on a comment body. It does not say how it counts; the fake counts
/// UTF-16 code units, the strictest reading (an emoji is two).
const MAX_BODY_UNITS: usize = 65_536;

pub fn rest(state: &mut State, matched: &Matched, request: &Request, token: &str) -> Response {
    let param = |name: &str| {
        matched
            .path_params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
            .unwrap_or_default()
    };
    if let Some(response) = wrong_pull(
        state,
        &param("owner"),
        &param("repo"),
        &param("pull_number"),
        &param("issue_number"),
    ) {
        return response;
    }
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let _ = token;
    match matched.operation_id.as_str() {
        "pulls/get" => pull_request(state, request),
        "pulls/list-review-comments" => {
            let items: Vec<Value> = state
                .review_comments
                .iter()
                .map(review_comment_json)
                .collect();
            paginate(state, request, items)
        }
        "pulls/create-review" => create_review(state, &body),
        "pulls/create-review-comment" => create_file_comment(state, &body),
        "pulls/delete-review-comment" => {
            let id: u64 = param("comment_id").parse().unwrap_or(0);
            let before = state.review_comments.len();
            state.review_comments.retain(|comment| comment.id != id);
            state.threads.retain(|thread| thread.first_comment != id);
            if state.review_comments.len() == before {
                return not_found();
            }
            Response {
                status: 204,
                headers: Vec::new(),
                body: String::new(),
            }
        }
        "issues/list-comments" => {
            let items: Vec<Value> = state
                .issue_comments
                .iter()
                .map(issue_comment_json)
                .collect();
            paginate(state, request, items)
        }
        "issues/create-comment" => {
            let text = body["body"].as_str().unwrap_or("").to_owned();
            if let Some(response) = too_long(&text, "IssueComment") {
                return response;
            }
            let id = state.new_id();
            state.issue_comments.push(IssueComment {
                id,
                body: text,
                user: BOT.into(),
            });
            Response::json(
                201,
                &issue_comment_json(state.issue_comments.last().expect("just pushed")),
            )
        }
        "issues/update-comment" => {
            let id: u64 = param("comment_id").parse().unwrap_or(0);
            let text = body["body"].as_str().unwrap_or("").to_owned();
            if let Some(response) = too_long(&text, "IssueComment") {
                return response;
            }
            match state
                .issue_comments
                .iter_mut()
                .find(|comment| comment.id == id)
            {
                Some(comment) => {
                    comment.body = text;
                    let updated = comment.clone();
                    Response::json(200, &issue_comment_json(&updated))
                }
                None => not_found(),
            }
        }
        other => Response::json(
            500,
            &json!({ "message": format!("the fake has no behaviour for {other}") }),
        ),
    }
}

fn wrong_pull(state: &State, owner: &str, repo: &str, pull: &str, issue: &str) -> Option<Response> {
    let number = if pull.is_empty() { issue } else { pull };
    let wrong = owner != state.owner
        || repo != state.repo
        || (!number.is_empty() && number != state.number.to_string());
    wrong.then(not_found)
}

fn not_found() -> Response {
    Response::json(
        404,
        &json!({ "message": "Not Found", "documentation_url": "https://docs.github.com/rest" }),
    )
}

fn too_long(text: &str, resource: &str) -> Option<Response> {
    (text.encode_utf16().count() >= MAX_BODY_UNITS).then(|| {
        Response::json(
            422,
            &json!({ "message": "Validation Failed", "errors": [{ "resource": resource, "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)" }] }),
        )
    })
}

fn pull_request(state: &State, request: &Request) -> Response {
    if request.header("accept") == Some("application/vnd.github.v3.diff") {
        if state.diff_too_large {
            return Response::json(
                406,
                &json!({
                    "message": "Sorry, the diff exceeded the maximum number of lines (20000). Consider using 'List pull requests files' API or locally cloning the repository instead.",
                    "errors": [{ "resource": "PullRequest", "field": "diff", "code": "too_large" }],
                    "documentation_url": "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files",
                }),
            );
        }
        return Response {
            status: 200,
            headers: vec![("content-type".into(), "text/plain; charset=utf-8".into())],
            body: state.diff.clone(),
        };
    }
    Response::json(
        200,
        &json!({ "number": state.number, "head": { "sha": state.head_sha } }),
    )
}

/// `per_page` (default 30, at most 100) and `page`, with a `Link` header as GitHub sends.
fn paginate(state: &State, request: &Request, items: Vec<Value>) -> Response {
    let per_page = request
        .query_value("per_page")
        .and_then(|value| value.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let page = request
        .query_value("page")
        .and_then(|value| value.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let last = items.len().div_ceil(per_page).max(1);
    let shown: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let url = |number: usize| {
        format!(
            "<{}{}?per_page={per_page}&page={number}>",
            state.base_url, request.path
        )
    };
    let mut links = Vec::new();
    if page < last {
        links.push(format!("{}; rel=\"next\"", url(page + 1)));
        links.push(format!("{}; rel=\"last\"", url(last)));
    }
    if page > 1 {
        links.push(format!("{}; rel=\"first\"", url(1)));
        links.push(format!("{}; rel=\"prev\"", url(page - 1)));
    }
    let response = Response::json(200, &Value::Array(shown));
    if links.is_empty() {
        response
    } else {
        response.with_header("link", &links.join(", "))
    }
}

/// One hunk of the diff as a review comment sees it, read independently of evalock's
/// parser: the path GitHub shows the file under (the new one; the old one for a deleted
/// file), its RIGHT-side line range, and its LEFT-side removed lines (red).
struct DiffHunk {
    path: String,
    /// First and last new-side line; `None` when the hunk only deletes.
    right: Option<(u64, u64)>,
    removed: Vec<u64>,
}

fn hunks(diff: &str) -> Vec<DiffHunk> {
    let mut hunks: Vec<DiffHunk> = Vec::new();
    let (mut old_path, mut path) = (String::new(), String::new());
    let mut next_old = 0;
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            old_path.clear();
            path.clear();
        } else if let Some(name) = line.strip_prefix("--- a/") {
            old_path = name.to_owned();
        } else if let Some(new_path) = line.strip_prefix("+++ b/") {
            path = new_path.to_owned();
        } else if line.starts_with("+++ ") {
            path = old_path.clone();
        } else if let Some(header) = line.strip_prefix("@@ -") {
            let mut ranges = header.split(' ');
            let range = |text: Option<&str>| -> (u64, u64) {
                let text = text.unwrap_or("");
                match text.split_once(',') {
                    Some((start, count)) => {
                        (start.parse().unwrap_or(0), count.parse().unwrap_or(0))
                    }
                    None => (text.parse().unwrap_or(0), 1),
                }
            };
            let (old_start, _) = range(ranges.next());
            let (start, count) = range(ranges.next().and_then(|text| text.strip_prefix('+')));
            next_old = old_start;
            if !path.is_empty() {
                hunks.push(DiffHunk {
                    path: path.clone(),
                    right: (count > 0).then(|| (start, start + count - 1)),
                    removed: Vec::new(),
                });
            }
        } else if let Some(hunk) = hunks.last_mut() {
            if line.starts_with('-') {
                hunk.removed.push(next_old);
                next_old += 1;
            } else if line.starts_with(' ') || line.is_empty() {
                next_old += 1;
            }
        }
    }
    hunks
}

fn unprocessable(message: &str) -> Response {
    Response::json(
        422,
        &json!({ "message": "Unprocessable Entity", "errors": [message], "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request", "status": "422" }),
    )
}

/// GitHub checks every comment first: one bad anchor rejects the whole review.
fn create_review(state: &mut State, body: &Value) -> Response {
    if body["commit_id"]
        .as_str()
        .is_some_and(|sha| sha != state.head_sha)
    {
        return unprocessable("commit_id is not the head of the pull request");
    }
    let review_body = body["body"].as_str().unwrap_or("");
    if matches!(body["event"].as_str(), Some("COMMENT" | "REQUEST_CHANGES"))
        && review_body.is_empty()
    {
        return unprocessable("Body is required for COMMENT and REQUEST_CHANGES reviews");
    }
    if let Some(response) = too_long(review_body, "PullRequestReview") {
        return response;
    }
    let hunks = hunks(&state.diff);
    let comments = body["comments"].as_array().cloned().unwrap_or_default();
    for comment in &comments {
        if let Err(message) = check_anchor(&hunks, comment) {
            return unprocessable(&message);
        }
        if let Some(response) = too_long(
            comment["body"].as_str().unwrap_or(""),
            "PullRequestReviewComment",
        ) {
            return response;
        }
    }
    let review_id = state.new_id();
    let mut comment_ids = Vec::new();
    for comment in &comments {
        let id = state.new_id();
        comment_ids.push(id);
        state.review_comments.push(ReviewComment {
            id,
            review_id: Some(review_id),
            path: comment["path"].as_str().unwrap_or("").to_owned(),
            line: comment["line"].as_u64(),
            start_line: comment["start_line"].as_u64(),
            side: comment["side"].as_str().map(str::to_owned),
            start_side: comment["start_side"].as_str().map(str::to_owned),
            subject_type: "line".into(),
            body: comment["body"].as_str().unwrap_or("").to_owned(),
            in_reply_to: None,
            user: BOT.into(),
            commit_id: state.head_sha.clone(),
        });
        state.threads.push(Thread {
            id: format!("PRRT_{id}"),
            first_comment: id,
            resolved: false,
        });
    }
    let event = body["event"].as_str().unwrap_or("PENDING").to_owned();
    state.reviews.push(Review {
        id: review_id,
        body: review_body.to_owned(),
        event: event.clone(),
        comment_ids,
    });
    Response::json(
        200,
        &json!({ "id": review_id, "node_id": format!("PRR_{review_id}"), "body": review_body, "state": if event == "COMMENT" { "COMMENTED" } else { "PENDING" }, "commit_id": state.head_sha }),
    )
}

/// GitHub's rules for `line`/`side` (and `start_line`/`start_side`): RIGHT numbers the
/// new version and takes any line a hunk shows; LEFT numbers the old version and, as
/// evalock uses it, only lines the change removed. Both ends lie in one hunk.
fn check_anchor(hunks: &[DiffHunk], comment: &Value) -> Result<(), String> {
    const OFF_DIFF: &str = "Pull request review thread line must be part of the diff";
    if comment.get("position").is_some() {
        return Err("evalock must not use the deprecated `position`".into());
    }
    let path = comment["path"].as_str().unwrap_or("");
    let line = comment["line"]
        .as_u64()
        .ok_or("Pull request review thread line must be set")?;
    let side = comment["side"].as_str();
    if !matches!(side, Some("RIGHT" | "LEFT")) {
        return Err(format!("{path}:{line}: side must be LEFT or RIGHT"));
    }
    let start = comment["start_line"].as_u64();
    let start_side = comment["start_side"].as_str();
    if start.is_some() != start_side.is_some() {
        return Err("start_line and start_side go together".into());
    }
    if start.is_some_and(|start| start >= line) {
        return Err("Pull request review thread start_line must precede the end line".into());
    }
    if start_side.is_some_and(|start_side| Some(start_side) != side) {
        return Err("evalock's ranges keep to one side: start_side must equal side".into());
    }
    let start = start.unwrap_or(line);
    let inside_one_hunk = hunks.iter().any(|hunk| {
        hunk.path == path
            && match side {
                Some("LEFT") => (start..=line).all(|old| hunk.removed.contains(&old)),
                _ => hunk
                    .right
                    .is_some_and(|(first, last)| first <= start && line <= last),
            }
    });
    if inside_one_hunk {
        Ok(())
    } else {
        Err(OFF_DIFF.into())
    }
}

/// A single comment; evalock only sends file-level ones (`subject_type: file`).
fn create_file_comment(state: &mut State, body: &Value) -> Response {
    if body["subject_type"].as_str() != Some("file") || body.get("line").is_some() {
        return unprocessable("the fake expects only file-level comments from evalock");
    }
    if body["commit_id"].as_str() != Some(state.head_sha.as_str()) {
        return unprocessable("commit_id is not the head of the pull request");
    }
    let path = body["path"].as_str().unwrap_or("").to_owned();
    // Any file the pull request shows takes a file-level comment: changed, deleted, or
    // binary with no hunks (GitHub's file comments, generally available since 2022).
    let header_end = format!(" b/{path}");
    let shown = state.diff.lines().any(|line| {
        line.strip_prefix("diff --git ")
            .is_some_and(|rest| rest.ends_with(&header_end))
    });
    if !shown {
        return unprocessable("Path could not be resolved");
    }
    let text = body["body"].as_str().unwrap_or("").to_owned();
    if let Some(response) = too_long(&text, "PullRequestReviewComment") {
        return response;
    }
    let id = state.new_id();
    let comment = ReviewComment {
        id,
        review_id: None,
        path,
        line: None,
        start_line: None,
        side: None,
        start_side: None,
        subject_type: "file".into(),
        body: text,
        in_reply_to: None,
        user: BOT.into(),
        commit_id: state.head_sha.clone(),
    };
    state.threads.push(Thread {
        id: format!("PRRT_{id}"),
        first_comment: id,
        resolved: false,
    });
    let json = review_comment_json(&comment);
    state.review_comments.push(comment);
    Response::json(201, &json)
}

fn review_comment_json(comment: &ReviewComment) -> Value {
    json!({
        "id": comment.id,
        "node_id": format!("PRRC_{}", comment.id),
        "pull_request_review_id": comment.review_id,
        "path": comment.path,
        "line": comment.line,
        "original_line": comment.line,
        "start_line": comment.start_line,
        "original_start_line": comment.start_line,
        "side": comment.side,
        "start_side": comment.start_side,
        "subject_type": comment.subject_type,
        "body": comment.body,
        "in_reply_to_id": comment.in_reply_to,
        "user": { "login": comment.user, "type": if comment.user == BOT { "Bot" } else { "User" } },
        "commit_id": comment.commit_id,
    })
}

fn issue_comment_json(comment: &IssueComment) -> Value {
    json!({ "id": comment.id, "node_id": format!("IC_{}", comment.id), "body": comment.body, "user": { "login": comment.user } })
}

pub fn graphql(
    state: &mut State,
    operation: &Operation,
    variables: &Value,
    token: &str,
) -> Response {
    let Some(root) = operation.selections.first() else {
        return Response::json(200, &json!({ "errors": [{ "message": "empty" }] }));
    };
    if state.graphql_rate_limited {
        return Response::json(
            200,
            &json!({ "data": null, "errors": [{ "type": "RATE_LIMITED", "message": "API rate limit exceeded for user ID 1." }] }),
        );
    }
    match (operation.kind.as_str(), root.name.as_str()) {
        ("query", "repository") => review_threads(state, variables),
        ("mutation", "resolveReviewThread") if token == READ_ONLY_TOKEN => Response::json(
            200,
            &json!({ "data": { "resolveReviewThread": null }, "errors": [{ "type": "FORBIDDEN", "message": "Resource not accessible by integration" }] }),
        ),
        ("mutation", "resolveReviewThread") => {
            let thread_id = root
                .arguments
                .iter()
                .find_map(|(name, value)| match (name.as_str(), value) {
                    ("input", Argument::Object(fields)) => {
                        fields.iter().find_map(|(field, value)| match value {
                            Argument::Variable(variable) if field == "threadId" => {
                                variables[variable].as_str().map(str::to_owned)
                            }
                            _ => None,
                        })
                    }
                    _ => None,
                })
                .unwrap_or_default();
            match state
                .threads
                .iter_mut()
                .find(|thread| thread.id == thread_id)
            {
                Some(thread) => {
                    thread.resolved = true;
                    Response::json(
                        200,
                        &json!({ "data": { "resolveReviewThread": { "thread": { "id": thread.id, "isResolved": true } } } }),
                    )
                }
                None => Response::json(
                    200,
                    &json!({ "data": { "resolveReviewThread": null }, "errors": [{ "type": "NOT_FOUND", "message": format!("Could not resolve to a node with the global id of '{thread_id}'") }] }),
                ),
            }
        }
        _ => Response::json(
            200,
            &json!({ "errors": [{ "message": "the fake has no behaviour for this operation" }] }),
        ),
    }
}

/// Review threads, 100 per page as evalock asks, cursor = index.
fn review_threads(state: &State, variables: &Value) -> Response {
    if variables["owner"] != state.owner.as_str()
        || variables["name"] != state.repo.as_str()
        || variables["number"] != state.number
    {
        return Response::json(
            200,
            &json!({ "data": { "repository": null }, "errors": [{ "type": "NOT_FOUND", "message": "Could not resolve to a Repository" }] }),
        );
    }
    let start: usize = variables["after"]
        .as_str()
        .and_then(|cursor| cursor.parse().ok())
        .unwrap_or(0);
    let page: Vec<Value> = state
        .threads
        .iter()
        .skip(start)
        .take(100)
        .map(|thread| json!({ "id": thread.id, "isResolved": thread.resolved, "comments": { "nodes": [{ "databaseId": thread.first_comment }] } }))
        .collect();
    let end = start + page.len();
    let has_next = end < state.threads.len();
    Response::json(
        200,
        &json!({ "data": { "repository": { "pullRequest": { "reviewThreads": {
            "pageInfo": { "hasNextPage": has_next, "endCursor": end.to_string() },
            "nodes": page,
        } } } } }),
    )
}
