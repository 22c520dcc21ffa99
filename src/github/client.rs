//! The HTTP side of the GitHub adapter: one blocking client, retries with backoff for
//! 5xx and secondary rate limits (honouring `retry-after`), `Link` pagination, and a
//! token that never appears in anything this module returns.

use serde_json::Value;
use std::time::Duration;

/// How long one request may take before it counts as failed.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Diffs can be large; GitHub itself refuses (406) well before this.
const MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;
const MAX_RETRIES: u32 = 3;
/// A `retry-after` longer than this many backoff units is not waited for.
const MAX_WAIT_UNITS: u64 = 60;

/// Where the API is and how to authenticate.
#[derive(Clone)]
pub struct ClientConfig {
    /// REST root, e.g. `https://api.github.com` or `https://ghe.example.com/api/v3`.
    pub api_url: String,
    /// GraphQL endpoint, e.g. `https://api.github.com/graphql` or `https://ghe.example.com/api/graphql`.
    pub graphql_url: String,
    pub token: String,
    /// One unit of backoff: a `retry-after: 2` waits two units. One second against GitHub;
    /// tests shrink it through `EVALOCK_GITHUB_BACKOFF_MS`.
    pub backoff_unit: Duration,
}

/// A response the caller reads: status, body, and the next page if the API has one.
#[derive(Debug)]
pub struct ApiResponse {
    pub status: u16,
    pub body: String,
    pub next_page: Option<String>,
}

impl ApiResponse {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn json(&self) -> Result<Value, ApiError> {
        serde_json::from_str(&self.body).map_err(|error| {
            ApiError::Protocol(format!("GitHub sent JSON that cannot be read: {error}"))
        })
    }

    /// GitHub's own words for a failure: `message` plus any `errors`.
    pub fn message(&self) -> String {
        let Ok(value) = serde_json::from_str::<Value>(&self.body) else {
            return self.body.chars().take(200).collect();
        };
        let mut message = value
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if let Some(errors) = value.get("errors").and_then(Value::as_array) {
            let details: Vec<String> = errors
                .iter()
                .map(|error| match error {
                    Value::String(text) => text.clone(),
                    other => other
                        .get("message")
                        .and_then(Value::as_str)
                        .map_or_else(|| other.to_string(), str::to_owned),
                })
                .collect();
            if !details.is_empty() {
                message.push_str(&format!(" ({})", details.join("; ")));
            }
        }
        message
    }
}

/// Why a request failed, with the token already removed from every message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// GitHub answered with an error status (after retries, where retrying made sense).
    Status {
        status: u16,
        what: String,
        message: String,
    },
    /// No answer: DNS, TLS, connection, timeout.
    Transport(String),
    /// An answer evalock cannot read.
    Protocol(String),
}

impl ApiError {
    /// 401/403: the token may not do this (a read-only token on a fork's pull request).
    /// A rate limit GitHub answers with 403 is not: the same token works again later.
    pub fn is_forbidden(&self) -> bool {
        matches!(
            self,
            ApiError::Status {
                status: 401 | 403,
                ..
            }
        ) && !self.is_rate_limited()
    }

    /// A primary or secondary rate limit still in force after the retries: 429, or 403
    /// with GitHub's message saying so (the only thing that tells it from a refusal).
    pub fn is_rate_limited(&self) -> bool {
        match self {
            ApiError::Status { status: 429, .. } => true,
            ApiError::Status {
                status: 403,
                message,
                ..
            } => message.to_ascii_lowercase().contains("rate limit"),
            _ => false,
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::Status {
                status,
                what,
                message,
            } => write!(formatter, "{what}: HTTP {status} {message}"),
            ApiError::Transport(message) => {
                write!(formatter, "cannot reach the GitHub API: {message}")
            }
            ApiError::Protocol(message) => formatter.write_str(message),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Patch,
    Delete,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

pub struct Client {
    agent: ureq::Agent,
    config: ClientConfig,
}

impl Client {
    pub fn new(config: ClientConfig) -> Client {
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(ureq::tls::RootCerts::PlatformVerifier)
            .build();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .tls_config(tls)
            .user_agent(concat!("evalock/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Client { agent, config }
    }

    /// A REST path (`/repos/o/r/...`) as a full URL.
    pub fn rest_url(&self, path: &str) -> String {
        format!("{}{path}", self.config.api_url.trim_end_matches('/'))
    }

    pub fn graphql_url(&self) -> &str {
        &self.config.graphql_url
    }

    /// Sends one request, retrying 5xx answers, secondary rate limits and lost
    /// connections with backoff. Returns any final answer, successful or not.
    pub fn send(
        &self,
        method: Method,
        url: &str,
        accept: &str,
        body: Option<&Value>,
    ) -> Result<ApiResponse, ApiError> {
        let mut attempt = 0;
        loop {
            let outcome = self.send_once(method, url, accept, body);
            let wait = match &outcome {
                Ok((response, retry_after)) => {
                    retry_delay(response, *retry_after, attempt, self.config.backoff_unit)
                }
                Err(_) => Some(backoff(attempt, self.config.backoff_unit)),
            };
            match wait {
                Some(delay) if attempt < MAX_RETRIES => {
                    std::thread::sleep(delay);
                    attempt += 1;
                }
                _ => return outcome.map(|(response, _)| response),
            }
        }
    }

    /// Like [`send`](Self::send), but an error status becomes an [`ApiError`].
    pub fn expect(
        &self,
        method: Method,
        url: &str,
        accept: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Result<ApiResponse, ApiError> {
        let response = self.send(method, url, accept, body)?;
        if response.is_success() {
            Ok(response)
        } else {
            Err(ApiError::Status {
                status: response.status,
                what: what.to_owned(),
                message: self.redact(&response.message()),
            })
        }
    }

    /// Every item of a paginated list, following `Link: <…>; rel="next"`.
    pub fn all_pages(&self, first_url: &str, what: &str) -> Result<Vec<Value>, ApiError> {
        let mut items = Vec::new();
        let mut next = Some(first_url.to_owned());
        let mut pages = 0;
        while let Some(url) = next {
            pages += 1;
            if pages > 1000 {
                return Err(ApiError::Protocol(format!(
                    "{what}: more than 1000 pages, giving up"
                )));
            }
            let response = self.expect(Method::Get, &url, JSON, None, what)?;
            match response.json()? {
                Value::Array(page) => items.extend(page),
                _ => return Err(ApiError::Protocol(format!("{what}: expected a list"))),
            }
            next = response.next_page;
        }
        Ok(items)
    }

    fn send_once(
        &self,
        method: Method,
        url: &str,
        accept: &str,
        body: Option<&Value>,
    ) -> Result<(ApiResponse, Option<u64>), ApiError> {
        let authorization = format!("Bearer {}", self.config.token);
        let result = match (method, body) {
            (Method::Get, _) => self
                .agent
                .get(url)
                .header("Accept", accept)
                .header("Authorization", &authorization)
                .header("X-GitHub-Api-Version", API_VERSION)
                .call(),
            (Method::Delete, _) => self
                .agent
                .delete(url)
                .header("Accept", accept)
                .header("Authorization", &authorization)
                .header("X-GitHub-Api-Version", API_VERSION)
                .call(),
            (Method::Post | Method::Patch, body) => {
                let payload = body
                    .map(Value::to_string)
                    .unwrap_or_else(|| "{}".to_owned());
                let builder = if method == Method::Post {
                    self.agent.post(url)
                } else {
                    self.agent.patch(url)
                };
                builder
                    .header("Accept", accept)
                    .header("Authorization", &authorization)
                    .header("X-GitHub-Api-Version", API_VERSION)
                    .content_type("application/json")
                    .send(payload.as_bytes())
            }
        };
        let mut response = result.map_err(|error| {
            ApiError::Transport(self.redact(&format!(
                "{} {}: {error}",
                method.as_str(),
                strip_query(url)
            )))
        })?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        };
        let next_page = header("link").as_deref().and_then(next_link);
        let retry_after = header("retry-after").and_then(|value| value.trim().parse::<u64>().ok());
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_string()
            .map_err(|error| {
                ApiError::Transport(self.redact(&format!(
                    "reading the answer to {} {}: {error}",
                    method.as_str(),
                    strip_query(url)
                )))
            })?;
        Ok((
            ApiResponse {
                status,
                body,
                next_page,
            },
            retry_after,
        ))
    }

    /// Removes the token from a message, whatever put it there.
    pub fn redact(&self, text: &str) -> String {
        redact(text, &self.config.token)
    }
}

pub const JSON: &str = "application/vnd.github+json";
pub const DIFF: &str = "application/vnd.github.v3.diff";
const API_VERSION: &str = "2022-11-28";

pub fn redact(text: &str, token: &str) -> String {
    if token.len() < 4 {
        return text.to_owned();
    }
    text.replace(token, "***")
}

fn strip_query(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// How long to wait before retrying this answer, if it is worth retrying: 5xx, 429, and
/// 403 secondary rate limits; `retry-after` wins over exponential backoff.
fn retry_delay(
    response: &ApiResponse,
    retry_after: Option<u64>,
    attempt: u32,
    unit: Duration,
) -> Option<Duration> {
    let secondary_limit = matches!(response.status, 403 | 429)
        && (retry_after.is_some()
            || response
                .body
                .to_ascii_lowercase()
                .contains("secondary rate limit"));
    if !(response.status >= 500 || response.status == 429 || secondary_limit) {
        return None;
    }
    match retry_after {
        Some(units) if units > MAX_WAIT_UNITS => None,
        Some(units) => Some(unit.saturating_mul(u32::try_from(units).unwrap_or(u32::MAX))),
        None => Some(backoff(attempt, unit)),
    }
}

fn backoff(attempt: u32, unit: Duration) -> Duration {
    unit.saturating_mul(1 << attempt.min(6))
}

/// The `rel="next"` URL of a `Link` header.
pub fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|param| param.trim().replace(' ', "") == "rel=\"next\"");
        is_next.then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_owned()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, body: &str) -> ApiResponse {
        ApiResponse {
            status,
            body: body.to_owned(),
            next_page: None,
        }
    }

    #[test]
    fn link_headers_give_the_next_page() {
        let header = r#"<https://api.github.com/repositories/1/pulls/2/comments?page=3>; rel="next", <https://api.github.com/repositories/1/pulls/2/comments?page=9>; rel="last""#;
        assert_eq!(
            next_link(header).as_deref(),
            Some("https://api.github.com/repositories/1/pulls/2/comments?page=3")
        );
        assert_eq!(next_link(r#"<https://x/?page=1>; rel="prev""#), None);
        assert_eq!(next_link("garbage"), None);
    }

    #[test]
    fn retries_server_errors_and_secondary_limits_but_not_refusals() {
        let unit = Duration::from_millis(10);
        assert_eq!(retry_delay(&response(502, ""), None, 0, unit), Some(unit));
        assert_eq!(
            retry_delay(&response(503, ""), None, 2, unit),
            Some(unit * 4)
        );
        assert_eq!(
            retry_delay(
                &response(403, "You have exceeded a secondary rate limit"),
                None,
                0,
                unit
            ),
            Some(unit)
        );
        assert_eq!(
            retry_delay(&response(403, "{}"), Some(3), 0, unit),
            Some(unit * 3)
        );
        assert_eq!(
            retry_delay(&response(429, ""), Some(1), 0, unit),
            Some(unit)
        );
        assert_eq!(
            retry_delay(
                &response(403, "Resource not accessible by integration"),
                None,
                0,
                unit
            ),
            None
        );
        assert_eq!(retry_delay(&response(422, ""), None, 0, unit), None);
        assert_eq!(
            retry_delay(&response(503, ""), Some(3600), 0, unit),
            None,
            "too long to wait"
        );
    }

    #[test]
    fn a_rate_limit_is_not_a_refused_token() {
        let status = |status: u16, message: &str| ApiError::Status {
            status,
            what: "create a review".into(),
            message: message.into(),
        };
        let secondary = status(
            403,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        );
        let primary = status(403, "API rate limit exceeded for installation ID 1.");
        let refused = status(403, "Resource not accessible by integration");
        for limited in [&secondary, &primary, &status(429, "")] {
            assert!(
                limited.is_rate_limited() && !limited.is_forbidden(),
                "{limited}"
            );
        }
        assert!(refused.is_forbidden() && !refused.is_rate_limited());
        assert!(status(401, "Bad credentials").is_forbidden());
    }

    #[test]
    fn messages_combine_github_message_and_errors() {
        let body = r#"{"message":"Unprocessable Entity","errors":["Pull request review thread line must be part of the diff"]}"#;
        assert_eq!(
            response(422, body).message(),
            "Unprocessable Entity (Pull request review thread line must be part of the diff)"
        );
        let body = r#"{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","message":"body is too long"}]}"#;
        assert_eq!(
            response(422, body).message(),
            "Validation Failed (body is too long)"
        );
    }

    #[test]
    fn the_token_is_redacted() {
        assert_eq!(
            redact("Bearer ghs_secret123 failed", "ghs_secret123"),
            "Bearer *** failed"
        );
        assert_eq!(redact("abc", ""), "abc");
    }
}
