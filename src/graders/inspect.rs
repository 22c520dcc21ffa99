//! `grader = "inspect-includes"` and `grader = "inspect-exact"`: an inspect_ai sample's
//! `target` (a string, or a list of them), graded in process as inspect's `includes()` and
//! `exact()` scorers grade it. Includes: a target appears in the completion, ignoring
//! case. Exact: the completion equals a target once both are normalized (case, punctuation
//! and runs of whitespace ignored). A sample without a usable `target` fails closed.

use super::Grade;
use serde_json::Value;

pub const INSPECT_INCLUDES_ID: &str = "inspect-includes";
pub const INSPECT_EXACT_ID: &str = "inspect-exact";
pub const INSPECT_GRADER_VERSION: &str = "1";

/// Which of inspect's scorers a suite names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scorer {
    Includes,
    Exact,
}

impl Scorer {
    /// The scorer a suite's `grader` names, if it names one of inspect's.
    pub fn of_id(id: &str) -> Option<Scorer> {
        match id {
            INSPECT_INCLUDES_ID => Some(Scorer::Includes),
            INSPECT_EXACT_ID => Some(Scorer::Exact),
            _ => None,
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Scorer::Includes => INSPECT_INCLUDES_ID,
            Scorer::Exact => INSPECT_EXACT_ID,
        }
    }

    /// The assertion key results record: `target includes`, `target exact`.
    pub fn key(self) -> &'static str {
        match self {
            Scorer::Includes => "target includes",
            Scorer::Exact => "target exact",
        }
    }
}

/// The verdict of `scorer` on `completion` against the sample's `target`.
pub fn grade(scorer: Scorer, target: Option<&Value>, completion: &str) -> Grade {
    let targets: Vec<&str> = match target {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if targets.is_empty() || targets.iter().any(|target| target.trim().is_empty()) {
        return Grade::from_reasons(vec![
            "no_target: the sample has no non-empty string `target` (or list of them)".to_owned(),
        ]);
    }
    let holds = match scorer {
        Scorer::Includes => {
            let completion = completion.to_lowercase();
            targets
                .iter()
                .any(|target| completion.contains(&target.to_lowercase()))
        }
        Scorer::Exact => {
            let completion = normalize(completion);
            targets.iter().any(|target| normalize(target) == completion)
        }
    };
    match holds {
        true => Grade::from_reasons(Vec::new()),
        false => Grade::from_reasons(vec![format!(
            "{}:{}",
            match scorer {
                Scorer::Includes => "target_missing",
                Scorer::Exact => "target_not_exact",
            },
            targets.join("|")
        )]),
    }
}

/// Lower case, punctuation dropped, whitespace runs as one space, trimmed.
fn normalize(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .flat_map(char::to_lowercase)
        .collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn includes_ignores_case_and_exact_ignores_punctuation_and_spacing() {
        let target = json!("Paris");
        assert!(grade(Scorer::Includes, Some(&target), "The capital is PARIS.").pass);
        assert!(!grade(Scorer::Includes, Some(&target), "It is Lyon.").pass);
        assert!(grade(Scorer::Exact, Some(&target), "  paris. ").pass);
        assert!(!grade(Scorer::Exact, Some(&target), "The capital is Paris.").pass);
        let either = json!(["yes", "y"]);
        assert!(grade(Scorer::Exact, Some(&either), "Y").pass);
        assert_eq!(
            grade(Scorer::Includes, Some(&target), "").reasons,
            ["target_missing:Paris"]
        );
        for bad in [json!(null), json!(""), json!([]), json!(3)] {
            let verdict = grade(Scorer::Includes, Some(&bad), "anything");
            assert!(
                !verdict.pass && verdict.reasons[0].starts_with("no_target"),
                "{bad}"
            );
        }
        assert!(!grade(Scorer::Exact, None, "x").pass);
    }
}
