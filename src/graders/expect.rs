//! A case's `expect`, read once into the assertions the built-in grader knows, whatever
//! it is graded against next. Read from a `serde_json::Value` (a loaded case) or from the
//! JSON text of the member (a case file being checked); strings are borrowed where they
//! need no unescaping. Shapes the grader refuses are kept as such, so that it can
//! name them at the point it consults them.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// Assertions that read the completion as a JSON object.
const JSON_ASSERTIONS: &[&str] = &[
    "json",
    "required_keys",
    "allowed_keys",
    "status_in",
    "equals",
];

/// What a case's `expect` holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect<'a> {
    /// Absent or `null`.
    Missing,
    /// Not an object.
    NotObject,
    /// Boxed: the assertions are some hundred bytes, and a check reads one `expect` per
    /// case, moving it on the way.
    Object(Box<Assertions<'a>>),
}

/// The members of an `expect` object, each as the grader reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Assertions<'a> {
    /// How many members the object has.
    pub members: usize,
    /// Members that are not assertions, in the order written.
    pub unknown: Vec<Cow<'a, str>>,
    /// Whether any JSON assertion is present and not `false`.
    pub wants_json: bool,
    pub json: Option<Value>,
    pub required_keys: Option<Strings<'a>>,
    pub allowed_keys: Option<Strings<'a>>,
    pub status_in: Option<Value>,
    pub equals: Option<Value>,
    pub must_include: Option<Strings<'a>>,
    pub forbidden: Option<Strings<'a>>,
    pub forbid_patterns: Option<Strings<'a>>,
    pub regex: Option<Strings<'a>>,
    pub max_chars: Option<Value>,
    pub must_call: Option<Strings<'a>>,
    pub must_not_call: Option<Strings<'a>>,
    pub args: Option<Value>,
    pub require_clarification: Option<Clarification<'a>>,
    /// What the agent's tools must have left: the envelope's `state` at dotted paths.
    pub state: Option<Value>,
    /// Tools a completion may call at most once (a side effect done twice).
    pub no_duplicate_call: Option<Strings<'a>>,
}

/// An assertion that takes a string or a list of strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Strings<'a> {
    Valid(Vec<Cow<'a, str>>),
    /// Anything else; `is_false` when it was the literal `false` (which does not ask for
    /// a JSON completion).
    Invalid {
        is_false: bool,
    },
}

/// `require_clarification`: `true`, `false`, or the patterns a question must match.
#[derive(Debug, Clone, PartialEq)]
pub enum Clarification<'a> {
    Required(bool),
    Patterns(Strings<'a>),
    Invalid,
}

impl<'a> Expect<'a> {
    /// The `expect` member of a loaded case.
    pub fn of_value(expect: Option<&'a Value>) -> Expect<'a> {
        match expect {
            None => Expect::Missing,
            // Reading a value cannot fail: every shape has a meaning.
            Some(value) => Expect::deserialize(value).unwrap_or(Expect::NotObject),
        }
    }

    /// The `expect` member from its JSON text; `None` when the text is not JSON.
    pub fn of_text(text: &'a str) -> Option<Expect<'a>> {
        serde_json::from_str(text).ok()
    }
}

impl Strings<'_> {
    /// The strings, or `None` when the assertion is not a string or a list of them.
    pub fn valid(&self) -> Option<Vec<&str>> {
        match self {
            Strings::Valid(items) => Some(items.iter().map(|item| item.as_ref()).collect()),
            Strings::Invalid { .. } => None,
        }
    }

    fn asks_for_json(&self) -> bool {
        !matches!(self, Strings::Invalid { is_false: true })
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Expect<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ExpectVisitor;
        impl<'de> Visitor<'de> for ExpectVisitor {
            type Value = Expect<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Expect::Missing)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Expect::Missing)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                read_assertions(map).map(|assertions| Expect::Object(Box::new(assertions)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq).map(|_| Expect::NotObject)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Expect::NotObject)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Expect::NotObject)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Expect::NotObject)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Expect::NotObject)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Expect::NotObject)
            }
        }
        deserializer.deserialize_any(ExpectVisitor)
    }
}

fn read_assertions<'de, A: MapAccess<'de>>(mut map: A) -> Result<Assertions<'de>, A::Error> {
    let mut assertions = Assertions::default();
    while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
        match Member::of(&key) {
            Member::Value => {
                let value = map.next_value()?;
                assertions.set_value(&key, value);
            }
            Member::Strings => {
                let strings = map.next_value()?;
                assertions.set_strings(&key, strings);
            }
            Member::Clarification => {
                assertions.members += 1;
                assertions.require_clarification = Some(map.next_value()?);
            }
            Member::Unknown => {
                map.next_value::<IgnoredAny>()?;
                assertions.members += 1;
                assertions.unknown.push(key);
            }
        }
    }
    Ok(assertions)
}

/// How the grader reads a member of `expect`.
enum Member {
    /// Kept as a JSON value.
    Value,
    /// A string or a list of strings.
    Strings,
    Clarification,
    Unknown,
}

impl Member {
    fn of(name: &str) -> Member {
        match name {
            "json" | "status_in" | "equals" | "max_chars" | "args" | "state" => Member::Value,
            "required_keys" | "allowed_keys" | "must_include" | "forbidden" | "forbid_patterns"
            | "regex" | "must_call" | "must_not_call" | "no_duplicate_call" => Member::Strings,
            "require_clarification" => Member::Clarification,
            _ => Member::Unknown,
        }
    }
}

impl<'a> Assertions<'a> {
    /// A [`Member::Value`] assertion.
    fn set_value(&mut self, name: &str, value: Value) {
        self.members += 1;
        if JSON_ASSERTIONS.contains(&name) && value != Value::Bool(false) {
            self.wants_json = true;
        }
        let slot = match name {
            "json" => &mut self.json,
            "status_in" => &mut self.status_in,
            "equals" => &mut self.equals,
            "max_chars" => &mut self.max_chars,
            "state" => &mut self.state,
            _ => &mut self.args,
        };
        *slot = Some(value);
    }

    /// A [`Member::Strings`] assertion.
    fn set_strings(&mut self, name: &str, strings: Strings<'a>) {
        self.members += 1;
        if JSON_ASSERTIONS.contains(&name) && strings.asks_for_json() {
            self.wants_json = true;
        }
        let slot = match name {
            "required_keys" => &mut self.required_keys,
            "allowed_keys" => &mut self.allowed_keys,
            "must_include" => &mut self.must_include,
            "forbidden" => &mut self.forbidden,
            "forbid_patterns" => &mut self.forbid_patterns,
            "regex" => &mut self.regex,
            "must_call" => &mut self.must_call,
            "no_duplicate_call" => &mut self.no_duplicate_call,
            _ => &mut self.must_not_call,
        };
        *slot = Some(strings);
    }
}

/// A string, borrowed when the input allows.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }
            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// Any JSON value, kept only when it is a string.
struct MaybeText<'a>(Option<Cow<'a, str>>);

/// A value that is not a list, as the readers below tell them apart.
enum Scalar<'a> {
    Text(Cow<'a, str>),
    Bool(bool),
    Other,
}

/// What an assertion makes of a scalar and of a list of strings (`None`: a list with
/// something else in it). Objects count as `Scalar::Other`.
trait FromLoose<'de>: Sized {
    fn scalar(scalar: Scalar<'de>) -> Self;
    fn list(items: Option<Vec<Cow<'de, str>>>) -> Self;
}

impl<'de> FromLoose<'de> for MaybeText<'de> {
    fn scalar(scalar: Scalar<'de>) -> Self {
        match scalar {
            Scalar::Text(text) => MaybeText(Some(text)),
            _ => MaybeText(None),
        }
    }
    fn list(_: Option<Vec<Cow<'de, str>>>) -> Self {
        MaybeText(None)
    }
}

impl<'de> FromLoose<'de> for Strings<'de> {
    fn scalar(scalar: Scalar<'de>) -> Self {
        match scalar {
            Scalar::Text(text) => Strings::Valid(vec![text]),
            Scalar::Bool(value) => Strings::Invalid { is_false: !value },
            Scalar::Other => Strings::Invalid { is_false: false },
        }
    }
    fn list(items: Option<Vec<Cow<'de, str>>>) -> Self {
        match items {
            Some(items) => Strings::Valid(items),
            None => Strings::Invalid { is_false: false },
        }
    }
}

impl<'de> FromLoose<'de> for Clarification<'de> {
    fn scalar(scalar: Scalar<'de>) -> Self {
        match scalar {
            Scalar::Bool(value) => Clarification::Required(value),
            _ => Clarification::Invalid,
        }
    }
    fn list(items: Option<Vec<Cow<'de, str>>>) -> Self {
        Clarification::Patterns(Strings::list(items))
    }
}

/// Reads any JSON value into a [`FromLoose`] type.
struct LooseVisitor<T>(PhantomData<T>);

impl<'de, T: FromLoose<'de>> Visitor<'de> for LooseVisitor<T> {
    type Value = T;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_i64<E>(self, _: i64) -> Result<T, E> {
        Ok(T::scalar(Scalar::Other))
    }
    fn visit_u64<E>(self, _: u64) -> Result<T, E> {
        Ok(T::scalar(Scalar::Other))
    }
    fn visit_f64<E>(self, _: f64) -> Result<T, E> {
        Ok(T::scalar(Scalar::Other))
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::scalar(Scalar::Other))
    }
    fn visit_none<E>(self) -> Result<T, E> {
        Ok(T::scalar(Scalar::Other))
    }
    fn visit_bool<E>(self, value: bool) -> Result<T, E> {
        Ok(T::scalar(Scalar::Bool(value)))
    }
    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<T, E> {
        Ok(T::scalar(Scalar::Text(Cow::Borrowed(text))))
    }
    fn visit_str<E>(self, text: &str) -> Result<T, E> {
        Ok(T::scalar(Scalar::Text(Cow::Owned(text.to_owned()))))
    }
    fn visit_string<E>(self, text: String) -> Result<T, E> {
        Ok(T::scalar(Scalar::Text(Cow::Owned(text))))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(T::scalar(Scalar::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        let mut items = Some(Vec::with_capacity(seq.size_hint().unwrap_or(0)));
        while let Some(MaybeText(item)) = seq.next_element::<MaybeText<'de>>()? {
            match (item, items.as_mut()) {
                (Some(text), Some(list)) => list.push(text),
                _ => items = None,
            }
        }
        Ok(T::list(items))
    }
}

macro_rules! deserialize_loose {
    ($($target:ident),*) => {$(
        impl<'de> Deserialize<'de> for $target<'de> {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_any(LooseVisitor(PhantomData))
            }
        }
    )*};
}

deserialize_loose!(MaybeText, Strings, Clarification);

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

#[cfg(test)]
mod tests;
