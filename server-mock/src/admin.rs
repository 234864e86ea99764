//! The admin and test-control API, mounted under `/admin` only when the
//! server has an admin key, and guarded by `X-Admin-Key`.

use axum::{
    Json,
    extract::{Query, RawQuery, Request, State, rejection::QueryRejection},
    http::{HeaderValue, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use likekit_proto::{
    ErrorBody, PostId, UserId,
    admin::{
        Ack, FaultFilter, FaultRules, Friends, Journal, NewFaultRules, NewPost, NewUser,
        RequestFilter, RequestWait, Seed, StoredPost, StoredUser, TokenRequest, TokenResponse,
        check_tag,
    },
    code,
};
use subtle::ConstantTimeEq;
use utoipa::ToSchema;

use crate::{
    body::AppJson,
    error::ApiError,
    extract::{NoQuery, PathId},
    state::App,
    store::{StoreError, Upsert, rules},
};

const ACK: Json<Ack> = Json(Ack { ok: true });

/// Whether `given` is the admin key `expected`, in a time that tells
/// nothing of the key: not where the two first differ, and not the key's
/// length either (a slice compare in constant time still ends at once when
/// the lengths differ). Both are hashed (SHA-256), and the hashes compared
/// in constant time.
fn is_admin_key(given: &[u8], expected: &[u8]) -> bool {
    use sha2::{Digest as _, Sha256};
    !expected.is_empty() && bool::from(Sha256::digest(given).ct_eq(&Sha256::digest(expected)))
}

/// The challenge of a 401 `bad_admin_key` (`WWW-Authenticate`, which RFC
/// 9110 asks of every 401): the scheme names the header the key goes in,
/// the realm tells it from the sign-in tokens' `Bearer realm="likekit"`.
pub(crate) const ADMIN_CHALLENGE: &str = "X-Admin-Key realm=\"likekit-admin\"";

/// Refuses admin requests without the right `X-Admin-Key` ([`is_admin_key`];
/// a server without a key has no admin API, and refuses every one), with
/// the [`ADMIN_CHALLENGE`].
pub(crate) async fn require_key(
    State(App(app)): State<App>,
    request: Request,
    next: Next,
) -> Response {
    let expected = app.admin_key.as_deref().unwrap_or_default().as_bytes();
    // Sent twice, the key is refused whatever either copy says.
    let given = match crate::extract::single_header(request.headers(), "x-admin-key") {
        Ok(Some(value)) => value.as_bytes(),
        Ok(None) | Err(()) => b"",
    };
    if !is_admin_key(given, expected) {
        return ApiError {
            www_authenticate: Some(HeaderValue::from_static(ADMIN_CHALLENGE)),
            ..ApiError::new(
                StatusCode::UNAUTHORIZED,
                code::BAD_ADMIN_KEY,
                "send the server's admin key in X-Admin-Key",
            )
        }
        .into_response();
    }
    next.run(request).await
}

fn created(upsert: Upsert) -> StatusCode {
    match upsert {
        Upsert::Created => StatusCode::CREATED,
        Upsert::Updated => StatusCode::OK,
    }
}

/// Create a user (201), or rename an existing one (200).
#[utoipa::path(
    post,
    path = "/admin/users",
    tag = "admin",
    request_body = NewUser,
    security(("admin_key" = [])),
    responses(
        (status = 201, description = "Created", body = NewUser),
        (status = 200, description = "Existed; renamed", body = NewUser),
        (status = 400, description = "`bad_user_id`, `bad_name`, `bad_json`, `bad_query` (a query: none is taken)", body = ErrorBody),
        (status = 401, description = "`bad_admin_key`", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`", body = ErrorBody),
    )
)]
pub(crate) async fn create_user(
    State(App(app)): State<App>,
    _: NoQuery,
    AppJson(user): AppJson<NewUser>,
) -> Result<(StatusCode, Json<NewUser>), ApiError> {
    rules::check_name(&user.name)?;
    let upsert = app.store.put_user(user.id, &user.name).await?;
    if upsert == Upsert::Updated {
        // The name may appear in anyone's friends line.
        app.views.forget_all_friends();
    }
    Ok((created(upsert), Json(user)))
}

/// Create a post (201); an existing post is left as it is (200).
#[utoipa::path(
    post,
    path = "/admin/posts",
    tag = "admin",
    request_body = NewPost,
    security(("admin_key" = [])),
    responses(
        (status = 201, description = "Created", body = NewPost),
        (status = 200, description = "Already existed", body = NewPost),
        (status = 400, description = "`bad_post_id`, `bad_json`, `bad_query` (a query: none is taken)", body = ErrorBody),
        (status = 401, description = "`bad_admin_key`", body = ErrorBody),
    )
)]
pub(crate) async fn create_post(
    State(App(app)): State<App>,
    _: NoQuery,
    AppJson(post): AppJson<NewPost>,
) -> Result<(StatusCode, Json<NewPost>), ApiError> {
    let upsert = app.store.put_post(post.id).await?;
    Ok((created(upsert), Json(post)))
}

/// A user as stored: the name and the own (directed) friend list.
#[utoipa::path(
    get,
    path = "/admin/users/{id}",
    tag = "admin",
    params(("id" = UserId, Path, description = "The user")),
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "The user", body = StoredUser),
        (status = 400, description = "`bad_user_id`, `bad_query` (a query: none is taken)", body = ErrorBody),
        (status = 404, description = "`user_not_found`", body = ErrorBody),
    )
)]
pub(crate) async fn get_user(
    State(App(app)): State<App>,
    _: NoQuery,
    PathId(user): PathId<UserId>,
) -> Result<Json<StoredUser>, ApiError> {
    let (name, friends) = tokio::try_join!(app.store.user_name(user), app.store.friends(user))?;
    let name = name.ok_or(StoreError::UserNotFound(user))?;
    let mut friends: Vec<UserId> = friends.into_iter().map(|(id, _)| id).collect();
    friends.sort_unstable();
    Ok(Json(StoredUser {
        id: user,
        name,
        friends,
    }))
}

/// A post as stored: its count, version and most recent likers, read from
/// the store past the view cache.
///
/// The public `GET /posts/{id}/likes` answers the count from a cache of
/// about a second (`--cache-ttl-ms`); this one reads what is committed, so
/// a test can check right away that a count moved exactly once.
#[utoipa::path(
    get,
    path = "/admin/posts/{id}",
    tag = "admin",
    params(("id" = PostId, Path, description = "The post")),
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "The post", body = StoredPost),
        (status = 400, description = "`bad_post_id`, `bad_query` (a query: none is taken)", body = ErrorBody),
        (status = 404, description = "`post_not_found`", body = ErrorBody),
    )
)]
pub(crate) async fn get_post(
    State(App(app)): State<App>,
    _: NoQuery,
    PathId(post): PathId<PostId>,
) -> Result<Json<StoredPost>, ApiError> {
    let snapshot = app
        .store
        .post(post)
        .await?
        .ok_or(StoreError::PostNotFound(post))?;
    Ok(Json(StoredPost {
        id: post,
        count: snapshot.count,
        version: snapshot.version,
        recent_likers: snapshot.recent_likers,
    }))
}

/// Replace a user's own (directed) friend list.
///
/// The answer is the list as stored, as `GET /admin/users/{id}` reads it
/// back: each id once, in ascending order.
#[utoipa::path(
    put,
    path = "/admin/users/{id}/friends",
    tag = "admin",
    params(("id" = UserId, Path, description = "The user")),
    request_body = Friends,
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "Replaced: the list as stored, each id once, in ascending order", body = Friends),
        (status = 400, description = "`bad_user_id`, `too_many_friends`, `bad_json`, `bad_query` (a query: none is taken)", body = ErrorBody),
        (status = 404, description = "`user_not_found` (the user or a friend)", body = ErrorBody),
    )
)]
pub(crate) async fn set_friends(
    State(App(app)): State<App>,
    _: NoQuery,
    PathId(user): PathId<UserId>,
    AppJson(friends): AppJson<Friends>,
) -> Result<Json<Friends>, ApiError> {
    rules::check_friends(&friends.friends)?;
    app.store.set_friends(user, &friends.friends).await?;
    app.views.forget_friends_of(user);
    // What every store keeps: a set of ids (`rules::unique`), read back in
    // ascending order.
    let mut stored = rules::unique(&friends.friends);
    stored.sort_unstable();
    Ok(Json(Friends { friends: stored }))
}

/// Mint a sign-in token for any user id (HS256, with the server's token
/// secret).
///
/// `valid_from_secs` moves its start: below zero the token was issued that
/// long ago (`{"user_id": 7, "valid_from_secs": -7200}` expired an hour
/// ago), above zero it is refused (401 `invalid_token`) until then, so a
/// test of a client's token renewal needs no wait.
#[utoipa::path(
    post,
    path = "/admin/tokens",
    tag = "admin",
    request_body = TokenRequest,
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "A signed token", body = TokenResponse),
        (status = 400, description = "`bad_user_id`, `bad_ttl`, `bad_valid_from`, `bad_json`, `bad_query` (a query: none is taken)", body = ErrorBody),
        (status = 409, description = "`own_tokens_off`: the server takes tokens from an identity provider (`--jwks`) and, without `--token-secret`, would refuse the token", body = ErrorBody),
    )
)]
pub(crate) async fn mint_token(
    State(App(app)): State<App>,
    _: NoQuery,
    AppJson(request): AppJson<TokenRequest>,
) -> Result<Json<TokenResponse>, ApiError> {
    if !app.takes_own_tokens {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            code::OWN_TOKENS_OFF,
            "this server takes tokens from its identity provider (--jwks) and, without \
             --token-secret, refuses the HS256 tokens it would mint here; start it with \
             --token-secret as well, or sign tokens with the provider's keys",
        ));
    }
    let ttl = likekit_proto::admin::token_ttl(request.ttl_secs)
        .map_err(|rule| ApiError::bad_request(code::BAD_TTL, format!("ttl_secs {rule}")))?;
    let valid_from =
        likekit_proto::admin::token_valid_from(request.valid_from_secs).map_err(|rule| {
            ApiError::bad_request(code::BAD_VALID_FROM, format!("valid_from_secs {rule}"))
        })?;
    let token = app
        .auth
        .tokens()
        .mint_valid_from(request.user_id, valid_from, ttl);
    Ok(Json(TokenResponse { token }))
}

/// Replace every fault rule.
///
/// Every rule's counters start at 0, those of rules already in force too.
/// A `state` in the body (as `GET /admin/faults` answers it) is ignored, so
/// a read answer can be put back as it is. Tests that share one server add
/// their rules with `POST` instead, which leaves other tests' rules and
/// counters as they are.
#[utoipa::path(
    put,
    path = "/admin/faults",
    tag = "admin",
    request_body = inline(PutFaults),
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "The rules now in force", body = FaultRules),
        (status = 400, description = "`bad_fault_rules`, `bad_json`, `bad_query` (a query, such as `?tag=`: a `PUT` replaces every rule)", body = ErrorBody),
    )
)]
pub(crate) async fn set_faults(
    State(App(app)): State<App>,
    _: NoQuery,
    AppJson(PutFaults(rules)): AppJson<PutFaults>,
) -> Result<Json<FaultRules>, ApiError> {
    app.check_fault_rules(&rules)
        .map_err(|msg| ApiError::bad_request(code::BAD_FAULT_RULES, msg))?;
    let in_force = app.faults.set(rules);
    tracing::info!(
        rules = in_force.rules.len(),
        seed = in_force.seed,
        "fault rules set"
    );
    Ok(Json(in_force))
}

/// The body of `PUT /admin/faults` as read: a [`FaultRules`] whose
/// `state`, whatever its value (one as `GET /admin/faults` answers it, an
/// older one, `null`, anything), is passed over unread: it is read-only,
/// and a `PUT` starts every counter over.
pub(crate) struct PutFaults(FaultRules);

impl<'de> serde::Deserialize<'de> for PutFaults {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        FaultRules::deserialize(without_state::Body(deserializer)).map(Self)
    }
}

/// Its schema, the document's for the body and the shape check's
/// (`body::read`), is `FaultRules` with a `state` of any value: one the
/// server takes whatever it is, as the document says.
impl utoipa::PartialSchema for PutFaults {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::{
            RefOr,
            schema::{ObjectBuilder, Schema, SchemaType},
        };
        let mut schema = FaultRules::schema();
        if let RefOr::T(Schema::Object(object)) = &mut schema {
            let ignored = ObjectBuilder::new()
                .schema_type(SchemaType::AnyValue)
                .description(Some(
                    "Read-only: what each rule has used up, as `GET /admin/faults` answers \
                     it. A `PUT` ignores it, whatever its value, and starts every counter \
                     over.",
                ))
                .build();
            object
                .properties
                .insert(without_state::STATE.to_owned(), ignored.into());
        }
        schema
    }
}

impl ToSchema for PutFaults {
    fn name() -> std::borrow::Cow<'static, str> {
        FaultRules::name()
    }

    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        FaultRules::schemas(schemas);
    }
}

/// A body's object read with its `state` field skipped, everything else
/// handed on as it is: the other fields' values, their errors, and an
/// unknown field's refusal, which still lists `state` among those known.
mod without_state {
    use serde::{
        Deserialize as _,
        de::{
            DeserializeSeed, Deserializer, IgnoredAny, IntoDeserializer as _, MapAccess, SeqAccess,
            Visitor,
        },
    };
    use std::fmt;

    /// The skipped field.
    pub(super) const STATE: &str = "state";

    /// The body's deserializer.
    pub(super) struct Body<D>(pub(super) D);

    impl<'de, D: Deserializer<'de>> Deserializer<'de> for Body<D> {
        type Error = D::Error;

        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.deserialize_any(Object(visitor))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            fields: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            self.0.deserialize_struct(name, fields, Object(visitor))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    /// The visitor, its map's `state` skipped; whatever else it is given
    /// is refused as before (`expecting` is the struct's own).
    struct Object<V>(V);

    impl<'de, V: Visitor<'de>> Visitor<'de> for Object<V> {
        type Value = V::Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.0.expecting(f)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
            self.0.visit_map(Fields(map))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
            self.0.visit_seq(seq)
        }
    }

    /// The object's fields, but `state`.
    struct Fields<A>(A);

    /// A field's name: `None` for `state`, else the name read by the
    /// caller's `seed` (taken once, for the one name it is for), inside
    /// the reading of the name, so that an unknown one's refusal is said
    /// of that field as before.
    struct Key<'a, K>(&'a mut Option<K>);

    impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for Key<'_, K> {
        type Value = Option<K::Value>;

        fn deserialize<D: Deserializer<'de>>(self, name: D) -> Result<Self::Value, D::Error> {
            let name = String::deserialize(name)?;
            if name == STATE {
                return Ok(None);
            }
            match self.0.take() {
                Some(seed) => seed.deserialize(name.into_deserializer()).map(Some),
                None => Err(serde::de::Error::custom("a field name read twice")),
            }
        }
    }

    impl<'de, A: MapAccess<'de>> MapAccess<'de> for Fields<A> {
        type Error = A::Error;

        fn next_key_seed<K: DeserializeSeed<'de>>(
            &mut self,
            seed: K,
        ) -> Result<Option<K::Value>, A::Error> {
            let mut seed = Some(seed);
            loop {
                match self.0.next_key_seed(Key(&mut seed))? {
                    None => return Ok(None),
                    Some(Some(key)) => return Ok(Some(key)),
                    Some(None) => {
                        self.0.next_value::<IgnoredAny>()?;
                    }
                }
            }
        }

        fn next_value_seed<S: DeserializeSeed<'de>>(
            &mut self,
            seed: S,
        ) -> Result<S::Value, A::Error> {
            self.0.next_value_seed(seed)
        }

        fn size_hint(&self) -> Option<usize> {
            self.0.size_hint()
        }
    }
}

/// Add fault rules after those in force.
///
/// The rules in force stay as they are, with their counters (a used-up
/// `fail_next` stays used up) and the seed; the added rules start at 0 and
/// draw from the same seed (one is picked now when no rules were set). The
/// answer holds every rule in force, the added ones last, in the order
/// given. The seed belongs to the whole set: a `seed` is refused (set it
/// with `PUT`), and so is a `state`. Nothing is added when the rules in
/// force and the new ones would be more than 256 (`MAX_RULES`): a 409, as
/// the set is full (a test that did not remove its rules, say). The count
/// is checked before the rules themselves, so more than 256 rules in one
/// body are that 409 too, whatever they say.
#[utoipa::path(
    post,
    path = "/admin/faults",
    tag = "admin",
    request_body = NewFaultRules,
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "Added: every rule now in force, the added ones last", body = FaultRules),
        (status = 400, description = "`bad_fault_rules`: a rule out of range, or a `seed` or `state` given (nothing is added); `bad_json`; `bad_query` (a query: none is taken)", body = ErrorBody),
        (status = 409, description = "`too_many_rules`: the rules in force and the new ones would be more than 256 (`MAX_RULES`), checked before the rules themselves (more than 256 in the body is this 409 too); nothing is added", body = ErrorBody),
    )
)]
pub(crate) async fn add_faults(
    State(App(app)): State<App>,
    _: NoQuery,
    AppJson(body): AppJson<AddFaults>,
) -> Result<Json<FaultRules>, ApiError> {
    let refused = |msg: String| ApiError::bad_request(code::BAD_FAULT_RULES, msg);
    if let Some(seed) = body.seed {
        return Err(refused(format!(
            "seed: the seed belongs to the whole rule set; set it with PUT /admin/faults \
             (a POST adds rules under the seed in force); got {seed}"
        )));
    }
    if body.state.is_some() {
        return Err(refused(
            "state: read-only (what each rule in force has used up); leave it out".into(),
        ));
    }
    let conflict = |too_many: crate::faults::TooManyRules| {
        ApiError::new(
            StatusCode::CONFLICT,
            code::TOO_MANY_RULES,
            too_many.to_string(),
        )
    };
    // The count first: too many rules are a conflict whatever the rules
    // are, as many as 257 in one body too.
    app.faults.check_room(body.rules.len()).map_err(conflict)?;
    let body = FaultRules::new(body.rules);
    app.check_fault_rules(&body).map_err(refused)?;
    let added = body.rules.len();
    let in_force = app.faults.add(body.rules).map_err(conflict)?;
    tracing::info!(
        added,
        rules = in_force.rules.len(),
        seed = in_force.seed,
        "fault rules added"
    );
    Ok(Json(in_force))
}

/// The body of `POST /admin/faults` as read: [`NewFaultRules`], with the
/// two fields of a `PUT`'s body it must not have taken in (even as `null`
/// or `[]`), so that their refusal says why rather than "unknown field".
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddFaults {
    rules: Vec<likekit_proto::admin::FaultRule>,
    #[serde(default, deserialize_with = "present")]
    seed: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    state: Option<serde_json::Value>,
}

/// Its schema is the document's `NewFaultRules`, which has neither field.
impl utoipa::PartialSchema for AddFaults {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        NewFaultRules::schema()
    }
}

impl ToSchema for AddFaults {
    fn name() -> std::borrow::Cow<'static, str> {
        NewFaultRules::name()
    }

    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        NewFaultRules::schemas(schemas);
    }
}

/// A field that is there, whatever its value (`null` included).
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde::Deserialize::deserialize(deserializer).map(Some)
}

/// The fault rules in force, with the seed their draws come from and what
/// each has used up; or, with `tag`, only the rules with that tag.
///
/// `rules` are as they were put; `state[i]` (read-only) says what
/// `rules[i]` has used up: the calls it matched, fired on and acted on,
/// and what is left of its `fail_next` and `first`. Without a query the
/// answer can be put back as it is: a `PUT` ignores `state` and starts the
/// counters over. With `tag` (a test sharing the server reading its own
/// rules) it holds that tag's rules and their state, in their order, and
/// the seed.
#[utoipa::path(
    get,
    path = "/admin/faults",
    tag = "admin",
    params(FaultFilter),
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "The rules in force (with `tag`, those with that tag), their seed and what each has used up", body = FaultRules),
        (status = 400, description = "`bad_query`: a query key other than `tag`, or a tag that is not 1 to 64 visible ASCII characters", body = ErrorBody),
    )
)]
pub(crate) async fn get_faults(
    State(App(app)): State<App>,
    query: Result<Query<FaultFilter>, QueryRejection>,
) -> Result<Json<FaultRules>, ApiError> {
    Ok(Json(match faults_tag(query)? {
        Some(tag) => app.faults.get_tagged(&tag),
        None => app.faults.get(),
    }))
}

/// A tag given in a query, checked: `/admin/faults`' `tag`, or
/// `/admin/requests`' `fault_tag` (named by `key` in the message); 400
/// `bad_query` for one no rule could have.
fn query_tag(key: &str, tag: &str) -> Result<(), ApiError> {
    check_tag(tag).map_err(|rule| ApiError::bad_request(code::BAD_QUERY, format!("{key}: {rule}")))
}

/// The `tag` of `/admin/faults`' `query`, checked, if it has one.
fn faults_tag(
    query: Result<Query<FaultFilter>, QueryRejection>,
) -> Result<Option<String>, ApiError> {
    let Query(FaultFilter { tag }) = query?;
    if let Some(tag) = &tag {
        query_tag("tag", tag)?;
    }
    Ok(tag)
}

/// The journal's filters of `query`, with a `fault_tag` checked as a
/// rule's tag.
fn journal_filter(
    query: Result<Query<RequestFilter>, impl Into<ApiError>>,
) -> Result<RequestFilter, ApiError> {
    let query = query.map_err(Into::into);
    let Query(filter) = query?;
    if let Some(tag) = &filter.fault_tag {
        query_tag("fault_tag", tag)?;
    }
    Ok(filter)
}

/// Remove every fault rule, or only those with a tag.
///
/// Without a query every rule and the seed are removed. With `tag`, only
/// the rules with that tag: the others keep their counters, their draws
/// and the seed (a tag no rule has removes nothing). The answer is the
/// rules left in force. The journal's `fault_rule` is a rule's place in
/// the set when it acted: after a removal the rules after the removed ones
/// move up, so an older entry may name a place another rule holds now (its
/// `fault_tag`, the rule's tag, does not change).
#[utoipa::path(
    delete,
    path = "/admin/faults",
    tag = "admin",
    params(FaultFilter),
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "Removed: the rules left in force (none without a `tag`)", body = FaultRules),
        (status = 400, description = "`bad_query`: a query key other than `tag`, or a tag that is not 1 to 64 visible ASCII characters", body = ErrorBody),
    )
)]
pub(crate) async fn clear_faults(
    State(App(app)): State<App>,
    query: Result<Query<FaultFilter>, QueryRejection>,
) -> Result<Json<FaultRules>, ApiError> {
    let Some(tag) = faults_tag(query)? else {
        app.faults.clear();
        tracing::info!("fault rules cleared");
        return Ok(Json(app.faults.get()));
    };
    let (removed, left) = app.faults.remove_tagged(&tag);
    tracing::info!(
        tag,
        removed,
        left = left.rules.len(),
        "fault rules removed by tag"
    );
    Ok(Json(left))
}

/// The request journal: every request to a public route, oldest first,
/// with what the fault rules and the handler did to it.
///
/// Each filter given must match: `route` (`like`, `unlike`, `likes`,
/// `batch`), `method` (`GET`, `POST`, `DELETE`), `post`, `user`,
/// `since` (only entries with a larger `seq`, for reading what is new),
/// `request_id` (the request whose answer carried that `X-Request-Id`) and
/// `fault_tag` (the entries whose `fault_tag` it is: what the rules with
/// that tag did, so a test sharing the server reads its own faults).
///
/// With `wait_for=N` the answer waits until at least N entries match, none
/// of them in flight, for at most `timeout_ms` (5,000 by default): for a
/// test that cannot wait for the client itself, such as a UI test in
/// another process. Its `met` says whether they came before the wait ran
/// out.
#[utoipa::path(
    get,
    path = "/admin/requests",
    tag = "admin",
    params(RequestFilter, RequestWait),
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "The matching entries, oldest first (with `met` when the read waited)", body = Journal),
        (status = 400, description = "`bad_query`: an unknown filter or value, a `fault_tag` that is not 1 to 64 visible ASCII characters, a `wait_for` of 0, a `timeout_ms` above 60,000", body = ErrorBody),
        (status = 409, description = "`journal_off`: the server keeps no journal (`--journal-size 0`)", body = ErrorBody),
    )
)]
pub(crate) async fn requests(
    State(App(app)): State<App>,
    RawQuery(query): RawQuery,
) -> Result<Json<Journal>, ApiError> {
    let (wait, filter) = split_wait(query.as_deref().unwrap_or_default());
    let filter = journal_filter(query_of(&filter))?;
    let Query(wait) = query_of::<RequestWait>(&wait)?;
    let wait = journal_wait(&app, wait)?;
    journal_on(&app)?;
    Ok(Json(match wait {
        None => app.journal.read(&filter),
        Some((count, timeout)) => {
            let deadline = tokio::time::Instant::now() + timeout;
            app.journal.wait(&filter, count, deadline).await
        }
    }))
}

/// How long a journal read waits by default (`timeout_ms`).
const DEFAULT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A journal read's query split in two: its `wait_for` and `timeout_ms`
/// pairs, and the rest (its filters, which `DELETE` takes too).
fn split_wait(query: &str) -> (String, String) {
    let (mut wait, mut rest) = (Vec::new(), Vec::new());
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let key = pair.split_once('=').map_or(pair, |(key, _)| key);
        if matches!(key, "wait_for" | "timeout_ms") {
            wait.push(pair);
        } else {
            rest.push(pair);
        }
    }
    (wait.join("&"), rest.join("&"))
}

/// A query string decoded as axum's `Query` decodes a request's (its
/// parts came from the request's own query, so it is one a URI takes).
fn query_of<T: serde::de::DeserializeOwned>(query: &str) -> Result<Query<T>, ApiError> {
    let uri: axum::http::Uri = format!("/?{query}")
        .parse()
        .map_err(|e| ApiError::bad_request(code::BAD_QUERY, format!("not a query: {e}")))?;
    Ok(Query::try_from_uri(&uri)?)
}

/// The count and the time a journal read waits for, checked: `None` when
/// it does not wait. The wait ends one second before the request timeout
/// at the latest, so that its answer is the journal's, not a 503.
fn journal_wait(
    app: &crate::state::Shared,
    wait: RequestWait,
) -> Result<Option<(u64, std::time::Duration)>, ApiError> {
    let bad = |message: String| ApiError::bad_request(code::BAD_QUERY, message);
    if let Some(ms) = wait.timeout_ms
        && ms > RequestWait::MAX_TIMEOUT_MS
    {
        return Err(bad(format!(
            "timeout_ms: at most {}; got {ms}",
            RequestWait::MAX_TIMEOUT_MS
        )));
    }
    let Some(count) = wait.wait_for else {
        return Ok(None);
    };
    if count == 0 {
        return Err(bad("wait_for: at least 1; got 0".into()));
    }
    let timeout = wait
        .timeout_ms
        .map_or(DEFAULT_WAIT, std::time::Duration::from_millis);
    let longest = app
        .request_timeout
        .saturating_sub(std::time::Duration::from_secs(1));
    Ok(Some((count, timeout.min(longest))))
}

/// A journal that is off answers 409 `journal_off`: its empty list would
/// read as "the client sent nothing", and a test asserting that would
/// pass without testing anything.
fn journal_on(app: &crate::state::Shared) -> Result<(), ApiError> {
    if app.journal.is_on() {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::CONFLICT,
        code::JOURNAL_OFF,
        "this server keeps no request journal (--journal-size 0); start it with \
         --journal-size N to read what clients sent",
    ))
}

/// Remove the request journal's entries a filter matches; without one,
/// empty it.
///
/// It takes the filters `GET /admin/requests` takes, so a test sharing
/// the server removes only its own entries (`?user=7`, `?post=42`, or
/// `?fault_tag=checkout-7` for those its tagged rules acted on). With
/// no filter every entry goes and `dropped` starts again from 0; with one,
/// `dropped` (entries lost to the journal's size) stays. `seq` goes on
/// counting either way.
#[utoipa::path(
    delete,
    path = "/admin/requests",
    tag = "admin",
    params(RequestFilter),
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "The matching entries are gone (every entry, without a filter)", body = Ack),
        (status = 400, description = "`bad_query`: an unknown filter or value, or a `fault_tag` that is not 1 to 64 visible ASCII characters", body = ErrorBody),
        (status = 409, description = "`journal_off`: the server keeps no journal (`--journal-size 0`)", body = ErrorBody),
    )
)]
pub(crate) async fn clear_requests(
    State(App(app)): State<App>,
    query: Result<Query<RequestFilter>, QueryRejection>,
) -> Result<Json<Ack>, ApiError> {
    let filter = journal_filter(query)?;
    journal_on(&app)?;
    app.journal.remove(&filter);
    Ok(ACK)
}

/// Drop every like; keep users, friendships and posts.
///
/// Counts and versions go back to 0 and the caches are emptied, for every
/// post: it takes no query (one is refused, not ignored). The fault rules
/// (with their seed and call counters) and the request journal are kept. A
/// client that saw a higher version before the reset ignores the lower
/// ones its reads bring after it: build a new client after a reset.
#[utoipa::path(
    post,
    path = "/admin/reset",
    tag = "admin",
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "Reset", body = Ack),
        (status = 400, description = "`bad_query`: a query was given (the reset is of every post)", body = ErrorBody),
    )
)]
pub(crate) async fn reset(
    State(App(app)): State<App>,
    RawQuery(query): RawQuery,
) -> Result<Json<Ack>, ApiError> {
    if let Some(query) = query.filter(|q| !q.is_empty()) {
        return Err(ApiError::bad_request(
            code::BAD_QUERY,
            format!(
                "POST /admin/reset takes no query: it drops the likes of every post; got {}",
                likekit_proto::quoted(&query)
            ),
        ));
    }
    app.store.reset().await?;
    app.views.clear();
    tracing::info!("likes reset");
    Ok(ACK)
}

/// Load a seed document (the `--seed FILE` format); idempotent.
///
/// Merges into what is there: users are created or renamed and their
/// friend list replaced (an omitted `friends` empties it); posts are
/// created if missing and their `likers` (oldest first) added, never
/// removed. A liker need not be a user; every friend must be one.
#[utoipa::path(
    post,
    path = "/admin/seed",
    tag = "admin",
    request_body = Seed,
    security(("admin_key" = [])),
    responses(
        (status = 200, description = "Loaded", body = Ack),
        (status = 400, description = "`bad_name`, `too_many_friends`, `bad_user_id`, `bad_post_id`, `bad_json`, `bad_query` (a query: none is taken)", body = ErrorBody),
        (status = 404, description = "`user_not_found` (a friend that is not a user)", body = ErrorBody),
    )
)]
pub(crate) async fn seed(
    State(App(app)): State<App>,
    _: NoQuery,
    AppJson(seed): AppJson<Seed>,
) -> Result<Json<Ack>, ApiError> {
    // Checked here as well as in the store, to answer with the broken
    // rule's own code.
    rules::check_seed(&seed)?;
    app.store.seed(&seed).await?;
    app.views.clear();
    Ok(ACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_admin_key_itself_is_the_admin_key() {
        assert!(is_admin_key(b"dev-admin-key", b"dev-admin-key"));
        for given in [
            &b""[..],
            b"dev",
            b"dev-admin-ke",
            b"dev-admin-keyy",
            b"DEV-ADMIN-KEY",
            b"dev-admin-key\0",
        ] {
            assert!(!is_admin_key(given, b"dev-admin-key"), "{given:?}");
        }
        assert!(!is_admin_key(b"", b""), "no key, no admin");
    }
}
