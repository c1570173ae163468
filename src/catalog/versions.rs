//! Versions of the catalog objects kept beside the tables: views,
//! functions, domains and foreign keys. Each object's history is a list of
//! [`Version`]s stamped, like heap tuples, with the transaction that made
//! it (`xmin`) and the one that deleted or replaced it (`xmax`).
//!
//! Invariants:
//! - a snapshot sees a version when its `xmin` committed visibly to it and
//!   its `xmax` did not ([`CatalogView::sees_object`]);
//! - a version is replaced or deleted only by one transaction at a time:
//!   another's claim, running or committed, is the 40001 error
//!   ([`replace`]); a transaction's own new version is changed in place;
//! - on open only versions whose creator committed and whose deleter did
//!   not are kept ([`settle`]); an abort forgets the transaction's versions
//!   and its claims ([`abort`]); versions deleted by a transaction every
//!   snapshot sees as committed are dropped ([`prune`]).

use std::sync::Arc;

use super::CatalogView;
use crate::error::Result;
use crate::txn::{Xid, INVALID_XID};

/// One version of a catalog object.
#[derive(Debug, Clone)]
pub(super) struct Version<T> {
    /// The transaction that made it.
    pub xmin: Xid,
    /// The transaction that deleted or replaced it ([`INVALID_XID`]: none).
    pub xmax: Xid,
    /// The object as this version has it.
    pub def: Arc<T>,
}

impl CatalogView<'_> {
    /// Whether the snapshot sees version `v`.
    pub(super) fn sees_object<T>(&self, v: &Version<T>) -> bool {
        self.committed_visible(v.xmin) && (v.xmax == INVALID_XID || !self.committed_visible(v.xmax))
    }
}

/// The objects of `vs` that `view` sees and `keep` accepts, in list order.
pub(super) fn visible<T>(
    vs: &[Version<T>],
    view: &CatalogView,
    keep: impl Fn(&T) -> bool,
) -> Vec<Arc<T>> {
    vs.iter()
        .filter(|v| keep(&v.def) && view.sees_object(v))
        .map(|v| v.def.clone())
        .collect()
}

/// The first object of `vs` that `view` sees and `keep` accepts.
pub(super) fn find<T>(
    vs: &[Version<T>],
    view: &CatalogView,
    keep: impl Fn(&T) -> bool,
) -> Option<Arc<T>> {
    vs.iter()
        .find(|v| keep(&v.def) && view.sees_object(v))
        .map(|v| v.def.clone())
}

/// The position in `vs` of the version `view` sees of the object `keep`
/// accepts (for [`replace`]).
pub(super) fn position<T>(
    vs: &[Version<T>],
    view: &CatalogView,
    keep: impl Fn(&T) -> bool,
) -> Option<usize> {
    vs.iter().position(|v| keep(&v.def) && view.sees_object(v))
}

/// Adds `def` as a new object made by transaction `xid`.
pub(super) fn insert<T>(vs: &mut Vec<Version<T>>, xid: Xid, def: Arc<T>) {
    vs.push(Version {
        xmin: xid,
        xmax: INVALID_XID,
        def,
    });
}

/// Marks `vs[pos]` deleted by `xid`, adding `replacement` as its new
/// version; a version `xid` made itself is changed (or removed) in place.
/// Fails with 40001 when another transaction claimed it first.
pub(super) fn replace<T>(
    vs: &mut Vec<Version<T>>,
    pos: usize,
    view: &CatalogView,
    xid: Xid,
    replacement: Option<T>,
) -> Result<()> {
    let old = &mut vs[pos];
    view.check_not_claimed(old.xmax, xid)?;
    if old.xmin == xid {
        match replacement {
            Some(def) => old.def = Arc::new(def),
            None => {
                vs.remove(pos);
            }
        }
        return Ok(());
    }
    old.xmax = xid;
    if let Some(def) = replacement {
        vs.push(Version {
            xmin: xid,
            xmax: INVALID_XID,
            def: Arc::new(def),
        });
    }
    Ok(())
}

/// On open: keeps the versions whose creator committed and whose deleter
/// did not; whether that changed anything.
pub(super) fn settle<T>(vs: &mut Vec<Version<T>>, committed: &dyn Fn(Xid) -> bool) -> bool {
    let before = vs.len();
    vs.retain(|v| committed(v.xmin) && (v.xmax == INVALID_XID || !committed(v.xmax)));
    let mut changed = vs.len() != before;
    for v in vs.iter_mut() {
        if v.xmax != INVALID_XID {
            v.xmax = INVALID_XID;
            changed = true;
        }
    }
    changed
}

/// Forgets the changes of aborted transaction `xid`.
pub(super) fn abort<T>(vs: &mut Vec<Version<T>>, xid: Xid) {
    vs.retain(|v| v.xmin != xid);
    for v in vs.iter_mut() {
        if v.xmax == xid {
            v.xmax = INVALID_XID;
        }
    }
}

/// Drops versions deleted by a committed transaction older than `horizon`.
pub(super) fn prune<T>(vs: &mut Vec<Version<T>>, committed: &dyn Fn(Xid) -> bool, horizon: Xid) {
    vs.retain(|v| v.xmax == INVALID_XID || v.xmax >= horizon || !committed(v.xmax));
}
