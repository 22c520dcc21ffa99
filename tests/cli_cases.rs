//! CLI behaviour as data: each `tests/cmd/<case>.toml` names the arguments, the expected
//! exit code and output (`<case>.stdout` / `.stderr`), and runs in `<case>.in/`; with
//! `fs.sandbox`, `<case>.out/` is the expected tree afterwards.
//! Regenerate expectations after a deliberate change with `TRYCMD=overwrite`.

#[test]
fn cli_cases() {
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}
