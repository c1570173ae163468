//! MVCC snapshots: which transactions' effects a statement may see.
//!
//! A snapshot records, at the moment it was taken, `xmax` (the next xid to be
//! handed out: that one and later ones had not started), the sorted list
//! `xip` of transactions then in progress, and `xmin` (the smallest of them,
//! or `xmax` when none ran: every xid below it had finished). A transaction is
//! *in progress for this snapshot* when it is at or above `xmax` or in `xip`;
//! its effects stay invisible even after it commits. The snapshot also names
//! its own transaction (`current_xid`, whose rows follow command-id rules
//! instead) and `curcid`, the command id of the statement using it: rows its
//! transaction wrote with a smaller command id are visible, its own are not.
//!
//! Snapshots are plain values; the [`TxnManager`](super::TxnManager) builds them.

use super::{CommandId, Xid, INVALID_XID};

/// A snapshot of running transactions plus the reader's own identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Every xid below this had finished when the snapshot was taken.
    pub xmin: Xid,
    /// This xid and later ones had not started.
    pub xmax: Xid,
    /// Transactions in progress at the time, sorted ascending.
    pub xip: Vec<Xid>,
    /// The reader's own transaction id, or [`INVALID_XID`] when it has none.
    pub current_xid: Xid,
    /// The reader's command id.
    pub curcid: CommandId,
}

impl Snapshot {
    /// True when `xid` was in progress (or not yet started) for this
    /// snapshot, so its effects are invisible (PostgreSQL's `XidInMVCCSnapshot`).
    /// The reader's own transaction is never in progress for itself.
    #[inline]
    pub fn xid_in_progress(&self, xid: Xid) -> bool {
        if xid < self.xmin {
            return false;
        }
        if xid >= self.xmax {
            return true;
        }
        self.xip.binary_search(&xid).is_ok()
    }

    /// True when `xid` is the reader's own transaction.
    #[inline]
    pub fn is_current(&self, xid: Xid) -> bool {
        xid != INVALID_XID && xid == self.current_xid
    }

    /// The same snapshot for a later command of the same transaction.
    pub fn with_cid(&self, curcid: CommandId) -> Snapshot {
        Snapshot {
            curcid,
            ..self.clone()
        }
    }

    /// The snapshot one command later: it also sees what the reader's
    /// transaction wrote at `curcid` (the statement running now), as a
    /// VOLATILE function's queries must.
    pub fn next_command(&self) -> Snapshot {
        self.with_cid(self.curcid + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_progress_rules() {
        let s = Snapshot {
            xmin: 10,
            xmax: 20,
            xip: vec![10, 15],
            current_xid: 15,
            curcid: 0,
        };
        assert!(!s.xid_in_progress(9));
        assert!(s.xid_in_progress(10));
        assert!(!s.xid_in_progress(11));
        assert!(s.xid_in_progress(15));
        assert!(s.xid_in_progress(20));
        assert!(s.xid_in_progress(100));
        assert!(s.is_current(15));
        assert!(!s.is_current(10));
        assert_eq!(s.with_cid(3).curcid, 3);
        assert_eq!(s.next_command().curcid, 1);
    }
}
