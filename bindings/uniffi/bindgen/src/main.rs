//! `uniffi-bindgen`, built from the workspace so that the generator always
//! matches the uniffi version `likekit-ffi` is compiled with.
//!
//! ```text
//! cargo run -p uniffi-bindgen -- generate --library target/debug/liblikekit_ffi.so \
//!     -l kotlin -l python -l swift -o bindings/uniffi/generated
//! ```
//!
//! `cargo xtask bindings` runs it and lays out the Swift package and the
//! Kotlin sources.

fn main() {
    uniffi::uniffi_bindgen_main();
}
