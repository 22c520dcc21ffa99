//! The checks TOML cannot make on a lock: names and ids no suite or case can have, and
//! paths that would leave the project, each reported at its line.

use super::{toml_key, toml_string, Lock};
use crate::error::{Error, Result};
use crate::text::line_of_first;
use std::sync::Arc;

impl Lock {
    /// What TOML cannot refuse for us: paths that leave the project and ids no case can have.
    pub(super) fn validate(&self, path: &str, text: &str) -> Result<()> {
        let regenerate = "; run `evalock lock` to regenerate the lock from the cases";
        for suite in self.suites.keys().chain(self.cases.keys()) {
            if !crate::project::config::is_valid_name(suite) {
                let line = line_of_first(
                    text,
                    &[
                        &format!("[suite.{}", toml_key(suite)),
                        &format!("[case.{}", toml_key(suite)),
                    ],
                );
                return Err(Error::malformed(
                    format!("{path}:{line}"),
                    format!("suite name {suite:?} is not a valid suite name{regenerate}"),
                ));
            }
        }
        for (suite, cases) in &self.cases {
            // Neighbouring entries share their file (one allocation): checked once.
            let mut checked_file: Option<&Arc<str>> = None;
            for (id, case) in cases {
                let header = || format!("[case.{}.{}]", toml_key(suite), toml_key(id));
                // Control characters: C0, DEL and C1; an ASCII id needs no decoding.
                let control = match id.is_ascii() {
                    true => id.bytes().any(|byte| byte < 0x20 || byte == 0x7f),
                    false => id.chars().any(char::is_control),
                };
                if control {
                    let line = line_of_first(text, &[&header(), &toml_string(id)]);
                    return Err(Error::malformed(
                        format!("{path}:{line}"),
                        format!("case id {id:?} in suite `{suite}` contains control characters (newline, NUL, ...){regenerate}"),
                    ));
                }
                if checked_file.is_some_and(|file| Arc::ptr_eq(file, &case.file)) {
                    continue;
                }
                if let Err(error) = crate::digest::validate_relative_path(&case.file) {
                    let line = line_of_first(
                        text,
                        &[&format!("file = {}", toml_string(&case.file)), &header()],
                    );
                    return Err(Error::malformed(
                        format!("{path}:{line}"),
                        format!("case `{suite}/{id}`: {error}{regenerate}"),
                    ));
                }
                checked_file = Some(&case.file);
            }
        }
        for grader in self.graders.values() {
            for file in grader.files.keys() {
                if let Err(error) = crate::digest::validate_relative_path(file) {
                    let line = line_of_first(text, &[&toml_key(file), file]);
                    return Err(Error::malformed(
                        format!("{path}:{line}"),
                        format!("grader source entry: {error}{regenerate}"),
                    ));
                }
            }
        }
        for suite in self.suites.values() {
            for prompt in suite.prompts.keys() {
                if let Err(error) = crate::digest::validate_relative_path(prompt) {
                    let line = line_of_first(text, &[&toml_key(prompt), prompt]);
                    return Err(Error::malformed(
                        format!("{path}:{line}"),
                        format!("prompt entry: {error}{regenerate}"),
                    ));
                }
            }
        }
        Ok(())
    }
}
