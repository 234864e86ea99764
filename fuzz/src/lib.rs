//! What more than one fuzz target of `fuzz_targets/` uses.

/// `valid` with `edits` made to it, four bytes each: where (the first two,
/// little-endian, modulo the length plus one), which edit (the third,
/// modulo 4: flip, insert, remove or cut) and the byte flipped in or
/// inserted (the fourth). A flip by zero, and a flip or removal past the
/// end, change nothing.
pub fn edited(valid: &[u8], edits: &[u8]) -> Vec<u8> {
    let mut token = valid.to_vec();
    for edit in edits.chunks_exact(4) {
        let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % (token.len() + 1);
        let (op, byte) = (edit[2] % 4, edit[3]);
        match op {
            0 if at < token.len() => token[at] ^= byte,
            1 => token.insert(at, byte),
            2 if at < token.len() => {
                token.remove(at);
            }
            3 => token.truncate(at),
            _ => {}
        }
    }
    token
}

/// Seconds since the Unix epoch, as the server's token checks read the
/// clock.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
