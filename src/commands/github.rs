//! `evalock github --from FILE…`: the saved reports posted to the pull request this run is
//! about. The project's place in the repository and, when GitHub's diff is too large, the
//! local one come from git here; the GitHub adapter itself reads no git.

use crate::github::{publish as publish_report, Environment, Mode, Outcome, PublishOptions};
use crate::report::Report;
use crate::source::GitRepo;
use std::path::Path;

pub fn github(
    report: &Report,
    project_root: &Path,
    mode: Mode,
    environment: Environment,
    token_env: &str,
) -> Outcome {
    let repo = GitRepo::discover(project_root).ok();
    let prefix = repo
        .as_ref()
        .map(|repo| repo.prefix().to_owned())
        .unwrap_or_default();
    let local_diff = |base: &str, head: &str| -> Result<String, String> {
        let repo = repo.as_ref().ok_or("not in a git repository")?;
        repo.pull_request_diff(base, head)
            .map_err(|error| error.to_string())
    };
    let options = PublishOptions {
        prefix,
        local_diff: Some(&local_diff),
        mode,
        environment,
        token_env: token_env.to_owned(),
    };
    publish_report(report, &options)
}
