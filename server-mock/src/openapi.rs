//! The OpenAPI document, generated from the handlers' `#[utoipa::path]`
//! annotations and the schemas derived on the real types (the wire types in
//! `likekit_proto` with its `openapi` feature, and the server's own `Health`
//! and `Ack`). This module imports the handlers; no handler imports it.

use std::{sync::OnceLock, time::Duration};

use axum::{
    extract::State,
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use likekit_proto::{
    BatchLikes, ErrorBody, ErrorDetail, LikeState, PostId, PostLikes, UserId,
    admin::{
        Ack, FaultAction, FaultMethod, FaultPhase, FaultRoute, FaultRule, FaultRules, Friends,
        Journal, JournalEntry, JournalFault, NewFaultRules, NewPost, NewUser, RuleState, Seed,
        SeedPost, SeedUser, StoredPost, StoredUser, TokenRequest, TokenResponse, WriteResult,
    },
    code,
};
use utoipa::{
    Modify, OpenApi,
    openapi::{
        ContentBuilder, Ref, RefOr, ResponseBuilder,
        security::{ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityScheme},
    },
};

use crate::{admin, api, state::App};

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http({
                let mut http = Http::new(HttpAuthScheme::Bearer);
                http.bearer_format = Some("JWT".into());
                http
            }),
        );
        components.add_security_scheme(
            "admin_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-Admin-Key"))),
        );
    }
}

/// The operations whose handlers use the store, and so can also answer
/// `500 storage_error`, `503 shutting_down` and `503 unavailable`.
const STORE_OPERATIONS: [(&str, &str); 11] = [
    ("/posts/{post_id}/like", "post"),
    ("/posts/{post_id}/like", "delete"),
    ("/posts/{post_id}/likes", "get"),
    ("/likes", "get"),
    ("/admin/users", "post"),
    ("/admin/users/{id}", "get"),
    ("/admin/posts", "post"),
    ("/admin/posts/{id}", "get"),
    ("/admin/users/{id}/friends", "put"),
    ("/admin/reset", "post"),
    ("/admin/seed", "post"),
];

/// The answers that do not come from a handler's own logic, added to each
/// operation where they can occur so that they are listed once here rather
/// than on every handler:
///
/// - every operation: `413 payload_too_large` (a body over
///   `--max-body-bytes`, declared in `Content-Length` or found while a
///   chunked body is read, is refused before any handler), `400
///   bad_request` (a chunked body that cannot be read), `500 internal` (a
///   handler panicked) and `503 timeout` (`--request-timeout-secs`);
/// - the operations that use the store ([`STORE_OPERATIONS`]): `500
///   storage_error`, `503 shutting_down` and `503 unavailable`;
/// - admin operations: `401 bad_admin_key`, and with a body `400 bad_json`
///   and `415 unsupported_media_type`;
/// - the like routes: any status a fault rule answers, as `default`.
///
/// A code already listed for a status is not repeated; one that is not is
/// added to that status's description.
struct CommonResponses;

impl Modify for CommonResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let error = |description: &str| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(description)
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorBody")))
                            .build(),
                    )
                    .build(),
            )
        };
        for (path, item) in openapi.paths.paths.iter_mut() {
            let admin = path.starts_with("/admin");
            let public = path.starts_with("/posts") || path == "/likes";
            for (method, operation) in [
                ("get", &mut item.get),
                ("put", &mut item.put),
                ("post", &mut item.post),
                ("delete", &mut item.delete),
            ] {
                let Some(operation) = operation else {
                    continue;
                };
                let has_body = operation.request_body.is_some();
                let store = STORE_OPERATIONS.contains(&(path.as_str(), method));
                let responses = &mut operation.responses.responses;
                // `code` (with its explanation) under `status`.
                let mut add = |status: &str, code: &str, explanation: &str| {
                    let text = format!("`{code}`{explanation}");
                    match responses.get_mut(status) {
                        None => {
                            responses.insert(status.to_owned(), error(&text));
                        }
                        Some(RefOr::T(listed)) => {
                            if !listed.description.contains(&format!("`{code}`")) {
                                listed.description = format!("{}; {text}", listed.description);
                            }
                        }
                        Some(RefOr::Ref(_)) => {}
                    }
                };
                add(
                    "413",
                    code::PAYLOAD_TOO_LARGE,
                    ": a body (or a declared `Content-Length`) over `--max-body-bytes`",
                );
                add(
                    "400",
                    code::BAD_REQUEST,
                    ": a chunked body that could not be read (the client broke off, or sent \
                     a malformed chunk)",
                );
                add("500", code::INTERNAL, ": a bug (a handler panicked)");
                add(
                    "503",
                    code::TIMEOUT,
                    ": the request took longer than `--request-timeout-secs`",
                );
                if store {
                    add(
                        "500",
                        code::STORAGE_ERROR,
                        ": the database failed (retrying is safe)",
                    );
                    add("503", code::SHUTTING_DOWN, ": the server is stopping");
                    add(
                        "503",
                        code::UNAVAILABLE,
                        ": the database cannot take the request now (a statement or lock \
                         timeout, a read-only or full database, one restarting); with \
                         `Retry-After`",
                    );
                }
                if admin {
                    add(
                        "401",
                        code::BAD_ADMIN_KEY,
                        ": no or a wrong `X-Admin-Key` (with `WWW-Authenticate`)",
                    );
                    if has_body {
                        add("400", code::BAD_JSON, "");
                        add(
                            "415",
                            code::UNSUPPORTED_MEDIA_TYPE,
                            ": a body without `Content-Type: application/json`",
                        );
                    }
                }
                if public {
                    responses.entry("default".to_owned()).or_insert_with(|| {
                        RefOr::T(
                            ResponseBuilder::new()
                                .description(
                                    "A fault rule's answer (`PUT /admin/faults`): any status \
                                     from 200 to 599, with the rule's body or the \
                                     `injected_fault` error; `malformed`, `truncate`, \
                                     `slow_body` and `oversized` answer bodies that are not \
                                     the ones documented here.",
                                )
                                .build(),
                        )
                    });
                }
                // Every answer carries the request's id, and a 401 its
                // challenge.
                for (status, response) in operation.responses.responses.iter_mut() {
                    if let RefOr::T(response) = response {
                        response
                            .headers
                            .entry("X-Request-Id".to_owned())
                            .or_insert_with(|| RefOr::T(request_id_header()));
                        if status == "401" {
                            response
                                .headers
                                .entry("WWW-Authenticate".to_owned())
                                .or_insert_with(|| RefOr::T(challenge_header(admin)));
                        }
                    }
                }
            }
        }
    }
}

/// The `WWW-Authenticate` of a 401: the admin key's challenge on an admin
/// route, a bearer token's elsewhere.
fn challenge_header(admin: bool) -> utoipa::openapi::header::Header {
    let description = if admin {
        format!(
            "`{}`: send the admin key in `X-Admin-Key`.",
            crate::admin::ADMIN_CHALLENGE
        )
    } else {
        "`Bearer realm=\"likekit\"`, with `error=\"invalid_token\"` and an \
         `error_description` when a token was sent (RFC 6750)."
            .to_owned()
    };
    utoipa::openapi::header::HeaderBuilder::new()
        .schema(Some(
            utoipa::openapi::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String)
                .min_length(Some(1)),
        ))
        .description(Some(description))
        .build()
}

/// The `X-Request-Id` every answer carries.
fn request_id_header() -> utoipa::openapi::header::Header {
    utoipa::openapi::header::HeaderBuilder::new()
        .schema(Some(
            utoipa::openapi::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String)
                .min_length(Some(1))
                .max_length(Some(128)),
        ))
        .description(Some(
            "The request's id: the client's own `X-Request-Id` (1 to 128 visible ASCII \
             characters), else one the server made; every log line of the request carries it.",
        ))
        .build()
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "LikeKit reference server",
        description = "Likes with exact counts, per-viewer friends lines, sign-in tokens, \
                       and an admin/test-control API (only when started with an admin key)."
    ),
    paths(
        api::like,
        api::unlike,
        api::post_likes,
        api::batch_likes,
        api::healthz,
        api::livez,
        api::readyz,
        openapi_json,
        api::metrics_text,
        admin::create_user,
        admin::get_user,
        admin::create_post,
        admin::get_post,
        admin::set_friends,
        admin::mint_token,
        admin::set_faults,
        admin::add_faults,
        admin::get_faults,
        admin::clear_faults,
        admin::requests,
        admin::clear_requests,
        admin::reset,
        admin::seed,
    ),
    components(schemas(
        LikeState, PostLikes, BatchLikes, ErrorBody, ErrorDetail, PostId, UserId,
        NewUser, NewPost, StoredUser, StoredPost, Friends, TokenRequest, TokenResponse,
        FaultRoute, FaultMethod, FaultPhase, FaultAction, FaultRule, FaultRules, NewFaultRules,
        RuleState, Journal, JournalEntry, JournalFault, WriteResult,
        Seed, SeedUser, SeedPost, api::Health, Ack,
    )),
    modifiers(&Security, &CommonResponses),
    tags(
        (name = "likes", description = "Liking and reading likes"),
        (name = "ops", description = "Health, metrics and this document"),
        (name = "admin", description = "Test control; only with --admin-key"),
    )
)]
struct ApiDoc;

/// The OpenAPI document as JSON, made once.
pub(crate) fn document() -> &'static str {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let Ok(mut doc) = serde_json::to_value(ApiDoc::openapi()) else {
            return "{}".to_string();
        };
        closed_fault_actions(&mut doc);
        smallest_oversized(&mut doc);
        after_only_actions(&mut doc);
        rules_that_act(&mut doc);
        bodiless_statuses(&mut doc);
        names_without_control_characters(&mut doc);
        described_nullable_properties(&mut doc);
        doc.to_string()
    })
}

/// Puts the description of a property that may be null on the property
/// itself: utoipa writes an `Option` of a named type as a `oneOf` of the
/// type and null, with the field's description inside the first branch,
/// where readers of the document (Swagger UI, generated clients) do not
/// show it.
fn described_nullable_properties(doc: &mut serde_json::Value) {
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for schema in schemas.values_mut() {
        let Some(properties) = schema
            .get_mut("properties")
            .and_then(serde_json::Value::as_object_mut)
        else {
            continue;
        };
        for property in properties.values_mut() {
            if property.get("description").is_some() {
                continue;
            }
            let description = property
                .get_mut("oneOf")
                .and_then(serde_json::Value::as_array_mut)
                .and_then(|branches| branches.first_mut())
                .and_then(serde_json::Value::as_object_mut)
                .and_then(|first| first.remove("description"));
            if let Some(description) = description {
                property["description"] = description;
            }
        }
    }
}

/// Says on every name (`NewUser`, `SeedUser`) what `store::rules` refuses
/// besides blank names: a control character anywhere (`not` a pattern that
/// finds one, which needs no anchors, whose meaning differs between regex
/// engines).
fn names_without_control_characters(doc: &mut serde_json::Value) {
    for body in ["NewUser", "SeedUser"] {
        let pointer = format!("/components/schemas/{body}/properties/name");
        if let Some(name) = doc.pointer_mut(&pointer) {
            name["not"] = serde_json::json!({ "pattern": likekit_proto::admin::NAME_FORBIDDEN });
        }
    }
}

/// The kinds of fault action that shape the real answer, and so need
/// `"phase": "after"` (`faults::validate`).
const AFTER_ONLY_ACTIONS: [&str; 2] = ["truncate", "slow_body"];

/// Says on `FaultRule` what `faults::validate` refuses across its fields
/// (JSON Schema's `if`/`then`): an action that shapes the real answer
/// needs `"phase": "after"`.
fn after_only_actions(doc: &mut serde_json::Value) {
    if let Some(rule) = doc.pointer_mut("/components/schemas/FaultRule") {
        rule["if"] = serde_json::json!({
            "required": ["action"],
            "properties": {"action": {
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"enum": AFTER_ONLY_ACTIONS}}
            }}
        });
        rule["then"] = serde_json::json!({
            "required": ["phase"],
            "properties": {"phase": {"const": "after"}}
        });
    }
}

/// The one method each route answers (`faults::route_method`).
const ROUTE_METHODS: [(&str, &str); 4] = [
    ("like", "POST"),
    ("unlike", "DELETE"),
    ("likes", "GET"),
    ("batch", "GET"),
];

/// Says on `FaultRule` what `faults::validate` refuses of a rule that
/// could never fire or never act, where JSON Schema can say it (`allOf`
/// of `if`/`then`): a `method` its route never answers; and, on a rule
/// with an action, a `drop_rate` or an `error_rate` of 1 before it, or a
/// `status` other than 503 that neither `error_rate` nor `fail_next`
/// answers ([`document_for`] adds this server's bound on the action's
/// `latency_ms`). The rules on an action are one `if`/`then`: each one
/// more multiplies the cases a contract tester's generator must
/// intersect, and past its budget it makes no requests at all. The call
/// conditions that select no call (`nth` past `first`, say) compare two
/// fields' values, which JSON Schema cannot; the document's description
/// of the 400 names them.
fn rules_that_act(doc: &mut serde_json::Value) {
    use serde_json::json;
    let Some(rule) = doc.pointer_mut("/components/schemas/FaultRule") else {
        return;
    };
    let mut all: Vec<serde_json::Value> = ROUTE_METHODS
        .iter()
        .map(|(route, method)| {
            json!({
                "if": {
                    "required": ["route", "method"],
                    "properties": {"route": {"const": route}, "method": {"type": "string"}}
                },
                "then": {"properties": {"method": {"const": method}}}
            })
        })
        .collect();
    all.push(json!({
        "if": {"required": ["action"], "properties": {"action": {"type": "object"}}},
        "then": {
            "properties": {
                "drop_rate": {"exclusiveMaximum": 1},
                "error_rate": {"exclusiveMaximum": 1}
            },
            "anyOf": [
                {"properties": {"status": {"const": 503}}},
                {"required": ["error_rate"], "properties": {"error_rate": {"exclusiveMinimum": 0}}},
                {"required": ["fail_next"], "properties": {"fail_next": {"minimum": 1}}}
            ]
        }
    }));
    rule["allOf"] = serde_json::Value::Array(all);
}

/// The `if` of the rules on a rule with an action ([`rules_that_act`]).
fn is_action_rule(entry: &serde_json::Value) -> bool {
    entry.pointer("/if/required") == Some(&serde_json::json!(["action"]))
}

/// The statuses whose answers carry no body (`faults::carries_body`).
const BODILESS_STATUSES: [u16; 3] = [204, 205, 304];

/// Says on the `status` action what `faults::validate` refuses across its
/// fields: a `body` with a status whose answer carries none.
fn bodiless_statuses(doc: &mut serde_json::Value) {
    let actions = doc
        .pointer_mut("/components/schemas/FaultAction/oneOf")
        .and_then(serde_json::Value::as_array_mut);
    for action in actions.into_iter().flatten() {
        if action.pointer("/properties/kind/enum/0") == Some(&serde_json::json!("status")) {
            action["if"] = serde_json::json!({
                "required": ["status"],
                "properties": {"status": {"enum": BODILESS_STATUSES}}
            });
            action["then"] = serde_json::json!({"not": {"required": ["body"]}});
        }
    }
}

/// Marks every fault action `additionalProperties: false`, as serde reads
/// them (`deny_unknown_fields`), which utoipa says of structs but not of an
/// enum's variants.
fn closed_fault_actions(doc: &mut serde_json::Value) {
    let actions = doc
        .pointer_mut("/components/schemas/FaultAction/oneOf")
        .and_then(serde_json::Value::as_array_mut);
    for action in actions.into_iter().flatten() {
        action["additionalProperties"] = false.into();
    }
}

/// Says on the `oversized` action what `faults::validate` refuses: a
/// `bytes` below [`MIN_OVERSIZED_BYTES`](crate::faults::MIN_OVERSIZED_BYTES),
/// since its answer is a JSON object of exactly that size.
fn smallest_oversized(doc: &mut serde_json::Value) {
    let actions = doc
        .pointer_mut("/components/schemas/FaultAction/oneOf")
        .and_then(serde_json::Value::as_array_mut);
    for action in actions.into_iter().flatten() {
        if action.pointer("/properties/kind/enum/0") == Some(&serde_json::json!("oversized"))
            && let Some(bytes) = action.pointer_mut("/properties/bytes")
        {
            bytes["minimum"] = crate::faults::MIN_OVERSIZED_BYTES.into();
            bytes["description"] = "The answer's size: a JSON object of exactly this many \
                bytes (`{\"padding\":\"xx…\"}`, or `{` and `}` around spaces below 14)."
                .into();
        }
    }
}

/// Leaves the admin API out of `doc`: its paths, its tag and the
/// `X-Admin-Key` security scheme. The schemas stay (some are shared with
/// the public API, and one no path names is harmless).
fn without_admin(doc: &mut serde_json::Value) {
    if let Some(paths) = doc
        .get_mut("paths")
        .and_then(serde_json::Value::as_object_mut)
    {
        paths.retain(|path, _| !path.starts_with("/admin/"));
    }
    if let Some(tags) = doc
        .get_mut("tags")
        .and_then(serde_json::Value::as_array_mut)
    {
        tags.retain(|tag| tag["name"] != "admin");
    }
    if let Some(schemes) = doc
        .pointer_mut("/components/securitySchemes")
        .and_then(serde_json::Value::as_object_mut)
    {
        schemes.remove("admin_key");
    }
}

/// This document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "ops",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json"))
)]
pub(crate) async fn openapi_json(State(App(app)): State<App>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        document_for(app.request_timeout, app.admin_key.is_some()),
    )
        .into_response()
}

/// The document as this server answers it: the routes and limits that
/// depend on its settings are its own. Without an admin key the admin API
/// is off (every `/admin/` path answers 404), so its paths, tag and
/// security scheme are left out: a client generated from the document, or
/// a conformance run, meets only routes that are there. A `slow_body`
/// pause, and the `latency_ms` of a rule with an action, must stay below
/// the request timeout (`faults::check_pauses`), so their maximum is the
/// timeout less a millisecond, where the fixed document says ten minutes.
pub(crate) fn document_for(request_timeout: Duration, admin: bool) -> String {
    let mut doc: serde_json::Value = match serde_json::from_str(document()) {
        Ok(doc) => doc,
        Err(_) => return document().to_string(),
    };
    if !admin {
        without_admin(&mut doc);
    }
    let below_timeout = u64::try_from(request_timeout.as_millis())
        .unwrap_or(u64::MAX)
        .saturating_sub(1)
        .min(likekit_proto::admin::MAX_LATENCY_MS);
    let actions = doc
        .pointer_mut("/components/schemas/FaultAction/oneOf")
        .and_then(serde_json::Value::as_array_mut);
    for action in actions.into_iter().flatten() {
        if action
            .pointer("/properties/kind/enum/0")
            .and_then(serde_json::Value::as_str)
            == Some("slow_body")
        {
            if let Some(interval) = action.pointer_mut("/properties/interval_ms") {
                interval["maximum"] = below_timeout.into();
            }
        }
    }
    let all = doc
        .pointer_mut("/components/schemas/FaultRule/allOf")
        .and_then(serde_json::Value::as_array_mut);
    let on_action = all
        .into_iter()
        .flatten()
        .find(|entry| is_action_rule(entry))
        .and_then(|entry| entry.pointer_mut("/then/properties"));
    if let Some(properties) = on_action {
        properties["latency_ms"] = serde_json::json!({"maximum": below_timeout});
    }
    doc.to_string()
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use serde::Serialize;
    use serde_json::{Value, json};

    use super::*;

    /// Every property of the journal's entries, the rules and the views
    /// says what it is at its own level (a property that may be null had
    /// its description inside its `oneOf`, where readers do not look), and
    /// in JSON's words, not Rust's (`null`, not `None`).
    #[test]
    fn every_property_is_described_at_its_own_level() {
        let doc: Value = serde_json::from_str(document()).expect("the document is JSON");
        for name in [
            "JournalEntry",
            "Journal",
            "FaultRule",
            "PostLikes",
            "StoredPost",
        ] {
            let properties = doc["components"]["schemas"][name]["properties"]
                .as_object()
                .unwrap_or_else(|| panic!("{name} has properties"));
            for (field, property) in properties {
                let description = property["description"].as_str().unwrap_or_default();
                assert!(!description.is_empty(), "{name}.{field}: {property}");
                assert!(
                    !description.contains("`None`"),
                    "{name}.{field}: {description}"
                );
            }
        }
    }

    /// A rule with every optional field set, so that all serialise.
    fn every_fault_field() -> FaultRule {
        FaultRule {
            method: Some(FaultMethod::Post),
            post: Some(PostId::MIN),
            user: Some(UserId::MIN),
            nth: Some(1),
            every: Some(1),
            first: Some(1),
            after: Some(1),
            probability: 0.5,
            phase: FaultPhase::After,
            action: Some(FaultAction::Drop {}),
            tag: Some("t".into()),
            ..FaultRule::new(FaultRoute::All)
        }
    }

    fn fields_of(value: &impl Serialize) -> BTreeSet<String> {
        match serde_json::to_value(value).expect("serialise") {
            Value::Object(map) => map.keys().cloned().collect(),
            other => panic!("not an object: {other}"),
        }
    }

    fn schema_fields(doc: &Value, name: &str) -> BTreeSet<String> {
        doc["components"]["schemas"][name]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("no schema {name}"))
            .keys()
            .cloned()
            .collect()
    }

    /// The limits the schemas state are the server's own constants, and the
    /// admin bodies refuse unknown fields (`additionalProperties: false`).
    #[test]
    fn schema_limits_are_the_servers_rules() {
        use likekit_proto::admin::{
            MAX_FRIENDS, MAX_LATENCY_MS, MAX_NAME_CHARS, MAX_OVERSIZED_BYTES, MAX_RULES,
            MAX_TAG_CHARS, MAX_TOKEN_TTL_SECS, NAME_FORBIDDEN, NAME_PATTERN, TAG_PATTERN,
        };
        let doc: Value = serde_json::from_str(document()).expect("json");
        let schemas = &doc["components"]["schemas"];
        for body in ["NewUser", "SeedUser"] {
            let name = &schemas[body]["properties"]["name"];
            assert_eq!(name["maxLength"], json!(MAX_NAME_CHARS), "{body}");
            assert_eq!(name["minLength"], json!(1), "{body}");
            assert_eq!(name["pattern"], json!(NAME_PATTERN), "{body}");
            assert_eq!(name["not"]["pattern"], json!(NAME_FORBIDDEN), "{body}");
        }
        // The seed is the bodies' one unsigned 64-bit number.
        let seed = &schemas["FaultRules"]["properties"]["seed"];
        assert_eq!(
            (&seed["format"], &seed["maximum"]),
            (&json!("uint64"), &json!(u64::MAX))
        );
        for body in ["Friends", "StoredUser", "SeedUser"] {
            let friends = &schemas[body]["properties"]["friends"];
            assert_eq!(friends["maxItems"], json!(MAX_FRIENDS), "{body}");
        }
        let likers = &schemas["StoredPost"]["properties"]["recent_likers"];
        assert_eq!(likers["maxItems"], json!(likekit_proto::RECENT_LIKERS));
        let ttl = &schemas["TokenRequest"]["properties"]["ttl_secs"];
        assert_eq!(ttl["maximum"], json!(MAX_TOKEN_TTL_SECS));
        for body in ["FaultRules", "NewFaultRules"] {
            let rules = &schemas[body]["properties"]["rules"];
            assert_eq!(rules["maxItems"], json!(MAX_RULES), "{body}");
        }
        // A tag is the same in a rule and in the queries that read and
        // remove by it: the rules' `tag`, the journal's `fault_tag`.
        let query_tag = |path: &str, method: &str, name: &str| {
            doc["paths"][path][method]["parameters"]
                .as_array()
                .unwrap_or_else(|| panic!("{method} {path} takes a query"))
                .iter()
                .find(|p| p["name"] == name)
                .unwrap_or_else(|| panic!("{method} {path}: no parameter {name}"))["schema"]
                .clone()
        };
        let mut tags = vec![schemas["FaultRule"]["properties"]["tag"].clone()];
        for method in ["get", "delete"] {
            tags.push(query_tag("/admin/faults", method, "tag"));
            tags.push(query_tag("/admin/requests", method, "fault_tag"));
        }
        for tag in &tags {
            assert_eq!(tag["minLength"], json!(1), "{tag}");
            assert_eq!(tag["maxLength"], json!(MAX_TAG_CHARS), "{tag}");
            assert_eq!(tag["pattern"], json!(TAG_PATTERN), "{tag}");
        }
        let latency = &schemas["FaultRule"]["properties"]["latency_ms"];
        assert_eq!(latency["maximum"], json!(MAX_LATENCY_MS));
        let action = |kind: &str| {
            schemas["FaultAction"]["oneOf"]
                .as_array()
                .expect("FaultAction is a oneOf")
                .iter()
                .find(|v| v["properties"]["kind"]["enum"][0] == kind)
                .unwrap_or_else(|| panic!("no action {kind}"))["properties"]
                .clone()
        };
        let status = &action("status")["status"];
        assert_eq!(
            (&status["minimum"], &status["maximum"]),
            (&json!(200), &json!(599))
        );
        let rule = &schemas["FaultRule"]["properties"];
        for field in ["nth", "every", "first"] {
            assert_eq!(rule[field]["minimum"], json!(1), "{field}");
        }
        let slow = action("slow_body");
        assert_eq!(slow["bytes"]["minimum"], json!(1));
        assert_eq!(slow["interval_ms"]["maximum"], json!(MAX_LATENCY_MS));
        assert_eq!(
            action("oversized")["bytes"]["maximum"],
            json!(MAX_OVERSIZED_BYTES)
        );
        assert_eq!(
            action("oversized")["bytes"]["minimum"],
            json!(crate::faults::MIN_OVERSIZED_BYTES)
        );
        let posts = &doc["paths"]["/likes"]["get"]["parameters"][0];
        assert_eq!(posts["name"], "posts");
        assert_eq!(
            (&posts["style"], &posts["explode"]),
            (&json!("form"), &json!(false))
        );
        assert_eq!(
            posts["schema"]["maxItems"],
            json!(likekit_proto::MAX_BATCH_POSTS)
        );
        assert_eq!(posts["schema"]["minItems"], json!(1));
        for body in [
            "NewUser",
            "NewPost",
            "Friends",
            "TokenRequest",
            "FaultRules",
            "NewFaultRules",
            "FaultRule",
            "Seed",
        ] {
            assert_eq!(
                schemas[body]["additionalProperties"],
                json!(false),
                "{body} must refuse unknown fields"
            );
        }
    }

    /// Every fault action refuses a field it does not know, those without
    /// fields of their own (`drop`…) included, and its schema says so.
    #[test]
    fn fault_actions_refuse_unknown_fields_as_the_schema_says() {
        let doc: Value = serde_json::from_str(document()).expect("json");
        let actions = doc["components"]["schemas"]["FaultAction"]["oneOf"]
            .as_array()
            .expect("a oneOf");
        assert_eq!(actions.len(), 8);
        for action in actions {
            let kind = action["properties"]["kind"]["enum"][0]
                .as_str()
                .expect("kind");
            let example = match kind {
                "status" => json!({"kind": kind, "status": 500}),
                "truncate" => json!({"kind": kind, "bytes": 3}),
                "slow_body" => json!({"kind": kind, "bytes": 3, "interval_ms": 10}),
                "oversized" => json!({"kind": kind, "bytes": 3}),
                _ => json!({"kind": kind}),
            };
            assert!(
                serde_json::from_value::<FaultAction>(example.clone()).is_ok(),
                "{example}"
            );
            let mut extra = example;
            extra["unknown"] = json!(1);
            let refused = serde_json::from_value::<FaultAction>(extra).is_err();
            let refused_by_schema = action["additionalProperties"] == json!(false);
            assert!(refused, "{kind} takes an unknown field");
            assert!(refused_by_schema, "{kind}'s schema takes an unknown field");
        }
    }

    /// The document's `if`/`then` on a rule names exactly the actions the
    /// server refuses in phase `before`.
    #[test]
    fn the_after_only_actions_are_the_servers() {
        let doc: Value = serde_json::from_str(document()).expect("json");
        let rule = &doc["components"]["schemas"]["FaultRule"];
        assert_eq!(
            rule["if"]["properties"]["action"]["properties"]["kind"]["enum"],
            json!(AFTER_ONLY_ACTIONS)
        );
        assert_eq!(rule["then"]["properties"]["phase"]["const"], json!("after"));
        let actions = [
            FaultAction::Status {
                status: 500,
                body: None,
                retry_after_secs: None,
            },
            FaultAction::Drop {},
            FaultAction::Reset {},
            FaultAction::Hang {},
            FaultAction::Truncate { bytes: 3 },
            FaultAction::Malformed {},
            FaultAction::SlowBody {
                bytes: 3,
                interval_ms: 10,
            },
            FaultAction::Oversized { bytes: 3 },
        ];
        for action in actions {
            let kind = serde_json::to_value(&action).expect("json")["kind"].clone();
            let before = FaultRules::new(vec![FaultRule {
                action: Some(action),
                ..FaultRule::new(FaultRoute::Like)
            }]);
            let refused = crate::faults::validate(&before).is_err();
            let named = AFTER_ONLY_ACTIONS.iter().any(|k| kind == *k);
            assert_eq!(refused, named, "{kind}");
        }
    }

    /// The document's `if`/`then` on the `status` action names exactly
    /// the statuses the server refuses a `body` for.
    #[test]
    fn the_bodiless_statuses_are_the_servers() {
        let doc: Value = serde_json::from_str(document()).expect("json");
        let status = doc["components"]["schemas"]["FaultAction"]["oneOf"]
            .as_array()
            .expect("a oneOf")
            .iter()
            .find(|a| a["properties"]["kind"]["enum"][0] == "status")
            .expect("status")
            .clone();
        assert_eq!(
            status["if"]["properties"]["status"]["enum"],
            json!(BODILESS_STATUSES)
        );
        assert_eq!(status["then"], json!({"not": {"required": ["body"]}}));
        for code in 200..=599 {
            let rules = FaultRules::new(vec![FaultRule {
                action: Some(FaultAction::Status {
                    status: code,
                    body: Some(json!({})),
                    retry_after_secs: None,
                }),
                ..FaultRule::new(FaultRoute::Like)
            }]);
            let refused = crate::faults::validate(&rules).is_err();
            assert_eq!(refused, BODILESS_STATUSES.contains(&code), "{code}");
        }
    }

    /// A `slow_body` pause the document allows is one this server takes:
    /// below its request timeout.
    #[test]
    fn the_slow_body_pause_is_bounded_by_the_request_timeout() {
        let interval = |timeout: Duration| {
            let doc: Value = serde_json::from_str(&document_for(timeout, true)).expect("json");
            doc["components"]["schemas"]["FaultAction"]["oneOf"]
                .as_array()
                .expect("a oneOf")
                .iter()
                .find(|a| a["properties"]["kind"]["enum"][0] == "slow_body")
                .expect("slow_body")["properties"]["interval_ms"]["maximum"]
                .clone()
        };
        assert_eq!(interval(Duration::from_secs(30)), json!(29_999));
        assert_eq!(interval(Duration::from_millis(1500)), json!(1_499));
        assert_eq!(
            interval(Duration::from_secs(3600)),
            json!(likekit_proto::admin::MAX_LATENCY_MS)
        );
        // The rule the server applies agrees at the bound.
        let rules = |interval_ms| {
            FaultRules::new(vec![FaultRule {
                phase: FaultPhase::After,
                action: Some(FaultAction::SlowBody {
                    bytes: 1,
                    interval_ms,
                }),
                ..FaultRule::new(FaultRoute::Like)
            }])
        };
        let timeout = Duration::from_secs(30);
        assert!(crate::faults::check_pauses(&rules(29_999), timeout).is_ok());
        assert!(crate::faults::check_pauses(&rules(30_000), timeout).is_err());
    }

    /// The latency of a rule with an action that the document allows is
    /// one this server takes: below its request timeout; without an
    /// action, any latency the field allows.
    #[test]
    fn an_actions_latency_is_bounded_by_the_request_timeout() {
        let doc: Value =
            serde_json::from_str(&document_for(Duration::from_millis(1500), true)).expect("json");
        let bound = doc["components"]["schemas"]["FaultRule"]["allOf"]
            .as_array()
            .expect("an allOf")
            .iter()
            .find(|c| is_action_rule(c))
            .expect("the rules on a rule with an action")
            .clone();
        assert_eq!(
            bound["if"]["properties"]["action"],
            json!({"type": "object"})
        );
        assert_eq!(
            bound["then"]["properties"]["latency_ms"]["maximum"],
            json!(1_499)
        );
        let rule = |latency_ms, action| {
            FaultRules::new(vec![FaultRule {
                latency_ms,
                action,
                ..FaultRule::new(FaultRoute::Like)
            }])
        };
        let timeout = Duration::from_millis(1500);
        let drop = Some(FaultAction::Drop {});
        assert!(crate::faults::check_pauses(&rule(1_499, drop.clone()), timeout).is_ok());
        assert!(crate::faults::check_pauses(&rule(1_500, drop), timeout).is_err());
        assert!(crate::faults::check_pauses(&rule(600_000, None), timeout).is_ok());
    }

    /// Descriptions are written for the document's readers: no rustdoc
    /// link (`[`X`]`) from the doc comments they come from.
    #[test]
    fn descriptions_hold_no_rustdoc_links() {
        fn walk(value: &Value, path: &str, found: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    for (key, item) in map {
                        if key == "description" && item.as_str().is_some_and(|d| d.contains("[`")) {
                            found.push(format!("{path}: {item}"));
                        }
                        walk(item, &format!("{path}/{key}"), found);
                    }
                }
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        walk(item, &format!("{path}[{i}]"), found);
                    }
                }
                _ => {}
            }
        }
        let doc: Value = serde_json::from_str(document()).expect("json");
        let mut found = Vec::new();
        walk(&doc, "", &mut found);
        assert!(found.is_empty(), "{found:#?}");
    }

    /// Every object schema carries an example, and every example is a
    /// valid value of its type (it parses, and the server's own types
    /// serialise back to it).
    #[test]
    fn every_body_has_an_example_of_its_own_type() {
        fn check<T: serde::de::DeserializeOwned + Serialize>(name: &str, example: &Value) {
            let value: T = serde_json::from_value(example.clone())
                .unwrap_or_else(|e| panic!("{name}'s example does not parse: {e}"));
            let back = serde_json::to_value(&value).expect("serialise");
            // Top-level values come back as given (nested ones may gain
            // their defaults).
            for (key, field) in example.as_object().expect("an object") {
                if !(field.is_null() || field.is_array() || field.is_object()) {
                    assert_eq!(&back[key], field, "{name}.{key} does not round-trip");
                }
            }
        }
        let doc: Value = serde_json::from_str(document()).expect("json");
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        let mut checked = 0;
        for (name, schema) in schemas {
            if schema["type"] != json!("object") {
                continue;
            }
            let examples = schema["examples"].as_array();
            let example = examples
                .and_then(|e| e.first())
                .unwrap_or_else(|| panic!("{name} has no example"));
            match name.as_str() {
                "LikeState" => check::<LikeState>(name, example),
                "PostLikes" => check::<PostLikes>(name, example),
                "BatchLikes" => check::<BatchLikes>(name, example),
                "ErrorBody" => check::<ErrorBody>(name, example),
                "ErrorDetail" => check::<ErrorDetail>(name, example),
                "NewUser" => check::<NewUser>(name, example),
                "NewPost" => check::<NewPost>(name, example),
                "Friends" => check::<Friends>(name, example),
                "TokenRequest" => check::<TokenRequest>(name, example),
                "TokenResponse" => check::<TokenResponse>(name, example),
                "FaultRule" => check::<FaultRule>(name, example),
                "FaultRules" => check::<FaultRules>(name, example),
                "NewFaultRules" => check::<NewFaultRules>(name, example),
                "RuleState" => check::<RuleState>(name, example),
                "Seed" => check::<Seed>(name, example),
                "SeedUser" => check::<SeedUser>(name, example),
                "SeedPost" => check::<SeedPost>(name, example),
                "StoredUser" => check::<StoredUser>(name, example),
                "StoredPost" => check::<StoredPost>(name, example),
                "Journal" => check::<Journal>(name, example),
                "JournalEntry" => check::<JournalEntry>(name, example),
                "Health" => assert_eq!(example, &json!({"status": "ok"})),
                "Ack" => assert_eq!(example, &json!({"ok": true})),
                other => panic!("no check for {other}'s example: add one here"),
            }
            checked += 1;
        }
        assert!(checked >= 22, "{checked} examples checked");
    }

    /// The derived schemas have exactly the fields the types serialise.
    #[test]
    fn schemas_match_the_wire_types() {
        let doc: Value = serde_json::from_str(document()).expect("json");
        let (post, user) = (PostId::MIN, UserId::MIN);
        let state = LikeState {
            count: 1,
            liked_by_me: true,
            version: 1,
        };
        let likes = PostLikes {
            count: 1,
            liked_by_me: false,
            friends: vec![],
            version: 1,
        };
        let checks: Vec<(&str, BTreeSet<String>)> = vec![
            ("LikeState", fields_of(&state)),
            ("PostLikes", fields_of(&likes)),
            (
                "BatchLikes",
                fields_of(&BatchLikes {
                    posts: BTreeMap::new(),
                }),
            ),
            ("ErrorBody", fields_of(&ErrorBody::new("c", "m"))),
            ("ErrorDetail", fields_of(&ErrorBody::new("c", "m").error)),
            (
                "NewUser",
                fields_of(&NewUser {
                    id: user,
                    name: "A".into(),
                }),
            ),
            ("NewPost", fields_of(&NewPost { id: post })),
            ("Friends", fields_of(&Friends { friends: vec![] })),
            (
                "TokenRequest",
                fields_of(&TokenRequest {
                    user_id: user,
                    ttl_secs: 1,
                    valid_from_secs: -1,
                }),
            ),
            (
                "TokenResponse",
                fields_of(&TokenResponse { token: "t".into() }),
            ),
            ("FaultRule", fields_of(&every_fault_field())),
            (
                "FaultRules",
                fields_of(&FaultRules {
                    seed: Some(1),
                    rules: vec![],
                    state: vec![RuleState::default()],
                }),
            ),
            ("NewFaultRules", fields_of(&NewFaultRules::new(vec![]))),
            (
                "RuleState",
                fields_of(&RuleState {
                    fail_next_left: Some(1),
                    first_left: Some(1),
                    ..RuleState::default()
                }),
            ),
            ("Seed", fields_of(&Seed::default())),
            (
                "SeedUser",
                fields_of(&SeedUser {
                    id: user,
                    name: "A".into(),
                    friends: vec![],
                }),
            ),
            (
                "SeedPost",
                fields_of(&SeedPost {
                    id: post,
                    likers: vec![],
                }),
            ),
            (
                "StoredUser",
                fields_of(&StoredUser {
                    id: user,
                    name: "A".into(),
                    friends: vec![],
                }),
            ),
            (
                "StoredPost",
                fields_of(&StoredPost {
                    id: post,
                    count: 0,
                    version: 0,
                    recent_likers: vec![],
                }),
            ),
        ];
        for (name, wire) in checks {
            assert_eq!(schema_fields(&doc, name), wire, "schema {name}");
        }
    }

    #[test]
    fn every_answer_declares_the_request_id() {
        let doc: Value = serde_json::from_str(document()).expect("json");
        let mut answers = 0;
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("item") {
                for (status, response) in operation["responses"].as_object().expect("responses") {
                    answers += 1;
                    assert!(
                        response["headers"]["X-Request-Id"].is_object(),
                        "{method} {path} {status}"
                    );
                }
            }
        }
        assert!(answers > 40, "{answers}");
    }

    /// Each operation lists the answers the middleware, the store and the
    /// fault rules can give it, not only its handler's own.
    #[test]
    fn every_operation_lists_the_answers_it_can_get() {
        let doc: Value = serde_json::from_str(document()).expect("json");
        let mut operations = 0;
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("item") {
                operations += 1;
                let responses = &operation["responses"];
                let lists = |status: &str, code: &str| {
                    let description = responses[status]["description"].as_str();
                    assert!(
                        description.is_some_and(|d| d.contains(&format!("`{code}`"))),
                        "{method} {path}: {status} {code} is not listed: {description:?}"
                    );
                };
                lists("413", "payload_too_large");
                lists("400", "bad_request");
                lists("500", "internal");
                lists("503", "timeout");
                let store = STORE_OPERATIONS.contains(&(path.as_str(), method.as_str()));
                if store {
                    lists("500", "storage_error");
                    lists("503", "shutting_down");
                    lists("503", "unavailable");
                }
                if path.starts_with("/admin") {
                    lists("401", "bad_admin_key");
                    if operation["requestBody"].is_object() {
                        lists("400", "bad_json");
                        lists("415", "unsupported_media_type");
                    }
                }
                let public = path.starts_with("/posts") || path == "/likes";
                assert_eq!(
                    responses["default"].is_object(),
                    public,
                    "{method} {path}: fault answers are listed on the like routes only"
                );
            }
        }
        assert!(operations >= 20, "{operations}");
        // Each store operation is one of the document's.
        for (path, method) in STORE_OPERATIONS {
            assert!(doc["paths"][path][method].is_object(), "{method} {path}");
        }
        // A handler's own answer for a status keeps its codes.
        let ready = doc["paths"]["/readyz"]["get"]["responses"]["503"]["description"]
            .as_str()
            .expect("readyz 503");
        assert!(
            ready.contains("`not_ready`") && ready.contains("`timeout`"),
            "{ready}"
        );
    }

    #[test]
    fn every_route_is_documented() {
        let doc: Value = serde_json::from_str(document()).expect("json");
        let paths = doc["paths"].as_object().expect("paths");
        for (path, method) in [
            ("/posts/{post_id}/like", "post"),
            ("/posts/{post_id}/like", "delete"),
            ("/posts/{post_id}/likes", "get"),
            ("/likes", "get"),
            ("/healthz", "get"),
            ("/livez", "get"),
            ("/readyz", "get"),
            ("/openapi.json", "get"),
            ("/metrics", "get"),
            ("/admin/users", "post"),
            ("/admin/posts", "post"),
            ("/admin/users/{id}/friends", "put"),
            ("/admin/tokens", "post"),
            ("/admin/faults", "put"),
            ("/admin/faults", "post"),
            ("/admin/faults", "get"),
            ("/admin/faults", "delete"),
            ("/admin/requests", "get"),
            ("/admin/requests", "delete"),
            ("/admin/reset", "post"),
            ("/admin/seed", "post"),
        ] {
            assert!(paths[path][method].is_object(), "{method} {path}");
        }
        assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    }
}
