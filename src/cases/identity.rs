//! How a suite's cases are identified when their records carry no `id` of their own, as
//! the datasets of other runners hold them: by a key path (`metadata.case_id`), or by the
//! content of named fields (`input`), digested as case-v1 canonicalizes it.
//!
//! The identity is written into the record as its `id` before the record is hashed, so
//! the lock, findings and baselines name cases as they always do. With content identity,
//! editing another field (`ideal`, `__expected`) keeps the identity and moves the digest:
//! an edit in place (EL102). Editing an identity field makes another case, so the old one
//! was removed (EL103). Reordering records changes nothing.

use crate::project::config::{CaseIdRule, SuiteConfig};
use serde_json::{Map, Value};

/// How a suite reads each case's identity.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Identity {
    /// The record's own string `id` (the default).
    #[default]
    Member,
    /// The string (or whole number) at a dotted key path: `metadata.case_id`.
    KeyPath(String),
    /// A digest of these fields' canonical JSON: `sha256:` and its first 16 hex digits.
    Content(Vec<String>),
    /// The records of a suite that moved from rule `then` to rule `now`, read as `then`
    /// read them: the field `now` names is taken out first (the `id` or key path added for
    /// the move), so a record that changed in nothing else hashes as it did at the base.
    Former {
        now: Box<Identity>,
        then: Box<Identity>,
    },
}

/// How many hex digits of the content digest make an identity.
const CONTENT_HEX_DIGITS: usize = 16;

impl Identity {
    /// How `suite` identifies its cases (its `id` rule; the record's own `id` without one).
    pub fn of(suite: &SuiteConfig) -> Identity {
        match &suite.id {
            None => Identity::Member,
            Some(CaseIdRule::KeyPath(path)) if path == "id" => Identity::Member,
            Some(CaseIdRule::KeyPath(path)) => Identity::KeyPath(path.clone()),
            Some(CaseIdRule::Content { content }) => Identity::Content(content.clone()),
        }
    }

    /// How messages name the rule: "`id`", "key path `metadata.case_id`", "content of `input`".
    pub fn describe(&self) -> String {
        match self {
            Identity::Former { then, .. } => then.describe(),
            Identity::Member => "the record's `id`".to_owned(),
            Identity::KeyPath(path) => format!("the key path `{path}`"),
            Identity::Content(fields) => format!(
                "the content of {}",
                fields
                    .iter()
                    .map(|field| format!("`{field}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Writes the record's identity as its `id`. A record that already has an `id` of its
    /// own keeps it when it agrees, and is refused when it does not: one identity a case.
    pub fn identify(&self, record: &mut Map<String, Value>) -> Result<(), String> {
        let identity = match self {
            Identity::Member => return Ok(()),
            Identity::Former { now, then } => {
                match &**now {
                    Identity::Member => {
                        record.remove("id");
                    }
                    Identity::KeyPath(path) => remove_path(record, path),
                    Identity::Content(_) | Identity::Former { .. } => {}
                }
                return then.identify(record);
            }
            Identity::KeyPath(path) => {
                let mut found: Option<&Value> = None;
                let mut map = Some(&*record);
                for key in path.split('.') {
                    found = map.and_then(|map| map.get(key));
                    map = match found {
                        Some(Value::Object(inner)) => Some(inner),
                        _ => None,
                    };
                }
                match found {
                    Some(Value::String(text)) if !text.is_empty() => text.clone(),
                    Some(Value::Number(number)) if number.is_u64() || number.is_i64() => {
                        number.to_string()
                    }
                    Some(_) => {
                        return Err(format!(
                            "`{path}` is not a string or a whole number: the suite identifies cases by {}",
                            self.describe()
                        ))
                    }
                    None => {
                        return Err(format!(
                            "the record has no `{path}`: the suite identifies cases by {}",
                            self.describe()
                        ))
                    }
                }
            }
            Identity::Content(fields) => {
                let mut named = Map::new();
                for field in fields {
                    match record.get(field) {
                        Some(value) => {
                            named.insert(field.clone(), value.clone());
                        }
                        None => {
                            return Err(format!(
                                "the record has no `{field}`: the suite identifies cases by {}",
                                self.describe()
                            ))
                        }
                    }
                }
                let digest = crate::digest::case_digest(&Value::Object(named))
                    .map_err(|error| error.to_string())?;
                format!("sha256:{}", &digest.hex()[..CONTENT_HEX_DIGITS])
            }
        };
        match record.get("id") {
            None => {
                record.insert("id".to_owned(), Value::String(identity));
                Ok(())
            }
            Some(Value::String(own)) if *own == identity => Ok(()),
            Some(_) => Err(format!(
                "the record has an `id` of its own besides {}: remove one of them",
                self.describe()
            )),
        }
    }
}

/// Takes the member at dotted `path` out of `record`, and the objects on the way that it
/// leaves empty.
fn remove_path(record: &mut Map<String, Value>, path: &str) {
    match path.split_once('.') {
        None => {
            record.remove(path);
        }
        Some((head, rest)) => {
            if let Some(Value::Object(inner)) = record.get_mut(head) {
                remove_path(inner, rest);
                if inner.is_empty() {
                    record.remove(head);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn identify(identity: &Identity, record: Value) -> Result<Value, String> {
        let Value::Object(mut map) = record else {
            unreachable!()
        };
        identity.identify(&mut map).map(|()| Value::Object(map))
    }

    #[test]
    fn a_key_path_names_the_identity() {
        let rule = Identity::KeyPath("metadata.case_id".into());
        let record =
            identify(&rule, json!({"input": "x", "metadata": {"case_id": "q-7"}})).unwrap();
        assert_eq!(record["id"], "q-7");
        let number = identify(&rule, json!({"metadata": {"case_id": 12}})).unwrap();
        assert_eq!(number["id"], "12");
        let missing = identify(&rule, json!({"metadata": {}})).unwrap_err();
        assert!(missing.contains("no `metadata.case_id`"), "{missing}");
        let wrong = identify(&rule, json!({"metadata": {"case_id": [1]}})).unwrap_err();
        assert!(wrong.contains("not a string"), "{wrong}");
    }

    #[test]
    fn content_identity_follows_the_named_fields_only() {
        let rule = Identity::Content(vec!["input".into()]);
        let a = identify(&rule, json!({"input": "2+2?", "ideal": "4"})).unwrap();
        let edited = identify(&rule, json!({"ideal": "four", "input": "2+2?"})).unwrap();
        assert_eq!(a["id"], edited["id"], "another field keeps the identity");
        let other = identify(&rule, json!({"input": "3+3?", "ideal": "4"})).unwrap();
        assert_ne!(a["id"], other["id"]);
        assert!(a["id"].as_str().unwrap().starts_with("sha256:"));
        let missing = identify(&rule, json!({"ideal": "4"})).unwrap_err();
        assert!(
            missing.contains("no `input`") && missing.contains("content of `input`"),
            "{missing}"
        );
        let clash = identify(&rule, json!({"input": "x", "id": "mine"})).unwrap_err();
        assert!(clash.contains("`id` of its own"), "{clash}");
    }

    #[test]
    fn a_former_rule_reads_the_record_without_the_field_the_move_added() {
        let content = Identity::Content(vec!["input".into()]);
        let at_base = identify(&content, json!({"input": "2+2?", "ideal": "4"})).unwrap();
        let moves = [
            (
                Identity::Member,
                json!({"id": "add", "input": "2+2?", "ideal": "4"}),
            ),
            (
                Identity::KeyPath("meta.case_id".into()),
                json!({"input": "2+2?", "ideal": "4", "meta": {"case_id": "add"}}),
            ),
        ];
        for (now, record) in moves {
            let former = Identity::Former {
                now: Box::new(now),
                then: Box::new(content.clone()),
            };
            assert_eq!(identify(&former, record).unwrap(), at_base);
        }
        // A key path beside other metadata takes only itself out.
        let former = Identity::Former {
            now: Box::new(Identity::KeyPath("meta.case_id".into())),
            then: Box::new(Identity::Member),
        };
        let kept = identify(
            &former,
            json!({"id": "a", "meta": {"case_id": "x", "tag": 1}}),
        );
        assert_eq!(kept.unwrap(), json!({"id": "a", "meta": {"tag": 1}}));
    }
}
