//! What each CLI command does, as library calls that return data. The binary parses
//! arguments, calls these, prints and exits.

pub mod accept;
pub mod check;
pub mod destination;
pub mod hook;
pub mod init;
pub mod lock;
pub mod merge;
pub mod review;
pub mod run;
pub mod skills_audit;
pub mod staged;

pub use accept::{accept, AcceptOptions, AcceptOutcome, AcceptedSuite};
pub use check::{check, CheckOptions};
pub use destination::refuse_project_file;
pub use init::{init, InitOutcome};
pub use lock::{lock, LockOutcome};
pub use merge::{merge, MergeOptions};
pub use review::{review, ReviewItem};
pub use run::{run, Progress, RunOptions, RunOutcome};
pub use skills_audit::{audit as skills_audit, AuditOutcome, AuditStatus};
