//! The GitHub operations evalock uses, each one request shape: the pull request's diff,
//! review comments, one review, file-level comments, issue comments (the sticky
//! summary), and review threads over GraphQL (listing and resolving).

use super::client::{ApiError, ApiResponse, Client, Method, DIFF, JSON};
use super::event::PullRequest;
use serde::Serialize;
use serde_json::{json, Value};

/// A review comment as evalock needs to see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewComment {
    pub id: u64,
    pub path: String,
    pub body: String,
    pub in_reply_to_id: Option<u64>,
}

/// An issue (conversation) comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueComment {
    pub id: u64,
    pub body: String,
}

/// A review thread: GraphQL node id, state, and the REST id of its first comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewThread {
    pub id: String,
    pub is_resolved: bool,
    pub first_comment_id: Option<u64>,
}

/// One inline comment of a new review: `line` (and `start_line` for a range) numbers
/// the new version for `side` RIGHT, the old one for LEFT; `start_*` only for ranges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewReviewComment {
    pub path: String,
    pub body: String,
    pub line: u32,
    pub side: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_side: Option<&'static str>,
}

/// The pull request's diff, or the fact that GitHub will not produce it.
pub enum DiffAnswer {
    Diff(String),
    /// HTTP 406: the diff is too large for the API.
    TooLarge,
}

pub struct Api<'a> {
    pub client: &'a Client,
    pub pull: &'a PullRequest,
}

impl Api<'_> {
    fn repo_url(&self, rest: &str) -> String {
        self.client.rest_url(&format!(
            "/repos/{}/{}{rest}",
            self.pull.owner, self.pull.repo
        ))
    }

    pub fn pull_diff(&self) -> Result<DiffAnswer, ApiError> {
        let url = self.repo_url(&format!("/pulls/{}", self.pull.number));
        let response = self.client.send(Method::Get, &url, DIFF, None)?;
        match response.status {
            200 => Ok(DiffAnswer::Diff(response.body)),
            406 => Ok(DiffAnswer::TooLarge),
            status => Err(failure(
                self.client,
                "fetching the pull request diff",
                status,
                &response,
            )),
        }
    }

    pub fn review_comments(&self) -> Result<Vec<ReviewComment>, ApiError> {
        let url = self.repo_url(&format!(
            "/pulls/{}/comments?per_page=100",
            self.pull.number
        ));
        let items = self.client.all_pages(&url, "listing review comments")?;
        Ok(items
            .iter()
            .filter_map(|item| {
                Some(ReviewComment {
                    id: item.get("id")?.as_u64()?,
                    path: item.get("path")?.as_str()?.to_owned(),
                    body: item
                        .get("body")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    in_reply_to_id: item.get("in_reply_to_id").and_then(Value::as_u64),
                })
            })
            .collect())
    }

    /// One review with its inline comments, as a plain comment (the gate is the status
    /// check, not the review state).
    pub fn create_review(&self, body: &str, comments: &[NewReviewComment]) -> Result<(), ApiError> {
        let url = self.repo_url(&format!("/pulls/{}/reviews", self.pull.number));
        let payload = json!({ "commit_id": self.pull.head_sha, "body": body, "event": "COMMENT", "comments": comments });
        self.send(Method::Post, &url, Some(&payload), "posting the review")
    }

    /// A comment on a changed file as a whole: GitHub's reviews cannot carry these, so
    /// each is its own request.
    pub fn create_file_comment(&self, path: &str, body: &str) -> Result<(), ApiError> {
        let url = self.repo_url(&format!("/pulls/{}/comments", self.pull.number));
        let payload = json!({ "commit_id": self.pull.head_sha, "path": path, "body": body, "subject_type": "file" });
        self.send(Method::Post, &url, Some(&payload), "posting a file comment")
    }

    pub fn delete_review_comment(&self, id: u64) -> Result<(), ApiError> {
        let url = self.repo_url(&format!("/pulls/comments/{id}"));
        self.send(
            Method::Delete,
            &url,
            None,
            "deleting an outdated review comment",
        )
    }

    pub fn issue_comments(&self) -> Result<Vec<IssueComment>, ApiError> {
        let url = self.repo_url(&format!(
            "/issues/{}/comments?per_page=100",
            self.pull.number
        ));
        let items = self
            .client
            .all_pages(&url, "listing pull request comments")?;
        Ok(items
            .iter()
            .filter_map(|item| {
                Some(IssueComment {
                    id: item.get("id")?.as_u64()?,
                    body: item
                        .get("body")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                })
            })
            .collect())
    }

    pub fn create_issue_comment(&self, body: &str) -> Result<(), ApiError> {
        let url = self.repo_url(&format!("/issues/{}/comments", self.pull.number));
        self.send(
            Method::Post,
            &url,
            Some(&json!({ "body": body })),
            "posting the summary comment",
        )
    }

    pub fn update_issue_comment(&self, id: u64, body: &str) -> Result<(), ApiError> {
        let url = self.repo_url(&format!("/issues/comments/{id}"));
        self.send(
            Method::Patch,
            &url,
            Some(&json!({ "body": body })),
            "updating the summary comment",
        )
    }

    /// Every review thread of the pull request, 100 at a time.
    pub fn review_threads(&self) -> Result<Vec<ReviewThread>, ApiError> {
        let mut threads = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..100 {
            let variables = json!({
                "owner": self.pull.owner, "name": self.pull.repo, "number": self.pull.number, "after": after,
            });
            let data = self.graphql(REVIEW_THREADS_QUERY, variables, "listing review threads")?;
            let connection = data
                .pointer("/repository/pullRequest/reviewThreads")
                .ok_or_else(|| {
                    ApiError::Protocol(
                        "listing review threads: no reviewThreads in the answer".to_owned(),
                    )
                })?;
            for node in connection
                .get("nodes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(id) = node.get("id").and_then(Value::as_str) else {
                    continue;
                };
                threads.push(ReviewThread {
                    id: id.to_owned(),
                    is_resolved: node
                        .get("isResolved")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    first_comment_id: node
                        .pointer("/comments/nodes/0/databaseId")
                        .and_then(Value::as_u64),
                });
            }
            let has_next = connection
                .pointer("/pageInfo/hasNextPage")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            after = connection
                .pointer("/pageInfo/endCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if !has_next || after.is_none() {
                return Ok(threads);
            }
        }
        Ok(threads)
    }

    pub fn resolve_thread(&self, thread_id: &str) -> Result<(), ApiError> {
        self.graphql(
            RESOLVE_THREAD_MUTATION,
            json!({ "threadId": thread_id }),
            "resolving a review thread",
        )
        .map(drop)
    }

    /// A request whose answer is not read: only that it succeeded.
    fn send(
        &self,
        method: Method,
        url: &str,
        payload: Option<&Value>,
        what: &str,
    ) -> Result<(), ApiError> {
        self.client
            .expect(method, url, JSON, payload, what)
            .map(drop)
    }

    fn graphql(&self, query: &str, variables: Value, what: &str) -> Result<Value, ApiError> {
        let payload = json!({ "query": query, "variables": variables });
        let response = self.client.expect(
            Method::Post,
            self.client.graphql_url(),
            JSON,
            Some(&payload),
            what,
        )?;
        let value = response.json()?;
        if let Some(errors) = value
            .get("errors")
            .and_then(Value::as_array)
            .filter(|errors| !errors.is_empty())
        {
            let messages: Vec<&str> = errors
                .iter()
                .filter_map(|error| error.get("message").and_then(Value::as_str))
                .collect();
            // GraphQL answers 200 and says what went wrong in each error's `type`; the
            // two that matter to the caller become the REST statuses that mean the same.
            let has = |kind: &str| {
                errors
                    .iter()
                    .any(|error| error.get("type").and_then(Value::as_str) == Some(kind))
            };
            let status = if has("RATE_LIMITED") {
                429
            } else if has("FORBIDDEN") {
                403
            } else {
                200
            };
            return Err(ApiError::Status {
                status,
                what: what.to_owned(),
                message: self.client.redact(&messages.join("; ")),
            });
        }
        value
            .get("data")
            .cloned()
            .ok_or_else(|| ApiError::Protocol(format!("{what}: GraphQL answer without data")))
    }
}

fn failure(client: &Client, what: &str, status: u16, response: &ApiResponse) -> ApiError {
    ApiError::Status {
        status,
        what: what.to_owned(),
        message: client.redact(&response.message()),
    }
}

const REVIEW_THREADS_QUERY: &str =
    "query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id isResolved comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}";

const RESOLVE_THREAD_MUTATION: &str = "mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}";
