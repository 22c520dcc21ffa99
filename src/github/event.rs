//! What GitHub Actions tells a step about the run: the event payload, the repository,
//! the API endpoints and where the step summary goes.

use crate::error::{Error, Result};
use serde_json::Value;
use std::path::PathBuf;

/// The pull request a run is about, from the event payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub owner: String,
    pub repo: String,
    pub number: u64,
    /// `pull_request.head.sha`: what the diff's RIGHT side shows. Never `GITHUB_SHA`,
    /// which on `pull_request` events is a merge commit no review comment can point at.
    pub head_sha: String,
    pub base_sha: String,
}

/// The Actions environment, read once.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    pub event_name: Option<String>,
    pub event_path: Option<PathBuf>,
    /// `owner/name`.
    pub repository: Option<String>,
    pub api_url: String,
    pub graphql_url: String,
    pub step_summary: Option<PathBuf>,
    pub token: Option<String>,
    /// Milliseconds per backoff unit (`EVALOCK_GITHUB_BACKOFF_MS`), default 1000.
    pub backoff_ms: u64,
    /// The head the pull request must have, when its payload came from another run.
    pub required_head: Option<String>,
}

impl Environment {
    /// Reads the variables Actions sets; the token from `token_env` (default `GITHUB_TOKEN`).
    pub fn from_env(token_env: &str) -> Environment {
        let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        let api_url = var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".to_owned());
        let graphql_url = var("GITHUB_GRAPHQL_URL").unwrap_or_else(|| graphql_url_for(&api_url));
        Environment {
            event_name: var("GITHUB_EVENT_NAME"),
            event_path: var("GITHUB_EVENT_PATH").map(PathBuf::from),
            repository: var("GITHUB_REPOSITORY"),
            api_url,
            graphql_url,
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            token: var(token_env),
            backoff_ms: var("EVALOCK_GITHUB_BACKOFF_MS")
                .and_then(|value| value.parse().ok())
                .unwrap_or(1000),
            required_head: None,
        }
    }

    /// The run posts about the pull request of `event`, a payload saved by the run that
    /// wrote the reports. Under `workflow_run`, the payload must name the head that run
    /// checked out (`workflow_run.head_sha`): a payload from an untrusted job could name
    /// any pull request of the repository.
    pub fn for_pull_request_event(mut self, event: &std::path::Path) -> Environment {
        let trusted_head = match self.event_name.as_deref() {
            Some("workflow_run") => Some(
                self.event_path
                    .as_ref()
                    .and_then(|path| std::fs::read_to_string(path).ok())
                    .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                    .and_then(|payload| {
                        payload
                            .pointer("/workflow_run/head_sha")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    }),
            ),
            _ => None,
        };
        self.event_name = Some("pull_request".to_owned());
        self.event_path = Some(event.to_path_buf());
        self.required_head = trusted_head.map(Option::unwrap_or_default);
        self
    }

    /// The pull request this run is about, or why there is none.
    pub fn pull_request(&self) -> Result<PullRequest, String> {
        let pull = self.pull_request_of_payload()?;
        match &self.required_head {
            Some(head) if *head != pull.head_sha => Err(format!(
                "the pull request payload names head {}, but the workflow run that wrote the reports ran on {}: refusing to post about another commit",
                pull.head_sha,
                if head.is_empty() { "an unknown commit" } else { head }
            )),
            _ => Ok(pull),
        }
    }

    fn pull_request_of_payload(&self) -> Result<PullRequest, String> {
        let event_name = self.event_name.as_deref().unwrap_or("");
        if !event_name.is_empty() && !matches!(event_name, "pull_request" | "pull_request_target") {
            return Err(format!(
                "the `{event_name}` event is not a pull request: nothing to review"
            ));
        }
        let path = self
            .event_path
            .as_ref()
            .ok_or("GITHUB_EVENT_PATH is not set: not running in GitHub Actions")?;
        let text = std::fs::read_to_string(path).map_err(|error| {
            format!("cannot read the event payload {}: {error}", path.display())
        })?;
        let payload: Value = serde_json::from_str(&text).map_err(|error| {
            let (line, column) = crate::text::json_error_position(text.as_bytes(), &error);
            format!("{}:{line}:{column}: {error}", path.display())
        })?;
        pull_request_from_payload(&payload, self.repository.as_deref())
    }
}

/// GitHub.com serves GraphQL at `/graphql` beside the REST root; GitHub Enterprise
/// Server at `/api/graphql` beside `/api/v3`.
pub fn graphql_url_for(api_url: &str) -> String {
    let root = api_url.trim_end_matches('/');
    match root.strip_suffix("/api/v3") {
        Some(host) => format!("{host}/api/graphql"),
        None => format!("{root}/graphql"),
    }
}

/// Reads a `pull_request` or `pull_request_target` payload. `GITHUB_REPOSITORY` wins
/// for owner and name when set (it is the base repository, where comments go).
pub fn pull_request_from_payload(
    payload: &Value,
    repository: Option<&str>,
) -> Result<PullRequest, String> {
    let pull = payload
        .get("pull_request")
        .ok_or("the event payload has no `pull_request`: not a pull request event")?;
    let text = |pointer: &str| {
        pull.pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let number = pull
        .get("number")
        .and_then(Value::as_u64)
        .ok_or("the event payload has no `pull_request.number`")?;
    let head_sha = text("/head/sha").ok_or("the event payload has no `pull_request.head.sha`")?;
    let base_sha = text("/base/sha").ok_or("the event payload has no `pull_request.base.sha`")?;
    let full_name = repository
        .map(str::to_owned)
        .or_else(|| text("/base/repo/full_name"))
        .ok_or(
            "neither GITHUB_REPOSITORY nor `pull_request.base.repo.full_name` names the repository",
        )?;
    let (owner, repo) = full_name
        .split_once('/')
        .filter(|(owner, repo)| !owner.is_empty() && !repo.is_empty() && !repo.contains('/'))
        .ok_or_else(|| format!("`{full_name}` is not `owner/name`"))?;
    if !is_full_sha(&head_sha) || !is_full_sha(&base_sha) {
        return Err("the event payload's head or base sha is not a 40-hex commit id".to_owned());
    }
    Ok(PullRequest {
        owner: owner.to_owned(),
        repo: repo.to_owned(),
        number,
        head_sha,
        base_sha,
    })
}

fn is_full_sha(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// Appends Markdown to the step summary file, keeping this step's part under GitHub's
/// 1 MiB limit.
pub fn append_step_summary(path: &std::path::Path, markdown: &str) -> Result<()> {
    use std::io::Write;
    const LIMIT: usize = 1024 * 1024 - 1024;
    let text = if markdown.len() > LIMIT {
        let mut cut = LIMIT;
        while !markdown.is_char_boundary(cut) {
            cut -= 1;
        }
        format!(
            "{}\n\n_(cut to fit the step summary limit)_\n",
            &markdown[..cut]
        )
    } else {
        markdown.to_owned()
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|error| Error::io(path.display().to_string(), error))?;
    file.write_all(text.as_bytes())
        .map_err(|error| Error::io(path.display().to_string(), error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload() -> Value {
        json!({
            "action": "opened",
            "pull_request": {
                "number": 7,
                "head": {"sha": "a".repeat(40)},
                "base": {"sha": "b".repeat(40), "repo": {"full_name": "octo/evals"}}
            }
        })
    }

    #[test]
    fn reads_the_pull_request_from_the_payload() {
        let pull = pull_request_from_payload(&payload(), None).expect("pull request");
        assert_eq!(
            (pull.owner.as_str(), pull.repo.as_str(), pull.number),
            ("octo", "evals", 7)
        );
        assert_eq!(pull.head_sha, "a".repeat(40));
        let pull = pull_request_from_payload(&payload(), Some("other/repo")).expect("pull request");
        assert_eq!((pull.owner.as_str(), pull.repo.as_str()), ("other", "repo"));
    }

    #[test]
    fn explains_what_is_missing() {
        assert!(pull_request_from_payload(&json!({"ref": "x"}), None)
            .unwrap_err()
            .contains("not a pull request"));
        let mut no_head = payload();
        no_head["pull_request"]["head"] = json!({});
        assert!(pull_request_from_payload(&no_head, None)
            .unwrap_err()
            .contains("head.sha"));
        assert!(pull_request_from_payload(&payload(), Some("noslash"))
            .unwrap_err()
            .contains("owner/name"));
        let mut short = payload();
        short["pull_request"]["head"]["sha"] = json!("abc");
        assert!(pull_request_from_payload(&short, None).is_err());
    }

    #[test]
    fn pull_request_target_events_are_read_and_others_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("event.json");
        std::fs::write(&path, payload().to_string()).expect("write payload");
        let environment = |name: &str| Environment {
            event_name: Some(name.to_owned()),
            event_path: Some(path.clone()),
            ..Environment::default()
        };
        assert_eq!(
            environment("pull_request_target")
                .pull_request()
                .expect("pull")
                .number,
            7
        );
        assert!(environment("push")
            .pull_request()
            .unwrap_err()
            .contains("`push` event"));
        std::fs::write(&path, "{\n  oops").expect("write payload");
        let error = environment("pull_request").pull_request().unwrap_err();
        assert!(error.contains("event.json:2:"), "{error}");
    }

    #[test]
    fn graphql_lives_beside_the_rest_root() {
        assert_eq!(
            graphql_url_for("https://api.github.com"),
            "https://api.github.com/graphql"
        );
        assert_eq!(
            graphql_url_for("https://ghe.example.com/api/v3/"),
            "https://ghe.example.com/api/graphql"
        );
    }

    #[test]
    fn the_step_summary_is_appended_and_capped() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("summary.md");
        append_step_summary(&path, "one\n").expect("append");
        append_step_summary(&path, &"é".repeat(600_000)).expect("append");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("one\n"));
        assert!(text.len() < 1024 * 1024 + 100);
        assert!(text.ends_with("_(cut to fit the step summary limit)_\n"));
    }
}
