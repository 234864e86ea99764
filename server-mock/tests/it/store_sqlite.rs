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
