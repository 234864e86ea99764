//! The intent journal: the viewer's latest unconfirmed like or unlike per
//! post, kept so that a tap survives the app being closed.
//!
//! LikeKit's wire carries state (POST = liked, DELETE = not liked, both
//! idempotent) and the machine coalesces taps, so only the *latest*
//! desired state per post needs keeping, and replaying it any number of
//! times is exact. The client writes the journal before it sends the call
//! for a tap (the tap itself returns before any I/O), drops an entry when
//! the server confirms it or it fails for good, and restores what is left
//! on the next start ([`LikeClient::restore`](crate::LikeClient::restore)).
//!
//! A journal belongs to one signed-in viewer: the viewer's key is written
//! in it and checked when it is read, and [`FileJournal`] keeps one file
//! per viewer, so one viewer's intents are never sent with another's
//! token. Tokens are never written.
//!
//! The format (version [`FORMAT`]), the same on every platform:
//!
//! ```json
//! {"format":1,"viewer":"ana","intents":[{"post":42,"liked":true,"tapped_at_ms":1764000000000}]}
//! ```

use std::sync::Arc;

use crate::runtime::{SendOutsideWasm, SyncOutsideWasm};

mod merge;
use crate::transport::json::{self, Json, Reader, required};
use std::fmt::Write as _;

use crate::{JournalFault, LikeError, PostId};
pub use merge::merge;

/// The journal format this version writes and reads.
pub const FORMAT: u32 = 1;

/// The most intents a journal may list; [`decode`] refuses one that lists
/// more as unusable. A viewer has a handful of taps unconfirmed at a time,
/// and a tap older than the client's `max_intent_age` (a day by default)
/// is not sent anyway; a longer list is damaged or not LikeKit's, and
/// restoring it would hold the client (and the app's thread) for seconds
/// to hours.
pub const MAX_INTENTS: usize = 10_000;

/// One post's latest unconfirmed intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Intent {
    /// The post.
    pub post: PostId,
    /// What the viewer wants: `true` liked, `false` not liked.
    pub liked: bool,
    /// When the viewer tapped, in milliseconds since the Unix epoch.
    pub tapped_at_ms: u64,
}

/// Where a client keeps its journal: implemented by [`FileJournal`]
/// natively, by `localStorage` in the web binding, and by
/// [`MemoryJournal`] for tests.
///
/// Both methods are called off the tap's path. `load` is called once, by
/// [`LikeClientBuilder::build`](crate::LikeClientBuilder::build), on the
/// thread that builds the client, so a store that may wait (a keychain
/// until the device is unlocked, a network read) should give up quickly
/// and report [`JournalFault::Unreadable`]; `save` is called natively on
/// a blocking thread. `save` replaces the whole journal and must be atomic: after a
/// crash, a reader sees the old journal or the new one, never a mix.
pub trait JournalStore: SendOutsideWasm + SyncOutsideWasm {
    /// The intents saved for this store's viewer; empty when there is no
    /// journal yet.
    ///
    /// At most one intent per post is used: of several listed for one
    /// post, the client keeps the newest by `tapped_at_ms` (of those
    /// tapped in the same millisecond, the last listed), and its next save
    /// lists each post once.
    ///
    /// # Errors
    ///
    /// [`LikeError::Journal`] for a journal that cannot be read, told
    /// apart by its [`JournalFault`]: content that cannot be used
    /// ([`JournalFault::Damaged`]: truncated, corrupted, another viewer's,
    /// a newer format — the errors of [`decode`], or of [`unusable`]),
    /// which the client replaces at its next save; and a store that could
    /// not be read now ([`JournalFault::Unreadable`]: an I/O failure, a
    /// permission refused, storage locked until the device is first
    /// unlocked — or any other fault), which the client leaves untouched,
    /// keeping no journal until it is built again.
    fn load(&self) -> Result<Vec<Intent>, LikeError>;

    /// Replaces the journal with `intents`.
    ///
    /// # Errors
    ///
    /// [`LikeError::Journal`] when it could not be written. A save that
    /// panics counts as one that failed with
    /// [`JournalFault::Unwritable`] (natively; the message says it
    /// panicked): it is reported and tried again, and the calls waiting
    /// for it go out.
    fn save(&self, intents: &[Intent]) -> Result<(), LikeError>;
}

impl<T: JournalStore + ?Sized> JournalStore for Arc<T> {
    fn load(&self) -> Result<Vec<Intent>, LikeError> {
        (**self).load()
    }

    fn save(&self, intents: &[Intent]) -> Result<(), LikeError> {
        (**self).save(intents)
    }
}

fn journal_error(fault: JournalFault, message: impl Into<String>) -> LikeError {
    LikeError::Journal {
        fault,
        message: message.into(),
    }
}

/// How the message of an [`unusable`] journal's error begins.
const UNUSABLE: &str = "unusable: ";

/// The error for a journal whose content cannot be used (`why`), which a
/// save may replace: what [`decode`] returns, for stores that read their
/// journal some other way.
///
/// ```
/// use likekit_core::journal::{is_unusable, unusable};
/// let e = unusable("the checksum does not match");
/// assert!(is_unusable(&e));
/// assert_eq!(e.to_string(), "intent journal: unusable: the checksum does not match");
/// ```
pub fn unusable(why: impl std::fmt::Display) -> LikeError {
    journal_error(JournalFault::Damaged, format!("{UNUSABLE}{why}"))
}

/// Whether `error` says a journal's content cannot be used (damaged,
/// another viewer's, a newer format), so that replacing it loses nothing
/// that could be read later; `false` for every other error, such as a
/// store that could not be read now.
///
/// ```
/// use likekit_core::{LikeError, journal::{decode, is_unusable}};
/// assert!(is_unusable(&decode("ana", b"{").unwrap_err()));
/// let io = LikeError::Journal {
///     fault: likekit_core::JournalFault::Unreadable,
///     message: "cannot read likekit.json: Permission denied".into(),
/// };
/// assert!(!is_unusable(&io));
/// ```
pub fn is_unusable(error: &LikeError) -> bool {
    matches!(
        error,
        LikeError::Journal {
            fault: JournalFault::Damaged,
            ..
        }
    )
}

/// The journal of `viewer` holding `intents`, as bytes: when there are
/// more than [`MAX_INTENTS`], only the newest (by `tapped_at_ms`), so that
/// what is saved can always be read back. Taps of one millisecond are
/// kept or left out together, so a few fewer may be kept.
pub fn encode(viewer: &str, intents: &[Intent]) -> Vec<u8> {
    let from = newest(intents);
    let mut text = format!("{{\"format\":{FORMAT},\"viewer\":");
    push_string(&mut text, viewer);
    text.push_str(",\"intents\":[");
    let mut first = true;
    for intent in intents.iter().filter(|i| i.tapped_at_ms >= from) {
        if !first {
            text.push(',');
        }
        first = false;
        // Writing to a String cannot fail.
        let _ = write!(
            text,
            "{{\"post\":{},\"liked\":{},\"tapped_at_ms\":{}}}",
            intent.post, intent.liked, intent.tapped_at_ms
        );
    }
    text.push_str("]}");
    text.into_bytes()
}

/// The earliest tap time at and after which at most [`MAX_INTENTS`] of
/// `intents` were tapped: those are the ones kept. Found without a sort
/// (whose code the web package would carry for a case that hardly ever
/// comes), by halving the range of times, 64 passes at most.
fn newest(intents: &[Intent]) -> u64 {
    let (mut from, mut until) = (0, u64::MAX);
    while from < until {
        let middle = from + (until - from) / 2;
        if intents.iter().filter(|i| i.tapped_at_ms >= middle).count() <= MAX_INTENTS {
            until = middle;
        } else {
            from = middle + 1;
        }
    }
    from
}

/// `value` as a JSON string.
fn push_string(text: &mut String, value: &str) {
    text.push('"');
    for c in value.chars() {
        match c {
            '"' => text.push_str("\\\""),
            '\\' => text.push_str("\\\\"),
            c if u32::from(c) < 0x20 => text.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => text.push(c),
        }
    }
    text.push('"');
}

/// The intents of `viewer`'s journal `bytes`.
///
/// ```
/// use likekit_core::journal::{decode, encode, Intent};
/// let intent = Intent { post: likekit_core::PostId::new(42).unwrap(), liked: true, tapped_at_ms: 7 };
/// let bytes = encode("ana", &[intent]);
/// assert_eq!(decode("ana", &bytes).unwrap(), [intent]);
/// assert_eq!(decode("ben", &bytes).unwrap_err().code(), "journal_damaged");
/// assert!(decode("ana", &bytes[..bytes.len() - 1]).is_err());
/// ```
///
/// # Errors
///
/// [`LikeError::Journal`] for bytes that are not a whole journal of this
/// format (truncated, corrupted, a newer format, a post id out of range,
/// more than [`MAX_INTENTS`] intents) or that belong to another viewer; [`is_unusable`] holds for each. Never panics, whatever the bytes
/// (`cargo xtask fuzz journal_decode` holds it to that, and to reading back
/// what it accepts after [`encode`]).
pub fn decode(viewer: &str, bytes: &[u8]) -> Result<Vec<Intent>, LikeError> {
    let document: JournalDocument = json::from_json(bytes)
        .map_err(|e| unusable(format_args!("the journal is not readable: {e}")))?;
    if document.format != u64::from(FORMAT) {
        return Err(unusable(format_args!(
            "the journal has format {}, this version reads {FORMAT}",
            document.format
        )));
    }
    if document.viewer != viewer {
        return Err(unusable("the journal belongs to another viewer"));
    }
    if document.intents.len() > MAX_INTENTS {
        return Err(unusable("too many intents"));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = document.intents.iter().find(|i| !seen.insert(i.post)) {
        return Err(unusable(format_args!(
            "the journal names post {} twice",
            twice.post
        )));
    }
    Ok(document.intents)
}

/// An intent journal as [`decode`] reads it, with the JSON reader the
/// answers use (`transport::json`), which knows nothing of journals.
struct JournalDocument {
    format: u64,
    viewer: String,
    intents: Vec<Intent>,
}

impl Json for Intent {
    fn read(r: &mut Reader<'_>) -> json::Result<Self> {
        let (mut post, mut liked, mut tapped_at_ms) = (None, None, None);
        r.fields(&["post", "liked", "tapped_at_ms"], &mut |r, i| {
            match i {
                0 => {
                    let id: u64 = r.value()?;
                    post =
                        Some(PostId::new(id).map_err(|_| r.field_error("not a post id", "post"))?);
                }
                1 => liked = Some(r.value()?),
                _ => tapped_at_ms = Some(r.value()?),
            }
            Ok(())
        })?;
        Ok(Self {
            post: required(post, "post", r)?,
            liked: required(liked, "liked", r)?,
            tapped_at_ms: required(tapped_at_ms, "tapped_at_ms", r)?,
        })
    }
}

impl Json for JournalDocument {
    fn read(r: &mut Reader<'_>) -> json::Result<Self> {
        let (mut format, mut viewer, mut intents) = (None, None, None);
        r.fields(&["format", "viewer", "intents"], &mut |r, i| {
            match i {
                0 => format = Some(r.value()?),
                1 => viewer = Some(r.value()?),
                _ => {
                    r.expect(b'[', "expected an array")?;
                    let mut list = Vec::new();
                    r.items(&mut |r| {
                        list.push(r.value()?);
                        Ok(())
                    })?;
                    intents = Some(list);
                }
            }
            Ok(())
        })?;
        Ok(Self {
            format: required(format, "format", r)?,
            viewer: required(viewer, "viewer", r)?,
            intents: required(intents, "intents", r)?,
        })
    }
}

/// A journal in memory: for tests, and for apps that want the offline
/// behaviour without keeping anything across starts.
#[derive(Debug, Default)]
pub struct MemoryJournal {
    saved: std::sync::Mutex<Option<Vec<u8>>>,
    viewer: String,
}

impl MemoryJournal {
    /// An empty journal for `viewer`.
    pub fn new(viewer: impl Into<String>) -> Self {
        Self {
            saved: std::sync::Mutex::default(),
            viewer: viewer.into(),
        }
    }

    /// A journal holding `bytes` as if written by an earlier run (which may
    /// be any bytes at all, to test a damaged journal).
    pub fn with_bytes(viewer: impl Into<String>, bytes: Vec<u8>) -> Self {
        Self {
            saved: std::sync::Mutex::new(Some(bytes)),
            viewer: viewer.into(),
        }
    }

    /// What was last saved, as bytes.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Vec<u8>>> {
        self.saved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl JournalStore for MemoryJournal {
    fn load(&self) -> Result<Vec<Intent>, LikeError> {
        match &*self.lock() {
            Some(bytes) => decode(&self.viewer, bytes),
            None => Ok(Vec::new()),
        }
    }

    fn save(&self, intents: &[Intent]) -> Result<(), LikeError> {
        *self.lock() = Some(encode(&self.viewer, intents));
        Ok(())
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub use file::{FileJournal, MAX_FILE_BYTES, MAX_VIEWER_BYTES};

#[cfg(not(target_arch = "wasm32"))]
mod file {
    use std::fs::{self, File, OpenOptions};
    use std::io::{Read as _, Write as _};
    use std::path::{Path, PathBuf};

    use super::{Intent, JournalStore, MAX_INTENTS, decode, encode, journal_error, unusable};
    use crate::{JournalFault, LikeError};

    /// The largest journal file a [`FileJournal`] reads: 2 MiB, over twice
    /// [`MAX_INTENTS`] of the longest intents. A larger file is unusable
    /// (replaced at the next save) and is not read past this.
    pub const MAX_FILE_BYTES: usize = 2 << 20;
    const _: () = assert!(MAX_INTENTS * 100 < MAX_FILE_BYTES);

    /// The longest viewer key a [`FileJournal`] takes: hex-encoded in the
    /// file's name (`likekit-intents-<hex>.json.lock`), it fills the 255
    /// bytes a name may have. A user id fits many times over.
    pub const MAX_VIEWER_BYTES: usize = 114;

    /// A journal file per viewer in a directory the app chooses (its
    /// app-data or files directory): `likekit-intents-<viewer>.json`, the
    /// viewer's key hex-encoded in the name.
    ///
    /// Saves write a temporary file, flush it to disk, and rename it over
    /// the journal, so a crash leaves the old journal or the new one. The
    /// journal is locked (an OS file lock on `<name>.lock`) for as long as
    /// this value lives: a second client for the same viewer and directory
    /// is refused rather than let the two overwrite each other.
    #[derive(Debug)]
    pub struct FileJournal {
        path: PathBuf,
        viewer: String,
        /// Held open, locked, while the journal is in use.
        _lock: File,
    }

    impl FileJournal {
        /// Opens (creating the directory if needed) the journal of
        /// `viewer` in `dir`, and locks it.
        ///
        /// # Errors
        ///
        /// [`LikeError::Config`] when `viewer` is empty or longer than
        /// [`MAX_VIEWER_BYTES`] (a mistake in the app, not a storage
        /// failure); [`LikeError::Journal`] when the directory cannot be
        /// made or the journal is already in use by another client.
        pub fn open(dir: impl AsRef<Path>, viewer: impl Into<String>) -> Result<Self, LikeError> {
            let dir = dir.as_ref();
            let viewer = viewer.into();
            // The key goes into the file's name, hex-encoded, and a name
            // may have 255 bytes.
            if viewer.is_empty() || viewer.len() > MAX_VIEWER_BYTES {
                return Err(LikeError::Config {
                    message: format!(
                        "a journal needs a viewer key of 1 to {MAX_VIEWER_BYTES} bytes (the \
                         user's id), not {} bytes",
                        viewer.len()
                    ),
                });
            }
            fs::create_dir_all(dir).map_err(|e| {
                journal_error(
                    JournalFault::Unwritable,
                    format!("cannot make the journal directory {}: {e}", dir.display()),
                )
            })?;
            let name: String = viewer.bytes().map(|b| format!("{b:02x}")).collect();
            let path = dir.join(format!("likekit-intents-{name}.json"));
            let lock_path = path.with_extension("json.lock");
            let lock = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .map_err(|e| {
                    journal_error(
                        JournalFault::Unwritable,
                        format!("cannot open {}: {e}", lock_path.display()),
                    )
                })?;
            try_lock(&lock).map_err(|_| {
                journal_error(
                    JournalFault::InUse,
                    format!("the journal {} is in use by another client", path.display()),
                )
            })?;
            Ok(Self {
                path,
                viewer,
                _lock: lock,
            })
        }

        /// The journal file.
        pub fn path(&self) -> &Path {
            &self.path
        }
    }

    impl JournalStore for FileJournal {
        fn load(&self) -> Result<Vec<Intent>, LikeError> {
            let mut bytes = Vec::new();
            let read = File::open(&self.path)
                .and_then(|file| file.take(MAX_FILE_BYTES as u64 + 1).read_to_end(&mut bytes));
            match read {
                Ok(_) if bytes.len() > MAX_FILE_BYTES => Err(unusable(format_args!(
                    "the journal is larger than {MAX_FILE_BYTES} bytes"
                ))),
                Ok(_) => decode(&self.viewer, &bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
                Err(e) => Err(journal_error(
                    JournalFault::Unreadable,
                    format!("cannot read {}: {e}", self.path.display()),
                )),
            }
        }

        /// Saves `intents`. When the new journal cannot be written (a full
        /// disk), the old one is removed (which needs no space): it may
        /// list taps answered or replaced since, which a later start would
        /// send again, undoing the viewer's later taps. Until a save
        /// succeeds, taps are then not kept across a restart (the error
        /// says so).
        fn save(&self, intents: &[Intent]) -> Result<(), LikeError> {
            let Err(e) = self.replace(intents) else {
                // The rename is durable once the directory is.
                if let Some(Ok(dir)) = self.path.parent().map(File::open) {
                    let _ = dir.sync_all();
                }
                return Ok(());
            };
            let _ = fs::remove_file(self.path.with_extension("json.new"));
            let removed = match fs::remove_file(&self.path) {
                Ok(()) => {
                    "; the journal was removed, so that no later start sends taps out of date"
                }
                Err(gone) if gone.kind() == std::io::ErrorKind::NotFound => "",
                Err(_) => "; the old journal could not be removed either",
            };
            Err(journal_error(
                JournalFault::Unwritable,
                format!("cannot write {}: {e}{removed}", self.path.display()),
            ))
        }
    }

    impl FileJournal {
        /// Writes `intents` to a temporary file, flushes it to disk, and
        /// renames it over the journal.
        fn replace(&self, intents: &[Intent]) -> std::io::Result<()> {
            let temporary = self.path.with_extension("json.new");
            // Made afresh (one left by a crash removed first), so that no
            // older file's permissions, nor a link put in its place, are
            // written through.
            match fs::remove_file(&temporary) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            let mut file = private_file().create_new(true).open(&temporary)?;
            file.write_all(&encode(&self.viewer, intents))?;
            file.sync_all()?;
            drop(file);
            fs::rename(&temporary, &self.path)
        }
    }

    /// Options to write a new file only its owner may read: which posts a
    /// viewer likes, and who the viewer is, are nobody else's business on
    /// a shared machine (a desktop app's data folder is often readable by
    /// every user).
    fn private_file() -> OpenOptions {
        let mut options = OpenOptions::new();
        options.write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options
    }

    /// Takes the OS lock on `file` without waiting; released when the file
    /// is closed, or the process ends, however it ends.
    #[cfg(unix)]
    fn try_lock(file: &File) -> std::io::Result<()> {
        rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
            .map_err(std::io::Error::from)
    }

    /// Elsewhere (Windows) the journal is not locked: one client per
    /// journal is then the app's to keep.
    #[cfg(not(unix))]
    fn try_lock(_file: &File) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn intent(post: u64, liked: bool) -> Intent {
        Intent {
            post: PostId::new(post).unwrap(),
            liked,
            tapped_at_ms: 1_764_000_000_000 + post,
        }
    }

    #[test]
    fn a_journal_reads_back_as_written() {
        let intents = [intent(42, true), intent(7, false)];
        let bytes = encode("ana", &intents);
        assert_eq!(decode("ana", &bytes).unwrap(), intents);
        assert_eq!(decode("ana", &encode("ana", &[])).unwrap(), []);
        // any viewer key, escaped and read back
        let odd = "an\"a\\ \u{1}é";
        assert_eq!(decode(odd, &encode(odd, &intents)).unwrap(), intents);
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with(r#"{"format":1,"viewer":"ana","intents":[{"post":42,"liked":true,"#),
            "{text}"
        );
    }

    #[test]
    fn damaged_foreign_and_future_journals_are_typed_errors() {
        let bytes = encode("ana", &[intent(42, true)]);
        for cut in 0..bytes.len() {
            let e = decode("ana", &bytes[..cut]).unwrap_err();
            assert_eq!(e.code(), "journal_damaged", "cut at {cut}");
        }
        let cases: [(&str, &[u8]); 6] = [
            ("ben", &bytes),
            ("ana", br#"{"format":2,"viewer":"ana","intents":[]}"#),
            ("ana", br#"{"format":1,"viewer":"ana","intents":[{"post":0,"liked":true,"tapped_at_ms":1}]}"#),
            ("ana", br#"{"format":1,"viewer":"ana","intents":[{"post":1,"liked":"yes","tapped_at_ms":1}]}"#),
            ("ana", br#"{"format":1,"viewer":"ana","intents":[{"post":1,"liked":true,"tapped_at_ms":1},{"post":1,"liked":false,"tapped_at_ms":2}]}"#),
            ("ana", b"\xff\xfe garbage"),
        ];
        for (viewer, bytes) in cases {
            let e = decode(viewer, bytes).unwrap_err();
            assert!(matches!(e, LikeError::Journal { .. }), "{e:?}");
            assert!(is_unusable(&e), "{e:?}");
            assert!(!e.is_transient());
        }
    }

    /// A journal listing more intents than any viewer leaves is refused:
    /// restoring it would hold the client for seconds to hours.
    #[test]
    fn a_journal_of_too_many_intents_is_unusable() {
        let list = |n: u64| -> Vec<u8> {
            let items: Vec<String> = (1..=n).map(|post| format!("[{post},true,1]")).collect();
            format!(
                r#"{{"format":1,"viewer":"ana","intents":[{}]}}"#,
                items.join(",")
            )
            .into_bytes()
        };
        let max = MAX_INTENTS as u64;
        assert_eq!(decode("ana", &list(max)).unwrap().len(), MAX_INTENTS);
        for n in [max + 1, 10 * max] {
            let e = decode("ana", &list(n)).unwrap_err();
            assert!(is_unusable(&e), "{e:?}");
            assert_eq!(e.to_string(), "intent journal: unusable: too many intents");
        }
    }

    #[test]
    fn a_save_of_too_many_intents_keeps_the_newest() {
        let at = |post: u64, ms: u64| Intent {
            post: PostId::new(post).unwrap(),
            liked: post % 2 == 0,
            tapped_at_ms: ms,
        };
        // posts 1..=MAX+2 tapped in a shuffled order of time: post p at
        // (p * 7919) mod (MAX + 3), so the two oldest are not the first two
        let n = MAX_INTENTS as u64 + 2;
        let all: Vec<Intent> = (1..=n).map(|p| at(p, (p * 7919) % (n + 1))).collect();
        let kept = decode("ana", &encode("ana", &all)).unwrap();
        assert_eq!(kept.len(), MAX_INTENTS);
        let mut oldest: Vec<Intent> = all.clone();
        oldest.sort_by_key(|intent| intent.tapped_at_ms);
        for left_out in &oldest[..2] {
            assert!(!kept.contains(left_out), "{left_out:?} was kept");
        }
        assert!(oldest[2..].iter().all(|intent| kept.contains(intent)));
        // at the limit, everything, in the order given
        let limit = &all[..MAX_INTENTS];
        assert_eq!(decode("ana", &encode("ana", limit)).unwrap(), limit);
        // taps of one millisecond are kept or left out together
        let tied: Vec<Intent> = (1..=n).map(|p| at(p, if p <= 3 { 1 } else { 5 })).collect();
        assert_eq!(decode("ana", &encode("ana", &tied)).unwrap(), tied[3..]);
    }

    #[test]
    fn a_memory_journal_keeps_what_was_saved() {
        let journal = MemoryJournal::new("ana");
        assert_eq!(journal.load().unwrap(), []);
        journal.save(&[intent(1, true)]).unwrap();
        assert_eq!(journal.load().unwrap(), [intent(1, true)]);
        let damaged = MemoryJournal::with_bytes("ana", b"{\"format\":1,".to_vec());
        assert_eq!(damaged.load().unwrap_err().code(), "journal_damaged");
    }

    #[test]
    fn a_file_journal_is_one_locked_file_per_viewer() {
        let dir = std::env::temp_dir().join(format!("likekit-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let ana = FileJournal::open(&dir, "ana").unwrap();
        assert_eq!(ana.load().unwrap(), []);
        ana.save(&[intent(42, true)]).unwrap();
        ana.save(&[intent(42, false), intent(43, true)]).unwrap();
        assert_eq!(ana.load().unwrap(), [intent(42, false), intent(43, true)]);
        // a second client for Ana on this directory is refused
        let again = FileJournal::open(&dir, "ana").unwrap_err();
        assert!(again.to_string().contains("in use"), "{again}");
        assert_eq!(again.code(), "journal_in_use");
        // a viewer key the file's name cannot hold, or none
        let longest = "v".repeat(MAX_VIEWER_BYTES);
        drop(FileJournal::open(&dir, longest.as_str()).unwrap());
        for key in [format!("{longest}v"), String::new()] {
            let refused = FileJournal::open(&dir, key).unwrap_err();
            assert_eq!(refused.code(), "config");
            assert!(
                refused
                    .to_string()
                    .contains("a viewer key of 1 to 114 bytes"),
                "{refused}"
            );
        }
        // a folder that cannot be made (a file is in its way)
        let file = dir.join("a-file");
        std::fs::write(&file, b"").unwrap();
        let unmade = FileJournal::open(file.join("journal"), "ana").unwrap_err();
        assert_eq!(unmade.code(), "journal_unwritable", "{unmade}");
        // a journal in the way of which a folder stands: not readable now,
        // and a save cannot replace it
        let cleo = FileJournal::open(&dir, "cleo").unwrap();
        std::fs::create_dir(cleo.path()).unwrap();
        assert_eq!(cleo.load().unwrap_err().code(), "journal_unreadable");
        assert_eq!(
            cleo.save(&[intent(42, true)]).unwrap_err().code(),
            "journal_unwritable"
        );
        drop(cleo);
        // Ben has a file of his own, and nothing of Ana's
        let ben = FileJournal::open(&dir, "ben").unwrap();
        assert_ne!(ben.path(), ana.path());
        assert_eq!(ben.load().unwrap(), []);
        // a damaged file is an error, and a save replaces it whole
        std::fs::write(ana.path(), b"{\"format\":1,\"viewer\":\"ana\",\"int").unwrap();
        assert_eq!(ana.load().unwrap_err().code(), "journal_damaged");
        ana.save(&[]).unwrap();
        assert_eq!(ana.load().unwrap(), []);
        drop(ana);
        // released with the value
        let reopened = FileJournal::open(&dir, "ana").unwrap();
        drop((reopened, ben));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A journal file larger than any journal is not read, and a save
    /// replaces it.
    #[test]
    fn an_oversized_journal_file_is_unusable() {
        let dir = std::env::temp_dir().join(format!("likekit-journal-big-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let ana = FileJournal::open(&dir, "ana").unwrap();
        let mut big = encode("ana", &[intent(42, true)]);
        big.resize(MAX_FILE_BYTES + 1, b' ');
        std::fs::write(ana.path(), &big).unwrap();
        let e = ana.load().unwrap_err();
        assert!(is_unusable(&e), "{e:?}");
        assert!(e.to_string().contains("larger than 2097152 bytes"), "{e}");
        // at the limit, it is read
        big.truncate(MAX_FILE_BYTES);
        std::fs::write(ana.path(), &big).unwrap();
        assert_eq!(ana.load().unwrap(), [intent(42, true)]);
        ana.save(&[]).unwrap();
        assert_eq!(ana.load().unwrap(), []);
        drop(ana);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The journal is its owner's alone to read, whatever the umask, a
    /// temporary file left by a crash, or a link put in that file's place.
    #[cfg(unix)]
    #[test]
    fn a_journal_file_is_private_and_written_through_no_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("likekit-journal-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let ana = FileJournal::open(&dir, "ana").unwrap();
        let mode =
            |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        ana.save(&[intent(42, true)]).unwrap();
        assert_eq!(mode(ana.path()), 0o600);
        // an older journal, readable by all, and a temporary file left
        // readable by all: the next save is private
        let temporary = ana.path().with_extension("json.new");
        for path in [ana.path(), temporary.as_path()] {
            std::fs::write(path, encode("ana", &[])).unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        ana.save(&[intent(7, true)]).unwrap();
        assert_eq!(mode(ana.path()), 0o600);
        // a link in the temporary file's place is not written through
        let elsewhere = dir.join("elsewhere");
        std::fs::write(&elsewhere, b"untouched").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &temporary).unwrap();
        ana.save(&[intent(8, false)]).unwrap();
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"untouched");
        assert_eq!(ana.load().unwrap(), [intent(8, false)]);
        assert_eq!(mode(ana.path()), 0o600);
        drop(ana);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A journal that cannot be written (a full disk, here a folder in the
    /// temporary file's way) is not left listing taps out of date, which a
    /// later start would send again over the viewer's later taps: it is
    /// removed.
    #[test]
    fn a_journal_that_cannot_be_written_is_removed_not_left_out_of_date() {
        let dir = std::env::temp_dir().join(format!("likekit-journal-full-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let ana = FileJournal::open(&dir, "ana").unwrap();
        ana.save(&[intent(42, true)]).unwrap();
        std::fs::create_dir(ana.path().with_extension("json.new")).unwrap();
        // The like was answered: nothing left to keep, and the write fails.
        ana.save(&[]).unwrap_err();
        assert!(
            !ana.path().exists(),
            "the answered like is not left for a later start"
        );
        std::fs::remove_dir(ana.path().with_extension("json.new")).unwrap();
        ana.save(&[intent(42, true)]).unwrap();
        std::fs::create_dir(ana.path().with_extension("json.new")).unwrap();
        let failed = ana.save(&[intent(42, false)]).unwrap_err();
        assert_eq!(failed.code(), "journal_unwritable");
        assert!(
            failed.to_string().contains("the journal was removed"),
            "{failed}"
        );
        assert!(
            !ana.path().exists(),
            "the out-of-date journal (42 liked) is gone"
        );
        assert_eq!(ana.load().unwrap(), []);
        drop(ana);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
