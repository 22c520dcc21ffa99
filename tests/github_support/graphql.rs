//! Validates GraphQL requests against the vendored slice of GitHub's schema
//! (tests/github-api/graphql-schema.json, from @octokit/graphql-schema): every selected
//! field and argument must exist on its type, every variable must be declared with a
//! type the argument accepts and be supplied with a value of that type.
//!
//! The parser reads the language subset evalock writes: one operation, variables,
//! nested selections, arguments with variables, literals and input objects.

use serde_json::{Map, Value};

pub struct Schema {
    types: Map<String, Value>,
}

/// A parsed operation: `query` or `mutation`, its variables and its selections.
#[derive(Debug)]
pub struct Operation {
    pub kind: String,
    pub variables: Vec<(String, String)>,
    pub selections: Vec<Field>,
}

#[derive(Debug)]
pub struct Field {
    pub name: String,
    pub arguments: Vec<(String, Argument)>,
    pub selections: Vec<Field>,
}

#[derive(Debug)]
pub enum Argument {
    Variable(String),
    Literal(String),
    Object(Vec<(String, Argument)>),
}

impl Schema {
    pub fn load() -> Schema {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/github-api/graphql-schema.json");
        let document: Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("vendored GraphQL schema"))
                .expect("parse");
        Schema {
            types: document["types"].as_object().expect("types").clone(),
        }
    }

    /// The parsed operation, or every reason the request is not valid.
    pub fn validate(&self, body: &[u8]) -> Result<(Operation, Value), Vec<String>> {
        let request: Value = serde_json::from_slice(body)
            .map_err(|error| vec![format!("GraphQL body is not JSON: {error}")])?;
        let Some(object) = request.as_object() else {
            return Err(vec!["GraphQL body is not an object".into()]);
        };
        let mut errors = Vec::new();
        for key in object.keys() {
            if !["query", "variables", "operationName"].contains(&key.as_str()) {
                errors.push(format!("unknown GraphQL request key `{key}`"));
            }
        }
        let query = object
            .get("query")
            .and_then(Value::as_str)
            .ok_or_else(|| vec!["GraphQL body has no `query` string".to_owned()])?;
        let variables = object
            .get("variables")
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        let operation = Parser::new(query)
            .operation()
            .map_err(|error| vec![format!("GraphQL syntax: {error}")])?;
        let root = match operation.kind.as_str() {
            "query" => "Query",
            "mutation" => "Mutation",
            other => return Err(vec![format!("unsupported operation kind `{other}`")]),
        };
        for (name, declared) in &operation.variables {
            check_variable_value(name, declared, variables.get(name), &mut errors);
        }
        self.check_selections(
            root,
            &operation.selections,
            &operation.variables,
            &mut errors,
        );
        if errors.is_empty() {
            Ok((operation, variables))
        } else {
            Err(errors)
        }
    }

    fn check_selections(
        &self,
        type_name: &str,
        selections: &[Field],
        variables: &[(String, String)],
        errors: &mut Vec<String>,
    ) {
        let Some(definition) = self.types.get(type_name) else {
            return errors.push(format!("type `{type_name}` is not in the vendored schema: re-run scripts/vendor-openapi.sh with it"));
        };
        for field in selections {
            let Some(field_definition) = definition["fields"].get(&field.name) else {
                errors.push(format!("`{type_name}` has no field `{}`", field.name));
                continue;
            };
            for (argument, value) in &field.arguments {
                match field_definition["args"][argument].as_str() {
                    Some(expected) => self.check_argument(
                        &format!("{type_name}.{}({argument})", field.name),
                        expected,
                        value,
                        variables,
                        errors,
                    ),
                    None => errors.push(format!(
                        "`{type_name}.{}` takes no argument `{argument}`",
                        field.name
                    )),
                }
            }
            let field_type = named_type(field_definition["type"].as_str().unwrap_or(""));
            let is_leaf = matches!(
                field_type,
                "String" | "Int" | "Boolean" | "ID" | "Float" | "URI" | "DateTime" | "GitObjectID"
            ) || self
                .types
                .get(field_type)
                .is_some_and(|definition| definition["kind"] == "ENUM");
            match (is_leaf, field.selections.is_empty()) {
                (true, false) => errors.push(format!(
                    "`{type_name}.{}` is a leaf and takes no selection",
                    field.name
                )),
                (false, true) => {
                    errors.push(format!("`{type_name}.{}` needs a selection", field.name))
                }
                (false, false) => {
                    self.check_selections(field_type, &field.selections, variables, errors)
                }
                (true, true) => {}
            }
        }
    }

    fn check_argument(
        &self,
        at: &str,
        expected: &str,
        value: &Argument,
        variables: &[(String, String)],
        errors: &mut Vec<String>,
    ) {
        match value {
            Argument::Variable(name) => {
                match variables.iter().find(|(declared, _)| declared == name) {
                    None => errors.push(format!("{at}: variable ${name} is not declared")),
                    // A non-null variable may feed a nullable argument, not the other way round.
                    Some((_, declared))
                        if declared != expected && declared.strip_suffix('!') != Some(expected) =>
                    {
                        errors.push(format!(
                            "{at}: ${name} is {declared}, the argument is {expected}"
                        ))
                    }
                    Some(_) => {}
                }
            }
            Argument::Literal(_) => {}
            Argument::Object(fields) => {
                let input_type = named_type(expected);
                let Some(definition) = self.types.get(input_type) else {
                    return errors.push(format!("{at}: input type `{input_type}` is not vendored"));
                };
                for (name, inner) in fields {
                    match definition["fields"][name]["type"].as_str() {
                        Some(field_type) => self.check_argument(
                            &format!("{at}.{name}"),
                            field_type,
                            inner,
                            variables,
                            errors,
                        ),
                        None => errors.push(format!("{at}: `{input_type}` has no field `{name}`")),
                    }
                }
            }
        }
    }
}

fn named_type(reference: &str) -> &str {
    reference.trim_matches(|character| matches!(character, '[' | ']' | '!'))
}

fn check_variable_value(
    name: &str,
    declared: &str,
    value: Option<&Value>,
    errors: &mut Vec<String>,
) {
    let value = value.unwrap_or(&Value::Null);
    if value.is_null() {
        if declared.ends_with('!') {
            errors.push(format!("variable ${name} ({declared}) has no value"));
        }
        return;
    }
    let fits = match named_type(declared) {
        "String" | "ID" => value.is_string(),
        "Int" => value.is_i64() || value.is_u64(),
        "Boolean" => value.is_boolean(),
        _ => true,
    };
    if !fits {
        errors.push(format!("variable ${name} is {declared} but got {value}"));
    }
}

struct Parser<'a> {
    tokens: Vec<&'a str>,
    position: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        let mut tokens = Vec::new();
        let mut rest = text;
        while let Some(start) =
            rest.find(|character: char| !character.is_whitespace() && character != ',')
        {
            rest = &rest[start..];
            let length = if rest
                .starts_with(|character: char| character.is_alphanumeric() || character == '_')
            {
                rest.find(|character: char| !(character.is_alphanumeric() || character == '_'))
                    .unwrap_or(rest.len())
            } else if let Some(string) = rest.strip_prefix('"') {
                string.find('"').map_or(rest.len(), |end| end + 2)
            } else {
                rest.chars().next().map_or(1, char::len_utf8)
            };
            tokens.push(&rest[..length]);
            rest = &rest[length..];
        }
        Parser {
            tokens,
            position: 0,
        }
    }

    fn next(&mut self) -> Result<&'a str, String> {
        let token = self
            .tokens
            .get(self.position)
            .copied()
            .ok_or("unexpected end")?;
        self.position += 1;
        Ok(token)
    }

    fn peek(&self) -> Option<&'a str> {
        self.tokens.get(self.position).copied()
    }

    fn expect(&mut self, expected: &str) -> Result<(), String> {
        let token = self.next()?;
        if token == expected {
            Ok(())
        } else {
            Err(format!("expected `{expected}`, found `{token}`"))
        }
    }

    fn operation(&mut self) -> Result<Operation, String> {
        let kind = self.next()?.to_owned();
        if self
            .peek()
            .is_some_and(|token| token != "(" && token != "{")
        {
            self.next()?; // operation name
        }
        let mut variables = Vec::new();
        if self.peek() == Some("(") {
            self.next()?;
            while self.peek() != Some(")") {
                self.expect("$")?;
                let name = self.next()?.to_owned();
                self.expect(":")?;
                variables.push((name, self.type_reference()?));
            }
            self.next()?;
        }
        let selections = self.selection_set()?;
        if self.position != self.tokens.len() {
            return Err("text after the operation".into());
        }
        Ok(Operation {
            kind,
            variables,
            selections,
        })
    }

    fn type_reference(&mut self) -> Result<String, String> {
        let mut reference = if self.peek() == Some("[") {
            self.next()?;
            let inner = self.type_reference()?;
            self.expect("]")?;
            format!("[{inner}]")
        } else {
            self.next()?.to_owned()
        };
        if self.peek() == Some("!") {
            self.next()?;
            reference.push('!');
        }
        Ok(reference)
    }

    fn selection_set(&mut self) -> Result<Vec<Field>, String> {
        self.expect("{")?;
        let mut fields = Vec::new();
        while self.peek() != Some("}") {
            let name = self.next()?.to_owned();
            let arguments = if self.peek() == Some("(") {
                self.arguments("(", ")")?
            } else {
                Vec::new()
            };
            let selections = if self.peek() == Some("{") {
                self.selection_set()?
            } else {
                Vec::new()
            };
            fields.push(Field {
                name,
                arguments,
                selections,
            });
        }
        self.next()?;
        Ok(fields)
    }

    fn arguments(&mut self, open: &str, close: &str) -> Result<Vec<(String, Argument)>, String> {
        self.expect(open)?;
        let mut arguments = Vec::new();
        while self.peek() != Some(close) {
            let name = self.next()?.to_owned();
            self.expect(":")?;
            let value = match self.peek() {
                Some("$") => {
                    self.next()?;
                    Argument::Variable(self.next()?.to_owned())
                }
                Some("{") => Argument::Object(self.arguments("{", "}")?),
                _ => Argument::Literal(self.next()?.to_owned()),
            };
            arguments.push((name, value));
        }
        self.next()?;
        Ok(arguments)
    }
}
