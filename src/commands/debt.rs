//! `evalock debt`: the findings adopted in `[debt]`, by rule and subject, and the entries
//! that no longer cover one (fixed, or their file changed: then the finding is back).

use crate::commands::check::families::check_project;
use crate::commands::lock::file_digest;
use crate::commands::project::Project;
use crate::error::Result;
use crate::finding::Finding;
use crate::gate::Gated;
use crate::source::WorktreeSource;
use std::path::Path;

/// What `[debt]` covers in the working tree.
#[derive(Debug)]
pub struct DebtOutcome {
    /// How many entries `[debt]` holds.
    pub entries: usize,
    pub gated: Gated,
    /// Findings of adopted rules on adopted files that `[debt]` does not cover: their file
    /// changed since they were adopted, so they are judged in full again.
    pub returned: Vec<Finding>,
}

pub fn debt(project_root: &Path) -> Result<DebtOutcome> {
    let source = WorktreeSource::new(project_root);
    let options = crate::commands::project::LoadOptions {
        detail: crate::cases::CaseDetail::Summary,
        find_unlisted: true,
        ..Default::default()
    };
    let project = Project::load_required(&source, &options)?;
    let mut findings = check_project(&project, None);
    let gated = crate::gate::apply(&mut findings, &project.config, None, &[], &|path| {
        file_digest(&source, path)
    });
    let returned = findings
        .into_iter()
        .filter(|finding| {
            let path = finding
                .location
                .as_ref()
                .map(|location| location.path.as_str());
            gated.stale.iter().any(|entry| {
                entry.rule_id() == Some(finding.rule) && Some(entry.path.as_str()) == path
            })
        })
        .collect();
    Ok(DebtOutcome {
        entries: project.config.debt.findings.len(),
        gated,
        returned,
    })
}
