//! The agentskills specification's constraints on names and descriptions, semver, and the
//! vocabulary of declared permissions (`allowed-tools`, skill.json `permissions`).

use regex::Regex;
use std::sync::LazyLock;

pub const MAX_NAME_CHARS: usize = 64;
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// Why a skill name breaks the specification, or `None` when it is valid: 1-64 lowercase
/// letters, digits and single hyphens, not at either end.
pub fn name_problem(name: &str) -> Option<String> {
    let length = name.chars().count();
    if length == 0 {
        return Some("`name` is empty".into());
    }
    if length > MAX_NAME_CHARS {
        return Some(format!(
            "name `{name}` is {length} characters long; the limit is {MAX_NAME_CHARS}"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(*c == '-' || is_lowercase_alphanumeric(*c)))
    {
        return Some(format!(
            "name `{name}` contains {bad:?}; use only lowercase letters, digits and hyphens"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Some(format!("name `{name}` must not start or end with a hyphen"));
    }
    if name.contains("--") {
        return Some(format!(
            "name `{name}` must not contain consecutive hyphens"
        ));
    }
    None
}

/// Letters count when lowercasing leaves them unchanged (scripts without case included),
/// as the reference validator accepts them.
fn is_lowercase_alphanumeric(character: char) -> bool {
    character.is_alphanumeric() && character.to_lowercase().eq(std::iter::once(character))
}

/// Why a description breaks the specification, or `None`.
pub fn description_problem(description: &str) -> Option<String> {
    let length = description.chars().count();
    if description.trim().is_empty() {
        return Some("`description` is empty; say what the skill does and when to use it".into());
    }
    if length > MAX_DESCRIPTION_CHARS {
        return Some(format!(
            "`description` is {length} characters long; the limit is {MAX_DESCRIPTION_CHARS}"
        ));
    }
    None
}

static SEMVER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    // semver.org's recommended expression (numeric identifiers without leading zeros).
    Regex::new(
        r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
    )
    .ok()
});

/// `MAJOR.MINOR.PATCH`, with optional pre-release and build parts (semver 2.0.0).
pub fn is_semver(version: &str) -> bool {
    SEMVER.as_ref().is_some_and(|regex| regex.is_match(version))
}

/// A source commit that pins something: 40 lowercase hex digits, not a placeholder of zeros.
pub fn is_real_commit(commit: &str) -> bool {
    commit.len() == 40
        && commit
            .bytes()
            .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
        && commit.bytes().any(|byte| byte != b'0')
}

/// Splits an `allowed-tools` string into tools: whitespace or commas separate them, except
/// inside parentheses (`Bash(git log:*)` is one tool).
pub fn split_tools(text: &str) -> Vec<String> {
    let mut tools = Vec::new();
    let mut current = String::new();
    let mut depth = 0_usize;
    for character in text.chars() {
        match character {
            '(' => {
                depth += 1;
                current.push(character);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(character);
            }
            c if depth == 0 && (c.is_whitespace() || c == ',') => {
                if !current.is_empty() {
                    tools.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        tools.push(current);
    }
    tools
}

/// Whether `permission` is allowed by one allowlist entry, where `*` matches any run of
/// characters and everything else matches itself.
pub fn permission_matches(allowed: &str, permission: &str) -> bool {
    let pattern: Vec<char> = allowed.chars().collect();
    let text: Vec<char> = permission.chars().collect();
    // Classic wildcard matching with one backtrack point: linear in practice.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// Whether any allowlist entry allows `permission`.
pub fn is_allowed(allowlist: &[String], permission: &str) -> bool {
    allowlist
        .iter()
        .any(|allowed| permission_matches(allowed, permission))
}

/// A Python-style list, as the seed article prints them: `['a', 'b']`.
pub fn python_list<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|item| python_repr(item.as_ref()))
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// A Python-style string literal: single quotes unless the text holds one and no double quote.
pub fn python_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for character in text.chars() {
        match character {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_specification() {
        for good in [
            "pdf-processing",
            "a",
            "data-analysis-2",
            "ünïcode-ok",
            &"a".repeat(64),
        ] {
            assert_eq!(name_problem(good), None, "{good}");
        }
        for bad in [
            "",
            "PDF-Processing",
            "-pdf",
            "pdf-",
            "pdf--processing",
            "pdf_processing",
            "has space",
            &"a".repeat(65),
        ] {
            assert!(name_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn descriptions_are_bounded() {
        assert_eq!(
            description_problem("Extracts text from PDFs. Use when handling PDFs."),
            None
        );
        assert!(description_problem("  ").is_some());
        assert!(description_problem(&"x".repeat(1025)).is_some());
        assert_eq!(
            description_problem(&"é".repeat(1024)),
            None,
            "the limit counts characters, not bytes"
        );
    }

    #[test]
    fn semver_is_strict() {
        for good in [
            "1.0.0",
            "0.1.2",
            "10.20.30",
            "1.0.0-alpha.1",
            "1.0.0+build.5",
            "1.0.0-rc.1+sha.abc",
        ] {
            assert!(is_semver(good), "{good}");
        }
        for bad in [
            "1.0", "1", "v1.0.0", "01.0.0", "1.0.0-", "latest", "^1.2.0", "1.0.0 ",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn commits_must_be_real() {
        assert!(is_real_commit(&"a1".repeat(20)));
        assert!(!is_real_commit(&"0".repeat(40)));
        assert!(!is_real_commit(&"A1".repeat(20)));
        assert!(!is_real_commit("abc123"));
    }

    #[test]
    fn tools_split_outside_parentheses() {
        assert_eq!(
            split_tools("Bash(git:*) Bash(jq:*) Read"),
            ["Bash(git:*)", "Bash(jq:*)", "Read"]
        );
        assert_eq!(
            split_tools("Read, Grep,Glob  Bash(git log:*)"),
            ["Read", "Grep", "Glob", "Bash(git log:*)"]
        );
        assert!(split_tools("  ").is_empty());
    }

    #[test]
    fn wildcards_match_runs_of_characters() {
        assert!(permission_matches("Bash(git:*)", "Bash(git:status)"));
        assert!(permission_matches("Bash(git:*)", "Bash(git:*)"));
        assert!(!permission_matches("Bash(git:*)", "Bash(*)"));
        assert!(!permission_matches("Bash(git:*)", "Bash(rm:*)"));
        assert!(permission_matches("fs:read:*", "fs:read:workspace"));
        assert!(permission_matches("net:none", "net:none"));
        assert!(!permission_matches("net:none", "net:any"));
        assert!(permission_matches("*", "anything"));
        // A star retried after a partial match of what follows it.
        assert!(permission_matches("Bash(*:status)", "Bash(git:log:status)"));
        assert!(permission_matches("a*bc*d", "abxbcbcxd"));
        assert!(permission_matches("*:*:x", "a:b:c:x"));
        assert!(!permission_matches("Bash(*:status)", "Bash(git:log:stat)"));
        assert!(!permission_matches("a*bc*d", "abxbcbcx"));
        assert!(!permission_matches("*x", "xa"));
        assert!(permission_matches("a*b*c", "aXXbYYc"));
        assert!(!permission_matches("a*b*c", "aXXbYY"));
    }

    #[test]
    fn python_reprs_match_the_article() {
        assert_eq!(
            python_list(&["scripts/collect.sh"]),
            "['scripts/collect.sh']"
        );
        assert_eq!(python_list::<&str>(&[]), "[]");
        assert_eq!(python_repr("1.0"), "'1.0'");
        assert_eq!(python_repr("it's"), "\"it's\"");
        // Both quotes: single ones, the inner one escaped, as Python writes it.
        assert_eq!(python_repr("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(python_repr("a\\b\n\t"), "'a\\\\b\\n\\t'");
    }
}
