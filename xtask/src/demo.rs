//! `cargo xtask demo`: the reference server with demo data on loopback,
//! serving the web demo page (`examples/web` and the wasm package, staged
//! under `target/web-demo`) from the same origin.

use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};

use crate::{Ctx, proc};

const SEED: &str = "examples/demo-seed.json";
/// Used when free; otherwise any free port.
const PREFERRED_LISTEN: &str = "127.0.0.1:8787";
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

pub fn main(ctx: &Ctx, listen: Option<&str>) -> Result<ExitCode, String> {
    let listen = match listen {
        Some(listen) => listen.to_owned(),
        None => free_listen_addr()?,
    };
    let url = url_for(&listen)?;
    let seed = ctx.root.join(SEED);
    if !seed.is_file() {
        return Err(format!("the demo data {} is missing", seed.display()));
    }
    let binary = crate::server::build(ctx)?;
    let site = crate::web::stage_site(ctx)?;
    let db = fresh_database(&ctx.target_dir.join("demo"))?;
    let admin_key = crate::server::random_hex(16);
    let mut server = Command::new(&binary);
    server
        .current_dir(&ctx.root)
        .arg("--listen")
        .arg(&listen)
        .arg("--seed")
        .arg(&seed)
        .arg("--admin-key")
        .arg(&admin_key)
        .arg("--db")
        .arg(&db)
        .arg("--web-root")
        .arg(&site);
    println!("xtask: starting {}", proc::display(&server));
    let mut child = server.spawn().map_err(|e| proc::spawn_error(&server, &e))?;

    if let Err(e) = wait_until_listening(&listen, &mut child) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
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
    println!("xtask:   database    {} (made fresh on every run)", db.display());
    println!(
        "xtask:   try         curl -s -X POST -H 'X-Admin-Key: {admin_key}' -H 'Content-Type: application/json' -d '{{\"user_id\":1,\"ttl_secs\":3600}}' {url}admin/tokens"
    );
    println!("xtask:               curl -s -H 'Authorization: Bearer <token>' {url}posts/42/likes");
    println!("xtask: press Ctrl-C to stop");

    let status = child.wait().map_err(|e| format!("waiting for the server failed: {e}"))?;
    if status.success() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!("the server stopped ({status})"))
    }
}

/// The preferred demo address when it is free, else a free loopback port.
fn free_listen_addr() -> Result<String, String> {
    if TcpListener::bind(PREFERRED_LISTEN).is_ok() {
        return Ok(PREFERRED_LISTEN.to_owned());
    }
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("could not find a free port on 127.0.0.1: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("could not find a free port on 127.0.0.1: {e}"))?;
    Ok(addr.to_string())
}

/// The address to connect to for a listen address (`0.0.0.0` and `[::]`
/// mean this machine).
fn connect_addr(listen: &str) -> Result<SocketAddr, String> {
    let mut addr = listen
        .to_socket_addrs()
        .map_err(|e| format!("`{listen}` is not a listen address (host:port): {e}"))?
        .next()
        .ok_or_else(|| format!("`{listen}` resolves to no address"))?;
    if addr.ip().is_unspecified() {
        addr.set_ip(if addr.is_ipv4() {
            [127, 0, 0, 1].into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    Ok(addr)
}

/// The base URL people open, ending in `/`.
pub fn url_for(listen: &str) -> Result<String, String> {
    Ok(format!("http://{}/", connect_addr(listen)?))
}

/// Waits until the server answers HTTP, or fails if it exits first.
fn wait_until_listening(listen: &str, child: &mut Child) -> Result<(), String> {
    let addr = connect_addr(listen)?;
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if let Some(status) =
            child.try_wait().map_err(|e| format!("checking on the server failed: {e}"))?
        {
            return Err(format!(
                "the server exited during start-up ({status}) without listening on {addr}; see its output above"
            ));
        }
        if answers_http(addr) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the server did not answer on {addr} within {} s",
                STARTUP_TIMEOUT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Whether something at `addr` answers `GET /healthz` with any HTTP response.
fn answers_http(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.")
}

/// An empty folder for the demo database; the previous run's files go.
fn fresh_database(dir: &Path) -> Result<PathBuf, String> {
    fs::create_dir_all(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    let db = dir.join("likekit-demo.db");
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let file = PathBuf::from(format!("{}{suffix}", db.display()));
        if file.exists() {
            fs::remove_file(&file).map_err(|e| {
                format!("could not remove the old demo database {}: {e}", file.display())
            })?;
        }
    }
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn urls_for_listen_addresses() {
        assert_eq!(url_for("127.0.0.1:8787").as_deref(), Ok("http://127.0.0.1:8787/"));
        assert_eq!(url_for("0.0.0.0:9000").as_deref(), Ok("http://127.0.0.1:9000/"));
        assert_eq!(url_for("[::]:9000").as_deref(), Ok("http://[::1]:9000/"));
        assert!(url_for("no-port").is_err());
    }

    #[test]
    fn any_http_answer_means_listening() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().expect("accept");
            let mut request = [0u8; 64];
            let _ = conn.read(&mut request);
            conn.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").expect("answer");
            request
        });
        assert!(answers_http(addr));
        let request = server.join().expect("server thread");
        assert!(request.starts_with(b"GET /healthz HTTP/1.1\r\n"));

        let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
        let closed_addr = closed.local_addr().expect("addr");
        drop(closed);
        assert!(!answers_http(closed_addr));
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
        let ids: BTreeSet<u64> = users.iter().map(|u| u["id"].as_u64().expect("id")).collect();
        assert_eq!(ids.len(), users.len(), "user ids are unique");
        let names: Vec<&str> = users.iter().filter_map(|u| u["name"].as_str()).collect();
        assert_eq!(names, ["Ana", "Ben", "Cleo", "Dev", "Eve"]);
        for user in users {
            assert!(keys(user).iter().all(|k| ["id", "name", "friends"].contains(&k.as_str())));
            assert!(ids_in(&user["friends"]).iter().all(|f| ids.contains(f)), "friends are users");
        }
        let posts = seed["posts"].as_array().expect("posts");
        assert!(posts.len() >= 5);
        let mut post_ids = BTreeSet::new();
        for post in posts {
            assert!(keys(post).iter().all(|k| ["id", "likers"].contains(&k.as_str())));
            assert!(post_ids.insert(post["id"].as_u64().expect("post id")));
            let likers = ids_in(&post["likers"]);
            let unique: BTreeSet<u64> = likers.iter().copied().collect();
            assert_eq!(unique.len(), likers.len(), "no one likes a post twice");
            assert!(unique.is_subset(&ids), "likers are users");
        }
    }
}
