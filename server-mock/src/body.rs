//! The admin API's JSON bodies, and the `--seed` file: the one home of how
//! they are read.
//!
//! A body is read by serde (the types of `likekit_proto::admin`), then held
//! to its OpenAPI schema's JSON types: serde also reads a struct from an
//! array (`[7, "Ana"]` as a user, `[]` as an empty seed document), which the
//! document does not allow, so every value must be of a type its schema
//! names (an object where it asks for one). The values themselves (ranges,
//! lengths, names) are serde's and the store's rules to check, as before.

use std::collections::BTreeMap;

use axum::{
    Json,
    extract::{FromRequest, Request},
};
use serde::de::DeserializeOwned;
use serde_json::{Value, value::RawValue};
use utoipa::ToSchema;

use crate::{
    error::ApiError,
    wire::{admin::Seed, code},
};

/// `axum::Json`, but its rejections are JSON [`ApiError`]s: 415 for a wrong
/// content type, 413 for an oversize body, 400 for anything unparsable or
/// not of the schema's shape ([`read`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AppJson<T>(pub(crate) T);

impl<S, T> FromRequest<S> for AppJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned + ToSchema,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        // The content type, the size and the syntax, checked by axum.
        let Json(raw) = Json::<Box<RawValue>>::from_request(req, state).await?;
        read(raw.get().as_bytes()).map(Self)
    }
}

/// `body` read as a `T`: serde's reading (`bad_json`, `bad_post_id`,
/// `bad_user_id` on a refusal, as `axum::Json` words them), then the
/// schema's shape (`bad_json`: an array or a scalar where an object
/// belongs).
///
/// # Errors
///
/// A 400 [`ApiError`] saying what is wrong and where.
pub fn read<T: DeserializeOwned + ToSchema>(body: &[u8]) -> Result<T, ApiError> {
    let Json(value) = Json::<T>::from_bytes(body)?;
    // It parsed as a `T`, so it is JSON.
    let json: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(code::BAD_JSON, e.to_string()))?;
    let schemas = Schemas::of::<T>();
    let mut path = String::new();
    if let Some(problem) = schemas.misplaced(&json, &schemas.root, &mut path) {
        return Err(ApiError::bad_request(code::BAD_JSON, problem));
    }
    Ok(value)
}

/// A seed document (`--seed FILE`), read exactly as `POST /admin/seed`
/// reads its body.
///
/// # Errors
///
/// A 400 [`ApiError`] (`bad_json`, `bad_post_id`, `bad_user_id`) saying
/// what is wrong and where.
pub fn read_seed(document: &[u8]) -> Result<Seed, ApiError> {
    read(document)
}

/// A type's schema and the ones it refers to, as JSON.
struct Schemas {
    root: Value,
    named: BTreeMap<String, Value>,
}

impl Schemas {
    fn of<T: ToSchema>() -> Self {
        let mut refs = Vec::new();
        T::schemas(&mut refs);
        let json = |schema| serde_json::to_value(schema).unwrap_or(Value::Null);
        let mut named: BTreeMap<String, Value> = refs
            .into_iter()
            .map(|(name, schema)| (name, json(schema)))
            .collect();
        let root = json(T::schema());
        named.insert(T::name().into_owned(), root.clone());
        Self { root, named }
    }

    /// The schema a `$ref` names (`{}`, anything, when it is not known).
    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        static ANYTHING: Value = Value::Null;
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => reference
                .rsplit('/')
                .next()
                .and_then(|name| self.named.get(name))
                .unwrap_or(&ANYTHING),
            None => schema,
        }
    }

    /// Where `value` is not of the JSON type `schema` asks for, at `path`
    /// or below it: the first such place, said in words. Only the type is
    /// checked (what serde read from the wrong type, a struct from an
    /// array); the values themselves are serde's and the store's to check.
    fn misplaced(&self, value: &Value, schema: &Value, path: &mut String) -> Option<String> {
        let schema = self.resolve(schema);
        for key in ["oneOf", "anyOf"] {
            if let Some(branches) = schema.get(key).and_then(Value::as_array) {
                // Fine when one branch fits; else the complaint of the
                // first branch that is not a bare `null`.
                let mut complaints = Vec::new();
                for branch in branches {
                    match self.misplaced(value, branch, &mut path.clone()) {
                        None => return None,
                        Some(complaint) => {
                            complaints.push((is_null(self.resolve(branch)), complaint))
                        }
                    }
                }
                complaints.sort_by_key(|(null, _)| *null);
                return complaints
                    .into_iter()
                    .next()
                    .map(|(_, complaint)| complaint);
            }
        }
        if let Some(branches) = schema.get("allOf").and_then(Value::as_array) {
            return branches
                .iter()
                .find_map(|branch| self.misplaced(value, branch, path));
        }
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|t| is_of_type(value, t)) {
            let wanted: Vec<&str> = types.iter().map(|t| a_type(t)).collect();
            let place = if path.is_empty() {
                "the body"
            } else {
                path.trim_start_matches('.')
            };
            return Some(format!(
                "{place} must be {}, not {}",
                wanted.join(" or "),
                kind_of(value)
            ));
        }
        let mut below = |name: String, inner: &Value, item: &Value| {
            let len = path.len();
            path.push_str(&name);
            let found = self.misplaced(item, inner, path);
            path.truncate(len);
            found
        };
        match value {
            Value::Object(fields) => {
                let properties = schema.get("properties").and_then(Value::as_object)?;
                fields.iter().find_map(|(name, field)| {
                    below(format!(".{name}"), properties.get(name)?, field)
                })
            }
            Value::Array(items) => {
                let inner = schema.get("items")?;
                items
                    .iter()
                    .enumerate()
                    .find_map(|(i, item)| below(format!("[{i}]"), inner, item))
            }
            _ => None,
        }
    }
}

/// Whether `schema` is `{"type": "null"}`.
fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// Whether `value` is of the JSON Schema type `name` (integers are
/// numbers here: whether a number is whole is serde's to check).
fn is_of_type(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" | "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// A JSON Schema type for a message: "an object", "a string"…
fn a_type(name: &str) -> &str {
    match name {
        "object" => "an object",
        "array" => "an array",
        "string" => "a string",
        "integer" => "a whole number",
        "number" => "a number",
        "boolean" => "a boolean",
        other => other,
    }
}

/// "an array", "a string"… for a message.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use likekit_proto::admin::{FaultRules, Friends, NewUser, Seed, TokenRequest};

    use super::read;

    fn refusal<T: serde::de::DeserializeOwned + utoipa::ToSchema + std::fmt::Debug>(
        body: &str,
    ) -> String {
        let err = read::<T>(body.as_bytes()).expect_err(body);
        assert_eq!(err.code(), "bad_json", "{body}");
        err.message().to_string()
    }

    #[test]
    fn objects_only_where_the_schema_has_one() {
        assert_eq!(
            refusal::<Seed>("[]"),
            "the body must be an object, not an array"
        );
        assert_eq!(
            refusal::<NewUser>(r#"[7, "Ana"]"#),
            "the body must be an object, not an array"
        );
        assert_eq!(
            refusal::<Seed>(r#"{"users": [[1, "Ana"]]}"#),
            "users[0] must be an object, not an array"
        );
        assert_eq!(
            refusal::<FaultRules>(r#"{"rules": [{"route": "like"}, ["like"]]}"#),
            "rules[1] must be an object, not an array"
        );
        assert_eq!(
            refusal::<FaultRules>(r#"{"rules": [{"route": "like", "action": ["drop"]}]}"#),
            "rules[0].action must be an object, not an array"
        );
    }

    /// serde's message, where and what, in the server's own words: no
    /// "Failed to deserialize the JSON body into the target type:" before it.
    #[test]
    fn messages_say_where_and_what_without_axums_prefix() {
        let wrong_type = refusal::<NewUser>(r#"{"id": 7, "name": 5}"#);
        assert!(
            wrong_type.starts_with("name: invalid type: integer `5`"),
            "{wrong_type}"
        );
        let unknown = refusal::<NewUser>(r#"{"id": 7, "name": "Ana", "age": 3}"#);
        assert!(unknown.starts_with("age: unknown field `age`"), "{unknown}");
        let not_json = refusal::<NewUser>(r#"{"id": 7,"#);
        assert!(
            not_json.starts_with("the body is not valid JSON: "),
            "{not_json}"
        );
        for message in [wrong_type, unknown, not_json] {
            assert!(!message.contains("Failed to"), "{message}");
        }
    }

    #[test]
    fn the_bodies_as_documented_are_read() {
        assert_eq!(
            read::<NewUser>(br#"{"id": 7, "name": "Ana"}"#)
                .map(|u| u.name)
                .ok()
                .as_deref(),
            Some("Ana")
        );
        assert!(read::<Friends>(br#"{"friends": [1, 2.0]}"#).is_ok());
        assert!(read::<TokenRequest>(br#"{"user_id": 7}"#).is_ok());
        let rules = read::<FaultRules>(
            br#"{"seed": 1, "rules": [{"route": "*", "action": {"kind": "status", "status": 500, "body": [1, "any JSON"]}}, {"route": "like", "action": null}]}"#,
        );
        assert_eq!(rules.map(|r| r.rules.len()).ok(), Some(2));
        let seed = read::<Seed>(br#"{"users": [{"id": 1, "name": "Ana", "friends": [2]}], "posts": [{"id": 4, "likers": [1]}]}"#);
        assert_eq!(seed.map(|s| s.users.len() + s.posts.len()).ok(), Some(2));
    }
}
