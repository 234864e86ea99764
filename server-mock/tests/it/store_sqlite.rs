//! The shared store suite (`likekit_testing::suite`) against the SQLite
//! backend, with the default options and with the smallest ones (one
//! reader, no batching), and on a durable file.

use likekit_server::store::{SqliteOptions, SqliteStore};

mod default_options {
    use super::*;

    likekit_testing::store_suite!(async {
        SqliteStore::open(SqliteOptions::default()).expect("open the store")
    });
}

mod one_reader_no_group_commit {
    use super::*;

    likekit_testing::store_suite!(async {
        SqliteStore::open(SqliteOptions {
            read_connections: 1,
            max_group_commit: 1,
            ..SqliteOptions::default()
        })
        .expect("open the store")
    });
}

mod on_a_file {
    use std::sync::Arc;

    use likekit_server::{Database, store::Store};
    use likekit_testing::suite::{self, p, u};

    use super::*;

    /// The suite's exactness cases on a durable file, plus a reopen.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn file_store_is_exact_and_survives_a_reopen() {
        let dir = tempfile::tempdir().expect("temp dir");
        let options = SqliteOptions {
            database: Database::File(dir.path().join("likes.db")),
            ..SqliteOptions::default()
        };
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(options.clone()).expect("open"));
        suite::group_commit_answers_each_write(store.clone()).await;
        store.put_post(p(2)).await.expect("post");
        store.like(u(9), p(2)).await.expect("like");
        store.close().await.expect("close");
        drop(store);

        let store = SqliteStore::open(options).expect("reopen");
        assert_eq!(store.liked(u(9), &[p(2)]).await.expect("read"), [true]);
        let audit = suite::assert_exact(&store).await;
        assert_eq!(audit.len(), 2);
        store.close().await.expect("close");
    }
}

/// A file the store cannot use stops the open with an error that names
/// the file and says what to do, and the file is left as it was.
mod files_it_cannot_use {
    use likekit_server::{Database, store::Store as _};

    use super::*;

    fn open_error(path: &std::path::Path) -> String {
        match SqliteStore::open(SqliteOptions {
            database: Database::File(path.to_owned()),
            ..SqliteOptions::default()
        }) {
            Ok(_) => panic!("{} opened", path.display()),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn a_file_that_is_not_a_database() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("notes.db");
        let text = "not a database, and longer than a SQLite header is: ".repeat(4);
        std::fs::write(&path, &text).expect("write");
        let err = open_error(&path);
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("file is not a database"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
    }

    /// A file written by a newer server (a higher `user_version`, bytes
    /// 60..64 of its header) is not touched.
    #[tokio::test]
    async fn a_file_from_a_newer_schema() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("likes.db");
        let store = SqliteStore::open(SqliteOptions {
            database: Database::File(path.clone()),
            ..SqliteOptions::default()
        })
        .expect("open");
        store.close().await.expect("close");
        drop(store);
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[60..64].copy_from_slice(&99u32.to_be_bytes());
        std::fs::write(&path, &bytes).expect("write");

        let err = open_error(&path);
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("schema is at version 99"), "{err}");
        assert!(err.contains("newer likekit-server"), "{err}");
        assert_eq!(std::fs::read(&path).expect("read"), bytes);
    }
}
