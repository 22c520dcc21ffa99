//! Running suites: the completer seam, grading, and comparison with baselines. I/O lives
//! here, at the edge; the logic it applies is in [`crate::graders`] and [`crate::commands::check::families`].

pub mod assess;
pub mod completer;
pub mod completer_files;
pub mod contain;
pub mod diff;
pub mod process;
pub mod results;
pub mod shard;

use crate::commands::project::Project;
use process::ProcessPolicy;
use std::path::Path;
use std::time::Duration;

/// How completers and command graders of `suite` run: in `workdir`, with the suite's
/// timeout (else `policy.timeout_secs`), the output cap and the secrets to scrub.
pub fn process_policy(project: &Project, suite: &str, workdir: &Path) -> ProcessPolicy {
    let policy = &project.config.policy;
    let timeout_secs = project
        .config
        .suite(suite)
        .and_then(|config| config.timeout_secs)
        .unwrap_or(policy.timeout_secs);
    ProcessPolicy {
        workdir: workdir.to_path_buf(),
        timeout: Duration::from_secs(timeout_secs.max(1)),
        max_output_bytes: policy.max_output_bytes,
        secrets: policy.secrets.clone(),
    }
}
