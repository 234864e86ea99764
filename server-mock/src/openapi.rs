//! The OpenAPI document, generated from the handlers' annotations.
//!
//! The wire types live in `likekit_core::wire` (shared with the client, which
//! does not depend on utoipa), so their schemas are described here by
//! documentation-only twins; a test checks each twin has exactly the fields
//! the real type serialises.

use utoipa::{
    Modify, OpenApi, ToSchema,
    openapi::security::{ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityScheme},
};

use crate::{admin, api};

/// `{"count": 1204, "liked_by_me": true, "version": 9}`
#[derive(ToSchema)]
#[schema(as = LikeState)]
#[allow(dead_code)]
pub(crate) struct LikeStateDoc {
    /// How many users like the post, exactly (read in the write's transaction).
    count: u64,
    /// Whether the caller likes the post after the write.
    liked_by_me: bool,
    /// Grows by one with every real change of the post's likes.
    version: u64,
}

/// One post as one viewer sees it.
#[derive(ToSchema)]
#[schema(as = PostLikes)]
#[allow(dead_code)]
pub(crate) struct PostLikesDoc {
    /// How many users like the post (may lag about a second).
    count: u64,
    /// Whether the viewer likes the post (always current).
    liked_by_me: bool,
    /// The viewer's friends among the post's recent likers, newest first.
    friends: Vec<String>,
    /// The version of `count` and `friends`.
    version: u64,
}

/// A feed page: post id (decimal string) → view; unknown posts are left out.
#[derive(ToSchema)]
#[schema(as = BatchLikes)]
#[allow(dead_code)]
pub(crate) struct BatchLikesDoc {
    posts: std::collections::BTreeMap<String, PostLikesDoc>,
}

/// Every error answer.
#[derive(ToSchema)]
#[schema(as = ErrorBody)]
#[allow(dead_code)]
pub(crate) struct ErrorBodyDoc {
    error: ErrorDetailDoc,
}

/// A stable code and a human message.
#[derive(ToSchema)]
#[schema(as = ErrorDetail)]
#[allow(dead_code)]
pub(crate) struct ErrorDetailDoc {
    /// `snake_case`, e.g. `post_not_found`, `invalid_token`, `rate_limited`.
    code: String,
    /// Human-readable explanation.
    message: String,
}

/// `POST /admin/users`
#[derive(ToSchema)]
#[schema(as = NewUser)]
#[allow(dead_code)]
pub(crate) struct NewUserDoc {
    id: u64,
    /// The display name friends see.
    name: String,
}

/// `POST /admin/posts`
#[derive(ToSchema)]
#[schema(as = NewPost)]
#[allow(dead_code)]
pub(crate) struct NewPostDoc {
    id: u64,
}

/// A user's own (directed) friend list.
#[derive(ToSchema)]
#[schema(as = Friends)]
#[allow(dead_code)]
pub(crate) struct FriendsDoc {
    friends: Vec<u64>,
}

/// `POST /admin/tokens`
#[derive(ToSchema)]
#[schema(as = TokenRequest)]
#[allow(dead_code)]
pub(crate) struct TokenRequestDoc {
    user_id: u64,
    /// Lifetime in seconds (default 3600).
    #[schema(default = 3600)]
    ttl_secs: Option<u64>,
}

/// A signed HS256 JWT.
#[derive(ToSchema)]
#[schema(as = TokenResponse)]
#[allow(dead_code)]
pub(crate) struct TokenResponseDoc {
    token: String,
}

/// Which public route a rule applies to.
#[derive(ToSchema)]
#[schema(as = FaultRoute)]
#[allow(dead_code)]
pub(crate) enum FaultRouteDoc {
    #[schema(rename = "like")]
    Like,
    #[schema(rename = "unlike")]
    Unlike,
    #[schema(rename = "likes")]
    Likes,
    #[schema(rename = "batch")]
    Batch,
    #[schema(rename = "*")]
    All,
}

/// One fault rule; every field but `route` defaults to "no fault".
#[derive(ToSchema)]
#[schema(as = FaultRule)]
#[allow(dead_code)]
pub(crate) struct FaultRuleDoc {
    route: FaultRouteDoc,
    /// Fixed delay before the request is handled.
    latency_ms: Option<u64>,
    /// Extra uniform random delay in `0..=jitter_ms`.
    jitter_ms: Option<u64>,
    /// Probability (0..=1) of answering `status`.
    error_rate: Option<f64>,
    /// Status of injected errors (default 503).
    #[schema(default = 503)]
    status: Option<u16>,
    /// Probability (0..=1) of closing the connection without an answer.
    drop_rate: Option<f64>,
    /// Answer `status` to the next N matching requests.
    fail_next: Option<u64>,
}

/// `PUT /admin/faults`: replaces every rule.
#[derive(ToSchema)]
#[schema(as = FaultRules)]
#[allow(dead_code)]
pub(crate) struct FaultRulesDoc {
    rules: Vec<FaultRuleDoc>,
}

/// A user in a seed document.
#[derive(ToSchema)]
#[schema(as = SeedUser)]
#[allow(dead_code)]
pub(crate) struct SeedUserDoc {
    id: u64,
    name: String,
    friends: Option<Vec<u64>>,
}

/// A post in a seed document, with its likers oldest first.
#[derive(ToSchema)]
#[schema(as = SeedPost)]
#[allow(dead_code)]
pub(crate) struct SeedPostDoc {
    id: u64,
    likers: Option<Vec<u64>>,
}

/// The `--seed FILE` document.
#[derive(ToSchema)]
#[schema(as = Seed)]
#[allow(dead_code)]
pub(crate) struct SeedDoc {
    users: Option<Vec<SeedUserDoc>>,
    posts: Option<Vec<SeedPostDoc>>,
}

/// `{"status": "ok"}`
#[derive(ToSchema)]
#[schema(as = Health)]
#[allow(dead_code)]
pub(crate) struct HealthDoc {
    status: String,
}

/// `{"ok": true}`
#[derive(ToSchema)]
#[schema(as = Ack)]
#[allow(dead_code)]
pub(crate) struct AckDoc {
    ok: bool,
}

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
        api::openapi_json,
        api::metrics_text,
        admin::create_user,
        admin::create_post,
        admin::set_friends,
        admin::mint_token,
        admin::set_faults,
        admin::clear_faults,
        admin::reset,
        admin::seed,
    ),
    components(schemas(
        LikeStateDoc, PostLikesDoc, BatchLikesDoc, ErrorBodyDoc, ErrorDetailDoc,
        NewUserDoc, NewPostDoc, FriendsDoc, TokenRequestDoc, TokenResponseDoc,
        FaultRouteDoc, FaultRuleDoc, FaultRulesDoc, SeedDoc, SeedUserDoc, SeedPostDoc,
        HealthDoc, AckDoc,
    )),
    modifiers(&Security),
    tags(
        (name = "likes", description = "Liking and reading likes"),
        (name = "ops", description = "Health, metrics and this document"),
        (name = "admin", description = "Test control; only with --admin-key"),
    )
)]
struct ApiDoc;

/// The OpenAPI document as JSON.
pub(crate) fn document() -> String {
    ApiDoc::openapi()
        .to_json()
        .unwrap_or_else(|_| "{}".to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use likekit_core::wire::{
        BatchLikes, ErrorBody, LikeState, PostLikes,
        admin::{
            FaultRoute, FaultRule, FaultRules, Friends, NewPost, NewUser, Seed, SeedPost, SeedUser,
            TokenRequest, TokenResponse,
        },
    };
    use serde::Serialize;
    use serde_json::Value;

    use super::*;

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

    #[test]
    fn twins_match_the_wire_types() {
        let doc: Value = serde_json::from_str(&document()).expect("json");
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
                    id: 1,
                    name: "A".into(),
                }),
            ),
            ("NewPost", fields_of(&NewPost { id: 1 })),
            ("Friends", fields_of(&Friends { friends: vec![] })),
            (
                "TokenRequest",
                fields_of(&TokenRequest {
                    user_id: 1,
                    ttl_secs: 1,
                }),
            ),
            (
                "TokenResponse",
                fields_of(&TokenResponse { token: "t".into() }),
            ),
            ("FaultRule", fields_of(&FaultRule::new(FaultRoute::All))),
            ("FaultRules", fields_of(&FaultRules::default())),
            ("Seed", fields_of(&Seed::default())),
            (
                "SeedUser",
                fields_of(&SeedUser {
                    id: 1,
                    name: "A".into(),
                    friends: vec![],
                }),
            ),
            (
                "SeedPost",
                fields_of(&SeedPost {
                    id: 1,
                    likers: vec![],
                }),
            ),
        ];
        for (name, wire) in checks {
            assert_eq!(schema_fields(&doc, name), wire, "schema {name}");
        }
    }

    #[test]
    fn every_route_is_documented() {
        let doc: Value = serde_json::from_str(&document()).expect("json");
        let paths = doc["paths"].as_object().expect("paths");
        for (path, method) in [
            ("/posts/{post_id}/like", "post"),
            ("/posts/{post_id}/like", "delete"),
            ("/posts/{post_id}/likes", "get"),
            ("/likes", "get"),
            ("/healthz", "get"),
            ("/openapi.json", "get"),
            ("/metrics", "get"),
            ("/admin/users", "post"),
            ("/admin/posts", "post"),
            ("/admin/users/{id}/friends", "put"),
            ("/admin/tokens", "post"),
            ("/admin/faults", "put"),
            ("/admin/faults", "delete"),
            ("/admin/reset", "post"),
            ("/admin/seed", "post"),
        ] {
            assert!(paths[path][method].is_object(), "{method} {path}");
        }
        assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    }
}
