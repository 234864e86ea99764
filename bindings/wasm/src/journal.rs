//! The intent journal on the web: the viewer's unconfirmed taps in a
//! `Storage` (`localStorage` by default), in the core's journal format.
//!
//! One entry per viewer, `likekit-intents:<viewer>`, holding the same JSON
//! a native `FileJournal` writes (format version, viewer, intents), read
//! and written by the core's `journal::decode` and `journal::encode`. A
//! save of no intents removes the entry. Storage that throws (disabled,
//! over quota, a private window that refuses it) is a `journal_unreadable`
//! or `journal_unwritable` error, never a lost tap: the tap still goes
//! out, it is only not kept. So is a `localStorage` that is missing (Node)
//! or throws when it is read (site data blocked, a sandboxed frame): the
//! client is made all the same, without a journal, and reports
//! `journal_unreadable`.
//!
//! Every tab of the viewer's shares the entry, so a save reads it again
//! and merges ([`likekit_core::journal::merge`]): another tab's unsaved taps stay,
//! and what this client confirmed or superseded leaves.

use std::cell::Cell;

use likekit_core::{Intent, JournalFault, JournalStore, LikeError};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `Storage`, or any object with its three methods (`JournalStorage`).
    #[derive(Debug, Clone)]
    #[wasm_bindgen(typescript_type = "JournalStorage")]
    pub type JsStorage;

    #[wasm_bindgen(method, catch, js_name = getItem)]
    fn get_item(this: &JsStorage, key: &str) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(method, catch, js_name = setItem)]
    fn set_item(this: &JsStorage, key: &str, value: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch, js_name = removeItem)]
    fn remove_item(this: &JsStorage, key: &str) -> Result<(), JsValue>;
}

/// The key prefix; the viewer follows it.
pub const KEY_PREFIX: &str = "likekit-intents:";

/// A journal in a `Storage` object (or anything with `getItem`, `setItem`
/// and `removeItem`).
pub struct WebStorageJournal {
    /// The storage (`undefined` where there is no `localStorage`), or
    /// what reading `localStorage` threw: every read then fails with it.
    storage: Result<JsStorage, JsValue>,
    key: String,
    viewer: String,
    /// The intents this client held at its last save (or read at start):
    /// the base of the next save's merge.
    last: Cell<Vec<Intent>>,
}

impl std::fmt::Debug for WebStorageJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebStorageJournal")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl WebStorageJournal {
    /// `viewer`'s journal in `storage`, or in `globalThis.localStorage`
    /// when `storage` is `undefined` or `null`. Without a `localStorage`
    /// (Node), or where reading it throws (site data blocked, a sandboxed
    /// frame), the journal cannot be read: the client's load fails with
    /// `journal_unreadable`, and the client keeps none.
    pub fn new(viewer: String, storage: JsValue) -> Self {
        let storage = if storage.is_undefined() || storage.is_null() {
            // `undefined` without one (Node): calling its `getItem` throws.
            js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("localStorage"))
                .map(JsCast::unchecked_into)
        } else {
            Ok(storage.unchecked_into())
        };
        Self {
            storage,
            key: format!("{KEY_PREFIX}{viewer}"),
            viewer,
            last: Cell::new(Vec::new()),
        }
    }
}

/// A storage method that threw (or is missing), as a journal error of
/// `fault`: `getItem` at load reads, anything at a save writes.
fn storage_error(fault: JournalFault, thrown: JsValue) -> LikeError {
    let reason = thrown
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| thrown.as_string())
        .unwrap_or_else(|| "it threw".into());
    LikeError::Journal {
        fault,
        message: format!("the storage failed: {reason}"),
    }
}

impl JournalStore for WebStorageJournal {
    fn load(&self) -> Result<Vec<Intent>, LikeError> {
        let intents = self.stored(JournalFault::Unreadable)?;
        self.last.set(intents.clone());
        Ok(intents)
    }

    /// Writes `intents` merged with what other tabs left in the entry
    /// since this client's last save. An entry that cannot be used
    /// (damaged, a newer format) is replaced. A `getItem` that throws here
    /// fails the save as any write does (`journal_unwritable`, tried
    /// again): it is this save that did not happen.
    fn save(&self, intents: &[Intent]) -> Result<(), LikeError> {
        let storage = self.storage(JournalFault::Unwritable)?;
        let theirs = match self.stored(JournalFault::Unwritable) {
            Ok(theirs) => theirs,
            Err(problem) if likekit_core::journal::is_unusable(&problem) => Vec::new(),
            Err(problem) => return Err(problem),
        };
        let last = self.last.take();
        let merged = likekit_core::journal::merge(&last, intents, &theirs);
        let written = if merged.is_empty() {
            storage.remove_item(&self.key)
        } else {
            let bytes = likekit_core::journal::encode(&self.viewer, &merged);
            // `encode` writes UTF-8 (JSON of Rust strings).
            storage.set_item(&self.key, std::str::from_utf8(&bytes).unwrap_or_default())
        };
        let Err(thrown) = written else {
            // The base moves on only once the entry holds this save.
            self.last.set(intents.to_vec());
            return Ok(());
        };
        // The entry this save could not replace (storage full) may list
        // taps answered or replaced since, which a later page load would
        // send again, undoing the viewer's later taps: remove it (which
        // needs no room), as the file journal removes its file. Until a
        // save gets through, taps are then not kept across a reload.
        let removed = storage.remove_item(&self.key).is_ok();
        self.last.set(if removed { Vec::new() } else { last });
        Err(storage_error(JournalFault::Unwritable, thrown))
    }
}

impl WebStorageJournal {
    /// The storage; its absence is a journal error of `fault`.
    fn storage(&self, fault: JournalFault) -> Result<&JsStorage, LikeError> {
        self.storage
            .as_ref()
            .map_err(|missing| storage_error(fault, missing.clone()))
    }

    /// What the entry holds now; a `getItem` that throws is a journal
    /// error of `fault`.
    fn stored(&self, fault: JournalFault) -> Result<Vec<Intent>, LikeError> {
        let read = self.storage(fault)?.get_item(&self.key);
        match read.map_err(|thrown| storage_error(fault, thrown))? {
            Some(text) => likekit_core::journal::decode(&self.viewer, text.as_bytes()),
            None => Ok(Vec::new()),
        }
    }
}
