//! `config.schema.json` is generated from the config types; this keeps the shipped file
//! current. After changing the types in `src/model/config/`, refresh it with
//! `EVALOCK_BLESS=1 cargo test --test config_schema`.

use std::path::Path;

#[test]
fn shipped_schema_matches_the_config_types() {
    let generated = evalock::project::config::config_schema();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.schema.json");
    if std::env::var_os("EVALOCK_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        shipped == generated,
        "config.schema.json is stale: run `EVALOCK_BLESS=1 cargo test --test config_schema` and commit it"
    );
}

#[test]
fn schema_knows_every_top_level_table() {
    let schema: serde_json::Value =
        serde_json::from_str(&evalock::project::config::config_schema()).unwrap();
    let properties = schema["properties"].as_object().unwrap();
    for key in ["version", "policy", "suite", "skills", "grader"] {
        assert!(properties.contains_key(key), "schema lacks `{key}`");
    }
    assert_eq!(
        schema["additionalProperties"], false,
        "unknown keys must be rejected by editors too"
    );
}
