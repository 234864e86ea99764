//! The admin API's JSON bodies against any bytes, read as the server reads
//! them: `fuzzing::read_body` (what its `AppJson` extractor runs once the
//! content type is JSON, and `--seed FILE` through `read_seed`): serde's
//! reading, then the OpenAPI schema's shape.
//!
//! The first byte picks the body (its value modulo the number of bodies):
//! `POST /admin/users`, `POST /admin/posts`, `PUT /admin/users/{id}/friends`,
//! `POST /admin/tokens`, `PUT /admin/faults` (and `POST /admin/faults`, from
//! the same body), `POST /admin/seed`; the rest is the body. For every
//! input:
//!
//! * reading never panics, and a refusal is a 400 `bad_json`,
//!   `bad_post_id` or `bad_user_id`;
//! * the store's rules (`check_name`, `check_friends`, `check_seed`) and
//!   the fault rules' checks on what is read never panic, and fault rules
//!   they take have only tags `check_tag` takes;
//! * what is read, written again by serde_json (as the server answers it),
//!   reads back equal, shape check included;
//! * what is read is a JSON object (the shape check refuses a struct that
//!   serde read from an array).

#![no_main]

use std::fmt::Debug;

use axum::http::StatusCode;
use libfuzzer_sys::fuzz_target;
use likekit_server::fuzzing::{ToSchema, check_fault_rules, read_body};
use likekit_server::store::rules;
use likekit_server::wire::admin::{
    FaultRules, Friends, NewFaultRules, NewPost, NewUser, Seed, TokenRequest, check_tag,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// `body` read as a `T` the way the server reads it; the refusal checked.
fn read<T>(body: &[u8]) -> Option<T>
where
    T: DeserializeOwned + Serialize + PartialEq + Debug + ToSchema,
{
    let value = match read_body::<T>(body) {
        Ok(value) => value,
        Err(answer) => {
            assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
            assert!(
                ["bad_json", "bad_post_id", "bad_user_id"].contains(&answer.code()),
                "{}",
                answer.code()
            );
            return None;
        }
    };
    assert!(
        serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|v| v.is_object()),
        "a body read is an object"
    );
    let written = serde_json::to_vec(&value).expect("a body the server read can be written");
    match read_body::<T>(&written) {
        Ok(again) => assert_eq!(again, value, "{}", String::from_utf8_lossy(&written)),
        Err(e) => panic!(
            "{value:?} written as {}: {}",
            String::from_utf8_lossy(&written),
            e.message()
        ),
    }
    Some(value)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    match pick % 6 {
        0 => {
            if let Some(user) = read::<NewUser>(body) {
                let _ = rules::check_name(&user.name);
            }
        }
        1 => {
            read::<NewPost>(body);
        }
        2 => {
            if let Some(friends) = read::<Friends>(body) {
                let _ = rules::check_friends(&friends.friends);
                let unique = rules::unique(&friends.friends);
                assert!(unique.len() <= friends.friends.len());
            }
        }
        3 => {
            read::<TokenRequest>(body);
        }
        4 => {
            if let Some(rules) = read::<FaultRules>(body)
                && check_fault_rules(&rules).is_ok()
            {
                for tag in rules.rules.iter().filter_map(|r| r.tag.as_deref()) {
                    assert!(check_tag(tag).is_ok(), "{tag:?} taken");
                }
            }
            if let Some(added) = read::<NewFaultRules>(body) {
                let _ = check_fault_rules(&FaultRules::new(added.rules));
            }
        }
        _ => {
            if let Some(seed) = read::<Seed>(body) {
                let _ = rules::check_seed(&seed);
            }
        }
    }
});
