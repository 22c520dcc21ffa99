//! The model: what evalock reads from a snapshot of a project.

pub mod baseline;
mod case_documents;
pub(crate) use case_documents::yaml_message_for_people;
mod case_lines;
mod case_numbers;
pub mod cases;
pub mod config;
pub mod graders;
pub mod lock;
pub mod project;
pub mod skill_lock;
mod strict_json;
mod suite;
pub use baseline::{BaselineContext, BaselineEntry, BaselineFile, BaselineState, SuiteBaseline};
pub use cases::{
    parse_case_file, parse_case_file_with, Case, CaseDetail, CaseProblem, CaseValue,
    ParsedCaseFile, ProblemKind, SharedText, CASE_WITHOUT_ID,
};
pub use config::{Config, SuiteConfig, CONFIG_FILE};
pub use graders::GraderModel;
pub use lock::{CaseEntries, CaseLock, GraderLock, Lock, SuiteLock, LOCK_FILE};
pub use project::{LoadOptions, Project};
pub use skill_lock::{FileLock, SkillLock, SourceKind, SourceLock};
pub(crate) use strict_json::duplicate_key_position;
pub use strict_json::StrictValue;
pub use suite::{
    locked_prompt_digest, suite_digest, PromptFile, SuiteCases, SuiteModel, UnmatchedGlob,
};
