//! The lock as the exact text `evalock lock` writes: sorted, commented, no timestamps.

use super::{toml_key, toml_string, toml_string_array, Lock};
use crate::project::lock::skills::render_skills;
use std::fmt::Write;

impl Lock {
    /// The lock as the exact text `evalock lock` writes: sorted, commented, no timestamps.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) -> std::fmt::Result {
        out.write_str("# evalock.lock: written by `evalock lock`. Review it in pull requests; never edit it by hand.\n")?;
        writeln!(out, "lock_version = {}", self.lock_version)?;
        out.write_str("\n[recipes]\n")?;
        writeln!(out, "case = {}", toml_string(&self.recipes.case))?;
        writeln!(out, "prompt = {}", toml_string(&self.recipes.prompt))?;
        writeln!(out, "tree = {}", toml_string(&self.recipes.tree))?;
        writeln!(out, "suite = {}", toml_string(&self.recipes.suite))?;
        for (name, suite) in &self.suites {
            writeln!(out, "\n[suite.{}]", toml_key(name))?;
            writeln!(out, "digest = {}", toml_string(&suite.digest.to_string()))?;
            if let Some(prompt) = &suite.prompt {
                writeln!(out, "prompt = {}", toml_string(&prompt.to_string()))?;
            }
            if !suite.prompts.is_empty() {
                writeln!(out, "\n[suite.{}.prompts]", toml_key(name))?;
                for (path, digest) in &suite.prompts {
                    writeln!(
                        out,
                        "{} = {}",
                        toml_key(path),
                        toml_string(&digest.to_string())
                    )?;
                }
            }
        }
        for (id, grader) in &self.graders {
            writeln!(out, "\n[grader.{}]", toml_key(id))?;
            writeln!(out, "version = {}", toml_string(&grader.version))?;
            if let Some(kind) = grader.kind {
                writeln!(out, "kind = {}", toml_string(kind.as_str()))?;
            }
            if let Some(command) = &grader.command {
                writeln!(out, "command = {}", toml_string_array(command))?;
            }
            writeln!(out, "digest = {}", toml_string(&grader.digest.to_string()))?;
            if !grader.files.is_empty() {
                writeln!(out, "\n[grader.{}.files]", toml_key(id))?;
                for (path, digest) in &grader.files {
                    writeln!(
                        out,
                        "{} = {}",
                        toml_key(path),
                        toml_string(&digest.to_string())
                    )?;
                }
            }
            if let Some(calibration) = &grader.calibration {
                writeln!(out, "\n[grader.{}.calibration]", toml_key(id))?;
                writeln!(out, "labels = \"{}\"", calibration.labels)?;
                writeln!(out, "version = {}", toml_string(&calibration.version))?;
                writeln!(
                    out,
                    "tp = {}\nfp = {}\ntn = {}\nfn = {}",
                    calibration.tp, calibration.fp, calibration.tn, calibration.fn_
                )?;
            }
        }
        for (suite, cases) in &self.cases {
            let suite_key = toml_key(suite);
            for (id, case) in cases {
                writeln!(out, "\n[case.{suite_key}.{}]", toml_key(id))?;
                writeln!(out, "version = {}", case.version)?;
                writeln!(out, "digest = \"{}\"", case.digest)?;
                writeln!(out, "file = {}", toml_string(&case.file))?;
                if case.retired {
                    out.write_str("retired = true\n")?;
                }
            }
        }
        render_skills(out, &self.skills);
        crate::project::lock::mcp::render_mcp(out, &self.mcp);
        Ok(())
    }
}
