//! A fake GitHub for the `evalock github` tests: in-process, on 127.0.0.1, every request
//! validated against GitHub's own API descriptions (vendored from npm by
//! scripts/vendor-openapi.sh), and behaving like GitHub where evalock depends on it:
//! a review with one comment off the diff is rejected whole (422), bodies of 65,536
//! characters or more are rejected, lists paginate with `Link` headers, a read-only
//! token gets 403 on writes, a too-large diff gets 406.

#![allow(dead_code)]

mod graphql;
mod http;
mod openapi;
mod routes;
pub mod scenario;

use http::{HttpServer, Request, Response};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

pub const WRITE_TOKEN: &str = "ghs_fakeWriteToken0123456789";
pub const READ_ONLY_TOKEN: &str = "ghs_fakeReadOnlyToken0123456789";
pub const BOT: &str = "github-actions[bot]";

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    /// The OpenAPI operation id, `graphql:query` / `graphql:mutation`, or `invalid`.
    pub operation: String,
    pub status: u16,
}

#[derive(Debug, Clone)]
pub struct ReviewComment {
    pub id: u64,
    pub review_id: Option<u64>,
    pub path: String,
    pub line: Option<u64>,
    pub start_line: Option<u64>,
    pub side: Option<String>,
    pub start_side: Option<String>,
    pub subject_type: String,
    pub body: String,
    pub in_reply_to: Option<u64>,
    pub user: String,
    pub commit_id: String,
}

#[derive(Debug, Clone)]
pub struct Thread {
    pub id: String,
    pub first_comment: u64,
    pub resolved: bool,
}

#[derive(Debug, Clone)]
pub struct IssueComment {
    pub id: u64,
    pub body: String,
    pub user: String,
}

#[derive(Debug, Clone)]
pub struct Review {
    pub id: u64,
    pub body: String,
    pub event: String,
    pub comment_ids: Vec<u64>,
}

/// Everything the fake GitHub holds.
#[derive(Debug, Default)]
pub struct State {
    pub owner: String,
    pub repo: String,
    pub number: u64,
    pub head_sha: String,
    pub diff: String,
    pub diff_too_large: bool,
    pub reviews: Vec<Review>,
    pub review_comments: Vec<ReviewComment>,
    pub threads: Vec<Thread>,
    pub issue_comments: Vec<IssueComment>,
    pub log: Vec<Logged>,
    pub violations: Vec<String>,
    /// Answers to give before handling anything: (status, retry-after, body).
    pub injected_failures: Vec<(u16, Option<u64>, String)>,
    /// GraphQL's own rate limit is spent: every query answers 200 with a `RATE_LIMITED`
    /// error, as GitHub does, while REST goes on working.
    pub graphql_rate_limited: bool,
    pub next_id: u64,
    pub base_url: String,
}

impl State {
    pub fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

pub struct FakeGithub {
    pub state: Arc<Mutex<State>>,
    server: HttpServer,
}

impl FakeGithub {
    /// A pull request `owner/repo#number` whose head is `head_sha` and diff is `diff`.
    pub fn start(owner: &str, repo: &str, number: u64, head_sha: &str, diff: &str) -> FakeGithub {
        let state = Arc::new(Mutex::new(State {
            owner: owner.to_owned(),
            repo: repo.to_owned(),
            number,
            head_sha: head_sha.to_owned(),
            diff: diff.to_owned(),
            next_id: 1000,
            ..State::default()
        }));
        let operations = Arc::new(openapi::Operations::load());
        let schema = Arc::new(graphql::Schema::load());
        let handler_state = Arc::clone(&state);
        let server = HttpServer::start(Arc::new(move |request: Request| {
            let mut state = handler_state.lock().expect("state lock");
            handle(&mut state, &operations, &schema, &request)
        }));
        state.lock().expect("state lock").base_url = server.base_url();
        FakeGithub { state, server }
    }

    /// REST root, as `GITHUB_API_URL` (GitHub Enterprise style, so paths carry a prefix).
    pub fn api_url(&self) -> String {
        format!("{}/api/v3", self.server.base_url())
    }

    pub fn graphql_url(&self) -> String {
        format!("{}/api/graphql", self.server.base_url())
    }

    pub fn with<T>(&self, read: impl FnOnce(&mut State) -> T) -> T {
        read(&mut self.state.lock().expect("state lock"))
    }

    /// A new head commit and diff (a push to the pull request).
    pub fn push(&self, head_sha: &str, diff: &str) {
        self.with(|state| {
            state.head_sha = head_sha.to_owned();
            state.diff = diff.to_owned();
        });
    }

    /// A person replies to a review comment.
    pub fn human_reply(&self, to: u64, body: &str) {
        self.with(|state| {
            let id = state.new_id();
            let parent = state
                .review_comments
                .iter()
                .find(|comment| comment.id == to)
                .cloned()
                .expect("comment to reply to");
            state.review_comments.push(ReviewComment {
                id,
                in_reply_to: Some(to),
                body: body.to_owned(),
                user: "octocat".into(),
                review_id: None,
                ..parent
            });
        });
    }

    /// Every schema or behaviour violation seen so far; tests assert it is empty.
    pub fn violations(&self) -> Vec<String> {
        self.with(|state| state.violations.clone())
    }

    pub fn log(&self) -> Vec<Logged> {
        self.with(|state| state.log.clone())
    }

    pub fn clear_log(&self) {
        self.with(|state| state.log.clear());
    }

    pub fn review_comments(&self) -> Vec<ReviewComment> {
        self.with(|state| state.review_comments.clone())
    }

    pub fn thread_of(&self, comment_id: u64) -> Option<Thread> {
        self.with(|state| {
            state
                .threads
                .iter()
                .find(|thread| thread.first_comment == comment_id)
                .cloned()
        })
    }
}

fn handle(
    state: &mut State,
    operations: &openapi::Operations,
    schema: &graphql::Schema,
    request: &Request,
) -> Response {
    let token = request
        .header("authorization")
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or("")
        .to_owned();
    let (operation, response) = if request.path == "/api/graphql" && request.method == "POST" {
        match schema.validate(&request.body) {
            Ok((parsed, variables)) => {
                // GraphQL reads work with any known token; mutations decide for themselves.
                let response = authorized(&token, "GET", || {
                    routes::graphql(state, &parsed, &variables, &token)
                });
                (format!("graphql:{}", parsed.kind), response)
            }
            Err(errors) => invalid(state, request, errors),
        }
    } else {
        match operations.validate(request, "/api/v3") {
            Ok(matched) => {
                let response = authorized(&token, &request.method, || {
                    routes::rest(state, &matched, request, &token)
                });
                (matched.operation_id, response)
            }
            Err(errors) => invalid(state, request, errors),
        }
    };
    let response = if operation != "invalid" && !state.injected_failures.is_empty() {
        let (status, retry_after, body) = state.injected_failures.remove(0);
        let failure = Response::json(status, &json!({ "message": body }));
        match retry_after {
            Some(seconds) => failure.with_header("retry-after", &seconds.to_string()),
            None => failure,
        }
    } else {
        response
    };
    state.log.push(Logged {
        method: request.method.clone(),
        path: request.path.clone(),
        operation,
        status: response.status,
    });
    response
}

fn invalid(state: &mut State, request: &Request, errors: Vec<String>) -> (String, Response) {
    for error in &errors {
        state
            .violations
            .push(format!("{} {}: {error}", request.method, request.path));
    }
    (
        "invalid".to_owned(),
        Response::json(
            400,
            &json!({ "message": "Problems parsing request", "errors": errors }),
        ),
    )
}

/// 401 without a known token; 403 for writes with the read-only one.
fn authorized(token: &str, method: &str, respond: impl FnOnce() -> Response) -> Response {
    match token {
        WRITE_TOKEN => respond(),
        READ_ONLY_TOKEN if method == "GET" => respond(),
        READ_ONLY_TOKEN => Response::json(
            403,
            &json!({ "message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest", "status": "403" }),
        ),
        _ => Response::json(
            401,
            &json!({ "message": "Bad credentials", "status": "401" }),
        ),
    }
}

/// The part of a payload the tests change: head and base of the pull request.
pub fn event_payload(action: &str, head_sha: &str, base_sha: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "tests/github-api/webhooks/pull_request.{action}.json"
    ));
    let mut payload: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("vendored payload"))
            .expect("payload parse");
    payload["pull_request"]["head"]["sha"] = json!(head_sha);
    payload["pull_request"]["base"]["sha"] = json!(base_sha);
    payload
}
