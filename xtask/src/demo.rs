//! `cargo xtask demo`: the reference server with demo data on loopback,
//! serving the web demo page (`examples/web` and the wasm package, staged
//! under `target/web-demo`) from the same origin.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use crate::server::{self, wait_for_url};
use crate::web::DEMO_SEED as SEED;
use crate::{Ctx, proc};

/// Used when free; otherwise any free port.
const PREFERRED_LISTEN: &str = "127.0.0.1:8787";

pub fn main(ctx: &Ctx, listen: Option<&str>) -> Result<ExitCode, String> {
    let seed = ctx.root.join(SEED);
    if !seed.is_file() {
        return Err(format!("the demo data {} is missing", seed.display()));
    }
    let binary = server::build(ctx)?;
    let site = crate::web::stage_site(ctx)?;
    let db = fresh_database(&ctx.target_dir.join("demo"))?;
    let admin_key = server::random_hex(16)?;
    // Chosen after the builds, which can take minutes: the preferred port
    // is checked just before the server takes it.
    let listen = match listen {
        Some(listen) => listen,
        None if TcpListener::bind(PREFERRED_LISTEN).is_ok() => PREFERRED_LISTEN,
        None => "127.0.0.1:0",
    };
    let mut server = Command::new(&binary);
    // The demo's own settings only, whatever the shell has.
    server::without_likekit_settings(&mut server, server::inherited_names())
        .current_dir(&ctx.root)
        .arg("--listen")
        .arg(listen)
        .arg("--seed")
        .arg(&seed)
        .arg("--admin-key")
        .arg(&admin_key)
        .arg("--db")
        .arg(&db)
        .arg("--web-root")
        .arg(&site)
        // Its log (standard error) goes to the terminal; its standard
        // output is only the "listening on URL" line.
        .stdout(Stdio::piped());
    println!("xtask: starting {}", proc::display(&server));
    let mut child = server.spawn().map_err(|e| proc::spawn_error(&server, &e))?;
    let url = match wait_for_url(&mut child, "the demo", "its output above") {
        Ok(url) => openable(&url),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    println!();
    println!(
        "xtask: the demo is running. Open this URL (the admin key for its network panel rides in the fragment):"
    );
    println!();
    println!("    {url}#admin={admin_key}");
    println!();
    println!("xtask:   page        {} (served at /)", site.display());
    println!("xtask:   demo data   {SEED} (users Ana 1, Ben 2, Cleo 3, Dev 4, Eve 5)");
    println!("xtask:   admin key   {admin_key}  (header X-Admin-Key)");
    println!(
        "xtask:   database    {} (made fresh on every run)",
        db.display()
    );
    println!(
        "xtask:   try         curl -s -X POST -H 'X-Admin-Key: {admin_key}' -H 'Content-Type: application/json' -d '{{\"user_id\":1,\"ttl_secs\":3600}}' {url}admin/tokens"
    );
    println!("xtask:               curl -s -H 'Authorization: Bearer <token>' {url}posts/42/likes");
    println!("xtask: press Ctrl-C to stop");

    let status = child
        .wait()
        .map_err(|e| format!("waiting for the server failed: {e}"))?;
    if status.success() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!("the server stopped ({status})"))
    }
}

/// The URL people open for the one the server says it listens on, ending
/// in `/` (`0.0.0.0` and `[::]` mean this machine).
fn openable(url: &str) -> String {
    let url = url
        .replacen("//0.0.0.0:", "//127.0.0.1:", 1)
        .replacen("//[::]:", "//[::1]:", 1);
    format!("{}/", url.trim_end_matches('/'))
}

/// An empty folder for the demo database; the previous run's files go.
fn fresh_database(dir: &Path) -> Result<PathBuf, String> {
    proc::mkdir(dir)?;
    let db = dir.join("likekit-demo.db");
    for suffix in ["", "-wal", "-shm", "-journal"] {
        proc::remove(&PathBuf::from(format!("{}{suffix}", db.display())))?;
    }
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn urls_people_can_open() {
        assert_eq!(openable("http://127.0.0.1:8787"), "http://127.0.0.1:8787/");
        assert_eq!(openable("http://0.0.0.0:9000"), "http://127.0.0.1:9000/");
        assert_eq!(openable("http://[::]:9000/"), "http://[::1]:9000/");
    }

    /// The demo seed is a `Seed` document (no unknown fields) and every id
    /// it mentions exists.
    #[test]
    fn demo_seed_is_consistent() {
        let text = include_str!("../../examples/demo-seed.json");
        let seed: serde_json::Value = serde_json::from_str(text).expect("demo seed is JSON");
        let keys = |v: &serde_json::Value| -> Vec<String> {
            v.as_object().expect("object").keys().cloned().collect()
        };
        let ids_in = |v: &serde_json::Value| -> Vec<u64> {
            let list = v.as_array().map(Vec::as_slice).unwrap_or_default();
            list.iter().map(|id| id.as_u64().expect("id")).collect()
        };
        assert_eq!(keys(&seed), ["posts", "users"]);
        let users = seed["users"].as_array().expect("users");
        let ids: BTreeSet<u64> = users
            .iter()
            .map(|u| u["id"].as_u64().expect("id"))
            .collect();
        assert_eq!(ids.len(), users.len(), "user ids are unique");
        let names: Vec<&str> = users.iter().filter_map(|u| u["name"].as_str()).collect();
        assert_eq!(names, ["Ana", "Ben", "Cleo", "Dev", "Eve"]);
        for user in users {
            assert!(
                keys(user)
                    .iter()
                    .all(|k| ["id", "name", "friends"].contains(&k.as_str()))
            );
            assert!(
                ids_in(&user["friends"]).iter().all(|f| ids.contains(f)),
                "friends are users"
            );
        }
        let posts = seed["posts"].as_array().expect("posts");
        assert!(posts.len() >= 5);
        let mut post_ids = BTreeSet::new();
        for post in posts {
            assert!(
                keys(post)
                    .iter()
                    .all(|k| ["id", "likers"].contains(&k.as_str()))
            );
            assert!(post_ids.insert(post["id"].as_u64().expect("post id")));
            let likers = ids_in(&post["likers"]);
            let unique: BTreeSet<u64> = likers.iter().copied().collect();
            assert_eq!(unique.len(), likers.len(), "no one likes a post twice");
            assert!(unique.is_subset(&ids), "likers are users");
        }
    }
}
