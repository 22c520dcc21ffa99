//! The lock as the exact text `evalock lock` writes: sorted, commented, no timestamps; the
//! fast reader proves what it read by rendering it back here.

use super::toml_values::{push_decimal, write_toml_key, write_toml_string};
use super::{toml_key, toml_string, toml_string_array, Lock};
use crate::model::skill_lock::render_skills;
use std::fmt::Write;
use std::sync::Arc;

impl Lock {
    /// The lock as the exact text `evalock lock` writes: sorted, commented, no timestamps.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = self.render_into(&mut out);
        out
    }

    /// Writes the rendered lock piece by piece: [`Self::render_head_into`], the case
    /// entries, then the skills.
    pub fn render_into(&self, out: &mut impl Write) -> std::fmt::Result {
        self.render_head_into(out)?;
        self.render_cases_into(out)?;
        self.render_skills_into(out)
    }

    /// Everything before the case entries: the header, recipes, suites and graders.
    pub(in crate::model) fn render_head_into(&self, out: &mut impl Write) -> std::fmt::Result {
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
            let _ = writeln!(out, "\n[grader.{}]", toml_key(id));
            let _ = writeln!(out, "version = {}", toml_string(&grader.version));
            if let Some(kind) = grader.kind {
                let _ = writeln!(out, "kind = {}", toml_string(kind.as_str()));
            }
            if let Some(command) = &grader.command {
                let _ = writeln!(out, "command = {}", toml_string_array(command));
            }
            let _ = writeln!(out, "digest = {}", toml_string(&grader.digest.to_string()));
            if !grader.files.is_empty() {
                let _ = writeln!(out, "\n[grader.{}.files]", toml_key(id));
                for (path, digest) in &grader.files {
                    let _ = writeln!(
                        out,
                        "{} = {}",
                        toml_key(path),
                        toml_string(&digest.to_string())
                    );
                }
            }
        }
        Ok(())
    }

    /// The case entries, each after a blank line.
    fn render_cases_into(&self, out: &mut impl Write) -> std::fmt::Result {
        // 200,000 entries in a large lock: they are put together in one buffer, without
        // the formatting machinery, and written 32 KiB at a time.
        const BATCH: usize = 32 * 1024;
        let mut entries = String::with_capacity(BATCH + 1024);
        // Neighbouring entries share their file: its line is written once per run of them.
        let mut file_line: Option<(&Arc<str>, String)> = None;
        for (suite, cases) in &self.cases {
            let suite_key = toml_key(suite);
            for (id, case) in cases {
                entries.push_str("\n[case.");
                entries.push_str(&suite_key);
                entries.push('.');
                write_toml_key(&mut entries, id)?;
                entries.push_str("]\nversion = ");
                push_decimal(&mut entries, case.version);
                entries.push_str("\ndigest = \"");
                case.digest.write_text(&mut entries)?;
                entries.push('"');
                match &file_line {
                    Some((file, line)) if Arc::ptr_eq(file, &case.file) => entries.push_str(line),
                    _ => {
                        let mut line = String::from("\nfile = ");
                        write_toml_string(&mut line, &case.file)?;
                        line.push('\n');
                        entries.push_str(&line);
                        file_line = Some((&case.file, line));
                    }
                }
                if case.retired {
                    entries.push_str("retired = true\n");
                }
                if entries.len() >= BATCH {
                    out.write_str(&entries)?;
                    entries.clear();
                }
            }
        }
        out.write_str(&entries)
    }

    /// The skill tables, last in the lock.
    pub(in crate::model) fn render_skills_into(&self, out: &mut impl Write) -> std::fmt::Result {
        let mut skills = String::new();
        render_skills(&mut skills, &self.skills);
        out.write_str(&skills)
    }
}
