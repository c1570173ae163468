//! SHA-2 digests for `sha224`, `sha256`, `sha384` and `sha512`, computed
//! by the `sha2` crate; the unit tests check PostgreSQL's answers.

use sha2::Digest;

/// The SHA-2 variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sha2 {
    /// 28-byte digest.
    Sha224,
    /// 32-byte digest.
    Sha256,
    /// 48-byte digest.
    Sha384,
    /// 64-byte digest.
    Sha512,
}

/// The digest of `data`.
pub fn digest(kind: Sha2, data: &[u8]) -> Vec<u8> {
    match kind {
        Sha2::Sha224 => sha2::Sha224::digest(data).to_vec(),
        Sha2::Sha256 => sha2::Sha256::digest(data).to_vec(),
        Sha2::Sha384 => sha2::Sha384::digest(data).to_vec(),
        Sha2::Sha512 => sha2::Sha512::digest(data).to_vec(),
    }
}

#[cfg(test)]
mod tests {
    //! Expected digests are PostgreSQL 15's `sha224('')`, ... on this machine.
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn digests_match_postgres() {
        let fox = b"The quick brown fox jumps over the lazy dog.";
        assert_eq!(
            hex(&digest(Sha2::Sha224, b"")),
            "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f"
        );
        assert_eq!(
            hex(&digest(Sha2::Sha224, fox)),
            "619cba8e8e05826e9b8c519c0a5c68f4fb653e8a3d8aa04bb2c8cd4c"
        );
        assert_eq!(
            hex(&digest(Sha2::Sha256, fox)),
            "ef537f25c895bfa782526529a9b63d97aa631564d5d789c2b765448c8635fb6c"
        );
        assert_eq!(
            hex(&digest(Sha2::Sha384, b"")),
            "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da\
             274edebfe76f65fbd51ad2f14898b95b"
        );
        assert_eq!(
            hex(&digest(Sha2::Sha512, fox)),
            "91ea1245f20d46ae9a037a989f54f1f790f0a47607eeb8a14d12890cea77a1bb\
             c6c7ed9cf205e67b7f2b8fd4c7dfd3a7a8617e45f3c463d481c7e586c39ac1ed"
        );
        // Several blocks (`sha256(repeat('a', 200)::bytea)`).
        let long = [b'a'; 200];
        assert_eq!(
            hex(&digest(Sha2::Sha256, &long)),
            "c2a908d98f5df987ade41b5fce213067efbcc21ef2240212a41e54b5e7c28ae5"
        );
    }
}
