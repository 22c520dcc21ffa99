//! Completion normalizers, named and versioned. A baseline entry records the normalizer
//! it was hashed with, so a normalizer's output must never change: new behaviour gets a
//! new name. Every normalizer is idempotent: `n(n(x)) == n(x)`.

use crate::digest::{bytes_digest, canonical_json, Digest};
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Normalizer {
    /// The completion exactly as produced.
    #[serde(rename = "exact")]
    Exact,
    /// Runs of whitespace collapse to one space; leading and trailing whitespace go.
    #[serde(rename = "ws-v1")]
    WhitespaceV1,
    /// Text that parses as JSON is rewritten in RFC 8785 form (sorted keys, no
    /// insignificant whitespace); text that does not parse is kept exactly.
    #[serde(rename = "json-v1")]
    JsonV1,
}

impl Normalizer {
    pub fn parse(name: &str) -> Option<Normalizer> {
        match name {
            "exact" => Some(Normalizer::Exact),
            "ws-v1" => Some(Normalizer::WhitespaceV1),
            "json-v1" => Some(Normalizer::JsonV1),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Normalizer::Exact => "exact",
            Normalizer::WhitespaceV1 => "ws-v1",
            Normalizer::JsonV1 => "json-v1",
        }
    }

    pub fn normalize(self, completion: &str) -> String {
        match self {
            Normalizer::Exact => completion.to_owned(),
            Normalizer::WhitespaceV1 => collapse_whitespace(completion),
            Normalizer::JsonV1 => {
                canonical_json_text(completion).unwrap_or_else(|| completion.to_owned())
            }
        }
    }
}

impl fmt::Display for Normalizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The digest a baseline stores: sha256 of the normalized completion's UTF-8 bytes.
pub fn completion_digest(normalized: &str) -> Digest {
    bytes_digest(normalized.as_bytes())
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// RFC 8785 text of a JSON document, or `None` when the text is not one. Duplicate keys
/// and non-finite numbers are not JSON evalock can hash honestly, so they do not parse.
fn canonical_json_text(text: &str) -> Option<String> {
    let crate::cases::strict_json::StrictValue(value) = serde_json::from_str(text.trim()).ok()?;
    canonical_json(&value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*): property tests without a new
    /// dependency, and every failure reproduces from its seed.
    struct Generator(u64);

    impl Generator {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, bound: usize) -> usize {
            (self.next() % bound as u64) as usize
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }

        /// Text built from fragments that stress each normalizer: whitespace of every
        /// kind, JSON punctuation, escapes, non-ASCII.
        fn text(&mut self) -> String {
            const FRAGMENTS: &[&str] = &[
                " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{2003}", "a", "Zz", "é", "日本", "😀",
                "{", "}", "[", "]", ":", ",", "\"", "\\", "\\n", "\\u00e9", "1", "-0", "1e3",
                "0.10", "true", "null", "\"k\"", "\"v\\t\"",
            ];
            (0..self.below(24)).map(|_| self.pick(FRAGMENTS)).collect()
        }

        /// A JSON value, written with random insignificant whitespace and key order.
        fn json(&mut self, depth: u32) -> String {
            let space =
                |generator: &mut Generator| generator.pick(&["", " ", "\n  ", "\t"]).to_owned();
            match if depth > 2 {
                self.below(4)
            } else {
                self.below(6)
            } {
                0 => self
                    .pick(&["0", "-1", "3.50", "1E2", "12345678901234567890", "2e-3"])
                    .to_owned(),
                1 => self.pick(&["true", "false", "null"]).to_owned(),
                2 | 3 => serde_json::to_string(&self.text()).unwrap_or_default(),
                4 => {
                    let items: Vec<String> =
                        (0..self.below(4)).map(|_| self.json(depth + 1)).collect();
                    format!(
                        "[{}{}]",
                        space(self),
                        items.join(&format!(",{}", space(self)))
                    )
                }
                _ => {
                    let mut keys: Vec<String> = (0..self.below(4))
                        .map(|index| format!("k{index}{}", self.pick(&["", "é", "A"])))
                        .collect();
                    keys.dedup();
                    let members: Vec<String> = keys
                        .iter()
                        .map(|key| format!("\"{key}\"{}:{}", space(self), self.json(depth + 1)))
                        .collect();
                    format!("{{{}{}}}", space(self), members.join(","))
                }
            }
        }
    }

    #[test]
    fn every_normalizer_is_idempotent_on_generated_text() {
        let mut generator = Generator(0x9E37_79B9_7F4A_7C15);
        for round in 0..4000 {
            let text = if round % 2 == 0 {
                generator.text()
            } else {
                generator.json(0)
            };
            for normalizer in [
                Normalizer::Exact,
                Normalizer::WhitespaceV1,
                Normalizer::JsonV1,
            ] {
                let once = normalizer.normalize(&text);
                assert_eq!(
                    normalizer.normalize(&once),
                    once,
                    "{normalizer} is not idempotent on {text:?} (round {round})"
                );
            }
        }
    }

    #[test]
    fn json_v1_ignores_formatting_and_key_order() {
        let mut generator = Generator(42);
        for _ in 0..500 {
            let document = generator.json(0);
            let value: serde_json::Value = serde_json::from_str(&document).unwrap();
            let compact = serde_json::to_string(&value).unwrap();
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            let normalized = Normalizer::JsonV1.normalize(&document);
            assert_eq!(normalized, Normalizer::JsonV1.normalize(&compact));
            assert_eq!(
                normalized,
                Normalizer::JsonV1.normalize(&format!("\n{pretty}\n"))
            );
        }
        assert_eq!(
            Normalizer::JsonV1.normalize("{ \"b\": 1,\n \"a\": [1.0, 2] }"),
            r#"{"a":[1,2],"b":1}"#
        );
    }

    #[test]
    fn json_v1_keeps_text_that_is_not_json() {
        assert_eq!(
            Normalizer::JsonV1.normalize("Sure!  {\"a\":1}"),
            "Sure!  {\"a\":1}"
        );
        // Duplicate keys are not JSON that case-v1 would hash either.
        assert_eq!(
            Normalizer::JsonV1.normalize("{\"a\":1,\"a\":2}"),
            "{\"a\":1,\"a\":2}"
        );
    }

    #[test]
    fn ws_v1_collapses_all_unicode_whitespace() {
        assert_eq!(
            Normalizer::WhitespaceV1.normalize("  a\t\tb\n\u{a0}c  "),
            "a b c"
        );
        assert_eq!(Normalizer::Exact.normalize(" a\n"), " a\n");
    }

    #[test]
    fn names_round_trip() {
        for name in crate::project::config::NORMALIZERS {
            assert_eq!(Normalizer::parse(name).map(Normalizer::name), Some(*name));
        }
        assert_eq!(Normalizer::parse("ws-v2"), None);
    }
}
