//! How a save joins what other clients of the same viewer wrote to a store
//! they share: the web's `localStorage` entry is shared by every tab the
//! viewer has open, so a save that wrote only this tab's intents would
//! drop the others' unsaved taps. A store that several clients write reads
//! its content again before each save and writes [`merge`]'s answer.
//!
//! A save is a three-way merge, post by post, of
//!
//! - `last`: the intents this client held at its previous save (or read
//!   at start), which is what it last agreed the entry should hold;
//! - `ours`: the intents it holds now;
//! - `theirs`: what the entry holds now, as another tab may have left it.
//!
//! Whoever changed a post since `last` decides it: a post this client did
//! not touch keeps what the entry holds (another tab's tap, or its removal
//! once that tab's call was confirmed); a post only this client changed
//! takes this client's intent, or leaves the entry when the client
//! confirmed or superseded it. When both changed it, the later tap wins;
//! a removal here stands against the entry's intent unless that intent was
//! tapped after the newest one this client held for the post.

use crate::{Intent, PostId};

fn find(intents: &[Intent], post: PostId) -> Option<Intent> {
    intents.iter().find(|i| i.post == post).copied()
}

/// The intents the store should hold: `theirs` that stand, then this
/// client's changes that they do not override. Written as two plain
/// loops: the web package's size is a goal, and this is the smallest form.
pub fn merge(last: &[Intent], ours: &[Intent], theirs: &[Intent]) -> Vec<Intent> {
    let mut merged = Vec::new();
    for t in theirs {
        let (l, o) = (find(last, t.post), find(ours, t.post));
        // Unchanged here, the entry decides; changed on both sides, the
        // later tap (a tie goes to this client); a removal here is
        // measured against the intent it removed.
        if o == l || (Some(*t) != l && t.tapped_at_ms > o.or(l).map_or(0, |i| i.tapped_at_ms)) {
            merged.push(*t);
        }
    }
    for o in ours {
        if Some(*o) != find(last, o.post) && !merged.iter().any(|t| t.post == o.post) {
            merged.push(*o);
        }
    }
    merged
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn like(post: u64, liked: bool, at: u64) -> Intent {
        Intent {
            post: PostId::new(post).unwrap(),
            liked,
            tapped_at_ms: at,
        }
    }

    /// The rule as a table, post by post: whoever changed the post since
    /// `last` decides it; both, the later tap (a tie to this client), a
    /// removal here against the intent it removed.
    fn by_the_table(l: Option<Intent>, o: Option<Intent>, t: Option<Intent>) -> Option<Intent> {
        if o == l {
            t
        } else if t == l {
            o
        } else {
            match (o, t) {
                (Some(o), Some(t)) => Some(if t.tapped_at_ms > o.tapped_at_ms {
                    t
                } else {
                    o
                }),
                (None, Some(t)) => (t.tapped_at_ms > l.map_or(0, |l| l.tapped_at_ms)).then_some(t),
                (o, None) => o,
            }
        }
    }

    /// Every combination of what one post's three sides may hold, two
    /// posts at a time, merges as the table says.
    #[test]
    fn merges_every_combination_as_the_table_says() {
        let choices = |post| {
            [
                None,
                Some(like(post, true, 10)),
                Some(like(post, false, 20)),
                Some(like(post, true, 20)),
                Some(like(post, true, 30)),
            ]
        };
        let list = |a: Option<Intent>, b: Option<Intent>| -> Vec<Intent> {
            a.into_iter().chain(b).collect()
        };
        let mut cases = 0;
        for l1 in choices(1) {
            for o1 in choices(1) {
                for t1 in choices(1) {
                    for (l2, o2, t2) in [
                        (None, None, None),
                        (None, Some(like(2, true, 5)), None),
                        (Some(like(2, true, 5)), None, Some(like(2, true, 5))),
                        (Some(like(2, true, 5)), Some(like(2, false, 6)), None),
                    ] {
                        let mut got = merge(&list(l1, l2), &list(o1, o2), &list(t1, t2));
                        got.sort_by_key(|i| i.post);
                        let want = list(by_the_table(l1, o1, t1), by_the_table(l2, o2, t2));
                        assert_eq!(
                            got, want,
                            "last {l1:?} {l2:?}, ours {o1:?} {o2:?}, theirs {t1:?} {t2:?}"
                        );
                        cases += 1;
                    }
                }
            }
        }
        assert_eq!(cases, 5 * 5 * 5 * 4);
    }

    #[test]
    fn the_other_tabs_posts_stay_when_this_client_saves_its_own() {
        let a = like(1, true, 10);
        let b = like(2, true, 20);
        // Tab B saves its like of post 2 over tab A's pending like of post 1.
        assert_eq!(merge(&[], &[b], &[a]), vec![a, b]);
        // B's like is confirmed: post 2 leaves, post 1 stays.
        assert_eq!(merge(&[b], &[], &[b, a]), vec![a]);
    }

    #[test]
    fn a_post_this_client_did_not_change_follows_the_entry() {
        let read_at_start = like(1, true, 10);
        // Another tab confirmed it and removed it: this client's unchanged
        // copy (not restored, or restored and still out) does not bring it back.
        assert_eq!(merge(&[read_at_start], &[read_at_start], &[]), vec![]);
        // Another tab unliked since: its intent stays.
        let unlike = like(1, false, 30);
        assert_eq!(
            merge(&[read_at_start], &[read_at_start], &[unlike]),
            vec![unlike]
        );
    }

    #[test]
    fn when_both_changed_a_post_the_later_tap_wins() {
        let old = like(1, true, 10);
        let ours = like(1, false, 30);
        let theirs = like(1, false, 20);
        assert_eq!(merge(&[old], &[ours], &[theirs]), vec![ours]);
        let theirs = like(1, true, 40);
        assert_eq!(merge(&[old], &[ours], &[theirs]), vec![theirs]);
        // A tie goes to this client.
        let theirs = like(1, true, 30);
        assert_eq!(merge(&[old], &[ours], &[theirs]), vec![ours]);
    }

    #[test]
    fn a_confirmed_post_leaves_unless_another_tab_tapped_it_later() {
        let held = like(1, true, 10);
        let earlier = like(1, false, 5);
        assert_eq!(merge(&[held], &[], &[earlier]), vec![]);
        let later = like(1, false, 30);
        assert_eq!(merge(&[held], &[], &[later]), vec![later]);
    }

    #[test]
    fn a_new_intent_here_stands_when_another_tab_removed_the_post() {
        let old = like(1, true, 10);
        let ours = like(1, false, 30);
        assert_eq!(merge(&[old], &[ours], &[]), vec![ours]);
        assert_eq!(merge(&[], &[ours], &[]), vec![ours]);
    }
}
