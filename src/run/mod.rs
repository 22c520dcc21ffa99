//! Running suites: the completer seam, grading, and comparison with baselines. I/O lives
//! here, at the edge; the logic it applies is in [`crate::graders`] and [`crate::baselines`].

pub mod assess;
pub mod compare;
pub mod completer;
pub mod completer_files;
pub mod contain;
pub mod diff;
pub mod envelope;
pub mod foreign;
pub mod noise;
pub mod process;
pub mod results;
pub mod shard;
pub mod strata;

use crate::graders::{command, Grade, Grader, GraderProgram};
use crate::project::config::Config;
use process::{run_process, ProcessPolicy};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// How completers and command graders of `suite` run: in `workdir`, with the suite's
/// timeout (else `policy.timeout_secs`), the output cap and the secrets to scrub.
pub fn process_policy(config: &Config, suite: &str, workdir: &Path) -> ProcessPolicy {
    let policy = &config.policy;
    let timeout_secs = config
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

/// Grades one completion of `case`, starting the grader's command when it has one. `Err`
/// is a grader error (an ERROR, never a score).
pub fn grade(
    grader: &Grader,
    case: &Value,
    completion: &str,
    policy: &ProcessPolicy,
) -> Result<Grade, String> {
    match &grader.program {
        GraderProgram::Builtin => Ok(crate::graders::builtin::grade(
            case.get("expect"),
            completion,
        )),
        GraderProgram::Promptfoo => Ok(crate::graders::promptfoo::grade(
            case.get("assert"),
            completion,
        )),
        GraderProgram::Inspect(scorer) => Ok(crate::graders::inspect::grade(
            *scorer,
            case.get("target"),
            completion,
        )),
        GraderProgram::Command(argv) => {
            let output = run_process(argv, &command::request(case, completion), policy)
                .map_err(|failure| format!("grader `{}` {failure}", grader.id))?;
            command::parse_verdict(&output.stdout)
                .map_err(|problem| format!("grader `{}`: {problem}", grader.id))
        }
    }
}
