//! evalock keeps LLM evaluation assets honest in git: it freezes golden cases, prompts,
//! skills, tool servers, graders and last-good completions in `evalock.lock`, and refuses
//! drift.
//!
//! Data flows one way: [`source`] (working tree, index, revision) -> [`project`] (the
//! configuration and the lock) -> the concerns ([`cases`], [`skills`], [`graders`],
//! [`baselines`], [`run`], [`mcp`]), each with rules that return [`finding::Finding`]s ->
//! [`report`] and [`github`]. The [`commands`] module wires them together for the binary;
//! the library never prints and never exits.

#![forbid(unsafe_code)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod digest;
pub mod error;
pub mod finding;
pub mod rules;
pub mod text;

pub mod source;

pub mod project;

pub mod baselines;
pub mod cases;
pub mod graders;
pub mod mcp;
pub mod run;
pub mod skills;

pub mod gate;

pub mod github;
pub mod report;

pub mod commands;

pub use error::{Error, Result};
pub use finding::{Finding, Location, Subject, Verdict};
pub use rules::Severity;
pub use rules::{Rule, RuleId, RULES};

/// CI is detected as insta does: `CI` set and not `false` (in any case), `0` or empty.
/// A value that is not UTF-8 is set and none of those, so it is CI.
pub fn is_ci() -> bool {
    match std::env::var_os("CI") {
        Some(value) => !(value.is_empty() || value == "0" || value.eq_ignore_ascii_case("false")),
        None => false,
    }
}
