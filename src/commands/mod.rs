//! What each CLI command does, as library calls that return data. The binary parses
//! arguments, calls these, prints and exits.

pub mod accept;
pub mod calibrate;
pub mod calibration_pins;
pub mod changelog;
pub mod check;
pub mod compare;
pub mod debt;
pub mod destination;
pub mod github;
pub mod hook;
pub mod init;
pub mod lock;
pub mod mcp;
pub mod memo;
pub mod merge;
pub mod project;
pub mod review;
pub mod run;
pub mod staged;
pub mod suggest;
pub mod trend;

/// `run` or `accept` in a project without suites: a usage error (nothing ran, so no gate
/// may pass on it) that says how to add one.
fn no_suite_to(action: &str) -> crate::error::Error {
    crate::error::Error::Usage(format!(
        "{} defines no [[suite]], so there is nothing to {action}: add one, such as `[[suite]]` with `name = \"support\"`, `cases = [\"evals/support.jsonl\"]` and `completer = [\"python3\", \"tools/complete.py\"]`, then run `evalock lock`",
        crate::project::config::CONFIG_FILE
    ))
}

pub use crate::skills::audit::{audit as skills_audit, AuditOutcome, AuditStatus};
pub use accept::{accept, AcceptOptions, AcceptOutcome, AcceptedSuite};
pub use check::{check, check_explained, CheckOptions, Checked, Shortcut};
pub use debt::{debt, DebtOutcome};
pub use destination::refuse_project_file;
pub use init::{init, InitOutcome};
pub use lock::{lock, LockOutcome};
pub use mcp::mcp_audit;
pub use merge::{merge, MergeOptions};
pub use review::{review, ReviewItem};
pub use run::{run, Progress, RunOptions, RunOutcome};
