//! Credentials written into a configuration (EL604). A value is a credential when it has
//! the shape of a well-known token, or (for environment values and headers) when it is one
//! long word of mixed letters and digits that is not a reference to a variable. Such a
//! value is never printed nor locked: the lock and every message write a digest instead.

use crate::digest::sha256_hex;
use regex::Regex;
use std::sync::LazyLock;

/// Token shapes of well-known services, anywhere in a value.
static KNOWN_TOKENS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:\bgh[pousr]_[A-Za-z0-9]{20,}",
        r"|\bgithub_pat_[A-Za-z0-9_]{20,}",
        r"|\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}",
        r"|\bxox[abprs]-[A-Za-z0-9-]{10,}",
        r"|\bAKIA[0-9A-Z]{16}\b",
        r"|\bglpat-[A-Za-z0-9_-]{20,}",
        r"|\bAIza[0-9A-Za-z_-]{35}",
        r"|\bnpm_[A-Za-z0-9]{36}",
        r"|\bhf_[A-Za-z0-9]{30,}",
        r"|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        r"|://[^/\s:@]+:[^/\s@]{6,}@",
        r"|[?&](?i:api[_-]?key|access[_-]?token|token|secret|password|auth)=[^&\s$%{]{8,})"
    ))
    .ok()
});

/// A reference that the client replaces with a variable's value: `${VAR}`, `${env:VAR}`,
/// `${input:token}`, `$VAR`, `%VAR%`, `{{VAR}}`.
static REFERENCE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%|\{\{[^}]*\}\}").ok()
});

/// Whether an argument or URL holds a credential of a well-known shape.
pub fn holds_token(value: &str) -> bool {
    KNOWN_TOKENS
        .as_ref()
        .is_some_and(|regex| regex.is_match(value))
}

/// Whether an environment value or header holds a credential: a well-known shape, or one
/// long word (after `Bearer `/`token `) of mixed character classes that references no
/// variable.
pub fn is_credential(value: &str) -> bool {
    if holds_token(value) {
        return true;
    }
    if REFERENCE
        .as_ref()
        .is_some_and(|regex| regex.is_match(value))
    {
        return false;
    }
    let word = value
        .trim()
        .trim_start_matches("Bearer ")
        .trim_start_matches("bearer ")
        .trim_start_matches("token ")
        .trim_start_matches("Basic ");
    let classes = [
        word.bytes().any(|byte| byte.is_ascii_lowercase()),
        word.bytes().any(|byte| byte.is_ascii_uppercase()),
        word.bytes().any(|byte| byte.is_ascii_digit()),
    ];
    word.len() >= 24
        && word
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-_+/=.".contains(&byte))
        && classes.iter().filter(|class| **class).count() == 3
}

/// The value as messages and the lock write it: itself, or a digest when it holds a
/// credential.
pub fn redact(value: &str) -> String {
    match holds_token(value) {
        true => format!("<secret sha256:{}>", &sha256_hex(value.as_bytes())[..16]),
        false => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_told_from_references_and_placeholders() {
        for token in [
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "sk-ant-api03-abcdefghijklmnop",
            "Bearer Zx9kQ2mN7pL4rT8vW1yB3cD6",
            "aB3dE5gH7jK9mN1pQ3sT5vX7zB",
        ] {
            assert!(is_credential(token), "{token}");
        }
        for value in [
            "${GITHUB_TOKEN}",
            "Bearer ${input:token}",
            "$API_KEY",
            "your-api-key-here",
            "production",
            "https://api.example.com/v1",
        ] {
            assert!(!is_credential(value), "{value}");
        }
        assert!(holds_token(
            "https://mcp.example.com/sse?api_key=0123456789abcdef"
        ));
        assert!(!holds_token("https://mcp.example.com/sse?api_key=${KEY}"));
        assert!(redact("--token=ghp_abcdefghijklmnopqrstuvwxyz0123456789")
            .starts_with("<secret sha256:"));
        assert_eq!(redact("-y"), "-y");
    }
}
