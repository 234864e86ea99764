//! The seed table, end to end: the server's exact count after each call.
//!
//! | call                         | count     |
//! |------------------------------|-----------|
//! | Ana's first like             | +1        |
//! | her like, retried            | no change |
//! | Ana's unlike                 | −1        |
//! | her unlike, retried          | no change |
//! | Ben's unlike (never liked)   | no change |
//! | Ana's like again, later      | +1        |
//!
//! Ana taps through the client; the retries are the very calls the client's
//! transport sends again after a lost answer, and Ben's stray unlike is the
//! call an out-of-date device would send.

#![allow(clippy::unwrap_used)]

use likekit_core::{Action, Transport};
use likekit_tests::{PostId, UserId, World, settle, user};

const ANA: UserId = UserId::checked(1).unwrap();
const BEN: UserId = UserId::checked(2).unwrap();
const POST: PostId = PostId::checked(42).unwrap();

#[tokio::test]
async fn the_seed_table() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana"), (BEN, "Ben")], &[POST]).await;
    let ana = world.client(ANA);
    let ana_wire = world.transport(ANA);
    let ben_wire = world.transport(BEN);
    assert_eq!(world.count(POST).await, 0);

    // Ana's first like: +1
    let view = ana.set_liked(POST, true);
    assert!(view.liked && view.pending);
    settle(&ana).await;
    assert_eq!(world.count(POST).await, 1);
    assert!(world.liked(ANA, POST).await);
    let view = ana.view(POST).unwrap();
    assert!(view.liked && !view.pending);
    assert_eq!(view.count, 1);

    // her like, retried: no change
    let state = ana_wire.send(POST, Action::Like).await.unwrap();
    assert!(state.liked_by_me);
    assert_eq!(state.count, 1);
    assert_eq!(world.count(POST).await, 1);

    // Ana's unlike: -1
    ana.set_liked(POST, false);
    settle(&ana).await;
    assert_eq!(world.count(POST).await, 0);
    assert!(!world.liked(ANA, POST).await);
    assert_eq!(ana.view(POST).unwrap().count, 0);

    // her unlike, retried: no change
    let state = ana_wire.send(POST, Action::Unlike).await.unwrap();
    assert_eq!((state.count, state.liked_by_me), (0, false));
    assert_eq!(world.count(POST).await, 0);

    // Ben's unlike (he never liked): no change, and never below zero
    let state = ben_wire.send(POST, Action::Unlike).await.unwrap();
    assert_eq!((state.count, state.liked_by_me), (0, false));
    assert_eq!(world.count(POST).await, 0);

    // Ana's like again, later: +1
    ana.set_liked(POST, true);
    settle(&ana).await;
    assert_eq!(world.count(POST).await, 1);
    let view = ana.refresh(POST).await.unwrap();
    assert!(view.liked);
    assert_eq!(view.count, 1);
    assert_eq!(view.line.to_string(), "Liked by you");

    // and Ben sees Ana's like (no friendship: just the count)
    let ben = world.client(BEN);
    let view = ben.refresh(POST).await.unwrap();
    assert!(!view.liked);
    assert_eq!(view.line.to_string(), "1 like");

    // the client sent exactly one call per real change
    assert_eq!(ana.stats().calls_sent, 3);
    world.stop().await;
}

#[tokio::test]
async fn a_friend_is_named_in_the_line() {
    let world = World::start().await;
    world.setup(&[(ANA, "Ana"), (BEN, "Ben")], &[POST]).await;
    world.server.set_friends(BEN, &[ANA]).await.unwrap();
    for n in 100..103 {
        let user = user(n);
        world.server.create_user(user, "someone").await.unwrap();
        world
            .transport(user)
            .send(POST, Action::Like)
            .await
            .unwrap();
    }
    let ana = world.client(ANA);
    ana.set_liked(POST, true);
    settle(&ana).await;

    let ben = world.client(BEN);
    let view = ben.refresh(POST).await.unwrap();
    assert_eq!(view.friends, ["Ana"]);
    assert_eq!(view.line.to_string(), "Liked by Ana and 3 others");
    let view = ben.set_liked(POST, true);
    assert_eq!(view.line.to_string(), "Liked by you, Ana and 3 others");
    settle(&ben).await;
    assert_eq!(world.count(POST).await, 5);
    world.stop().await;
}
